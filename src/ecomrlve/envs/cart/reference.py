"""The CART reference agent: an honest shop assistant that sees only observations.

It reads the shopper's opening into items (name, stated quantity, stated variant value), finds each
product by searching its name (or in the visit history for "the ... I looked at earlier"; a list shows
each title's first clause only, so where that cannot tell, it reads the likely listings in full), asks in
plain sentences for what it cannot read (which of the card's variant values, how many), tells the
shopper when a product is out of stock and takes the replacement they name, keeps the cart equal to
what the shopper asked for (re-reading every correction), asks for the go-ahead when the shopper asked
to check the cart first, and answers. Every question it asks is a message of the train half of the
natural-message bank (``tests/data/understanding/bank.jsonl``) with the values in play filled in:
:data:`QUESTIONS` keeps each template next to the bank id it comes from.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Literal

from ecomrlve.actions import AgentAction, ToolCall, numbered_call
from ecomrlve.catalog.schema import short_title
from ecomrlve.prompts import stated_tool_budget
from ecomrlve.protocol import Observation, tool_results, user_text
from ecomrlve.user.text import one_typo

#: The questions the agent asks: bank id -> template (the bank message with its values as slots).
#: ``{item}`` is a product as the shopper named it (the bank's "Nexworks Atlas 22 rain jacket", "hoodie"),
#: ``{options}`` the card's variant values joined with commas and "or" (the bank's "XS, M or XXL").
QUESTIONS: dict[str, str] = {
    "attribute-000": "For the {item}, would you like {options}?",
    "attribute-018": "How many would you like?",
    "attribute-020": "Is it just one {item} or more than one?",
    "confirm-004": "Can you confirm the cart looks right?",
}
#: What the agent tells (a statement, not a question: the shopper names what they would like instead).
STOCK_OUT_NOTICE = "Sorry, the {item} is out of stock."

_HISTORY = re.compile(r"\s+I (?:was looking at|looked at|viewed|saw) (?:earlier|before)\b", re.IGNORECASE)
#: Where an item starts in the opening: its article, after an optional count ("3 of", "2x", "4 units of") or words
#: that say more than one without the count ("several units of", "a few units of").
_ITEM_START = re.compile(r"(?:\b(\d+)x\s+|\b(\d+)\s+(?:\S+\s+)?of\s+|\b(?:several|a few) units of\s+)?\bthe\b")
_QTY_SUFFIX = re.compile(r"\s*\(x(\d+)\)$")
#: More than one wanted, the count not said: the agent asks how many.
_SEVERAL = re.compile(r"^(?:several|a few) units of\s+|\s+\((?:more than one|several of them)\)", re.IGNORECASE)
#: Variant phrasings after a name: ", the V one", " in the V <word>", " (V)", " in V" (the small words may carry typos).
_VARIANT_SUFFIXES = (re.compile(r",\s+\S{2,4}\s+(.+?)\s+\S{2,4}$"), re.compile(r"\s+in\s+\S{2,4}\s+(.+?)\s+\S{3,11}$"),
                     re.compile(r"\s+\((?!x\d)([^()]+)\)$"), re.compile(r"\s+in\s+(.+)$"))
_TAIL = (re.compile(r"\s+(?:to|in)\s+my\s+\S+$"), re.compile(r"\s+-\s+[^-]*$"))
#: A title's model words: a capitalised word and a number ("Pro 70", "Flex 8X", "Nova 21").
_MODEL = re.compile(r"\b[A-Z][a-z]+ \d+[A-Z]?\b")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_CONFIRM_WISH_WORDS = ("check", "confirm", "show", "before")
_WORD = re.compile(r"[a-z0-9]+")
_MAX_ASKS = 2  # times one question is asked before the agent goes with what it has
_MAX_LISTINGS = 4  # full listings read for one product name


def _negated(text: str, value: str) -> bool:
    """Whether ``value`` follows "not" in ``text`` ("should be L, not S"), "not" perhaps with one typo ("ot S")."""
    return any(one_typo(m.group(1), "not") for m in re.finditer(r"\b([a-z]+)\s+" + re.escape(value.lower()) + r"\b", text))


def _contains(text: str, phrase: str) -> bool:
    """Whether ``phrase`` occurs in ``text`` as whole words, in any letter case."""
    return re.search(r"(?<![\w-])" + re.escape(phrase) + r"(?![\w-])", text, re.IGNORECASE) is not None


def _options(values: list[str]) -> str:
    return values[0] if len(values) == 1 else ", ".join(values[:-1]) + " or " + values[-1]


@dataclass
class Item:
    """One product the shopper wants, as far as the agent knows it."""

    phrase: str  # the shopper's words, e.g. "the Brightix Nova 21 charger" (kept verbatim to find it in replies)
    quantity: int | None = None
    variant_text: str | None = None  # a variant value the shopper said (matched to the card's values)
    any_variant: bool = False
    card: dict[str, Any] | None = None
    searched: int = 0
    asked_variant: int = 0
    asked_quantity: int = 0
    out_of_stock: bool = False
    announced: int = 0  # times the agent said it is out of stock
    replaced: bool = False  # out of stock, and the shopper named another product instead
    rejected: set[str] = field(default_factory=set)  # product ids the shopper said were not this item
    heard: list[str] = field(default_factory=list)  # what the shopper said of it before its card was seen
    candidates: list[str] = field(default_factory=list)  # product ids whose full listing to read (titles are cut)
    detailed: set[str] = field(default_factory=set)  # product ids whose full listing was asked for
    listings: list[dict[str, Any]] = field(default_factory=list)  # full listings read this turn
    failed_adds: int = 0

    @property
    def name(self) -> str:
        """How the agent names it to the shopper: the shopper's words without the article or "I looked at earlier"."""
        name = _HISTORY.sub("", self.phrase)
        return name[4:] if name.lower().startswith("the ") else name

    @property
    def spoken(self) -> str:
        """How the agent names it: the shopper's words, with the card's model words where they were only "the
        <brand> <type> I looked at earlier" (a brand and a type may fit several of the products talked about): the
        title's first clause where it holds them ("Northio Flex 5 8W Aluminum Desk Lamp"), else the shopper's words
        with the model words put in ("Marisol Home Store Pro 70 spice rack"), else the first clause."""
        if self.card is None or not self.from_history:
            return self.name
        title = str(self.card["title"])
        if _MODEL.search(short_title(title)):  # its title's first clause has the model words ("Northio Flex 5 8W ...")
            return short_title(title)
        model = _MODEL.search(title)
        brand = str(self.card.get("brand") or "")
        if model is None or not brand or not self.name.lower().startswith(brand.lower() + " "):
            return short_title(title)
        return f"{brand} {model.group(0)} {self.name[len(brand) + 1:]}"

    @property
    def from_history(self) -> bool:
        return _HISTORY.search(self.phrase) is not None

    def variants(self) -> list[dict[str, Any]]:
        return list(self.card.get("variants") or []) if self.card else []

    def variant_values(self) -> list[str]:
        return [str(next(v for k, v in variant.items() if k != "variant_id")) for variant in self.variants()]

    def chosen_variant(self) -> str | None | Literal[False]:
        """The variant id to add (None: the product has none; False: not known yet)."""
        variants = self.variants()
        if not variants:
            return None
        values = self.variant_values()
        if self.variant_text is not None:
            for variant, value in zip(variants, values):
                if value.lower() == self.variant_text.lower():
                    return str(variant["variant_id"])
        if len(variants) == 1 or self.any_variant or self.asked_variant >= _MAX_ASKS:
            return str(variants[0]["variant_id"])
        return False


