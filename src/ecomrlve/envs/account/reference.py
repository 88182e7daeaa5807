"""Reference agents for RETURN, STATUS and POLICY: honest agents that see only observations.

They read the system prompt (today's date, the tool budget), the customer's words and tool results
(through :mod:`ecomrlve.protocol`), never the goal, the world or the catalog. They find the order line
the customer describes (an order id, a product and date, or a product type and a rough time such as
"about 3 months ago"), ask a natural question when more than one line fits, check eligibility with the
store's tool, ask the customer's go-ahead before an irreversible action when asked to, and answer POLICY
questions from the policy sections they searched. Every question they ask is a message of the training
half of ``tests/data/understanding/bank.jsonl`` with the values in play filled in (:data:`QUESTIONS`).
"""

from __future__ import annotations

import datetime as dt
import difflib
import functools
import math
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ecomrlve.actions import AgentAction, numbered_call
from ecomrlve.catalog.product_type import fold, type_of_title
from ecomrlve.catalog.schema import short_title
from ecomrlve.envs.account.policy_heuristic import _BASES, _CATEGORIES, _RULES, PolicyCase, PolicyLookups
from ecomrlve.prompts import stated_tool_budget
from ecomrlve.protocol import Observation, cards, tool_results, user_text
from ecomrlve.user.text import one_typo

# -- the questions it asks: (bank id, template); the template is the bank message with its values as slots ----

QUESTIONS: dict[str, tuple[str, str]] = {
    "which_items": ("which-008", "Was it the {a} or the {b}?"),
    "which_order": ("which-002", "Which order do you mean?"),
    "reason": ("reason-000", "Why are you returning it?"),
    "confirm_return": ("confirm-020", "Would you like me to start the return for the {item}?"),
}


def question(name: str, **values: str) -> str:
    """The message of question ``name`` with the values in play."""
    return QUESTIONS[name][1].format(**values)


# -- reading text ---------------------------------------------------------------------------------

_WORD = re.compile(r"[a-z0-9]+(?:[-'][a-z0-9]+)*")
_TODAY = re.compile(r"Today is \w+, (\w+ \d+, \d{4})")
ORDER_ID = re.compile(r"\bO[0-9A-Z]{8}\b")
_MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
           "november", "december")
_SPOKEN_DATE = re.compile(r"\b(" + "|".join(m.capitalize() for m in _MONTHS) + r") (\d{1,2})\b")
_ROUGH = re.compile(r"\b(a few days|about a week|about (\d+) weeks|about (\d+) months) ago\b")
_WEEKDAY = re.compile(r"\bon (Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday)\b")
_IRREGULAR = {"mice": "mouse", "knives": "knife", "shelves": "shelf", "feet": "foot", "teeth": "tooth"}


def stem(word: str) -> str:
    """A word's singular, roughly: "bottles" -> "bottle", "leashes" -> "leash"."""
    if word in _IRREGULAR:
        return _IRREGULAR[word]
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith("es") and word[:-2].endswith(("sh", "ch", "x", "ss")):
        return word[:-2]
    return word[:-1] if word.endswith("s") and not word.endswith(("ss", "us")) and len(word) > 3 else word


def stems(text: str) -> list[str]:
    return [stem(w) for w in _WORD.findall(text.lower())]


def fuzzy_in(word: str, words: Iterable[str]) -> bool:
    """Whether ``word`` is among ``words``, one typo tolerated in words of 4+ letters."""
    pool = list(words)
    return word in pool or (len(word) >= 4 and bool(difflib.get_close_matches(word, pool, n=1, cutoff=0.75)))


def says(text: str, phrase: str) -> bool:
    """Whether ``text`` says every word of ``phrase`` (typos tolerated)."""
    words = stems(text)
    return all(fuzzy_in(w, words) for w in stems(phrase))


def today_of(observation: Observation) -> dt.date | None:
    """Today's date as the system prompt states it."""
    for message in observation.messages:
        if message["role"] == "system":
            found = _TODAY.search(message["content"])
            if found:
                return dt.datetime.strptime(found.group(1), "%B %d, %Y").date()
    return None


def tool_budget(observation: Observation) -> int | None:
    for message in observation.messages:
        if message["role"] == "system":
            return stated_tool_budget(message["content"])
    return None


def spoken(day: dt.date) -> str:
    """"March 3", as people say a date."""
    return f"{day:%B} {day.day}"


def rough_span(text: str) -> tuple[int, int] | None:
    """The ages in days a rough time in ``text`` may mean ("about 3 months ago": 74-106 days, half a unit
    either side and a day of slack), None when it says none."""
    found = _ROUGH.search(text)
    if not found:
        return None
    if found.group(1) == "a few days":
        return 0, 9
    unit, count = (7, 1) if found.group(1) == "about a week" else (
        (7, int(found.group(2))) if found.group(2) else (30, int(found.group(3))))
    return math.ceil(unit * (count - 0.5) - 1), math.floor(unit * (count + 0.5) + 1)


