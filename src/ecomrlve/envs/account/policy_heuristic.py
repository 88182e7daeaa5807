"""The POLICY heuristic baseline: it works the answer out from the policy text it was shown.

It sees only what an agent sees. It recognises the question by its wording (the kinds' public
wordings), searches each policy section that kind of question needs by its title (the titles together
when they do not fit in the turn), reads the
membership tier from the profile and the item from the order history when the customer did not
state them, and applies the rules the sections state to the numbers it parses from their tables (a yes/no
answer comes with the window or warranty length it rests on).
A fact it cannot read takes the most common value (an item it cannot place follows the fallback
row; an unreadable reason is a change of mind). It never asks the customer anything, and it is
not the oracle: noise in the item's noun or in the customer's reason can mislead it.
"""

from __future__ import annotations

import calendar
import datetime as dt
import difflib
import functools
import re
from collections.abc import Callable
from typing import Any

from ecomrlve.actions import AgentAction, numbered_call
from ecomrlve.envs.account.heuristic import best_item, stated_reason
from ecomrlve.envs.account.orders import spoken_date
from ecomrlve.envs.account.policy import ITEM_FIELDS, KINDS, Kind, section_searches
from ecomrlve.prompts import stated_tool_budget
from ecomrlve.protocol import Observation, tool_results, user_text

_TODAY = re.compile(r"Today is \w+, (\w+ \d+, \d{4})")
_TIER = re.compile(r"\b(Standard|Plus|Premier) m[a-z]*")  # "I'm a Plus member" (not the "Plus 8" of a title)
_TIER_VALUE = re.compile(r"(Standard|Plus|Premier) members: \+?\$?(\d+(?:\.\d+)?)( days| months|%|)")
_DEPARTMENT_VALUE = re.compile(r"(.+?) (\d+)")
_ALIASES = re.compile(r"(\w+) \(also named ([^)]*)\)")
_CATEGORIES = re.compile(r"(\w+)(?: \(also named [^)]*\))?: ([^.]+)\.")
_FALLBACK = re.compile(r"follow the (\w+) row")
_MONEY = re.compile(r"\$(\d+\.\d\d)")
_COUNT = re.compile(r"(?<![\d.$])(\d+)(?![\d.])")
_ORDERED_ON = re.compile(r"\b((?:" + "|".join(calendar.month_name[1:]) + r") \d{1,2})\b")  # "I ordered on July 7"
_NAMED_CATEGORY = re.compile(r"from the (.+?) category of the (.+?) department")
_SHIPPING_METHOD = re.compile(r"\b(standard|expedited|overnight)\b")
_WORD = re.compile(r"[a-z0-9]+")


def _cents(dollars: str | float) -> int:
    return round(float(dollars) * 100)


def _percent_of(cents: int, percent: float) -> int:
    """``percent`` % of an amount in cents, rounded half up to a cent, as the fee sections say."""
    return (cents * round(percent) + 50) // 100


_IRREGULAR_PLURALS = {"mice": "mouse", "knives": "knife", "shelves": "shelf", "feet": "foot", "teeth": "tooth"}


def _stem(word: str) -> str:
    """A word's singular: "leashes" -> "leash", "mats" -> "mat", "mice" -> "mouse"."""
    if word in _IRREGULAR_PLURALS:
        return _IRREGULAR_PLURALS[word]
    if word.endswith("es") and word[:-2].endswith(("sh", "ch", "x", "ss")):
        return word[:-2]
    return word[:-1] if word.endswith("s") and not word.endswith("ss") else word


def _stems(text: str) -> list[str]:
    return [_stem(word) for word in _WORD.findall(text.lower())]


def _share_said(category: str, said: list[str]) -> float:
    """The share of a category name's words the customer said (one typo tolerated in words of 4+ letters)."""
    stems, long_words = _stems(category), [w for w in said if len(w) >= 4]
    found = [s in said or (len(s) >= 4 and difflib.get_close_matches(s, long_words, n=1, cutoff=0.75)) for s in stems]
    return sum(map(bool, found)) / max(1, len(stems))


def _tier_number(text: str, tier: str, unit: str = "") -> float:
    """``tier``'s number in a list such as "Standard members: $4.99; Plus members: $0.00; ..." (0 if absent)."""
    values = {t.lower(): float(v) for t, v, u in _TIER_VALUE.findall(text) if u == unit}
    return values.get(tier, 0.0)


