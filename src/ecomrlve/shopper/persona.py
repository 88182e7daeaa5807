"""Shopper personas: tone, verbosity and typing style, drawn once per episode.

Like the template phrasings, the personas are split into a train half (even positions) and an
eval half (odd positions), so an agent is evaluated against voices it was not trained on.
"""

from __future__ import annotations

from dataclasses import dataclass

from ecomrlve.rng import derive_rng
from ecomrlve.user.realiser import Phrasing, phrasing_options


@dataclass(frozen=True)
class Persona:
    name: str
    tone: str
    verbosity: str
    typing: str

    def describe(self) -> str:
        return f"{self.tone}; {self.verbosity}; {self.typing}"


PERSONAS: tuple[Persona, ...] = (
    Persona("friendly", "friendly and warm", "writes one or two short sentences", "types normally"),
    Persona("terse", "matter-of-fact", "as few words as possible", "mostly lower case, little punctuation"),
    Persona("polite", "polite and a bit formal", "full sentences", "careful spelling and punctuation"),
    Persona("hurried", "in a hurry", "short and to the point", "skips greetings, uses abbreviations like 'pls'"),
    Persona("chatty", "chatty and upbeat", "may add a short remark about why they need it", "types normally"),
    Persona("unsure", "slightly unsure, thinks aloud", "medium length", "lower case, some run-on sentences"),
    Persona("impatient", "a little impatient", "short", "no greeting, blunt"),
    Persona("casual", "casual and relaxed", "short", "informal, lower case, may use 'hey' and 'thx'"),
    Persona("precise", "precise and organised", "states things in order", "clean punctuation"),
    Persona("grateful", "appreciative", "one or two sentences", "says please and thanks"),
)


def draw_persona(key: tuple[object, ...], phrasing: Phrasing) -> Persona:
    """The persona of the episode with ``key``, from the ``phrasing`` half."""
    return derive_rng(*key, "shopper-persona").choice(list(phrasing_options(PERSONAS, phrasing)))