def named_dates(text: str) -> list[str]:
    """The dates a text names, as said ("March 3")."""
    return [f"{m} {int(d)}" for m, d in _SPOKEN_DATE.findall(text)]


# -- order lines ------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Line:
    """One order item as order_list shows it, with its order's facts."""

    order_id: str
    status: str
    placed: dt.date
    eta: str | None
    title: str
    category: str
    product_id: str
    price: float

    @property
    def name(self) -> str:
        """How the line is named to the customer ("Zenware Arc 33 Silicone Water Bottle")."""
        return short_title(self.title)


def order_lines(result: dict[str, Any]) -> list[Line]:
    return [Line(o["order_id"], o["status"], dt.date.fromisoformat(o["order_date"]), o.get("eta"), item["title"],
                 item.get("category", ""), item["product_id"], float(item.get("unit_price", 0.0)))
            for o in result.get("orders", []) for item in o.get("items", [])]


_NAME_WORD = re.compile(r"\b[A-Z0-9][A-Za-z0-9.'&+-]*")
_NOT_NAMES = frozenset({"I", "I'm", "I'd", "Hi", "Hello", "Hey", "Can", "Could", "Sorry", "It", "It's", "The", "Neither",
                        "None", "Yes", "No", "Because", "Please", "And", "Not", "What", "Where", "When", "Any", "Quick",
                        "Don't", "Ask", "Reason", "Well", "That's", "Oh", "OK", "Ok", "Thanks"})


def name_words(text: str) -> set[str]:
    """The words of ``text`` that name a product: capitalised words and numbers (brand, model), not dates, rough
    times or sentence openers."""
    text = _ROUGH.sub(" ", _SPOKEN_DATE.sub(" ", text))
    return {w.rstrip(".").lower() for w in _NAME_WORD.findall(text) if w not in _NOT_NAMES and w.rstrip(".")}


_FUNCTION_WORDS = frozenset(
    "the a an i i'm i'd my me you your can could would help return like to order orders from ordered bought want send "
    "back need please with for it it's is on of and in hi hey hello check where what's status news any when will "
    "arrive expect expected delivery date sorry mean meant that this one about ago days weeks months few week month "
    "which what was u pls thanks also".split())


def name_score(text: str, title: str) -> tuple[int, int]:
    """How well ``text`` names the product ``title``: how many of its product-naming words (brand, model) the title
    holds, then how many of its other words (the product type)."""
    words = set(re.findall(r"[a-z0-9][a-z0-9.'&+-]*", title.lower()))
    words |= {w.rstrip(".,") for w in words}
    words |= {stem(w) for w in words}
    names = name_words(text)
    said = _ROUGH.sub(" ", _SPOKEN_DATE.sub(" ", text)).lower()
    others = {w for w in _WORD.findall(said) if w not in _FUNCTION_WORDS and w not in names and len(w) >= 3}
    return len(names & words), len({stem(w) for w in others} & words)


def noun_fits(noun: str, title: str, category: str) -> bool:
    """Whether a product type the customer said ("water bottle") names the product: every word of it is
    in the title or the category (typos tolerated)."""
    words = stems(title + " " + category)
    return bool(stems(noun)) and all(fuzzy_in(w, words) for w in stems(noun))


def described(text: str) -> tuple[str | None, str | None]:
    """(product type, rough time) of a vague reference: "the water bottle I ordered about 2 months ago"."""
    found = re.search(r"\b(?:the|my) ([a-z][a-z' -]*?) (?:I (?:ordered|bought)|order that)", text)
    rough = _ROUGH.search(text)
    return (found.group(1) if found else None), (rough.group(0) if rough else None)


def best(lines: list[Line], text: str) -> list[Line]:
    """The lines whose titles ``text`` names best (all of them when it names none)."""
    scores = [name_score(text, line.title) for line in lines]
    top = max(scores, default=(0, 0))
    return [line for line, s in zip(lines, scores) if s == top] if top[0] >= 1 else lines


def narrow(lines: list[Line], text: str, today: dt.date) -> list[Line]:
    """The lines the customer's words fit: the exact dates they name, else the rough time, else the
    item they name; each filter applies only when something still fits it."""
    dates = named_dates(text)
    if dates:
        dated = [line for line in lines if spoken(line.placed) in dates]
        lines = dated or lines
    span = rough_span(text)
    if span is not None:
        timed = [line for line in lines if span[0] <= (today - line.placed).days <= span[1]]
        lines = timed or lines
    prices = {float(p) for p in re.findall(r"\$(\d+(?:\.\d{1,2})?)", text)}
    if prices:  # "the one I paid $149.86 for"
        lines = [line for line in lines if any(abs(line.price - p) < 0.005 for p in prices)] or lines
    return lines


def distinct_orders(lines: list[Line]) -> list[Line]:
    seen: dict[tuple[str, str], Line] = {}
    for line in lines:
        seen.setdefault((line.order_id, line.product_id), line)
    return list(seen.values())


