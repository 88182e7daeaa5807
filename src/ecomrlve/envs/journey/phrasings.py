"""How the JOURNEY shopper leads into each request (the request itself is phrased by its own environment)."""

from __future__ import annotations

import random

from ecomrlve.envs.journey import acts as A
from ecomrlve.user.realiser import ActTemplates, pick


def _journey_text(act: A.JourneyAct, rng: random.Random) -> str:
    """Templates for the JOURNEY acts: a lead, then the intent's own (already realised) request."""
    if isinstance(act, A.OpenJourney):
        lead = pick(rng, ["I have {n} things today. First:", "Hi, a few things ({n}) today - let's start here:",
                           "Hello! I've got {n} requests. To begin with:"]).format(n=act.count)
    elif isinstance(act, A.NextIntent):
        lead = pick(rng, ["Thanks! Also:", "Great, thank you. Next thing:", "Perfect. One more thing:",
                           "Thanks. Another thing:"])
    elif isinstance(act, A.InterruptIntent):
        lead = pick(rng, ["Oh wait, before that - something more urgent:", "Sorry, quick interruption first:",
                           "Hold on, let's do this first:"])
    else:
        lead = pick(rng, ["Thanks! Now back to what I asked before:", "Great. Back to my earlier request:",
                           "OK, returning to the first thing:"])
    return f"{lead} {act.request}"


JOURNEY_TEMPLATES = ActTemplates(acts=A.JourneyAct, text=_journey_text, protected=A.journey_values)