def _kind_of(question: str) -> Kind:
    """The kind whose wording the end of the customer's message is closest to (typos tolerated)."""
    tail = question[-160:].lower()
    return max(KINDS, key=lambda k: difflib.SequenceMatcher(None, k.question.lower(), tail[-len(k.question):]).ratio())


class PolicyCase:
    """What the heuristic has read: the customer's words, the policy sections, the tier, the order line."""

    def __init__(self, said: str, sections: dict[str, str], tier: str, today: dt.date,
                 line: dict[str, Any] | None) -> None:
        self.said, self.sections, self.tier, self.today, self.line = said, sections, tier, today, line

    def tier_value(self, section: str, unit: str = "") -> float:
        """The customer's tier's number in the section's tier list, in ``unit`` (" days", " months", "%", "" for $)."""
        return _tier_number(self.sections.get(section, ""), self.tier, unit)

    def department_value(self, section: str) -> float:
        """The item's rule row's number in the section's "by department" table."""
        table = self.sections.get(section, "").partition("by department: ")[2].partition(". ")[0]
        values = {m.group(1): float(m.group(2)) for m in map(_DEPARTMENT_VALUE.match, table.split("; ")) if m}
        return values.get(self.item[1], 0.0)

    @functools.cached_property
    def item(self) -> tuple[str, str]:
        """The item's category and the department rule row it follows, from the order line, the named
        category and department, or the category in the departments section the customer's words fit best."""
        text = self.sections.get("departments", "")
        fallback = _FALLBACK.search(text)
        rows: dict[str, str] = {row: row for row, _ in _CATEGORIES.findall(text)}
        rows.update((alias, row) for row, aliases in _ALIASES.findall(text) for alias in re.findall(r"'([^']*)'", aliases))
        default: str = fallback.group(1) if fallback else "Other"
        named = _NAMED_CATEGORY.search(self.said)
        if self.line is not None:
            return self.line["category"], rows.get(self.line["department"], default)
        if named:
            return named.group(1), rows.get(named.group(2), default)
        words = _stems(self.said)
        listed = [(category, row) for row, names in _CATEGORIES.findall(text) for category in names.split(", ")]
        scored = [(_share_said(c, words), len(_stems(c)), -i, c, row) for i, (c, row) in enumerate(listed)]
        best = max(scored, default=(0.0, 0, 0, "", default))
        return (best[3], best[4]) if best[0] > 0 else ("", default)

    def final_sale(self) -> bool:
        """The item's category is listed as final sale (without a category: a listed one the customer's words name)."""
        listed = self.sections.get("final-sale", "").rpartition(": ")[2].rstrip(".").split(", ")
        category, words = self.item[0], _stems(self.said)
        return category in listed if category else any(_share_said(c, words) == 1 for c in listed)

    def days_since(self, field: str) -> int:
        """Days since the delivery (``delivered_on``) or the order (``order_date``): from the order, or the
        customer's count ("It was delivered 12 days ago", the only bare number they say about an item
        without an order)."""
        if self.line is not None and field in self.line:
            return (self.today - dt.date.fromisoformat(self.line[field])).days
        stated = _COUNT.search(self.said)
        return int(stated.group(1)) if stated else 0

    def amounts(self) -> list[int]:
        """The customer's amounts in cents; the order line's price paid first when the item is in an order."""
        stated = [_cents(a) for a in _MONEY.findall(self.said)]
        return ([_cents(self.line["unit_price"])] if self.line else []) + stated

    def paid(self) -> int:
        """The price paid (or the order subtotal), in cents: the first amount."""
        return next(iter(self.amounts()), 0)

    def window(self) -> float:
        return self.department_value("return-window") + self.tier_value("return-window", " days")

    def warranty(self) -> float:
        months = self.department_value("warranty")
        return months + self.tier_value("warranty", " months") if months else 0.0

    def restocking_fee(self, reason: str) -> int:
        if "sealed" in self.said or "never opened" in self.said or self.store_fault(reason):
            return 0
        fee = _percent_of(self.paid(), self.department_value("restocking-fee"))
        return _percent_of(fee, self.tier_value("restocking-fee", "%"))

    def store_fault(self, reason: str) -> bool:
        faults = self.sections.get("restocking-fee", "").partition("returns of ")[2].partition(" items")[0]
        return reason != "no_longer_needed" and reason.removesuffix("_item").replace("_", " ") in re.split(r", | or ", faults)

    def reason(self) -> str:
        return stated_reason(self.said)

    def refund(self) -> float:
        if self.final_sale() or self.days_since("delivered_on") > self.window():
            return 0.0
        reason = self.reason()
        fees = self.restocking_fee(reason)
        if not self.store_fault(reason):
            for sentence in self.sections.get("return-shipping", "").split(". "):
                method, _, fees_by_tier = sentence.partition(": ")
                if method.lower() in self.said.lower():
                    fees += _cents(_tier_number(fees_by_tier, self.tier))
        return max(0, self.paid() - fees) / 100

    def shipping(self) -> tuple[str, float, float]:
        """The customer's shipping method, its days after shipping and its price (in dollars)."""
        stated = _SHIPPING_METHOD.search(self.said)
        method = stated.group(1) if stated else "standard"
        found = re.search(rf"{method} (\d+) days?, \$(\d+\.\d\d)", self.sections.get("shipping-methods", ""))
        return method, float(found.group(1)) if found else 0.0, float(found.group(2)) if found else 0.0

    def shipping_cost(self) -> float:
        method, _, price = self.shipping()
        if method == "standard":
            return 0.0 if self.paid() >= _cents(self.tier_value("free-shipping")) else price
        if method == "expedited":
            return _percent_of(_cents(price), self.tier_value("expedited-shipping", "%")) / 100
        return price

    def price_adjustment(self) -> float:
        amounts = self.amounts()
        if len(amounts) < 2 or self.days_since("order_date") > self.tier_value("price-adjustment", " days"):
            return 0.0
        text = self.sections.get("price-adjustment", "")
        share = self.tier_value("price-adjustment", "%") if "a share of the difference" in text else 100.0
        return _percent_of(max(0, amounts[0] - amounts[-1]), share) / 100

    def delivery_days(self) -> float:
        handling = re.search(r"leave the warehouse (\d+) day", self.sections.get("shipping-methods", ""))
        return (int(handling.group(1)) if handling else 0) + self.shipping()[1]

    def under_warranty(self) -> bool:
        month = re.search(r"month counts as (\d+) days", self.sections.get("warranty", ""))
        return self.days_since("delivered_on") <= self.warranty() * (int(month.group(1)) if month else 30)


