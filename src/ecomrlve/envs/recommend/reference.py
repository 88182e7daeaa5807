"""Reference agents for PD, SUB and BUNDLE: honest shop assistants that see only observations.

They read the opening, ask one natural open question (from the training half of the understanding bank:
:data:`QUESTIONS`), read the shopper's words into requirements (:func:`read_requirements`, tolerant of
typos: the values a shopper states are never misspelt, the words around them may be), search with the
exact filters the schema offers, read the cards (attributes; a product has a variant attribute value when
one of its variants has it), keep to stock and budget, and answer.

* :class:`RecommendReference` (PD, SUB): asks what else matters (the shopper states withheld
  requirements and every preference the ranking weighs), searches the category under every requirement,
  and answers the valid products ranked by the preferences as said ("cheaper is better - the further below
  $26, the better" weighs price down to nothing at $26; "matters a lot" weighs more than "a small plus";
  SUB: likeness to the original, read from its card, weighs half).
* :class:`BundleReference` (BUNDLE): asks whether any item has further needs, then answers the cheapest
  in-stock product of each item's category that meets that item's requirements (cheapest keeps the
  budget whenever any choice does).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any

from ecomrlve.actions import AgentAction, numbered_call
from ecomrlve.catalog.product_type import fold, title_head, type_of_title
from ecomrlve.catalog.schema import short_title
from ecomrlve.envs.recommend.heuristic import episode_setup
from ecomrlve.protocol import Observation, cards, tool_results, user_text
from ecomrlve.user.text import one_typo

#: Every question the agents ask: (bank id, template). Each is a message of the training half of
#: ``tests/data/understanding/bank.jsonl``, verbatim (none has a slot).
QUESTIONS: dict[str, tuple[str, str]] = {
    "open": ("open-146", "Is there anything else I should be looking for?"),
    "bundle_open": ("open-140", "Anything special for any of the items on your list?"),
}

_SENTENCES = re.compile(r"(?<=[.!?])\s+|\s+-\s+|;\s*")
_WORD = re.compile(r"[a-z0-9]+")


# -- reading the shopper's words ------------------------------------------------------------------

def is_word(token: str, word: str) -> bool:
    """``token`` is ``word`` or, for a word of three letters or more, ``word`` with one typo."""
    token = token.lower()
    return token == word or (len(word) >= 3 and len(token) >= 2 and one_typo(token, word))


#: The words a shopper's requirement phrases are built from: misspelt ones are read as these.
KEYWORDS = ("with", "from", "made", "color", "colour", "size", "connector", "connection", "form", "least", "most",
            "more", "less", "than", "cheaper", "costing", "priced", "budget", "rated", "stars", "star", "higher",
            "rating", "shipping", "arriving", "delivered", "within", "days", "day", "watts", "screen", "inches", "inch",
            "bigger", "weighing", "heavier", "around", "about", "further", "below", "under", "the", "for", "and", "some",
            "pair", "need", "together", "spend", "total", "cost", "should")
_TOKEN = re.compile(r"[A-Za-z]+")


def normalise(text: str) -> str:
    """``text`` with each misspelt lower-case word that is one typo from exactly one :data:`KEYWORDS` word
    read as that word (values are capitalised or numbers, and a shopper never misspells them)."""
    def fix(match: re.Match[str]) -> str:
        token = match.group(0)
        if not token.islower() or len(token) < 3 or token in KEYWORDS:
            return token
        near = [w for w in KEYWORDS if len(w) >= 4 and one_typo(token, w)]
        if set(near) == {"from", "form"}:  # "frm", "fom": the brand's word ("in Gel form" is never misspelt so)
            return "from"
        if len({w[:4] for w in near}) == 1:  # "stard": "stars" or "star", the same word
            return near[0]
        return token
    return _TOKEN.sub(fix, re.sub(r"(?<!\S)w/(?=\s)", "with", text))


_NUMBER = r"(\d+(?:,\d{3})*(?:\.\d+)?)"
_VALUE = r"([A-Z0-9][\w.+&'/-]*(?:\s+(?:[A-Z0-9][\w.+&'/-]*))*)"
_BRAND = r"((?:[A-Z0-9]|[a-z]+[A-Z])[\w.+&'/-]*(?:\s+(?:&|(?:[A-Z0-9]|[a-z]+[A-Z])[\w.+&'/-]*))*)"  # "Sonora", "iOttie", "B&O"
#: (pattern, requirement field): numbers with their units, in the order they are tried.
_NUMERIC = (
    (re.compile(_NUMBER + r"\+?\s+stars?\b"), "rating_min"),
    # "rating of at least 4", its small words perhaps with typos ("of at lest")
    (re.compile(r"\brat(?:ing|ed)\s+(?:[a-z]{1,3}\s+)?(?:[a-z]{1,3}\s+[a-z]{3,6}\s+)?" + _NUMBER), "rating_min"),
    (re.compile(_NUMBER + r"\s+days?\b"), "ship_days_max"),
    (re.compile(_NUMBER + r"\s?(?:W\b|watts\b)"), "wattage_min"),
    (re.compile(_NUMBER + r"(?:\s+inches\b|-inch\b|-inc\w*|\s+inch\b)"), "screen_size_min"),
    (re.compile(_NUMBER + r"\s+lbs?\b"), "weight_max"),
)
_PRICE = re.compile(r"\$" + _NUMBER)
#: (pattern, field): categorical values by the words around them ("in": color or material, by the value).
_CATEGORICAL = (
    (re.compile(r"\bin\s+(?:[a-z]{1,5}\s+)?colou?r\s+" + _VALUE), "color"),  # "in the colour V", "the" perhaps misspelt
    (re.compile(r"\bin\s+" + _VALUE + r"\s+colou?r\b"), "color"),
    (re.compile(r"\bin\s+" + _VALUE + r"\s+form\b"), "item_form"),
    (re.compile(r"\bas\s+an?\s+" + _VALUE), "item_form"),
    (re.compile(r"\bmade\s+of\s+" + _VALUE), "material"),
    (re.compile(r"\bsize\s+" + _VALUE), "size"),
    (re.compile(r"\bwith\s+an?\s+" + _VALUE + r"\s+connector\b"), "connector_type"),
    (re.compile(r"\bwith\s+" + _VALUE + r"\s+connection\b"), "connector_type"),
    (re.compile(r"\b(?:from|form|by)\s+(?!the\b)" + _BRAND), "brand"),
    (re.compile(r"\bin\s+" + _VALUE), "in"),
)
#: Materials as people know them: "in Wool" is a material, "in Navy" a colour.
MATERIAL_WORDS = frozenset({"stainless steel", "cast iron", "aluminum", "aluminium", "ceramic", "glass", "bamboo",
                            "silicone", "cotton", "polyester", "wool", "leather", "nylon", "plastic", "wood", "linen",
                            "mesh", "steel", "iron", "copper", "foam", "rubber", "canvas", "metal", "fleece", "denim"})


@dataclass
class Said:
    """What the shopper's words state: requirements by field, and the preferences the ranking weighs."""

    requirements: dict[str, str | float] = field(default_factory=dict)
    preferences: dict[str, float] = field(default_factory=dict)  # kind -> weight (strong 1, mild 0.25)
    price_reference: float | None = None