def parse_opening(text: str) -> tuple[list[Item], bool]:
    """The items an opening asks for (name, stated quantity and variant) and whether the shopper wants
    to check the cart before the agent finishes."""
    text = text.rpartition(": ")[2]  # a journey's lead ("Hold on, let's do this first: ...") is not the request
    sentences = _SENTENCE_END.split(text.strip())
    index = next((i for i, s in enumerate(sentences) if _ITEM_START.search(s)), 0)
    request = sentences[index]
    rest = " ".join(sentences[:index] + sentences[index + 1:])
    confirm = any(one_typo(w, c) for w in _WORD.findall(rest.lower()) for c in _CONFIRM_WISH_WORDS if len(w) > 3)
    request = re.sub(r"[.!?]+$", "", request)
    for tail in _TAIL:
        request = tail.sub("", request)
    starts = list(_ITEM_START.finditer(request))
    if not starts:
        return [Item(request)], confirm
    chunks = [request[m.start():(starts[i + 1].start() if i + 1 < len(starts) else len(request))].strip()
              for i, m in enumerate(starts)]
    merged: list[str] = []
    for chunk in chunks:  # ", the Blue one" and " in the Blue color" continue the item before them
        words = chunk.rstrip(", ").split()
        forms = [words] + ([words[:-1]] if words and one_typo(words[-1].lower(), "and") else [])
        variant_like = bool(merged) and (merged[-1].rstrip().endswith(" in") or any(  # values are capitalised or digits
            3 <= len(form) <= 5 and not form[0][0].isdigit() and one_typo(form[-1].lower(), "one")
            and all(not w[0].isalpha() or w[0].isupper() for w in form[1:-1]) for form in forms))
        if variant_like:
            merged[-1] = merged[-1] + " " + chunk
        else:
            merged.append(chunk)
    items = []
    for i, chunk in enumerate(merged):
        chunk = chunk.strip().rstrip(",").strip()
        if i == len(merged) - 2:  # the "and" (perhaps misspelt) before the last item
            head, _, last = chunk.rpartition(" ")
            if head and one_typo(last.lower(), "and"):
                chunk = head.rstrip(",").strip()
        items.append(_item(chunk))
    return items, confirm


