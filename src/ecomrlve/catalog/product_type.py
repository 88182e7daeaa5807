"""What a product is (its noun), read from its title, and how a shopper names it.

A leaf category is a bucket, not a product type: a real "Smartwatches" category holds straps,
chargers and screen protectors next to the watches. Environments ask for a category's *main
type* (the type most of its products have) and accept only products of the type they asked for,
so an accessory never satisfies a request for the main product.

The type of a title is the rightmost known noun in its head, the part before the first comma,
dash, bracket or "for"/"with"/"compatible with"/"by" ("[3 Pack] Brisca Screen Protector
Compatible with ..." -> screen protector; "Charger for Qorvane Smart Watch, ..." -> charger).
Known nouns are the category's own nouns (leaf name, the catalog's noun) and a small lexicon of
product and accessory nouns with synonyms ("decal" -> sticker, "wristband" -> strap); a head
without any falls back to its last word. Types are computed once per category, on first use,
so a reset never pays for the whole catalog.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from ecomrlve.catalog.schema import Catalog, short_title

#: Known nouns (lower case) -> the type they name; the lexicon adds to a category's own nouns.
LEXICON: dict[str, str] = {
    "smartwatch": "smartwatch", "smart watch": "smartwatch", "fitness tracker": "fitness tracker",
    "strap": "strap", "band": "strap", "wristband": "strap", "watch band": "strap",
    "charger": "charger", "charging cable": "charging cable", "charging dock": "charger", "charging cord": "charging cable",
    "screen protector": "screen protector", "case": "case", "cover": "case", "carrying bag": "case",
    "sticker": "sticker", "decal": "sticker", "insole": "insole", "shoe insert": "insole",
    "ear hook": "ear hook", "ear tip": "ear tip", "ear pad": "ear pad", "keycap": "keycap", "wrist rest": "wrist rest",
    "headphone": "headphones", "earbud": "earbuds", "running shoe": "running shoes", "sneaker": "sneakers",
    "keyboard": "keyboard", "mouse": "mouse", "mouse pad": "mouse pad", "cable": "cable", "adapter": "adapter",
    "replacement part": "replacement part", "refill": "refill", "filter": "filter", "lid": "lid",
}
#: Nouns people buy in pairs: "a pair of running shoes", never "a running shoe".
PAIRED = frozenset({"headphones", "earbuds", "shoes", "sneakers", "boots", "sandals", "slippers", "socks", "gloves",
                    "jeans", "pants", "trousers", "leggings", "shorts", "glasses", "sunglasses", "scissors"})
_CUT = re.compile(r",|;| - | – | \| |\(|\[|\s(?:for|with|compatible with|by|fits|made for)\s", re.IGNORECASE)
_LEADING_GROUP = re.compile(r"^\s*(?:\[[^\]]*\]|\([^)]*\))\s*")
_WORD = re.compile(r"[A-Za-z0-9][\w'./+-]*")


@lru_cache(maxsize=65536)
def fold(noun: str) -> str:
    """Case and plural folded key: "Running Shoes", "running shoe" and "RUNNING-SHOES" agree."""
    words = re.findall(r"[a-z0-9]+", noun.lower())
    return " ".join(_singular(w) for w in words)


@lru_cache(maxsize=65536)
def _singular(word: str) -> str:
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 4 and word.endswith(("ches", "shes", "sses", "xes")):
        return word[:-2]
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us")):
        return word[:-1]
    return word


_FOLDED_LEXICON = {fold(k): v for k, v in LEXICON.items()}


def title_head(title: str) -> str:
    """The part of a listing title that names the product ("[2 Pack] X Case for Y, Blue" -> "X Case")."""
    text = _LEADING_GROUP.sub("", title)
    head = _CUT.split(text, maxsplit=1)[0].strip()
    return head or short_title(text).strip()


@lru_cache(maxsize=4096)
def _pattern(nouns: tuple[str, ...]) -> re.Pattern:
    """One regex matching any of the (folded) ``nouns``, singular or plural, compiled once."""
    alternatives = sorted(set(nouns), key=len, reverse=True)
    words = "|".join(r"[\s-]?".join(re.escape(_singular(w)) for w in n.split()) + r"(?:e?s)?" for n in alternatives)
    return re.compile(r"(?<![a-z0-9])(" + words + r")(?![a-z0-9])")


MAX_NOUN_WORDS = 4


def type_of_title(title: str, own: dict[str, str]) -> str:
    """The type a title names, given the category's own nouns (folded key -> display name).

    Scans the head's words from the right; at the first position where a known noun ends, the
    category's own noun wins, else the longest. O(words) dictionary lookups, no regex search.
    """
    words = [_singular(w) for w in re.findall(r"[a-z0-9]+", title_head(title).lower())]
    for end in range(len(words), 0, -1):
        found = None
        for size in range(min(MAX_NOUN_WORDS, end), 0, -1):
            key = " ".join(words[end - size: end])
            if key in own:
                return own[key]
            if found is None and key in _FOLDED_LEXICON:
                found = _FOLDED_LEXICON[key]
        if found is not None:
            return found
    return words[-1] if words else next(iter(own.values()))


@dataclass(frozen=True)
class CategoryTypes:
    """The product types of one category: per row (keyed by catalog row) and the main one."""

    rows: np.ndarray  # the category's rows, as ``catalog.category_rows``
    types: dict[int, str]  # catalog row -> type
    main: str  # the most common type

    def main_rows(self) -> np.ndarray:
        # same_type once per distinct type (a few dozen), not once per row (tens of thousands at 2M)
        main = {t: same_type(t, self.main) for t in set(self.types.values())}
        types = self.types
        return self.rows[np.fromiter((main[types[r]] for r in self.rows.tolist()), dtype=bool, count=len(self.rows))]


def _own_nouns(catalog: Catalog, category: int) -> dict[str, str]:
    c = catalog.categories[category]
    leaf = c.name.split(",")[0].split("&")[0].strip()
    return {fold(leaf): leaf, fold(c.noun): c.noun}


def category_types(catalog: Catalog, category: int) -> CategoryTypes:
    """Types of one category's products, computed on first use and cached on the catalog."""
    cache = catalog.__dict__.setdefault("_product_types", {})
    if category not in cache:
        rows = catalog.category_rows[category]
        own = _own_nouns(catalog, category)
        titles = catalog.titles.take(rows).to_pylist() if len(rows) else []
        types = {int(r): type_of_title(t, own).lower() for r, t in zip(rows.tolist(), titles)}
        counts = Counter(fold(t) for t in types.values())
        fallback = catalog.categories[category].noun.lower()
        main_key = max(counts, key=lambda k: (counts[k], k in own)) if counts else fold(fallback)
        main = next((t for t in types.values() if fold(t) == main_key), fallback)
        cache[category] = CategoryTypes(rows, types, main)
    return cache[category]