def which_question(lines: list[Line]) -> str:
    """A natural question that tells the fitting lines apart: by product when two products fit, else which order
    (a customer who spoke of "about 3 months ago" does not know the exact dates to pick from)."""
    if len(lines) == 2 and lines[0].name != lines[1].name:
        return question("which_items", a=lines[0].name, b=lines[1].name)
    return question("which_order")  # the same name twice: the customer says how they know theirs


# -- STATUS -----------------------------------------------------------------------------------------

UNDELIVERED = ("processing", "shipped", "in_transit")
_ETA_WORDS = ("when will it arrive", "when should i expect", "expected delivery date", "when will", "expect it",
              "delivery date")


class StatusReference:
    """Lists the orders, finds the one the customer describes, asks which when several fit, answers from the list."""

    def __init__(self) -> None:
        self.today = dt.date.min
        self.request = ""
        self.replies = ""
        self.lines: list[Line] | None = None
        self.asked = False
        self.turn = 0

    def act(self, observation: Observation) -> AgentAction:
        self.turn += 1
        if self.turn == 1:
            self.today = today_of(observation) or dt.date.min
            self.request = user_text(observation)
        else:
            self.replies += " " + user_text(observation)
        for name, result in tool_results(observation):
            if name == "order_list":
                self.lines = order_lines(result)
        if self.lines is None:
            return AgentAction(tool_calls=(numbered_call("order_list", 0),))
        fitting = self.candidates(self.lines)
        orders = {line.order_id for line in fitting}
        if len(orders) > 1 and not self.asked:
            self.asked = True
            return AgentAction(message=which_question(distinct_orders(fitting)))
        order = fitting[0]
        arguments: dict[str, Any] = {"order_id": order.order_id, "status": order.status}
        if says_any(self.request, _ETA_WORDS) and order.eta:
            arguments["eta"] = order.eta
        return AgentAction(tool_calls=(numbered_call("answer", 0, **arguments),))

    def candidates(self, lines: list[Line]) -> list[Line]:
        """The lines (of distinct orders) that fit what the customer said, best first."""
        request = self.request
        quoted = ORDER_ID.search(request)
        if quoted:
            exact = [line for line in lines if line.order_id == quoted.group(0)]
            if exact:
                return exact
        fitting = lines
        noun, _ = described(request.replace("my order with the ", "the "))
        arrival = _WEEKDAY.search(request)
        if arrival:
            named = re.search(r"\bmy ([a-z][a-z' -]*?) order that", request)
            noun_text = named.group(1) if named else ""
            fitting = [line for line in lines if line.status in UNDELIVERED and line.eta
                       and f"{dt.date.fromisoformat(line.eta):%A}" == arrival.group(1)
                       and noun_fits(noun_text, line.title, line.category)] or lines
        elif noun:
            fitting = [line for line in lines if noun_fits(noun, line.title, line.category)] or lines
        fitting = best(fitting, request)
        fitting = narrow(fitting, request, self.today)
        if self.replies:  # the customer's answer to "which one?": the item and when they ordered it
            fitting = narrow(best(fitting, self.replies), self.replies, self.today)
        return distinct_orders(fitting)


def says_any(text: str, phrases: Iterable[str]) -> bool:
    lowered = text.lower()
    return any(p in lowered for p in phrases) or any(says(text, p) for p in phrases if len(p.split()) >= 3)



# -- RETURN -----------------------------------------------------------------------------------------

#: return reason -> what customers say (checked in this order: "it came broken" is damage, "it broke" a defect)
REASON_WORDS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("damaged", ("arrived damaged", "came broken", "crushed", "damaged")),
    ("wrong_item", ("wrong item", "not what I ordered", "what arrived is not")),
    ("not_as_described", ("description", "not as described", "described")),
    ("no_longer_needed", ("don't need", "changed my mind", "no longer need")),
    ("defective", ("stopped working", "faulty", "won't turn on", "broke", "came apart", "not working")),
)
_SENTENCE = re.compile(r"(?<=[.?!])\s+(?=[A-Za-z])")
_REPLACEMENT_WORDS = ("replacement", "recommend", "suggest")
_REFUSAL = ("not that one", "wrong item", "that's not", "i meant", "no, not", "don't")


def _word_fits(said: str, word: str) -> bool:
    """A said word is ``word`` up to a typo: one changed letter in a short word, 75 % alike in a long one."""
    if said == word:
        return True
    if len(word) <= 3:
        return one_typo(said, word)
    return difflib.SequenceMatcher(None, said, word).ratio() >= 0.75


def says_phrase(text: str, phrase: str) -> bool:
    """Whether ``text`` says ``phrase`` word for word (a typo per word tolerated)."""
    said, words = _WORD.findall(text.lower()), _WORD.findall(phrase.lower())
    return any(all(_word_fits(s, w) for s, w in zip(said[i:i + len(words)], words))
               for i in range(len(said) - len(words) + 1))


def stated_reason(text: str) -> str | None:
    """The return reason the customer's words state, None when they state none."""
    for reason, phrases in REASON_WORDS:
        if any(says_phrase(text, p) for p in phrases):
            return reason
    return None