def _price_kind(before: str, after: str) -> str:
    """"min", "max" or "appeal" for a price, from the words just before and after it ("at least $10",
    "not cheaper than $10", "$10 or more": min; "the further below $26, the better": where the price's appeal ends)."""
    words = _TOKEN.findall(before)[-3:]
    following = _TOKEN.findall(after)[:2]
    if any(is_word(w, "further") for w in words[-2:]):
        return "appeal"
    at_least = len(words) >= 2 and words[-2].lower() == "at" and not is_word(words[-1], "most")
    if (words and is_word(words[-1], "least")) or at_least or any(is_word(w, "cheaper") for w in words[-2:]) or (
            len(following) == 2 and following[0].lower() == "or" and is_word(following[1], "more")):
        return "min"
    return "max"


def _number(text: str) -> float:
    return float(text.replace(",", ""))


def read_requirements(text: str, materials: frozenset[str] = MATERIAL_WORDS) -> dict[str, str | float]:
    """The requirements one stretch of the shopper's words states, by :class:`~ecomrlve.catalog.filters.ProductFilter`
    field (the leaf category aside). Product names (after "the") are not requirements."""
    text = normalise(text)
    found: dict[str, str | float] = {}
    for match in _PRICE.finditer(text):
        kind = _price_kind(text[:match.start()], text[match.end():])
        if kind != "appeal":
            found[f"price_{kind}"] = _number(match.group(1))
    rest = _PRICE.sub(" ", text)
    for pattern, name in _NUMERIC:
        for match in pattern.finditer(rest):
            number = _number(match.group(1))
            found[name] = int(number) if name == "ship_days_max" else number
        rest = pattern.sub(" ", rest)
    for pattern, name in _CATEGORICAL:
        for match in pattern.finditer(rest):
            value = match.group(1).strip().rstrip(".")
            attribute = name if name != "in" else "material" if value.lower() in materials else "color"
            found.setdefault(attribute, value)
        rest = pattern.sub(" ", rest)
    return found


