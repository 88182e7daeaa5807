"""The facts PD, SUB and BUNDLE verdicts rest on (and RETURN's replacement): each requirement as the shopper
says it, and each judged product's value of the requirement's field as its card shows it
(:mod:`ecomrlve.envs.explain` finds where each was first observable)."""

from __future__ import annotations

import json
from typing import Any

from ecomrlve.envs.explain import Fact, Said, Shown, Transcript, Verdict, Where

#: Requirement field -> the card field a product's value of it is shown in.
CARD_FIELD = {"price_max": "price", "price_min": "price", "rating_min": "rating", "ship_days_max": "ship_days",
              "wattage_min": "wattage", "screen_size_min": "screen_size", "weight_max": "weight"}
#: How the shopper says a requirement's value ({v}), whatever phrasing it picks (phrasings.py).
_SAID: dict[str, tuple[str, ...]] = {
    "price_max": ("${v}",), "price_min": ("${v}",), "rating_min": ("{v} stars", "at least {v}", "{v}+ stars"),
    "ship_days_max": ("{v} days",), "wattage_min": ("{v}W", "{v} watts"),
    "screen_size_min": ("{v} inches", "{v}-inch"), "weight_max": ("{v} lb",), "size": ("size {v}",),
}
#: How the shopper says a product is sold out (SoldOut's phrasings).
SOLD_OUT_SAID = ("is sold out now", "isn't available anymore", "I just checked")
_DISCOVERY = ("catalog_search", "catalog_get_product", "catalog_get_variants", "user_get_visit_history")


def value_text(value: Any) -> str:
    """A requirement's value as the shopper says it (``Requirement.text``)."""
    return value if isinstance(value, str) else f"{value:g}"


def requirement_said(field: str, value: Any) -> Said:
    v = value_text(value)
    return Said(tuple(f.replace("{v}", v) for f in _SAID.get(field, ("{v}",))))


def meets(field: str, required: Any, shown: str | None) -> bool | None:
    """Whether a card's shown value meets a requirement (None: the card does not show it). A variant
    attribute shown as the variants' values ("Black / White") is met when one of them is the value."""
    if shown is None:
        return None
    try:
        value = json.loads(shown)
    except ValueError:
        value = shown
    if field.endswith("_max") or field.endswith("_min"):
        if not isinstance(value, (int, float)):
            return False
        return value <= required if field.endswith("_max") else value >= required
    options = [s.strip().lower() for s in str(value).split(" / ")]
    return str(required).lower() in options


def requirement_facts(requirements: list[dict[str, Any]], withheld: set[int], name: str = "",
                      due: int | None = None) -> list[Fact]:
    """The facts of stated requirements: what the shopper said, or askable when withheld."""
    out = []
    for i, r in enumerate(requirements):
        if r["field"] == "category":
            continue
        out.append(Fact(f"{name}requires {r['field']}", value_text(r["value"]), requirement_said(r["field"], r["value"]),
                        askable=i in withheld, due=due))
    return out


def product_facts(transcript: Transcript, product_id: str, requirements: list[dict[str, Any]], name: str = "",
                  due: int | None = None) -> list[Fact]:
    """Per requirement, the product's value of its field as a discovery tool showed it, met or not."""
    out = []
    for r in requirements:
        key = "category" if r["field"] == "category" else CARD_FIELD.get(r["field"], r["field"])
        where = Shown(product_id, key, tools=_DISCOVERY)
        seen = transcript.locate(where)
        shown = None if seen is None else seen.shown
        out.append(Fact(f"{name}{product_id} {key}", shown if shown is not None else "?", where,
                        met=meets(r["field"], r["value"], shown), due=due,
                        requires=None if r["field"] == "category" else f"{name}requires {r['field']}"))
    return out


def in_stock_fact(product_id: str, sold_out: bool, due: int | None = None) -> Fact:
    """Whether the product was in stock when judged; a planned sell-out must be shown or said."""
    if sold_out:
        where: Where = Shown(product_id, "in_stock", tools=_DISCOVERY, equals="false")
        return Fact(f"{product_id} sold out", "true", (where, Said(SOLD_OUT_SAID)), met=False, due=due)
    return Fact(f"{product_id} in_stock", "true", Shown(product_id, "in_stock", tools=_DISCOVERY), met=True, due=due)