#: (field, words before the value, words after it): how customers say a replacement requirement
_REQUIREMENT_SHAPES: tuple[tuple[str, str, str], ...] = (
    ("price_max", "for $", "or less"), ("price_max", "for at most $", ""), ("price_max", "costing no more than $", ""),
    ("price_max", "with a budget of $", ""), ("price_min", "costing at least $", ""),
    ("price_min", "not cheaper than $", ""), ("price_min", "priced at $", "or more"),
    ("rating_min", "rated", "stars or higher"), ("rating_min", "with a rating of at least", ""),
    ("rating_min", "with", "+ stars"), ("ship_days_max", "shipping in", "days or less"),
    ("ship_days_max", "arriving within", "days"), ("ship_days_max", "delivered within", "days"),
    ("brand", "from", ""), ("brand", "made by", ""), ("brand", "by", ""), ("color", "in the color", ""),
    ("color", "in", "color"), ("size", "in size", ""), ("size", "size", ""), ("material", "made of", ""),
    ("connector_type", "with a", "connector"), ("connector_type", "with", "connection"),
    ("item_form", "in", "form"), ("item_form", "as a", ""), ("wattage_min", "with at least", "W"),
    ("wattage_min", "with", "watts or more"), ("screen_size_min", "with a screen of at least", "inches"),
    ("screen_size_min", "with a", "-inch screen or bigger"), ("weight_max", "weighing", "lb or less"),
    ("weight_max", "no heavier than", "lb"), ("color_or_material", "in", ""),
)
_NUMERIC = ("price_max", "price_min", "rating_min", "ship_days_max", "wattage_min", "screen_size_min", "weight_max")
_TOKEN = re.compile(r"\$|\+|-inch|\d+(?:\.\d+)?(?=W\b|-inch)|[A-Za-z0-9.&'/-]+")  # "26-inch": the number, then the unit


def _tokens(text: str) -> list[str]:
    return _TOKEN.findall(text)


def _same(a: str, b: str) -> bool:
    a, b = a.lower(), b.lower()
    return one_typo(a, b) or (len(b) >= 4 and difflib.SequenceMatcher(None, a, b).ratio() >= 0.75)


def _shape_fit(piece: str) -> tuple[float, str, str] | None:
    """(fit, field, value) of the requirement shape that reads ``piece`` best: each fixed word said exactly
    counts 1, with a typo 0.5; None when no shape reads it."""
    tokens = _tokens(piece)
    found: list[tuple[float, int, str, str]] = []
    for order, (field, before, after) in enumerate(_REQUIREMENT_SHAPES):
        head, tail = _tokens(before), _tokens(after)
        if len(tokens) <= len(head) + len(tail):
            continue
        pairs = list(zip(tokens, head)) + list(zip(tokens[len(tokens) - len(tail):], tail))
        if not all(_same(t, w) for t, w in pairs):
            continue
        value = " ".join(tokens[len(head): len(tokens) - len(tail)])
        if (field in _NUMERIC and not re.fullmatch(r"\d+(?:\.\d+)?", value)) or "$" in value:
            continue
        fit = sum(1.0 if t.lower() == w.lower() else 0.5 for t, w in pairs)
        found.append((-fit, order, field, value))
    if not found:
        return None
    fit, _, field, value = min(found)
    return -fit, field, (re.sub(r" ?- ?", "-", value) if field not in _NUMERIC else value)


def read_requirement(piece: str) -> tuple[str, str] | None:
    """(field, value) of one requirement phrase ("costing no more than $28" -> ("price_max", "28")), the shape
    whose fixed words fit it best (typos tolerated); None when none fits."""
    fit = _shape_fit(piece)
    return None if fit is None else fit[1:]


def wants_confirmation(text: str) -> bool:
    """Whether the customer asks to confirm before the return is started ("check with me before...")."""
    words = stems(text)
    return fuzzy_in("confirm", words) or (fuzzy_in("check", words) and fuzzy_in("before", words))


@dataclass(frozen=True)
class Replacement:
    """A replacement the customer asks for: the kind of product ("keyboard") and its requirements."""

    noun: str
    requirements: tuple[tuple[str, str], ...]


