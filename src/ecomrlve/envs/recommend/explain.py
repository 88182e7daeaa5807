"""The facts PD, SUB and BUNDLE verdicts rest on (and RETURN's replacement): each requirement as the shopper
says it, and each judged product's value of the requirement's field as its card shows it
(:mod:`ecomrlve.envs.explain` finds where each was first observable)."""

from __future__ import annotations

import json
from typing import Any

from ecomrlve.envs.explain import Fact, Failure, Said, Shown, Transcript, Verdict, Where

#: Requirement field -> the card field a product's value of it is shown in.
CARD_FIELD = {"price_max": "price", "price_min": "price", "rating_min": "rating", "ship_days_max": "ship_days",
              "wattage_min": "wattage", "screen_size_min": "screen_size", "weight_max": "weight"}
#: How the shopper says a requirement's value ({v}), whatever phrasing it picks (phrasings.py); ``~`` marks a
#: word noise may misspell (:class:`~ecomrlve.envs.explain.Said`).
_SAID: dict[str, tuple[str, ...]] = {
    "price_max": ("${v}",), "price_min": ("${v}",), "rating_min": ("{v} ~stars", "at ~least {v}", "{v}+ ~stars"),
    "ship_days_max": ("{v} ~days",), "wattage_min": ("{v}W", "{v} ~watts"),
    "screen_size_min": ("{v} ~inches", "{v}-~inch"), "weight_max": ("{v} lb",), "size": ("~size {v}",),
}
#: How the shopper says a product is sold out (SoldOut's phrasings), after naming it ({p}: its brand and model).
SOLD_OUT_SAID = ("{p} … ~sold ~out", "{p} … ~available ~anymore", "{p} … ~out of ~stock")
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
        label = key if key == r["field"] else f"{key} (for {r['field']})"
        out.append(Fact(f"{name}{product_id} {label}", shown if shown is not None else "?", where,
                        met=meets(r["field"], r["value"], shown), due=due,
                        requires=None if r["field"] == "category" else f"{name}requires {r['field']}"))
    return out


def in_stock_fact(transcript: Transcript, product_id: str, sold_out: bool, due: int | None = None,
                  said: tuple[str, ...] | None = None) -> Fact:
    """Whether the product was in stock when judged: a product the episode sells out (planned) must be shown
    sold out or said to be (by the shopper, naming it); otherwise the stock the agent saw last before the answer."""
    if sold_out:
        where: Where = Shown(product_id, "in_stock", tools=_DISCOVERY, equals="false")
        if said is None:
            name = brand_model(transcript, product_id)
            said = tuple(f.replace("{p}", name) for f in SOLD_OUT_SAID) if name else ()
        return Fact(f"{product_id} sold out", "true", (where, Said(said)), met=False, due=due)
    where = Shown(product_id, "in_stock", tools=_DISCOVERY)
    last = transcript.last(where, due)
    return Fact(f"{product_id} in_stock", last.shown if last else "?", where,
                met=None if last is None else last.shown == "true", due=due)


def brand_model(transcript: Transcript, product_id: str) -> str:
    """How the shopper's sentences name a product, from the title a tool showed: its words up to the model
    number ("Voltlabs Terra 7" of "Voltlabs Terra 7 45W Power Bank, 20000mAh, Gray"); empty if never shown."""
    seen = transcript.locate(Shown(product_id, "title"))
    if seen is None:
        return ""
    words: list[str] = []
    for word in seen.shown.split(",")[0].split():
        words.append(word)
        if any(ch.isdigit() for ch in word):
            break
    return " ".join(words)


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
    notes = ("the requirement switch was said",) if switched else ()
    ids = list((answer or {}).get("product_ids") or [])
    if not ids:
        return Verdict(tuple(facts), turn, notes, (no_answer(answer),))
    first = ids[0]
    facts.append(kind_fact(transcript, first, goal.get("noun", "")))
    facts += product_facts(transcript, first, requirements)
    if first == goal.get("original_id"):
        facts.append(in_stock_fact(transcript, first, True, turn, said=(goal.get("original_title", ""),)))
    else:
        facts.append(in_stock_fact(transcript, first, first == goal.get("stock_out_id"), turn))
    return Verdict(tuple(facts), turn, notes, unseen_failure(task))


def no_answer(answer: dict[str, Any] | None) -> Failure:
    return Failure("no product answered" if answer is not None else "no answer")