def _item(chunk: str) -> Item:
    chunk = _SEVERAL.sub("", chunk)
    quantity = None
    m = re.match(r"(\d+)x\s+|(\d+)\s+(?:\S+\s+)?of\s+", chunk)
    if m:
        quantity = int(m.group(1) or m.group(2))
        chunk = chunk[m.end():]
    variant = None
    for pattern in _VARIANT_SUFFIXES:
        found = pattern.search(chunk)
        if found and not _QTY_SUFFIX.search(chunk):
            variant = found.group(1).strip()
            chunk = chunk[:found.start()]
            break
    found = _QTY_SUFFIX.search(chunk)
    if found:
        quantity = int(found.group(1))
        chunk = chunk[:found.start()]
    return Item(chunk.strip(), quantity=quantity, variant_text=variant)


def _tokens(text: str) -> list[str]:
    """Lower-case words, a plural "s" dropped ("Insoles" is "insole")."""
    return [w[:-1] if len(w) > 3 and w.endswith("s") and not w.endswith("ss") else w for w in _WORD.findall(text.lower())]


def _type_words(name: str) -> list[str]:
    """The type words that end a name as the shopper says it, in lower case after the capitalised brand and model
    ("KORRIX Store Sport 9X spice rack": "spice rack")."""
    words = name.split()
    start = len(words)
    while start > 0 and not words[start - 1][:1].isupper() and not words[start - 1][:1].isdigit():
        start -= 1
    return _tokens(" ".join(words[start:]))


def _title_words(card: dict[str, Any]) -> set[str]:
    """A card's brand, title and category words, with each two neighbours written as one ("Smart Watch":
    "smartwatch")."""
    words = _tokens(f"{card.get('brand', '')} {card['title']} {card.get('category', '')}")
    return set(words) | {_tokens(a + b)[0] for a, b in zip(words, words[1:])}


def _prefix(words: list[str], title: list[str]) -> int:
    n = 0
    while n < min(len(words), len(title)) and words[n] == title[n]:
        n += 1
    return n


_NOT_HEAD = frozenset({"for", "with", "compatible", "by", "featuring", "fits", "to"})


