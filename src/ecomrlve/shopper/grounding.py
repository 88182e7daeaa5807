"""The grounding check every LLM-written shopper message must pass before the agent sees it.

The LLM never sees the hidden goal, so a faithful model cannot leak it; this check is the
defence against an unfaithful one (and against a server that is not what it claims). It is an
allowlist: a message may contain only what the dialogue act and the conversation so far
already contain. Concretely, with *allowed* = the act's draft, its exact values and every
message the shopper has seen:

* every exact value of the act is present (case-insensitive; numbers compared as numbers, so
  "$45" matches "45.00"; a quantity may be written as a word, "two");
* every number in the message is a number of *allowed* (a withheld price, rating, quantity,
  date or delivery time is a number the message may not introduce);
* every product id the catalog knows (:meth:`Catalog.ids_in_text`) and every order id is in
  *allowed* (no unseen id);
* every catalog brand and attribute value (colour, size, material, ...) it names is in
  *allowed* (no withheld variant, no other requirement's value, no invented product of a known
  brand);
* no text value of the episode's hidden goal (a withheld requirement, the expected answer, a
  reason, a title) that *allowed* does not hold: the check, unlike the prompt, may read the goal;
* length within bounds, and English: at least ``MIN_ASCII_SHARE`` printable ASCII (or characters
  *allowed* holds: a product's name may be written in any script) and, from
  four words on, at least one common English function word (a heuristic: it rejects other
  languages, code and token soup, not bad English); no role labels or chat-template tokens, no
  echo of the prompt ("DRAFT:", "rewrite") and no placeholder in brackets ("[Customer Name]").

It returns the reasons it failed (empty: grounded).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ecomrlve.catalog.derived import derived
from ecomrlve.catalog.schema import CATEGORICAL_ATTRIBUTES, Catalog
from ecomrlve.user.text import contains_word
from ecomrlve.world.account import ORDER_ID

MIN_CHARS = 2
MAX_CHARS_FLOOR = 320  # a message may always be this long ...
MAX_DRAFT_FACTOR = 3  # ... or three times the template draft, whichever is longer
MIN_ASCII_SHARE = 0.97
MAX_NGRAM = 4  # longest brand / attribute value looked up, in words
MIN_NAME_CHARS = 3  # shorter brand or attribute values ("s", "m") are not checked: they match inside words

_NUMBER = re.compile(r"(?<![\w.])\d[\d,]*(?:\.\d+)?")
#: words of normalised (lower-cased) text, letters of any script included, so a catalog brand such as
#: "Löwe" is one word ("[a-z0-9][a-z0-9'&+-]*" on ASCII)
_WORD = re.compile(r"[^\W_](?:[^\W_]|['&+-])*")
_ROLE_LABEL = re.compile(r"(^|\n)\s*(customer|assistant|user|shopper|system)\s*:|<\||\|>|```", re.IGNORECASE)
#: the prompt's scaffolding echoed back, or a template placeholder: "DRAFT:", "Rewrite ...", "[Customer Name]"
_SCAFFOLDING = re.compile(r"\b(draft|rewrite|chat message|as an ai)\b|\[[^\]]{1,40}\]", re.IGNORECASE)
NUMBER_WORDS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
                "eleven", "twelve")
ENGLISH_WORDS = frozenset(  # common function and chat words (the language heuristic; short on purpose)
    "i me my you your it its it's i'm i'd i'll the a an and or but so to for of in on at by from with as "
    "is are was were be been this that that's these those there here please pls can could would will "
    "should need want like just also not no yes ok okay sure good great thanks thank thx hi hello hey "
    "what which how when where why who do does did have has get got any some one all more less than "
    "about question only still now then too very really".split())


def normalise(text: str) -> str:
    """Lower case, straight quotes and hyphens, single spaces."""
    text = text.lower().replace("\u2019", "'").replace("\u2018", "'").replace("\u201c", '"').replace("\u201d", '"')
    text = text.replace("\u2013", "-").replace("\u2014", "-")
    return " ".join(text.split())


def numbers(text: str) -> set[float]:
    """Every number in ``text`` as a float ("$1,299.00" -> 1299.0; "2025-03-04" -> 2025, 3, 4)."""
    out: set[float] = set()
    for match in _NUMBER.findall(text):
        try:
            out.add(float(match.replace(",", "")))
        except ValueError:
            continue
    return out


def _ngrams(text: str) -> set[str]:
    words = _WORD.findall(normalise(text))
    return {" ".join(words[i:i + n]) for n in range(1, MAX_NGRAM + 1) for i in range(len(words) - n + 1)}


@functools.lru_cache(maxsize=8)
def _attribute_values() -> frozenset[str]:
    return frozenset(normalise(v) for values in CATEGORICAL_ATTRIBUTES.values() for v in values
                     if len(v) >= MIN_NAME_CHARS and normalise(v) not in ENGLISH_WORDS)


def _brands(catalog: Catalog) -> frozenset[str]:
    return GROUNDING_BRANDS.of(catalog)


GROUNDING_BRANDS = derived("grounding_brands", lambda catalog: frozenset(
    b for b in catalog.brand_index if len(b) >= MIN_NAME_CHARS and b not in ENGLISH_WORDS))


def value_present(value: str, text: str) -> bool:
    """Whether ``value`` is said in ``text`` (both normalised; numbers as numbers)."""
    value_n = normalise(value)
    for article in ("the ", "a ", "an "):
        if value_n.startswith(article) and len(value_n) > len(article) + 2:
            value_n = value_n[len(article):]
            break
    text_n = normalise(text)
    if value_n in text_n:
        return True
    wanted = numbers(value_n)
    if wanted and _NUMBER.sub("", value_n).strip(" $.,%x") == "":  # the value is a bare number
        number = next(iter(wanted))
        if number in numbers(text_n):
            return True
        return number.is_integer() and 0 <= number < len(NUMBER_WORDS) and \
            re.search(rf"\b{NUMBER_WORDS[int(number)]}\b", text_n) is not None
    return False


@dataclass(frozen=True)
class Grounding:
    """What one LLM message is checked against (see the module docstring)."""

    required: tuple[str, ...]  # exact values the act must state
    allowed: str  # draft + values + the conversation so far, joined
    draft: str
    withheld: tuple[str, ...] = ()  # the hidden goal's text values that allowed does not hold (normalised)

    def failures(self, text: str, catalog: Catalog) -> list[str]:
        """Why ``text`` may not be shown to the agent (empty: it may)."""
        reasons: list[str] = []
        stripped = text.strip()
        if len(stripped) < MIN_CHARS:
            return ["empty"]
        if len(stripped) > max(MAX_CHARS_FLOOR, MAX_DRAFT_FACTOR * len(self.draft)):
            reasons.append("too_long")
        seen = set(self.allowed)  # a name's letters ("Crème", "日本") are no sign of another language
        printable = sum(1 for c in stripped if " " <= c <= "~" or c in "\n\u2019\u2018\u201c\u201d\u2013\u2014" or c in seen)
        words = _WORD.findall(normalise(stripped))
        if printable / len(stripped) < MIN_ASCII_SHARE or (len(words) >= 4 and not ENGLISH_WORDS & set(words)):
            reasons.append("not_english")
        if _ROLE_LABEL.search(stripped):
            reasons.append("role_label")
        allowed_n = normalise(self.allowed)
        if any(normalise(m.group(0)) not in allowed_n for m in _SCAFFOLDING.finditer(stripped)):  # "[2-pack]" in a title is fine
            reasons.append("prompt_echo")
        missing = [v for v in self.required if not value_present(v, stripped)]
        if missing:
            reasons.append("missing_value")
        if not numbers(stripped) <= numbers(self.allowed):
            reasons.append("new_number")
        if not set(catalog.ids_in_text(stripped)) <= set(catalog.ids_in_text(self.allowed)):
            reasons.append("unseen_product_id")
        if not set(ORDER_ID.findall(stripped)) <= set(ORDER_ID.findall(self.allowed)):
            reasons.append("unseen_order_id")
        if any(contains_word(normalise(stripped), value) for value in self.withheld):
            reasons.append("withheld_value")
        said, allowed = _ngrams(stripped), _ngrams(self.allowed)
        if (said - allowed) & _brands(catalog):
            reasons.append("new_brand")
        if (said - allowed) & _attribute_values():
            reasons.append("new_attribute_value")
        return reasons


def hidden_strings(goal: Any) -> set[str]:
    """The normalised text values (3+ characters) of a hidden goal, dumped as JSON data."""
    if isinstance(goal, str):
        return {normalise(goal)} if len(goal.strip()) >= MIN_NAME_CHARS else set()
    if isinstance(goal, dict):
        goal = list(goal.values())
    if isinstance(goal, list):
        return {s for value in goal for s in hidden_strings(value)}
    return set()


def grounding_for(draft: str, required: Iterable[str], history: Iterable[dict[str, str]],
                  hidden: Iterable[str] = ()) -> Grounding:
    """The check for one message: ``required`` values, allowed = draft + values + ``history``; ``hidden``
    (the goal's text values, see :func:`hidden_strings`) may not appear unless allowed holds them."""
    required = tuple(v for v in dict.fromkeys(required) if v and normalise(v) != "any")
    allowed = "\n".join([draft, *required, *(m["content"] for m in history)])
    allowed_n = normalise(allowed)
    withheld = tuple(v for v in hidden if not contains_word(allowed_n, v))
    return Grounding(required, allowed, draft, withheld)