def final_requirements(goal: dict[str, Any], transcript: Transcript, before: int | None) -> tuple[list[dict[str, Any]], bool]:
    """The requirements the verifier judged on: the goal's, with the planned switch when the shopper said it."""
    requirements = [dict(r) for r in goal.get("requirements", [])]
    switch = goal.get("switch")
    if not switch:
        return requirements, False
    new = switch["requirement"]
    said_it = transcript.locate(requirement_said(new["field"], new["value"]))
    if said_it is not None and (before is None or said_it.turn < before) and said_it.turn > 0:
        requirements[switch["index"]] = dict(new)
        return requirements, True
    return requirements, False


def ranked(goal: dict[str, Any], task: dict[str, Any], answer: dict[str, Any] | None, turn: int | None,
           transcript: Transcript) -> Verdict:
    """PD and SUB: the first answered product must meet every requirement (and be in stock), seen before."""
    requirements, switched = final_requirements(goal, transcript, turn)
    withheld = set(goal.get("withheld", []))
    if switched:
        withheld.discard(goal["switch"]["index"])
    facts = requirement_facts(requirements, withheld)
    if "original_title" in goal:
        facts.insert(0, Fact("replaces", goal["original_title"], Said((goal["original_title"],))))
    else:
        facts.insert(0, Fact("wants", goal.get("noun", ""), Said((goal.get("noun", ""),))))
    notes = ["the requirement switch was said"] if switched else []
    ids = list((answer or {}).get("product_ids") or [])
    if not ids:
        notes.append("no product answered" if answer is not None else "no answer")
        return Verdict(tuple(facts), turn, tuple(notes))
    first = ids[0]
    facts += product_facts(transcript, first, requirements)
    facts.append(in_stock_fact(first, first == goal.get("stock_out_id")))
    if task.get("unseen_ids"):
        notes.append(f"answered without a discovery tool showing them: {', '.join(task['unseen_ids'])}")
    return Verdict(tuple(facts), turn, tuple(notes))


def _slot_of(transcript: Transcript, product_id: str, nouns: list[str]) -> int | None:
    """The bundle slot a product fills, read from the title its card shows (the slot's noun in it)."""
    seen = transcript.locate(Shown(product_id, "title", tools=_DISCOVERY))
    if seen is None:
        return None
    title = seen.shown.lower()
    found = [(len(n), i) for i, n in enumerate(nouns) if n.lower() in title or n.lower().rstrip("s") in title]
    return max(found)[1] if found else None


def bundle(goal: dict[str, Any], task: dict[str, Any], answer: dict[str, Any] | None, turn: int | None,
           transcript: Transcript) -> Verdict:
    """BUNDLE: the named kinds, the budget and each item's requirements; per answered product its kind
    and its values of its item's requirements (and its price, for the budget)."""
    nouns = list(goal.get("nouns", []))
    withheld = set(goal.get("withheld", []))
    facts = [Fact("needs", n, Said((n,))) for n in nouns]
    if goal.get("budget"):
        facts.append(Fact("budget", value_text(goal["budget"]), Said((f"${value_text(goal['budget'])}",))))
    for i, ir in enumerate(goal.get("item_requirements", [])):
        r = ir["requirement"]
        facts.append(Fact(f"{nouns[ir['slot']]}: requires {r['field']}", value_text(r["value"]),
                          requirement_said(r["field"], r["value"]), askable=i in withheld))
    ids = list((answer or {}).get("product_ids") or [])
    notes: list[str] = [] if ids else ["no answer" if answer is None else "no product answered"]
    for pid in dict.fromkeys(ids):
        slot = _slot_of(transcript, pid, nouns)
        if goal.get("budget"):
            facts.append(Fact(f"{pid} price", "?", Shown(pid, "price", tools=_DISCOVERY)))
        if slot is None:
            notes.append(f"{pid}: none of the named kinds")
            continue
        reqs = [ir["requirement"] for ir in goal.get("item_requirements", []) if ir["slot"] == slot]
        facts += product_facts(transcript, pid, reqs, name=f"{nouns[slot]}: ")
    if task.get("unseen_ids"):
        notes.append(f"answered without a discovery tool showing them: {', '.join(task['unseen_ids'])}")
    return Verdict(tuple(_with_shown_values(transcript, facts)), turn, tuple(notes))


def _with_shown_values(transcript: Transcript, facts: list[Fact]) -> list[Fact]:
    out = []
    for f in facts:
        if f.value == "?" and isinstance(f.where, Shown):
            seen = transcript.locate(f.where)
            f = Fact(f.name, seen.shown if seen else "?", f.where, f.askable, f.met, f.due)
        out.append(f)
    return out