def _heads(title: list[str]) -> set[str]:
    """What a title's first clause is (its last word before "for", "with", "by" ...: "Screen Protector Compatible
    with ... Smartwatch" is a protector), also as two words run together ("Smart Watch": "smartwatch")."""
    end = next((i for i, w in enumerate(title) if i > 0 and w in _NOT_HEAD), len(title))
    head = title[:end]
    return {head[-1], *_tokens("".join(head[-2:]))} if head else set()


def _type_in(words: list[str], title: list[str]) -> int:
    """How many of the name's last words (its type: "running shoes") the title has in a row ("Running Insoles,
    ... Shoe Inserts" has only "shoe")."""
    for n in range(min(3, len(words)), 0, -1):
        tail = words[-n:]
        if any(title[i:i + n] == tail for i in range(len(title) - n + 1)):
            return n
    return 0


def _ranked(item: Item, found: list[dict[str, Any]]) -> list[tuple[tuple[int, ...], dict[str, Any]]]:
    """The cards of ``found`` that may be the product the shopper named (its brand, when the card has one, is in
    the name; not a card the shopper turned down), best first: the most of the name's words in the card's brand,
    title and category; then a title whose first clause is the name's type ("... Gaming Keyboard", not "Keyboard
    Wrist Rest Pad", see :func:`_heads`); then the most of the name's type words in a row in the first clause, then
    in the whole title ("Mechanical Keyboard, ..." before "Keycaps Set, ... for Keyboard"); then a title that starts
    with the most of the name's words (brand and model come first: "Pulse 9" is not "Pulse 19"); then the fewest
    other words. Each with its key; the key's first number is how many of the name's words it holds."""
    words = _tokens(item.name)
    ranked = []
    for rank, card in enumerate(found):
        brand = card.get("brand") or ""
        if card["product_id"] in item.rejected or (brand and not _contains(item.name, brand)):
            continue
        title = _tokens(short_title(str(card["title"])))
        have = _title_words(card)
        key = (sum(w in have for w in words), int(words[-1] in _heads(title)), _type_in(words, title),
               _type_in(words, _tokens(str(card["title"]))), _prefix(words, title), -len(have), -rank)
        ranked.append((key, card))
    return sorted(ranked, key=lambda entry: entry[0], reverse=True)


def _match(item: Item, found: list[dict[str, Any]], *, strict: bool = True) -> dict[str, Any] | None:
    """The best card of :func:`_ranked` if it holds all the name's words (``strict``) or all but one (a type a
    title words differently); None otherwise."""
    words = _tokens(item.name)
    ranked = _ranked(item, found)
    if not ranked or ranked[0][0][0] < (len(words) if strict or len(words) < 3 else len(words) - 1):
        return None
    return ranked[0][1]