def replacement_request(text: str) -> Replacement | None:
    """The replacement the customer asks for (no requirements: any product of the kind), None when they ask for
    none: the sentence that asks for a replacement names "another <product> <requirements>"."""
    sentence = next((s for s in _SENTENCE.split(text) if any(fuzzy_in(w, stems(s)) for w in _REPLACEMENT_WORDS)),
                    None)
    if sentence is None:
        return None
    sentence = sentence.rstrip(".?! ")
    head, sep, wanted = sentence.partition(": ")
    if not sep:
        head, sep, wanted = sentence.partition(" - ")
    if not sep:
        words = sentence.split(" ")
        start = next((i + 1 for i, w in enumerate(words) if fuzzy_in(stem(w.lower()), ["recommend", "suggest"])), 0)
        wanted = " ".join(words[start:])
        wanted = re.sub(r"\s+\S+$", "", wanted) if fuzzy_in(wanted.split(" ")[-1].lower(), ["instead"]) else wanted
    wanted = wanted.partition(" ")[2]  # "another" (or "other"), typos and all
    wanted = re.sub(r"\bw/", "with", wanted)
    pieces = [" ".join(words) for words in _split_words(wanted)]
    noun = pieces[0] if pieces else ""
    if pieces:  # the first piece starts with the product type: the requirement starts at its first shape word
        words = pieces[0].split(" ")
        fits = [(fit[0], -i) for i in range(1, len(words)) if (fit := _shape_fit(" ".join(words[i:]))) is not None]
        if fits:
            noun, pieces[0] = " ".join(words[:-max(fits)[1]]), " ".join(words[-max(fits)[1]:])
        else:
            pieces = pieces[1:]
    words = noun.split(" ")
    if len(words) > 2 and words[1] == "of" and any(one_typo(words[0].lower(), w) for w in ("pair", "set", "box")):
        noun = " ".join(words[2:])  # "a pair of running shoes" (typos and all) is running shoes
    return Replacement(noun, tuple(r for r in map(read_requirement, pieces) if r is not None))


def names_kind(title: str, noun: str) -> bool:
    """Whether a listing title names a product of the kind ``noun`` (a "Keyboard Wrist Rest" is no keyboard): the
    type its head names is ``noun`` (:func:`~ecomrlve.catalog.product_type.type_of_title`)."""
    named = fold(type_of_title(title, {fold(noun): noun}))
    return bool(noun) and difflib.SequenceMatcher(None, named, fold(noun)).ratio() >= 0.8  # a typo in what was said


def _split_words(text: str) -> list[list[str]]:
    """The words of a list such as "for $40 or less, in Red and by Acme", one list per item ("and" may have a typo)."""
    pieces: list[list[str]] = [[]]
    for word in text.split(" "):
        bare = word.rstrip(",")
        if not (bare.islower() and one_typo(bare, "and")):
            pieces[-1].append(bare)
        elif pieces[-1]:
            pieces.append([])
        if word.endswith(",") and pieces[-1]:
            pieces.append([])
    return [p for p in pieces if p]


_BOUNDS = {"price_max": ("price", 1), "price_min": ("price", -1), "rating_min": ("rating", -1),
           "ship_days_max": ("ship_days", 1)}


def card_meets(card: dict[str, Any], field: str, value: str) -> bool:
    """Whether a product card shows ``field`` = ``value`` (its attributes, variants or brand, any letter case)."""
    if field == "brand":
        return str(card.get("brand", "")).lower() == value.lower()
    if field in _BOUNDS:
        key, sign = _BOUNDS[field]
        shown = card.get(key)
        return shown is None or sign * (float(shown) - float(value)) <= 1e-9
    if field in _NUMERIC:  # wattage, screen size, weight: the search filter decides
        return True
    fields = ("color", "material") if field == "color_or_material" else (field,)
    shown = [str(v).lower() for f, v in (card.get("attributes") or {}).items() if f in fields]
    shown += [str(v).lower() for variant in card.get("variants") or [] for f, v in variant.items() if f in fields]
    return value.lower() in shown