def product_type(catalog: Catalog, row: int) -> str:
    """What product ``row`` is, e.g. "smartwatch", "strap", "running shoes"."""
    return category_types(catalog, int(catalog.category[row])).types[int(row)]


def main_type(catalog: Catalog, category: int) -> str:
    """The type a request for ``category`` names: what most of its products are."""
    return category_types(catalog, category).main


def is_main_type(catalog: Catalog, row: int) -> bool:
    """Whether ``row`` is what its category's requests ask for (not an accessory or add-on)."""
    return same_type(product_type(catalog, row), main_type(catalog, int(catalog.category[row])))


def same_type(a: str, b: str) -> bool:
    return fold(a) == fold(b)


# -- how a shopper says it ------------------------------------------------------------------------

def indefinite(noun: str, adjective: str = "") -> str:
    """"a keyboard", "an earbud case", "a pair of running shoes", "a similar pair of headphones"."""
    noun = noun.lower().strip()
    last = noun.split()[-1] if noun else noun
    if _plural_form(last) in PAIRED:
        words = noun.split()
        words[-1] = _plural_form(last)
        phrase = "pair of " + " ".join(words)
    elif last.endswith("s") and not last.endswith(("ss", "us")) and last not in _SINGULAR_S:
        return " ".join(p for p in ("some", adjective, noun) if p)
    else:
        phrase = noun
    phrase = " ".join(p for p in (adjective, phrase) if p)
    return ("an " if _vowel_sound(phrase) else "a ") + phrase


_SINGULAR_S = frozenset({"glass", "lens", "bus", "gas", "canvas", "chassis", "mattress", "dress"})


def _plural_form(word: str) -> str:
    return word if word.endswith("s") else word + ("es" if word.endswith(("sh", "ch", "x")) else "s")


_CONSONANT_SOUND = ("uni", "use", "usb", "uti", "eu", "one", "ur")
_VOWEL_SOUND = ("hour", "honest", "hdmi", "led ", "lcd", "mp3", "rgb", "suv", "xl ", "8")


@lru_cache(maxsize=4096)
def _vowel_sound(phrase: str) -> bool:
    """Whether "an" goes before ``phrase`` (by sound: "a USB cable", "an HDMI cable", "an 8-pack")."""
    text = phrase.lower() + " "
    if text.startswith(_CONSONANT_SOUND):
        return False
    return text.startswith(_VOWEL_SOUND) or text[:1] in "aeiou"


