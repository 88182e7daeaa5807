"""Surface realisers: *how* the simulated user says a dialogue act.

:class:`TemplateRealiser` (the default) picks among many phrasings and adds noise at
``p_noise(d)``. Any other realiser (e.g. an LLM over an OpenAI-compatible endpoint) implements
the same :class:`Realiser` protocol and plugs in without touching the dialogue manager.
"""

from __future__ import annotations

import random
from typing import Protocol

from ecomrlve.user import acts as A
from ecomrlve.user.noise import add_noise

ATTRIBUTE_WORDS = {
    "connector_type": "connector", "size": "size", "material": "material", "color": "color",
    "item_form": "form", "quantity": "quantity",
}


class Realiser(Protocol):
    def realise(self, act: A.DialogueAct, rng: random.Random) -> str: ...


def _join(parts: list[str]) -> str:
    if len(parts) <= 1:
        return "".join(parts)
    return ", ".join(parts[:-1]) + " and " + parts[-1]


def _item_text(item: A.RequestedItem, rng: random.Random) -> str:
    text = item.phrase
    if item.quantity and item.quantity > 1:
        text = rng.choice(["{q} of {p}", "{q}x {p}", "{p} (x{q})", "{q} units of {p}"]).format(q=item.quantity, p=text)
    if item.variant:
        attribute, value = item.variant
        text += rng.choice([" in {v}", " ({v})", ", the {v} one", " in {v}, {w}"]).format(v=value, w=ATTRIBUTE_WORDS[attribute])
    return text


class TemplateRealiser:
    """Templates with several phrasings per act, plus typo/abbreviation/slang noise."""

    def __init__(self, p_noise: float = 0.0) -> None:
        self.p_noise = p_noise

    def realise(self, act: A.DialogueAct, rng: random.Random) -> str:
        return add_noise(self._text(act, rng), self.p_noise, rng, A.protected_values(act))

    def _text(self, act: A.DialogueAct, rng: random.Random) -> str:
        if isinstance(act, A.RequestItems):
            items = _join([_item_text(i, rng) for i in act.items])
            text = rng.choice([
                "Hi! Could you add {items} to my cart?", "Hello, I'd like to buy {items}.",
                "Hey, please put {items} in my cart.", "I need {items}. Can you add them to my cart?",
                "Hi there, I'm shopping for {items} - can you set up my cart?",
            ]).format(items=items)
            if act.confirm_first:
                text += " " + rng.choice(["Please check with me before you finish.",
                                          "Let me confirm the cart before you're done.",
                                          "Show me the cart before wrapping up, please."])
            return text
        if isinstance(act, A.Inform):
            return " ".join(self._fact(f, rng) for f in act.facts)
        if isinstance(act, A.StockOutAlternative):
            return rng.choice([
                "Oh no. Then {alt} would work instead.", "That's a shame - I'll take {alt} instead then.",
                "Ok, in that case please get {alt} instead.",
            ]).format(alt=act.alternative)
        if isinstance(act, A.CartCorrection):
            return " ".join(self._issue(i, rng) for i in act.issues)
        if isinstance(act, A.Confirm):
            return rng.choice(["Yes, that's everything. Thanks!", "Looks right to me, go ahead.",
                               "Perfect, that's exactly what I wanted."])
        if isinstance(act, A.NotUnderstood):
            return rng.choice(["Sorry, I'm not sure what you mean. I just need the items I asked for.",
                               "Hm? I only want what I mentioned.", "I don't follow - can you just sort out my cart?"])
        if isinstance(act, A.Acknowledge):
            return rng.choice(["Ok.", "Sounds good.", "Alright, thanks."])
        if isinstance(act, A.GiveUp):
            return rng.choice(["This is taking too long. Never mind, I'll do it myself.",
                               "Forget it, I'll shop somewhere else.", "I give up, bye."])
        if isinstance(act, A.JourneyAct):
            return self._journey(act, rng)
        raise TypeError(f"no template for dialogue act {type(act).__name__}")

    @staticmethod
    def _journey(act: A.JourneyAct, rng: random.Random) -> str:
        if isinstance(act, A.OpenJourney):
            lead = rng.choice(["I have {n} things today. First:", "Hi, a few things ({n}) today - let's start here.",
                               "Hello! I've got {n} requests. To begin with:"]).format(n=act.count)
        elif isinstance(act, A.NextIntent):
            lead = rng.choice(["Thanks! Also:", "Great, thank you. Next thing:", "Perfect. One more thing:",
                               "Thanks. Another thing:"])
        elif isinstance(act, A.InterruptIntent):
            lead = rng.choice(["Oh wait, before that - something more urgent:", "Sorry, quick interruption first:",
                               "Hold on, let's do this first:"])
        else:
            lead = rng.choice(["Thanks! Now back to what I asked before:", "Great. Back to my earlier request:",
                               "OK, returning to the first thing:"])
        return f"{lead} {act.request}"

    @staticmethod
    def _fact(fact: A.Fact, rng: random.Random) -> str:
        word = ATTRIBUTE_WORDS[fact.attribute]
        if fact.value == "any":
            if fact.attribute == "quantity":
                return rng.choice(["Just one of {p}.", "Only one of {p}, please."]).format(p=fact.phrase)
            return rng.choice(["Any {w} is fine for {p}.", "I don't mind which {w} for {p}."]).format(w=word, p=fact.phrase)
        if fact.attribute == "quantity":
            template = (["I already said: {v} of {p}.", "Like I said, {v} of {p}."] if fact.repeated
                        else ["I need {v} of {p}.", "{v} of {p}, please.", "Make it {v} for {p}."])
        else:
            template = (["I already told you, {p} in {v}.", "As I said: {v} for {p}."] if fact.repeated
                        else ["For {p}, {v} please.", "I need {p} in {v}.", "The {v} {w} for {p}."])
        return rng.choice(template).format(v=fact.value, p=fact.phrase, w=word)

    @staticmethod
    def _issue(issue: A.Issue, rng: random.Random) -> str:
        templates = {
            "wrong_variant": ["That's the {got} one of {p}, I need {wanted}.", "Wrong one - {p} should be {wanted}, not {got}."],
            "too_many": ["I only need {wanted} of {p}, not {got}.", "Too many of {p} - {wanted} is enough."],
            "too_few": ["I need {wanted} of {p}, the cart has {got}.", "Please make it {wanted} of {p}."],
            "unwanted": ["I didn't ask for {p}, please remove it.", "Why is {p} in my cart? I don't want it."],
            "missing": ["You're still missing {p}.", "{p} isn't in the cart yet."],
        }
        return rng.choice(templates[issue.kind]).format(p=issue.phrase, wanted=issue.wanted, got=issue.got)