class ReturnReference:
    """Finds the line the customer describes, asks which when several fit and why when they did not say, checks
    it with return_check_eligibility, asks their go-ahead when they want to confirm first, starts the return (or
    explains why it cannot), finds a replacement by filtered search when asked, answers."""

    def __init__(self) -> None:
        self.turn = 0
        self.today = dt.date.min
        self.b_tool = 1
        self.request = ""
        self.replies = ""
        self.reason: str | None = None
        self.confirm_first = False
        self.wanted: Replacement | None = None
        self.fallback: str | None = None  # a product that meets the requirements but whose title names another kind
        self.lines: list[Line] | None = None
        self.details: dict[str, list[dict[str, Any]]] = {}
        self.asked_which = False
        self.asked_reason = False
        self.asked_confirm = False
        self.confirmed = False
        self.checked: dict[str, Any] | None = None
        self.started = False
        self.refused = False
        self.searches: list[dict[str, Any]] = []
        self.searched = 0
        self.replacement: str | None = None

    # what it reads ------------------------------------------------------------------------------

    def _read(self, observation: Observation) -> None:
        said = user_text(observation)
        if self.turn == 1:
            self.today = today_of(observation) or dt.date.min
            self.b_tool = tool_budget(observation) or 1
            self.request = _SENTENCE.split(said.strip())[0]  # the sentence that names the item
            self.reason = stated_reason(said)
            self.confirm_first = wants_confirmation(said)
            self.wanted = replacement_request(said)
        else:
            self.replies += " " + said
            if self.reason is None and self.asked_reason:
                self.reason = stated_reason(said)
            if self.asked_confirm and said and not any(w in said.lower() for w in _REFUSAL):
                self.confirmed = True
        for name, result in tool_results(observation):
            if name == "order_list":
                self.lines = order_lines(result)
            elif name == "order_get_details" and "lines" in result:
                self.details[result["order_id"]] = [dict(li, order_id=result["order_id"], order_date=result["order_date"])
                                                    for li in result["lines"]]
            elif name == "return_check_eligibility" and "eligible" in result:
                self.checked = result
            elif name == "return_initiate":
                self.started = result.get("status") == "return_started"
                self.refused = not self.started
        if self.wanted is not None and self.replacement is None:
            for card in cards(observation):
                if self._fits(card):
                    line = self.line() or {}
                    if any(names_kind(card.get("title", ""), noun) for noun in (self.wanted.noun, line.get("category"))
                           if noun):
                        self.replacement = card["product_id"]
                        break
                    self.fallback = self.fallback or card["product_id"]

    def _fits(self, card: dict[str, Any]) -> bool:
        line = self.line()
        if self.wanted is None or not card.get("in_stock") or (line is not None and card["product_id"] == line["product_id"]):
            return False
        return all(card_meets(card, f, v) for f, v in self.wanted.requirements)

    # the line -------------------------------------------------------------------------------------

    def _said(self) -> str:
        return self.request + " " + self.replies

    def candidates(self) -> list[Line]:
        """The delivered lines (of distinct orders) that fit the customer's words."""
        request = self.request
        lines = [line for line in self.lines or [] if line.status == "delivered"] or list(self.lines or [])
        noun, _ = described(request)
        if noun:
            lines = [line for line in lines if noun_fits(noun, line.title, line.category)] or lines
        lines = narrow(best(lines, request), request, self.today)
        if self.replies.strip():
            lines = narrow(best(lines, self.replies), self.replies, self.today)
        return distinct_orders(lines)

    def chosen(self) -> Line | None:
        """The line of order_list the customer means: the one that fits their words, or after they answered which
        one, the best fit."""
        if self.lines is None:
            return None
        fitting = self.candidates()
        return fitting[0] if fitting and (len(fitting) == 1 or self.asked_which) else None

    def order_id(self) -> str | None:
        quoted = ORDER_ID.search(self.request)
        if quoted:
            return quoted.group(0)
        chosen = self.chosen()
        return chosen.order_id if chosen else None

    def line(self) -> dict[str, Any] | None:
        """The order line (from order_get_details) the customer means, once it is known."""
        order_id = self.order_id()
        if order_id is None or order_id not in self.details:
            return None
        lines = self.details[order_id]
        chosen = None if ORDER_ID.search(self.request) else self.chosen()
        if chosen is not None:
            lines = [li for li in lines if li["product_id"] == chosen.product_id] or lines
        noun, _ = described(self.request)
        if noun:
            lines = [li for li in lines if noun_fits(noun, li["title"], li.get("category", ""))] or lines
        top = max((name_score(self._said(), li["title"]) for li in lines), default=None)
        lines = [li for li in lines if name_score(self._said(), li["title"]) == top]
        prices = {float(p) for p in re.findall(r"\$(\d+(?:\.\d{1,2})?)", self.replies)}
        if len(lines) > 1 and prices:  # "the one I paid $14.24 for"
            lines = [li for li in lines if any(abs(float(li.get("unit_price", 0)) - p) < 0.005 for p in prices)] or lines
        if len(lines) > 1 and not self.asked_which:  # two lines of the order named alike: ask which
            return None
        return lines[0] if lines else None

    # what it does ---------------------------------------------------------------------------------

    def act(self, observation: Observation) -> AgentAction:
        self.turn += 1
        self._read(observation)
        calls: list[tuple[str, dict[str, Any]]] = []
        message: str | None = None
        line = self.line()
        order_id = self.order_id()
        if line is None:
            if order_id is not None and order_id in self.details:  # its lines named alike: which one?
                self.asked_which = True
                message = question("which_order")
            elif order_id is not None:
                calls.append(("order_get_details", {"order_id": order_id}))
            elif self.lines is None:
                calls.append(("order_list", {}))
            else:
                fitting = self.candidates()
                if not self.asked_which:
                    self.asked_which = True
                    message = which_question(fitting)
                calls += [("order_get_details", {"order_id": o})
                          for o in dict.fromkeys(li.order_id for li in fitting) if o not in self.details]
            if self.reason is None and not self.asked_reason and message is None:
                self.asked_reason = True
                message = question("reason")
        elif self.checked is None:
            calls.append(("return_check_eligibility", {"order_id": line["order_id"], "line_id": line["line_id"]}))
        elif self.checked["eligible"] and not self.started and not self.refused:
            if self.reason is None and not self.asked_reason:
                self.asked_reason = True
                message = question("reason")
            elif self.confirm_first and not self.confirmed:  # asked again while a reply is not a go-ahead
                self.asked_confirm = True
                message = question("confirm_return", item=short_title(line["title"]))
            else:
                calls.append(("return_initiate", {"order_id": line["order_id"], "line_id": line["line_id"],
                                                  "reason": self.reason or "no_longer_needed"}))
        calls = calls[: self.b_tool]
        if line is not None and self.wanted is not None and self.replacement is None and len(calls) < self.b_tool:
            calls += self._searches(line)[: self.b_tool - len(calls)]
        checked = self.checked
        if line is not None and checked is not None and not calls and message is None and (
                self.started or self.refused or not checked["eligible"]) and (
                self.wanted is None or self.replacement is not None or self.searched >= (2 if self.fallback else 3)):
            eligible = bool(checked["eligible"]) and not self.refused
            arguments: dict[str, Any] = {"order_id": line["order_id"], "line_id": line["line_id"], "eligible": eligible}
            if self.replacement or self.fallback:
                arguments["replacement_product_id"] = self.replacement or self.fallback
            if not eligible:
                message = f"I'm sorry, this item can't be returned. {checked.get('explanation', '')}".strip()
            calls = [("answer", arguments)]
        return AgentAction(message=message, tool_calls=tuple(numbered_call(n, i, **a) for i, (n, a) in enumerate(calls)))

    def _searches(self, line: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
        """The catalog searches for a replacement: every requirement as a filter; a value that may be a color or
        a material is tried as each; a wider page on a repeat."""
        if self.searched >= 3:
            return []
        self.searched += 1
        base: dict[str, Any] = {"category": line.get("category"), "in_stock": True}
        ambiguous = []
        for field, value in self.wanted.requirements if self.wanted else ():
            if field in _NUMERIC:
                base[field] = int(value) if field == "ship_days_max" else float(value)
            elif field == "color_or_material":
                ambiguous.append(value)
            else:
                base[field] = value
        options = [base]
        for value in ambiguous:
            options = [dict(o, **{f: value}) for o in options for f in ("color", "material")]
        query = " ".join(dict.fromkeys(p for p in (self.wanted.noun if self.wanted else "", line.get("category")) if p))
        top_k = 20 * self.searched
        return [("catalog_search", {"query": query, "filters": {k: v for k, v in o.items() if v is not None},
                                    "top_k": top_k}) for o in options]



# -- POLICY -----------------------------------------------------------------------------------------

_DEPARTMENTS, _WINDOW, _FINAL, _RESTOCK = "store departments", "return window", "final sale items", "restocking fees"
_REFUND_TOPICS = (_DEPARTMENTS, _WINDOW, _FINAL, _RESTOCK, "return shipping", "refunds")


@dataclass(frozen=True)
class PolicyQuestion:
    """A kind of policy question as the agent recognises it: the words that ask it, the policy topics it searches
    (each a section title, as a search query), whether it depends on the membership tier and on the item."""

    name: str  # the rule it applies (:data:`ecomrlve.envs.account.policy_heuristic._RULES`)
    phrases: tuple[str, ...]  # any of these in the question
    topics: tuple[str, ...]
    tier: bool
    item: bool
    yes_no: bool = False


#: checked in this order (the first whose words the question says)
POLICY_QUESTIONS: tuple[PolicyQuestion, ...] = (
    PolicyQuestion("base_window", ("base return window",), (_DEPARTMENTS, _WINDOW), False, True),
    PolicyQuestion("final_sale", ("returned at all",), (_DEPARTMENTS, _WINDOW, _FINAL), False, True, True),
    PolicyQuestion("can_return", ("still return it",), (_DEPARTMENTS, _WINDOW, _FINAL), True, True, True),
    PolicyQuestion("under_warranty", ("covered by the store warranty", "still covered"), (_DEPARTMENTS, "warranty"),
                   True, True, True),
    PolicyQuestion("warranty_months", ("months of warranty",), (_DEPARTMENTS, "warranty"), True, True),
    PolicyQuestion("delivery_days", ("would it arrive", "how many days would"), ("shipping methods and delivery times",),
                   False, False),
    PolicyQuestion("free_shipping_threshold", ("free standard shipping",), ("free shipping",), True, False),
    PolicyQuestion("price_adjustment", ("price drop",), ("price adjustment",), True, True),
    PolicyQuestion("price_match_window", ("price adjustment",), ("price adjustment",), True, False),
    PolicyQuestion("return_window", ("days do I have to return",), (_DEPARTMENTS, _WINDOW), True, True),
    PolicyQuestion("shipping_cost", ("shipping cost",), ("shipping methods and delivery times", "free shipping",
                                                         "expedited shipping discount"), True, False),
    PolicyQuestion("restocking_fee", ("restocking fee",), (_DEPARTMENTS, _RESTOCK), True, True),
    PolicyQuestion("refund", ("money would I get back", "get back"), _REFUND_TOPICS, True, True),
)
_STATED_TIER = re.compile(r"\b(Standard|Plus|Premier) m[a-z]*")  # "I'm a Plus member" (not a model's "Plus 8")


def policy_question(text: str) -> PolicyQuestion:
    """The kind of question the customer's last sentence asks (typos tolerated); a refund question when none fits."""
    sentences = _SENTENCE.split(text.strip())
    asked = sentences[-1] if sentences else text
    return next((q for q in POLICY_QUESTIONS if any(says_phrase(asked, p) for p in q.phrases)),
                next((q for q in POLICY_QUESTIONS if any(says_phrase(text, p) for p in q.phrases)),
                     POLICY_QUESTIONS[-1]))


#: words the policy rules read in what the customer says, besides the return reasons
_RULE_WORDS = ("sealed", "never", "opened", "changed", "mind", "prepaid", "mail", "label", "drop-off", "partner",
               "store", "home", "pickup", "standard", "expedited", "overnight", "shipping")


class _Case(PolicyCase):
    """The policy rules applied to what the customer said, their return reason read with typos tolerated, the
    item's category read by its head noun."""

    def reason(self) -> str:
        return stated_reason(self.said) or "no_longer_needed"

    @functools.cached_property
    def item(self) -> tuple[str, str]:
        """A category whose head noun the customer said ("a pair of headphones": Over-Ear Headphones, not T-Shirts
        for the "t" of "isn't"), the best fit of those; else as :class:`PolicyCase` reads it."""
        read: tuple[str, str] = PolicyCase.item.func(self)  # type: ignore[attr-defined]
        said = stems(self.said)
        if self.line is not None or " category of the " in self.said or (stems(read[0]) and stems(read[0])[-1] in said):
            return read
        listed = [(category, row) for row, names in _CATEGORIES.findall(self.sections.get("departments", ""))
                  for category in names.split(", ")]
        headed = [(category, row) for category, row in listed if stems(category) and stems(category)[-1] in said]
        if not headed:
            return read
        return max(headed, key=lambda c: sum(w in said for w in stems(c[0])) / len(stems(c[0])))


class PolicyReference(PolicyLookups):
    """Recognises the question, searches the policy topics it needs, reads the tier from the profile and the
    item from the order history when the customer did not say them, works the answer out from the sections
    (:class:`~ecomrlve.envs.account.policy_heuristic.PolicyCase`), and gives a yes/no with the window or warranty
    it rests on."""

    def __init__(self) -> None:
        super().__init__()
        self.turn = 0
        self.question: PolicyQuestion | None = None

    def act(self, observation: Observation) -> AgentAction:
        self.turn += 1
        said = user_text(observation)
        if self.turn == 1:
            self.today = today_of(observation) or dt.date.min
            self.b_tool = tool_budget(observation) or 1
            self.question = policy_question(said)
        self._read(observation, said)
        return self._next_turn()

    def _lookups(self) -> list[tuple[str, dict[str, Any]]]:
        """The calls still to make: the profile and the orders when needed, a search per topic not yet read."""
        q = self.question
        if q is None:
            return []
        lookups: list[tuple[str, dict[str, Any]]] = []
        if q.tier and not _STATED_TIER.search(self.said) and "user_get_profile" not in self.looked_up:
            lookups.append(("user_get_profile", {}))
        if q.item and named_dates(self.said) and "order_list" not in self.looked_up:
            lookups.append(("order_list", {}))
        topics = [t for t in q.topics if not any(t in title or title in t for title in self.titles)
                  and t not in self.searched]
        return lookups + [("policy_search", {"query": t}) for t in topics]

    def _spelled(self) -> str:
        """The customer's words with each lower-case word that is one typo away from a word the rules read (a
        return reason, opened or sealed, a return or shipping method) spelled right ("it arrived admaged" ->
        "damaged"); other words stay as said (a "pair" is no "paid")."""
        vocabulary = {w for _, phrases in REASON_WORDS for p in phrases for w in _WORD.findall(p.lower())}
        vocabulary |= set(_RULE_WORDS)

        def spell(found: re.Match[str]) -> str:
            word = found.group(0)
            if len(word) < 4 or word in vocabulary:
                return word
            return next((v for v in sorted(vocabulary) if one_typo(word, v)), word)

        return re.sub(r"\b[a-z][a-z'-]*\b", spell, self.said)

    def _line(self) -> dict[str, Any] | None:
        """The order line the customer asks about: ordered on the date they name, the title their words name."""
        dates = named_dates(self.said)
        if not self.orders or not dates:
            return None
        lines = [dict(item, order_date=o["order_date"], delivered_on=o.get("delivered_on"))
                 for o in self.orders for item in o.get("items", [])
                 if spoken(dt.date.fromisoformat(o["order_date"])) in dates]
        if not lines:
            return None
        line = max(lines, key=lambda li: name_score(self.said, li["title"]))
        return {k: v for k, v in line.items() if v is not None}

    def _answer(self) -> dict[str, Any]:
        stated = _STATED_TIER.search(self.said)
        tier = (stated.group(1) if stated else self.tier or "standard").lower()
        case = _Case(self._spelled(), self.sections, tier, self.today, self._line())
        q = self.question or POLICY_QUESTIONS[-1]
        value = _RULES[q.name](case)
        if q.yes_no:
            return {"yes_no": "yes" if value else "no", "basis": _BASES[q.name](case)}
        return {"value": round(float(value), 2)}