class CartReference:
    """CART reference agent (see the module docstring)."""

    def __init__(self) -> None:
        self.b_tool = 1
        self.items: list[Item] = []
        self.confirm_wanted = False
        self.confirm_asked = False  # asked for the current cart
        self.confirmed = False
        self.cart: list[dict[str, Any]] = []
        self.history: list[dict[str, Any]] | None = None
        self.history_asked = False
        self.lookups: list[int | None] = []  # last turn's lookups in call order: item searched, None: history
        self.adds: list[str] = []  # last turn's cart_add calls in order: the product each added
        self.details: list[int] = []  # last turn's catalog_get_product calls in order: the item each was for
        self.asked_all_quantities = False  # asked "How many would you like?" of every item at once

    # -- reading -----------------------------------------------------------------------------------

    def active(self) -> list[Item]:
        return [it for it in self.items if not it.replaced]

    def act(self, observation: Observation) -> AgentAction:
        if observation.tools is not None:
            budget = stated_tool_budget(observation.messages[0]["content"])
            if budget is None:
                raise ValueError("the system prompt states no tool budget")
            self.b_tool = budget
            self.items, self.confirm_wanted = parse_opening(observation.messages[1]["content"])
        else:
            self._read_tools(observation)
            self._read_shopper(user_text(observation))
        return self._next_action()

    def _read_tools(self, observation: Observation) -> None:
        lookups, adds, details = iter(self.lookups), iter(self.adds), iter(self.details)
        for name, result in tool_results(observation):
            if name.startswith("cart_") and isinstance(result.get("lines"), list):  # every cart tool returns the cart
                self.cart = list(result["lines"])
            if name == "catalog_search":
                i = next(lookups, None)
                if i is not None and self.items[i].card is None:
                    self._found(self.items[i], list(result.get("results", [])))
            elif name == "user_get_visit_history":
                next(lookups, None)
                self.history = list(result.get("viewed", []))
                for item in self.items:
                    if item.card is None and item.from_history:
                        item.card = _match(item, self.history)
                        if item.card is not None and not _MODEL.search(str(item.card["title"])):
                            item.candidates = [str(item.card["product_id"])]  # its model words: in the listing
            if name == "catalog_get_product":
                i = next(details, None)
                if i is not None and "product_id" in result:
                    self.items[i].listings.append(result)
            if name == "cart_add":
                added = next(adds, None)
                if "error" in result:
                    for item in self.active():
                        if item.card is not None and item.card["product_id"] == added:
                            item.failed_adds += 1
                            item.out_of_stock |= result["error"] == "out_of_stock"
        self.lookups, self.adds, self.details = [], [], []
        for item in self.items:  # a full listing names the product as its title in a list does not
            if item.listings:
                if item.card is None:
                    item.card = _match(item, item.listings)
                    if item.card is not None:
                        item.candidates = []
                else:
                    item.card = next((c for c in item.listings if c["product_id"] == item.card["product_id"]), item.card)
                item.listings = []
        for item in self.active():
            if item.card is not None and not item.card.get("in_stock", True):
                item.out_of_stock = True
            if item.card is not None and item.heard:  # what was said of it before its card came
                for sentence in item.heard:
                    self._read_about(item, sentence)
                item.heard.clear()

    def _found(self, item: Item, results: list[dict[str, Any]]) -> None:
        """A search's cards for ``item``: the product when one card has every word of its name; else the cards
        that may be it, to read in full (a list shows each title's first clause only); else, at the last search,
        the card with all of its name's words but one."""
        item.card = _match(item, results)
        if item.card is None:
            item.candidates = [str(card["product_id"]) for _, card in _ranked(item, results)
                               if card["product_id"] not in item.detailed][:_MAX_LISTINGS]
            if not item.candidates and item.searched >= 2:
                item.card = _match(item, results, strict=False)

    def _read_shopper(self, said: str) -> None:
        if not said:
            return
        if self.confirm_asked and not self._corrections(said):
            self.confirmed = True
        self._read_replacements(said)
        for sentence in _SENTENCE_END.split(said):
            self._read_sentence(sentence)
            self._read_unwanted(sentence)

    def _read_unwanted(self, sentence: str) -> None:
        """"I didn't ask for the X, please remove it": the card taken for an item was another product."""
        words = _WORD.findall(sentence.lower())
        if any(_contains(sentence, it.phrase) for it in self.active()) or not any(
                one_typo(w, cue) for w in words for cue in ("remove", "want", "ask")):
            return
        named = re.search(r"\bthe\s+(.+?)(?:,|\s+in\s+my\b|[.?!]|$)", sentence)
        said = _tokens(named.group(1)) if named else []
        for item in self.active():
            if item.card is None or not said:
                continue
            if all(w in _title_words(item.card) for w in said):
                item.rejected.add(str(item.card["product_id"]))
                item.card, item.searched = None, 0

    def _corrections(self, said: str) -> bool:
        """Whether the shopper's words point out something wrong (a product named with a value, or "missing")."""
        return any(_contains(said, it.phrase) for it in self.active())

    def _read_replacements(self, said: str) -> None:
        """"Then the X would work instead": the announced out-of-stock items, in order, get the products named."""
        pending = [it for it in self.items if it.out_of_stock and not it.replaced]  # told, or named beside one told
        for sentence in _SENTENCE_END.split(said):
            if not pending:
                return
            words = sentence.split()
            if not any(one_typo(re.sub(r"\W", "", w.lower()), "instead") for w in words):
                continue
            m = re.search(r"\b(the\s.+)$", sentence)
            if not m:
                continue
            phrase_words = m.group(1).rstrip(".!?").split()
            while phrase_words and any(one_typo(re.sub(r"\W", "", phrase_words[-1].lower()), w)
                                       for w in ("instead", "then", "would", "work")):
                phrase_words.pop()
            replacement = _type_words(" ".join(phrase_words))  # the same type: the same last words
            original = max(pending, key=lambda it: (_prefix(replacement[::-1], _type_words(it.name)[::-1]),
                                                    it.announced > 0, -pending.index(it)))
            pending.remove(original)
            original.replaced = True
            self.items.append(Item(" ".join(phrase_words), quantity=original.quantity,
                                   variant_text=original.variant_text, any_variant=original.any_variant))

    def _read_sentence(self, sentence: str) -> None:
        named = [it for it in self.active() if _contains(sentence, it.phrase)]
        if not named:
            return
        item = max(named, key=lambda it: len(it.phrase))
        if item.card is None:  # its variant values can be told only once its card is seen; a count now
            item.heard.append(sentence)
            rest = re.sub(re.escape(item.phrase), " ", sentence, flags=re.IGNORECASE).lower()
            count = re.search(r"\b(\d+)\s+of\b|\bmake it\s+(\d+)\b|\b(one)\s+of\b", rest)
            if count:
                item.quantity = int(count.group(1) or count.group(2) or 1)
            return
        self._read_about(item, sentence)

    def _read_about(self, item: Item, sentence: str) -> None:
        rest = re.sub(re.escape(item.phrase), " ", sentence, flags=re.IGNORECASE)
        lowered = rest.lower()
        values = sorted((v for v in item.variant_values() if _contains(rest, v)), key=len, reverse=True)
        if values:
            wanted = [v for v in values if not _negated(lowered, v)
                      and not re.search(r"\bthe\s+" + re.escape(v.lower()) + r"\s+one\b", lowered)]
            value = (wanted or values)[0]
            quantity_form = re.search(r"\b" + re.escape(value.lower()) + r"\s+of\b|\bmake it\s+"
                                      + re.escape(value.lower()) + r"\b", lowered)
            if not quantity_form:
                item.variant_text = value
                return
        m = re.search(r"\b(\d+)\b", rest)
        if m:
            item.quantity = int(m.group(1))
        elif re.search(r"\bone\b", lowered):
            item.quantity = 1
        elif re.search(r"\b(?:any|mind|whichever)\b", lowered):
            item.any_variant = True

    # -- acting ------------------------------------------------------------------------------------

    def _next_action(self) -> AgentAction:
        calls: list[ToolCall] = []
        questions: list[str] = []
        notices: list[str] = []

        def call(name: str, **arguments: Any) -> bool:
            if len(calls) >= self.b_tool:
                return False
            calls.append(numbered_call(name, len(calls), **arguments))
            return True

        items = self.active()
        for i, item in enumerate(self.items):
            if item.replaced or not item.candidates:
                continue
            while item.candidates and call("catalog_get_product", product_id=item.candidates[0]):
                item.detailed.add(item.candidates.pop(0))
                self.details.append(i)
        for i, item in enumerate(self.items):
            if item.replaced or item.card is not None or item.candidates or i in self.details:
                continue
            if item.from_history and self.history is None:
                if not self.history_asked and call("user_get_visit_history"):
                    self.history_asked = True
                    self.lookups.append(None)
                continue
            if item.searched < 2 and call("catalog_search", query=item.name,
                                          **({"top_k": 50} if item.searched else {})):
                item.searched += 1
                self.lookups.append(i)
        pending_listing = {str(card["product_id"]) for card in (self.items[i].card for i in self.details) if card}
        for item in items:  # one at a time, by a name with its model words (its full listing read first if needed)
            if (item.out_of_stock and item.announced < _MAX_ASKS and not notices and not item.candidates
                    and item.card is not None and item.card["product_id"] not in pending_listing):
                notices.append(STOCK_OUT_NOTICE.format(item=item.spoken))
                item.announced += 1
        # a stock-out is told on its own: the shopper names the replacement for the product the notice names, and
        # another product named beside it (a question) may share its model words ("Pro 6")
        unknown_quantity = [it for it in items if it.quantity is None and it.asked_quantity < _MAX_ASKS
                            and not it.out_of_stock] if not notices else []
        if unknown_quantity:
            if len(unknown_quantity) == len(items) and len(items) > 1 and not self.asked_all_quantities:
                questions.append(QUESTIONS["attribute-018"])
                self.asked_all_quantities = True
                for it in unknown_quantity:
                    it.asked_quantity += 1
            else:
                for it in unknown_quantity:
                    questions.append(QUESTIONS["attribute-020"].format(item=it.spoken))
                    it.asked_quantity += 1
        for item in items if not notices else []:
            if item.card is not None and not item.out_of_stock and item.chosen_variant() is False:
                questions.append(QUESTIONS["attribute-000"].format(item=item.spoken,
                                                                   options=_options(item.variant_values())))
                item.asked_variant += 1
        changed = self._sync_cart(call, items)
        ready = all((it.card is not None and not it.out_of_stock and it.chosen_variant() is not False
                     and (it.quantity is not None or it.asked_quantity >= _MAX_ASKS))
                    or (it.out_of_stock and it.announced >= _MAX_ASKS) or (it.card is None and it.searched >= 2)
                    for it in items)
        if changed:
            self.confirm_asked = self.confirmed = False
        if not questions and not notices and not calls and ready:
            if self.confirm_wanted and not self.confirmed:
                if not self.confirm_asked:
                    questions.append(QUESTIONS["confirm-004"])
                    self.confirm_asked = True
                else:
                    call("answer", done=True)  # asked and not confirmed, nothing left to fix: finish
            else:
                call("answer", done=True)
        if not calls and not questions and not notices:  # waiting on nothing it can do: finish
            call("answer", done=True)
        # each question ends as one ("Is one X enough, or do you need more" asked of two items runs them together)
        message = " ".join(notices + [q if q.rstrip()[-1:] in ".?!" else q.rstrip() + "?" for q in questions]) or None
        return AgentAction(message=message, tool_calls=tuple(calls))

    def _sync_cart(self, call: Any, items: list[Item]) -> bool:
        """Cart calls that make the cart what the shopper asked for (as far as it is known); whether any."""
        wanted: dict[str, tuple[str | None, int]] = {}
        for item in items:
            if item.card is None or item.out_of_stock or item.failed_adds >= _MAX_ASKS:
                continue
            variant = item.chosen_variant()
            if variant is False or (item.quantity is None and item.asked_quantity < _MAX_ASKS):
                continue
            wanted[item.card["product_id"]] = (variant, item.quantity or 1)
        known = {it.card["product_id"] for it in items if it.card is not None}
        made = False
        seen: set[str] = set()
        for line in self.cart:
            pid = line["product_id"]
            variant_id = line.get("variant_id")
            if pid not in known and pid not in wanted:
                made |= call("cart_set_quantity", line_id=line["line_id"], quantity=0)
                continue
            if pid not in wanted:
                continue
            want_variant, want_quantity = wanted[pid]
            if (want_variant is not None and variant_id != want_variant) or pid in seen:
                made |= call("cart_set_quantity", line_id=line["line_id"], quantity=0)
                continue
            seen.add(pid)
            if line["quantity"] != want_quantity:
                made |= call("cart_set_quantity", line_id=line["line_id"], quantity=want_quantity)
        for pid, (variant, quantity) in wanted.items():
            if pid in seen:
                continue
            arguments: dict[str, Any] = {"product_id": pid, "quantity": quantity}
            if variant is not None:
                arguments["variant_id"] = variant
            if call("cart_add", **arguments):
                self.adds.append(pid)
                made = True
        return made


__all__ = ["QUESTIONS", "STOCK_OUT_NOTICE", "CartReference", "Item", "parse_opening"]