def is_plural(noun: str) -> bool:
    """Whether ``noun`` takes a plural verb ("the running shoes are", "the keyboard is")."""
    return indefinite(noun).startswith(("a pair of", "some ", "a similar pair"))


def spoken_noun(noun: str) -> str:
    """The noun as said after "the": "the running shoes", "the smartwatch"."""
    noun = noun.lower().strip()
    last = noun.split()[-1] if noun else noun
    if _plural_form(last) in PAIRED:
        return " ".join([*noun.split()[:-1], _plural_form(last)])
    return noun


# -- the name a shopper uses ----------------------------------------------------------------------

MAX_MODEL_WORDS = 3
_HAS_DIGIT = re.compile(r"\d")


@dataclass(frozen=True)
class SpokenName:
    """How a shopper names one product: "Zentari Pro 5 smartwatch", not the 200-character listing title."""

    text: str  # without an article
    model: str  # the model words in it ("Pro 5"), possibly empty
    unique: bool  # no other product of the category answers to the same name


def model_tokens(text: str, brand: str, noun: str) -> str:
    """Model words of ``text``: tokens with a digit and the word right before one ("Pro 5",
    "Nova 21 65W"), leaving out the brand and the product noun; at most three."""
    rest = _pattern((fold(noun),)).sub(" ", text.lower()) if noun else text.lower()
    brand_words = {w.lower() for w in brand.split()}
    originals = {t.lower(): t for t in _WORD.findall(text)}
    tokens = [t for t in _WORD.findall(rest) if t not in brand_words]
    keep = [originals.get(t, t) for i, t in enumerate(tokens)
            if _HAS_DIGIT.search(t) or (i + 1 < len(tokens) and _HAS_DIGIT.search(tokens[i + 1]))]
    return " ".join(keep[:MAX_MODEL_WORDS])


def spoken_names(catalog: Catalog, category: int) -> dict[int, SpokenName]:
    """Every product of ``category`` -> the name a shopper says, cached per category.

    Brand + model words + product type, the model words taken from the title's head, else its
    first clause, else the whole title: the first of these that singles the product out within
    its category. When none does, the title's first clause (``unique`` tells whether even that is
    shared); never the whole listing title.
    """
    cache = catalog.__dict__.setdefault("_spoken_names", {})
    if category not in cache:
        info = category_types(catalog, category)
        rows = info.rows.tolist()
        titles = dict(zip(rows, catalog.titles.take(info.rows).to_pylist() if rows else []))

        def option(row: int, level: int) -> tuple[str, str]:
            title = titles[row]
            if level >= 3:  # the title's first clause; never the whole listing title (people do not say that)
                return short_title(title), ""
            text = (title_head(title), short_title(title), title)[level]
            noun, brand = info.types[row], catalog.brand_of(row)
            model = model_tokens(text, brand, noun)
            return " ".join(p for p in (brand, model, spoken_noun(noun)) if p), model

        names: dict[int, SpokenName] = {}
        pending = rows
        for level in range(5):  # a longer name only for the rows whose shorter one is shared
            options = {row: option(row, level) for row in rows}
            taken = Counter(text.lower() for text, _ in options.values())
            for row in pending:
                text, model = options[row]
                if taken[text.lower()] == 1 or level == 4:
                    names[row] = SpokenName(text, model, taken[text.lower()] == 1)
            pending = [row for row in pending if row not in names]
            if not pending:
                break
        cache[category] = names
    return cache[category]


def spoken_name(catalog: Catalog, row: int) -> SpokenName:
    """The name a shopper uses for product ``row`` (see :func:`spoken_names`)."""
    return spoken_names(catalog, int(catalog.category[row]))[int(row)]


#: Last words of types that run on power: "it won't turn on" fits them, not a case or a strap.
POWERED_WORDS = frozenset({
    "charger", "headphones", "headphone", "earbuds", "earbud", "speaker", "monitor", "keyboard", "mouse", "smartwatch",
    "tracker", "lamp", "headlamp", "light", "clock", "maker", "blender", "dryer", "drill", "bank", "camera", "router",
    "tablet", "laptop", "phone", "console", "vacuum", "fan", "heater", "kettle", "toaster", "shaver", "trimmer",
    "toothbrush", "machine", "printer", "projector", "tv"})


def is_powered(noun: str) -> bool:
    """Whether a product of type ``noun`` runs on power (batteries or mains)."""
    words = noun.lower().replace("-", " ").split()
    return bool(words) and words[-1] in POWERED_WORDS