#: yes/no kind name -> the policy number its answer rests on, as the case reads it (the answer's basis)
_BASES: dict[str, Callable[[PolicyCase], float]] = {
    "final_sale": lambda c: c.department_value("return-window"),
    "can_return": PolicyCase.window,
    "under_warranty": PolicyCase.warranty,
}

#: kind name -> how the case answers it (the refund questions read the reason and return method when stated)
_RULES: dict[str, Callable[[PolicyCase], float | bool]] = {
    "base_window": lambda c: c.department_value("return-window"),
    "final_sale": lambda c: not c.final_sale(),
    "delivery_days": PolicyCase.delivery_days,
    "free_shipping_threshold": lambda c: c.tier_value("free-shipping"),
    "price_match_window": lambda c: c.tier_value("price-adjustment", " days"),
    "return_window": PolicyCase.window,
    "warranty_months": PolicyCase.warranty,
    "shipping_cost": PolicyCase.shipping_cost,
    "can_return": lambda c: not c.final_sale() and c.days_since("delivered_on") <= c.window(),
    "under_warranty": PolicyCase.under_warranty,
    "restocking_fee": lambda c: c.restocking_fee("no_longer_needed") / 100,
    "price_adjustment": PolicyCase.price_adjustment,
    "refund": PolicyCase.refund,
    "refund_reason": PolicyCase.refund,
    "refund_full": PolicyCase.refund,
}