_PREFERENCE_KINDS = (  # (kind, words that name it), in the words of a shopper's soft wishes
    ("price", ("cheaper", "price", "saving", "lower")),
    ("rating", ("rating", "rated", "reviews")),
    ("shipping", ("shipping", "arrives", "delivery")),
    ("popularity", ("popular", "well-known")),
    ("similar", ("close", "like the", "similar")),
)
_STRONG = ("matters", "the better", "the sooner", "really", "as possible", "is better")
_MILD = ("small plus", "bonus", "would be nice", "wouldn't mind", "a bit like")


def read_preferences(sentence: str) -> tuple[str, float] | None:
    """(kind, weight) of a soft wish ("Fast shipping matters a lot to me": shipping, 1.0; "Good reviews would be a
    small plus": rating, 0.25), or None if the sentence states none."""
    lowered = sentence.lower()
    strong = any(w in lowered for w in _STRONG)
    mild = any(w in lowered for w in _MILD)
    if not (strong or mild):
        return None
    if "popular" in lowered or "many reviews" in lowered or "lots of reviews" in lowered:
        kind = "popularity"
    else:
        kind = next((k for k, words in _PREFERENCE_KINDS if any(w in lowered for w in words)), "")
    if not kind:
        return None
    return kind, 0.25 if mild else 1.0


def read_said(text: str, said: Said, materials: frozenset[str] = MATERIAL_WORDS) -> None:
    """Update ``said`` with the requirements and preferences in ``text`` (later words override earlier ones)."""
    for sentence in _SENTENCES.split(text):
        # "the further below $26, the better": the price has no appeal left from twice the reference
        for match in _PRICE.finditer(sentence):
            if _price_kind(sentence[:match.start()], sentence[match.end():]) == "appeal":
                said.price_reference = _number(match.group(1)) / 2
        preference = read_preferences(sentence)
        if preference is not None:
            said.preferences[preference[0]] = preference[1]
            continue
        said.requirements.update(read_requirements(sentence, materials))


# -- reading cards --------------------------------------------------------------------------------

def card_values(card: dict[str, Any], attribute: str) -> set[str]:
    """A card's values of ``attribute``: its own and each of its variants' (lower case)."""
    values = {str(card.get("attributes", {}).get(attribute, "")).lower()} - {""}
    values |= {str(v[attribute]).lower() for v in card.get("variants", []) if attribute in v}
    return values


_BOUNDS = {"price_max": ("price", 1), "price_min": ("price", -1), "rating_min": ("rating", -1),
           "ship_days_max": ("ship_days", 1), "wattage_min": ("wattage", -1), "screen_size_min": ("screen_size", -1),
           "weight_max": ("weight", 1)}