def unseen_failure(task: dict[str, Any]) -> tuple[Failure, ...]:
    unseen = task.get("unseen_ids") or []
    return (Failure(f"answered products no discovery tool showed while the request was handled: {', '.join(unseen)}"),
            ) if unseen else ()


def kind_fact(transcript: Transcript, product_id: str, noun: str, name: str = "", due: int | None = None) -> Fact:
    """The product is the kind asked for: its title (as a tool showed it) names the noun."""
    where = Shown(product_id, "title", tools=_DISCOVERY)
    seen = transcript.locate(where)
    return Fact(f"{name}{product_id} title", seen.shown if seen else "?", where,
                met=None if seen is None else names_kind(seen.shown, noun), due=due, requires=None)


def names_kind(title: str, noun: str) -> bool:
    """Whether a product title names the kind ``noun`` (singular or plural, any case)."""
    t, n = title.lower(), noun.lower()
    return n in t or n.rstrip("s") in t or (n.endswith("y") and n[:-1] + "ies" in t)


def _slot_of(transcript: Transcript, product_id: str, nouns: list[str]) -> int | None:
    """The bundle slot a product fills, read from the title its card shows (the slot's noun in it)."""
    seen = transcript.locate(Shown(product_id, "title", tools=_DISCOVERY))
    if seen is None:
        return None
    found = [(len(n), i) for i, n in enumerate(nouns) if names_kind(seen.shown, n)]
    return max(found)[1] if found else None


def bundle(goal: dict[str, Any], task: dict[str, Any], answer: dict[str, Any] | None, turn: int | None,
           transcript: Transcript) -> Verdict:
    """BUNDLE: the named kinds, the budget and each item's requirements; per answered product its kind (from
    its title), its values of its item's requirements and its price (for the budget)."""
    nouns = list(goal.get("nouns", []))
    withheld = set(goal.get("withheld", []))
    facts = [Fact(f"needs {n}", n, Said((n,))) for n in nouns]
    budget = goal.get("budget")
    if budget:
        facts.append(Fact("budget", value_text(budget), Said((f"${value_text(budget)}",))))
    for i, ir in enumerate(goal.get("item_requirements", [])):
        r = ir["requirement"]
        facts.append(Fact(f"{nouns[ir['slot']]}: requires {r['field']}", value_text(r["value"]),
                          requirement_said(r["field"], r["value"]), askable=i in withheld))
    ids = list((answer or {}).get("product_ids") or [])
    if not ids:
        return Verdict(tuple(facts), turn, (), (no_answer(answer),))
    failures: list[Failure] = list(unseen_failure(task))
    answered: dict[int, str] = {}
    prices: list[str] = []
    total = 0.0
    for pid in dict.fromkeys(ids):
        title = Shown(pid, "title", tools=_DISCOVERY)
        seen = transcript.locate(title)
        facts.append(Fact(f"{pid} title", seen.shown if seen else "?", title))
        if budget:
            where = Shown(pid, "price", tools=_DISCOVERY)
            price = transcript.locate(where)
            facts.append(Fact(f"{pid} price", price.shown if price else "?", where))
            prices.append(f"{pid} price")
            total += float(price.shown) if price is not None and _is_number(price.shown) else 0.0
        slot = _slot_of(transcript, pid, nouns)
        if slot is None:
            failures.append(Failure(f"{pid} is none of the named kinds", (f"{pid} title", *(f"needs {n}" for n in nouns))))
            continue
        facts += product_facts(transcript, pid, [ir["requirement"] for ir in goal.get("item_requirements", [])
                                                  if ir["slot"] == slot], name=f"{nouns[slot]}: ")
        facts.append(in_stock_fact(transcript, pid, False, turn))
        if slot in answered:
            failures.append(Failure(f"{pid} is a second {nouns[slot]} (after {answered[slot]})",
                                    (f"{pid} title", f"needs {nouns[slot]}")))
        answered.setdefault(slot, pid)
    failures += [Failure(f"no {n} answered", (f"needs {n}",)) for i, n in enumerate(nouns) if i not in answered]
    if budget and total > float(budget) + 1e-9:
        failures.append(Failure(f"the shown prices add up to ${total:.2f}, over the budget of ${value_text(budget)}",
                                ("budget", *prices)))
    return Verdict(tuple(facts), turn, (), tuple(failures))


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True