class PolicyLookups:
    """What a POLICY agent keeps of its lookups (the sections read, the tier, the orders) and its next turn: the
    calls :meth:`_lookups` still names, within the tool budget, else :meth:`_answer` (the heuristic and the
    reference agent differ only in how they read the question and work out the answer)."""

    def __init__(self) -> None:
        self.b_tool = 1
        self.today = dt.date.min
        self.said = ""
        self.sections: dict[str, str] = {}
        self.titles: set[str] = set()
        self.searched: set[str] = set()
        self.tier: str | None = None
        self.orders: list[dict[str, Any]] | None = None
        self.looked_up: set[str] = set()

    def _read(self, observation: Observation, said: str) -> None:
        """Keep what the customer said and what the tools returned."""
        self.said += " " + said
        for name, result in tool_results(observation):
            if name == "policy_search":
                for section in result.get("sections", []):
                    self.sections[section["section_id"]] = section["text"]
                    self.titles.add(section["title"].lower())
            elif name == "user_get_profile":
                self.tier = result.get("membership_tier")
            elif name == "order_list":
                self.orders = result.get("orders", [])

    def _next_turn(self) -> AgentAction:
        calls = self._lookups()[: self.b_tool]
        if calls:
            self.searched.update(arguments["query"] for name, arguments in calls if name == "policy_search")
            self.looked_up.update(name for name, _ in calls)
            return AgentAction(tool_calls=tuple(numbered_call(name, i, **arguments) for i, (name, arguments) in enumerate(calls)))
        return AgentAction(tool_calls=(numbered_call("answer", 0, **self._answer()),))

    def _lookups(self) -> list[tuple[str, dict[str, Any]]]:
        raise NotImplementedError

    def _answer(self) -> dict[str, Any]:
        raise NotImplementedError


class PolicyHeuristic(PolicyLookups):
    """Searches the sections the question needs, looks up the tier and the item when unstated, applies the rules."""

    def __init__(self) -> None:
        super().__init__()
        self.kind: Kind | None = None

    def act(self, observation: Observation) -> AgentAction:
        if observation.tools is not None:
            prompt = observation.messages[0]["content"]
            today = _TODAY.search(prompt)
            self.b_tool = stated_tool_budget(prompt) or 1
            self.today = dt.datetime.strptime(today.group(1), "%B %d, %Y").date() if today else dt.date.min
        said = user_text(observation)
        if self.kind is None and said:
            self.kind = _kind_of(said)
        self._read(observation, said)
        return self._next_turn()

    def _lookups(self) -> list[tuple[str, dict[str, Any]]]:
        """The calls still to make: a search per needed section not yet seen, the profile, the orders."""
        kind = self.kind
        if kind is None:
            return []
        lookups: list[tuple[str, dict[str, Any]]] = []
        if "tier" in kind.conditions and not _TIER.search(self.said) and "user_get_profile" not in self.looked_up:
            lookups.append(("user_get_profile", {}))
        if (set(kind.conditions) & set(ITEM_FIELDS) and _ORDERED_ON.search(self.said)
                and "order_list" not in self.looked_up):
            lookups.append(("order_list", {}))
        queries = section_searches(kind.sections, self.sections, self.searched, max(1, self.b_tool - len(lookups)))
        return [("policy_search", {"query": q}) for q in queries] + lookups

    def _answer(self) -> dict[str, Any]:
        stated = _TIER.search(self.said)
        tier = (stated.group(1) if stated else self.tier or "standard").lower()
        case = PolicyCase(self.said, self.sections, tier, self.today, self._line())
        kind = self.kind or KINDS[0]
        value = _RULES[kind.name](case)
        if kind.answer == "yes_no":
            basis = _BASES.get(kind.name)
            return {"yes_no": "yes" if value else "no", **({"basis": basis(case)} if basis else {})}
        return {"value": round(float(value), 2)}

    def _line(self) -> dict[str, Any] | None:
        """The order line the customer means: ordered on the date they said, the title closest to their words."""
        ordered_on = _ORDERED_ON.search(self.said)
        if not self.orders or not ordered_on:
            return None
        lines = [dict(item, order_date=o["order_date"], delivered_on=o.get("delivered_on"))
                 for o in self.orders for item in o["items"]]
        dated = [line for line in lines if spoken_date(dt.date.fromisoformat(line["order_date"])) == ordered_on.group(1)]
        line = best_item(self.said, dated or lines)
        return {k: v for k, v in line.items() if v is not None} if line else None