def meets(card: dict[str, Any], requirements: dict[str, str | float]) -> bool:
    """Whether a card shows that its product meets every requirement (bounds on its fields and attributes,
    the brand in any letter case, an attribute value on the product or one of its variants)."""
    for name, value in requirements.items():
        if name in _BOUNDS:
            key, direction = _BOUNDS[name]
            have = card.get(key, card.get("attributes", {}).get(key))
            if not isinstance(have, (int, float)) or (have - float(value)) * direction > 1e-6:
                return False
        elif name == "brand":
            if str(card.get("brand", "")).lower() != str(value).lower():
                return False
        elif str(value).lower() not in card_values(card, name):
            return False
    return True


def of_type(card: dict[str, Any], noun: str) -> bool:
    """Whether a card's title names a product of type ``noun`` (not an accessory for one)."""
    own = {fold(noun): noun, fold(str(card.get("category", ""))): str(card.get("category", ""))}
    return fold(type_of_title(str(card.get("title", "")), own)) == fold(noun)


def _folded_words(text: str) -> set[str]:
    return {fold(word) for word in _WORD.findall(text.lower())}


def named_cards(cards: list[dict[str, Any]], name: str) -> list[dict[str, Any]]:
    """The cards ``name`` fits (how a shopper names a product: "the Brightix Nova 21 charger"): every word of it is
    a word of the card's brand and title head (plural or singular), else of its first clause, else of its whole
    title: the narrowest reading that fits any ("Nova 3" is not the "Nova 13 ..., Pack of 3"). The type at the
    end of a name may be the shopper's word for what the title says otherwise ("smartwatch" for "Smart Watch"):
    then up to two last words may be missing."""
    words = [fold(word) for word in _WORD.findall(name.lower()) if word != "the"]
    for drop in range(min(3, len(words))):
        wanted = set(words[:len(words) - drop])
        for part in (title_head, short_title, str):
            found = [c for c in cards if wanted <= _folded_words(f"{part(str(c.get('title', '')))} {c.get('brand', '')}")]
            if found:
                return found
    return []


_GONE_NAME = re.compile(r"\b([A-Za-z]{1,4})\s+([A-Z0-9].+?)\s+(?:is|isn't|are|aren't|r)\b")


def gone_names(sentence: str) -> list[str]:
    """The product names a sold-out sentence mentions ("the Lumio Nano 4 22W power bank is sold out now")."""
    return [m.group(2) for m in _GONE_NAME.finditer(sentence) if is_word(m.group(1), "the")] or [sentence]


def gone(cards: list[dict[str, Any]], sentence: str) -> set[str]:
    """The ids of the cards a sentence saying products are gone names."""
    return {c["product_id"] for name in gone_names(sentence) for c in named_cards(cards, name)}


def says_sold_out(sentence: str) -> bool:
    """Whether a sentence of the shopper's says a product is gone ("sold out", "out of stock", "isn't available")."""
    words = _TOKEN.findall(sentence)
    for i, word in enumerate(words):
        following = words[i + 1].lower() if i + 1 < len(words) else ""
        if (is_word(word, "sold") and is_word(following, "out")) or is_word(word, "stock") or is_word(word, "available"):
            return True
    return False


def sold_out_sentences(text: str) -> list[str]:
    """The shopper's sentences that say a product is gone."""
    return [sentence for sentence in _SENTENCES.split(text) if says_sold_out(sentence)]


# -- PD and SUB -----------------------------------------------------------------------------------

_ARTICLE = re.compile(r"^(?:\S+\s+)?(?:similar\s+)?(?:\S+\s+of\s+)?", re.IGNORECASE)
_STOP = ("for", "costing", "not", "priced", "rated", "with", "shipping", "arriving", "delivered", "from", "made", "by",
         "in", "size", "as", "weighing", "no", "and")


def noun_after(phrase: str) -> str:
    """The product noun at the start of ``phrase`` ("a desk lamp with at least 8W" -> "desk lamp")."""
    words = _ARTICLE.sub("", phrase.strip()).split()
    noun: list[str] = []
    for word in words:
        bare = word.strip(",.?!-:")
        if not bare or bare == "w/" or any(is_word(bare, stop) for stop in _STOP) or bare.startswith("$"):
            break
        noun.append(bare)
        if bare != word:
            break
    return " ".join(noun)


_THE = re.compile(r"\b([A-Za-z]{2,4})\s+(?=[A-Z0-9])")
_NAME_END = re.compile(r",|[.?!](?:\s|$)|\s+I\s|\s+(?:is|are|r|ar|aer|ae|iss)\s|\s+\S{1,5}\s+(?:\S{1,4}'(?:s|re)|its|theyre)\b")


def original_name(opening: str) -> str:
    """The product a SUB shopper wanted: "the {name}" (a misspelt "the" too) up to what the openings say next
    (", but it's out of stock", " I wanted is sold out", " but they're unavailable", " is out of stock");
    the whole opening if there is no such name."""
    for match in _THE.finditer(opening):
        if is_word(match.group(1), "the"):
            end = _NAME_END.search(opening, match.end())
            if end is not None:
                return opening[match.end():end.start()]
    return opening


MAX_SEARCH_ROUNDS = 4  # searches under the requirements as known, before answering with what they showed


class RecommendReference:
    """PD/SUB reference agent: ask once, search the category under every requirement, answer the best ranked."""

    def __init__(self) -> None:
        self.b_tool = 1
        self.k = 10
        self.cap = 200
        self.search_rounds = 0
        self.sub = False
        self.noun = ""
        self.original_name = ""
        self.original: dict[str, Any] | None = None
        self.category = ""
        self.said = Said()
        self.seen: dict[str, dict[str, Any]] = {}  # product id -> latest card
        self.order: list[str] = []
        self.sold_out: set[str] = set()
        self.searched_with: tuple[dict[str, str | float], str] | None = None  # (requirements, category) searched
        self.searching = False  # the last turn searched under every requirement
        self.stock_unclear = False  # the shopper said a product sold out that no one card seen answers to
        self.candidates: list[str] = []  # what those searches showed
        self.materials: set[str] = set(MATERIAL_WORDS)

    # -- reading ---------------------------------------------------------------------------------
    def _read_opening(self, system: str, opening: str) -> None:
        self.sub = "out of stock: find similar" in system  # the task as the system prompt states it
        if self.sub:  # "the Brightix Nova 21 65W Charger, but it's out of stock", "The ... I wanted is sold out"
            self.original_name = original_name(opening)
            after = opening[opening.index(self.original_name) + len(self.original_name):]
            similar = re.search(r"\b(?:an?|some)\s+(?:\S+)\s+(.+?)(?:[.?!](?:\s|$)|$)", after)
            self.noun = noun_after("a " + similar.group(1)) if similar else ""
            read_said(opening.replace(self.original_name, " "), self.said)
        else:
            words = opening.split()
            start = next((i for i, w in enumerate(words) if _is_article(w) and not (  # "an you": a misspelt "Can"
                i + 1 < len(words) and words[i + 1].lower() in ("you", "u"))), 0)
            self.noun = noun_after(" ".join(words[start:])) or opening
            read_said(opening, self.said)

    def _read_reply(self, text: str) -> None:
        cleaned = text.replace(self.original_name, " ") if self.original_name else text  # its model words are no bounds
        for sentence in _SENTENCES.split(cleaned):
            if sold_out_sentences(sentence) or re.search(r"\b(?:looks good|like the)\b", sentence, re.IGNORECASE):
                continue
            read_said(sentence, self.said, frozenset(self.materials))
        for sentence in sold_out_sentences(text):
            for name in gone_names(sentence):
                named = named_cards(list(self.seen.values()), name)
                if len(named) == 1:
                    self.sold_out.add(named[0]["product_id"])
                else:  # no card, or several, answer to the name: look at the stock again
                    self.stock_unclear = True

    def by_brand(self, name: str) -> list[dict[str, Any]]:
        """Cards of the brand a name starts with, the most of the name's words in their title first (a listing
        shows the title's first clause; the model words a shopper says may come later)."""
        words = _folded_words(name)
        mine = [c for c in self.seen.values() if _folded_words(str(c.get("brand", ""))) <= words]
        return sorted(mine, key=lambda c: -len(words & _folded_words(str(c.get("title", "")))))

    def _read_cards(self, observation: Observation) -> None:
        for card in cards(observation):
            pid = card["product_id"]
            if pid not in self.seen:
                self.order.append(pid)
            self.seen[pid] = card
            self.materials |= {str(card.get("attributes", {}).get("material", "")).lower()}
            self.materials |= {str(v["material"]).lower() for v in card.get("variants", []) if "material" in v}

    def _find_category(self) -> None:
        """The category of the product asked for: SUB, the original's; PD, the commonest among cards of its type."""
        if self.sub and self.original is None:
            matches = named_cards(list(self.seen.values()), self.original_name) or self.by_brand(self.original_name)
            sold_out = [c for c in matches if not c.get("in_stock")]
            if matches:
                self.original = (sold_out or matches)[0]
                self.category = str(self.original.get("category", ""))
                category = self.category
                kind = type_of_title(str(self.original["title"]), {fold(category): category})
                if not self.noun or not of_type(self.original, self.noun):
                    self.noun = kind
        if not self.category:
            counts: dict[str, int] = {}
            for card in self.seen.values():
                if of_type(card, self.noun):
                    counts[str(card["category"])] = counts.get(str(card["category"]), 0) + 1
            if not counts:  # "smartwatch" finds straps filed under Smartwatches: the category they name
                for card in self.seen.values():
                    counts[str(card["category"])] = counts.get(str(card["category"]), 0) + 1
            if counts:
                self.category = max(counts, key=lambda c: (counts[c], c))

    # -- acting ----------------------------------------------------------------------------------
    def act(self, observation: Observation) -> AgentAction:
        if observation.tools is not None:  # ask what else matters; meanwhile find the product (SUB) or its kind (PD)
            self.b_tool, self.k, opening = episode_setup(observation)
            self._read_opening(observation.messages[0]["content"], opening)
            query = self.original_name if self.sub else self.noun
            return AgentAction(message=QUESTIONS["open"][1],
                               tool_calls=(numbered_call("catalog_search", 0, query=query, top_k=self.cap),))
        for _, result in tool_results(observation):
            cap = result.get("top_k_cap") if isinstance(result, dict) else None
            if isinstance(cap, int):
                self.cap = cap
        self._read_cards(observation)
        if self.searching:
            self.candidates = list(dict.fromkeys(card["product_id"] for card in cards(observation)))
            self.searching = False
        self._read_reply(user_text(observation))
        self._find_category()
        requirements = dict(self.said.requirements)
        if self.stock_unclear:
            self.searched_with, self.stock_unclear = None, False
        if self.searched_with != (requirements, self.category) and self.search_rounds < MAX_SEARCH_ROUNDS:
            self.searched_with = (requirements, self.category)
            self.search_rounds += 1
            self.searching = True
            filters: dict[str, Any] = {**requirements, "in_stock": True}
            if self.category:
                filters["category"] = self.category
            query = "" if self.category else self.noun  # within the category, list all that match, in that order
            calls = [numbered_call("catalog_search", 0, query=query, filters=filters,
                                   sort_by="rating", top_k=self.cap)]
            for i, order in enumerate(("price_asc", "ship_days")[: self.b_tool - 1]):
                calls.append(numbered_call("catalog_search", i + 1, query=query, filters=filters,
                                           sort_by=order, top_k=self.cap))
            return AgentAction(tool_calls=tuple(calls))
        return AgentAction(tool_calls=(numbered_call("answer", 0, product_ids=self.ranked()[: self.k]),))

    def ranked(self) -> list[str]:
        """The valid products seen, best first by the preferences as said."""
        requirements = self.said.requirements
        valid = [c for pid in self.candidates or self.order if (c := self.seen[pid]).get("in_stock") and pid not in self.sold_out
                 and (not self.category or c.get("category") == self.category) and of_type(c, self.noun)
                 and meets(c, requirements) and (self.original is None or pid != self.original["product_id"])]
        if not valid:
            return []
        prices = sorted(c["price"] for c in valid)
        reference = self.said.price_reference or prices[len(prices) // 2]
        weights = {kind: self.said.preferences.get(kind, 0.25) for kind in ("price", "rating", "shipping", "popularity")}
        total = sum(weights.values())

        def utility(card: dict[str, Any]) -> float:
            return (weights["price"] * (1 - min(1.0, card["price"] / (2 * reference)))
                    + weights["rating"] * (card["rating"] - 1) / 4
                    + weights["shipping"] * (1 - (min(card["ship_days"], 14) - 1) / 13)
                    + weights["popularity"] * min(1.0, math.log1p(card.get("rating_count", 0)) / 10)) / total

        def score(card: dict[str, Any]) -> float:
            if self.original is None:
                return utility(card)
            return 0.5 * self.likeness(card) + 0.5 * utility(card)

        return [c["product_id"] for c in sorted(valid, key=lambda c: -score(c))]

    def likeness(self, card: dict[str, Any]) -> float:
        """How alike a card is to the original's: 0.6 shared brand and attributes, 0.4 shared title words."""
        original = self.original or {}
        attributes = original.get("attributes", {})
        same = int(card.get("brand") == original.get("brand"))
        for name, value in attributes.items():
            have = card.get("attributes", {}).get(name)
            if isinstance(value, (int, float)) and isinstance(have, (int, float)):
                same += abs(have - value) <= 1e-8 + 1e-5 * abs(value)
            else:
                same += have == value
        words = set(_WORD.findall(short_title(str(original.get("title", ""))).lower()))
        title_words = set(_WORD.findall(str(card.get("title", "")).lower()))
        overlap = len(words & title_words) / len(words) if words else 0.0
        return 0.6 * same / (1 + len(attributes)) + 0.4 * overlap


# -- BUNDLE ---------------------------------------------------------------------------------------

def bundle_nouns(opening: str) -> list[str]:
    """The things a project needs, from the opening's list ("a tent, a sleeping bag and a pair of running shoes")."""
    words = opening.split()
    start = next((i + 1 for i, w in enumerate(words[:-1]) if (is_word(w, "need") or is_word(w, "together"))
                  and _is_article(words[i + 1])), 0)
    listed = " ".join(words[start:])
    listed = re.split(r"[.?!](?:\s|$)|\s+-\s", listed)[0]
    listed = re.sub(r"\s+\w{2,4}\s+me$", "", listed)  # "... for me?"
    nouns: list[str] = []
    for chunk in listed.split(","):
        words = chunk.split()
        parts: list[list[str]] = [[]]
        for i, word in enumerate(words):
            if (is_word(word, "and") or word == "an") and parts[-1] and i + 1 < len(words) and _is_article(words[i + 1]):
                parts.append([])
                continue
            parts[-1].append(word)
        for part in parts:
            if part and _is_article(part[0]):
                part = part[1:]
            if len(part) > 2 and part[1] == "of":  # "a pair of running shoes"
                part = part[2:]
            if part:
                nouns.append(" ".join(part).lower())
    return list(dict.fromkeys(nouns))


def sentence_noun(sentence: str, nouns: list[str]) -> str | None:
    """The listed noun a sentence is about (the longest it names, allowing a typo per word)."""
    words = _WORD.findall(sentence.lower())
    best = None
    for noun in nouns:
        parts = _WORD.findall(noun.lower())
        for start in range(len(words) - len(parts) + 1):
            if all(is_word(words[start + j], p) or words[start + j] == p for j, p in enumerate(parts)):
                if best is None or len(noun) > len(best):
                    best = noun
                break
    return best


def most_common(values: list[str]) -> str:
    """The value met most often (the first met among equals)."""
    return max(dict.fromkeys(values), key=values.count)


def _is_article(word: str) -> bool:
    return word.lower() in ("a", "an") or is_word(word, "some")


@dataclass
class Slot:
    """One thing the project needs: its noun, its requirements, the cards seen for it and the searches done
    under its current requirements."""

    noun: str
    requirements: dict[str, str | float] = field(default_factory=dict)
    cards: dict[str, dict[str, Any]] = field(default_factory=dict)  # product id -> latest card
    searched: list[tuple[str, str]] = field(default_factory=list)  # (query, category) under these requirements
    searches: int = 0

    def next_search(self) -> tuple[str, str] | None:
        """Where to look next: the noun as a category name (its whole listing), then the noun as words in any
        category, then the listing of the category its cards turned up in."""
        found = [str(c["category"]) for c in self.cards.values() if of_type(c, self.noun)] or [
            str(c["category"]) for c in self.cards.values()]  # "smartwatch" finds straps filed under Smartwatches
        plan = [("", self.noun), (self.noun, "")] + ([("", most_common(found))] if found else [])
        return next((step for step in plan if step not in self.searched), None)


MAX_SEARCHES = 4  # per item


class BundleReference:
    """BUNDLE reference agent: ask once about the items' needs, then per item the cheapest card meeting them."""

    def __init__(self) -> None:
        self.b_tool = 1
        self.cap = 200
        self.slots: list[Slot] = []
        self.sold_out: set[str] = set()
        self.pending: list[int] = []  # slots searched this turn, in call order
        self.materials: set[str] = set(MATERIAL_WORDS)

    def _read(self, text: str) -> None:
        """Each sentence's requirements go to the item it names ("For the dog leash: ..."); the budget needs no
        reading (the cheapest products that meet the requirements keep it whenever any do)."""
        nouns = [s.noun for s in self.slots]
        for sentence in _SENTENCES.split(text):
            if says_sold_out(sentence):
                continue
            found = {k: v for k, v in read_requirements(sentence, frozenset(self.materials)).items()
                     if not k.startswith("price_")}
            noun = sentence_noun(sentence, nouns) if found else None
            if noun is not None:
                slot = next(s for s in self.slots if s.noun == noun)
                if any(slot.requirements.get(k) != v for k, v in found.items()):
                    slot.requirements.update(found)
                    slot.searched = []

    def act(self, observation: Observation) -> AgentAction:
        message = None
        text = user_text(observation)
        if observation.tools is not None:
            self.b_tool, _, text = episode_setup(observation)
            self.slots = [Slot(noun) for noun in bundle_nouns(text)]
            message = QUESTIONS["bundle_open"][1]
        results = [r for name, r in tool_results(observation) if name == "catalog_search"]
        for index, result in zip(self.pending, results):
            if isinstance(result.get("top_k_cap"), int):
                self.cap = result["top_k_cap"]
            for card in result.get("results", []):
                self.slots[index].cards[card["product_id"]] = card
        for card in cards(observation):
            self.materials |= card_values(card, "material")
        for sentence in sold_out_sentences(text):
            self.sold_out |= {pid for slot in self.slots for pid in gone(list(slot.cards.values()), sentence)}
        self._read(text)
        todo = [(i, step) for i, s in enumerate(self.slots)
                if self.pick(s) is None and s.searches < MAX_SEARCHES and (step := s.next_search()) is not None]
        todo = todo[: self.b_tool]
        self.pending = [i for i, _ in todo]
        if todo:
            calls = []
            for n, (index, (query, category)) in enumerate(todo):
                slot = self.slots[index]
                slot.searches += 1
                slot.searched.append((query, category))
                filters: dict[str, Any] = {**slot.requirements, "in_stock": True}
                if category:
                    filters["category"] = category
                calls.append(numbered_call("catalog_search", n, query=query, filters=filters, sort_by="price_asc",
                                           top_k=self.cap))
            return AgentAction(message=message, tool_calls=tuple(calls))
        picks = [p for s in self.slots if (p := self.pick(s)) is not None]
        return AgentAction(message=message, tool_calls=(numbered_call("answer", 0, product_ids=picks),))

    def pick(self, slot: Slot) -> str | None:
        """The cheapest in-stock card of the item's type that meets its requirements."""
        fitting = [c for pid, c in slot.cards.items() if c.get("in_stock") and pid not in self.sold_out
                   and of_type(c, slot.noun) and meets(c, slot.requirements)]
        return str(min(fitting, key=lambda c: c["price"])["product_id"]) if fitting else None
