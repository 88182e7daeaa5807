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
without any falls back to its last word that has a letter ("Torch 2" is a torch). Types are computed once per category, on first use,
so a reset never pays for the whole catalog.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

import numba
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ecomrlve.catalog.derived import Derived, derived
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
#: A title's head ends where one of these starts ...
_CUT_MARKS = (",", ";", " - ", " – ", " | ", "(", "[")
#: ... or where one of these stands between whitespace, in any case.
_CUT_WORDS = ("for", "with", "compatible with", "by", "fits", "made for")
_CUT = re.compile("|".join(map(re.escape, _CUT_MARKS)) + r"|\s(?:" + "|".join(_CUT_WORDS) + r")\s", re.IGNORECASE)
_LEADING_GROUP = re.compile(r"^\s*(?:\[[^\]]*\]|\([^)]*\))\s*")
#: A letter or digit of any script ("é", "ß", "日"); on ASCII text exactly ``[A-Za-z0-9]``, so
#: synthetic catalogs are named as before.
ALNUM = r"[^\W_]"
_WORD = re.compile(ALNUM + r"[\w'./+-]*")
_ALNUM_RUN = re.compile(ALNUM + "+")


@lru_cache(maxsize=65536)
def fold(noun: str) -> str:
    """Case and plural folded key: "Running Shoes", "running shoe" and "RUNNING-SHOES" agree."""
    words = _ALNUM_RUN.findall(noun.lower())
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
    return re.compile(f"(?<!{ALNUM})(" + words + f")(?!{ALNUM})")


MAX_NOUN_WORDS = 4


def type_of_title(title: str, own: dict[str, str]) -> str:
    """The type a title names, given the category's own nouns (folded key -> display name).

    Scans the head's words from the right; at the first position where a known noun ends, the
    category's own noun wins, else the longest. O(words) dictionary lookups, no regex search.
    """
    words = [_singular(w) for w in _ALNUM_RUN.findall(title_head(title).lower())]
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
    return last_word(words) if words else next(iter(own.values()))


def has_letter(word: str) -> bool:
    """Whether a head word can be a fallback type: "Torch 2" is a torch, not a "2"."""
    return any(character.isalpha() for character in word)


def last_word(words: list[str]) -> str:
    """The last of non-empty ``words`` that has a letter, else the last: what a title without a known noun names."""
    return next((word for word in reversed(words) if has_letter(word)), words[-1])


# -- every title of a category at once ------------------------------------------------------------
# type_of_title above is the definition; title_types computes it for a whole category from the
# titles' bytes (a category has tens of thousands of titles at 2M products, and EcomEnv classifies
# every category up front). ASCII titles only: Unicode whitespace, case folding and lower-casing
# are left to the definition, title by title.

def _byte_table(patterns: tuple[str, ...]) -> tuple[np.ndarray, np.ndarray]:
    """The ASCII ``patterns`` (the others never match an ASCII title) as rows of a zero-padded byte
    matrix, and their lengths."""
    ascii_patterns = [p.encode() for p in patterns if p.isascii()]
    table = np.zeros((len(ascii_patterns), max(map(len, ascii_patterns))), dtype=np.uint8)
    for i, pattern in enumerate(ascii_patterns):
        table[i, :len(pattern)] = np.frombuffer(pattern, dtype=np.uint8)
    return table, np.array([len(p) for p in ascii_patterns], dtype=np.int64)


# Byte tables the compiled scan reads (numba freezes module-level arrays into the code).
_CUT_MARK_BYTES, _CUT_MARK_LENGTHS = _byte_table(_CUT_MARKS)
_CUT_WORD_BYTES, _CUT_WORD_LENGTHS = _byte_table(_CUT_WORDS)
_BYTE_LOWER = np.array([ord(chr(b).lower()) if b < 128 else b for b in range(256)], dtype=np.uint8)
_BYTE_SPACE = np.array([b < 128 and chr(b).isspace() for b in range(256)])  # str.isspace, and the regexes' \s
_BYTE_WORD = np.array([chr(b).isascii() and re.fullmatch("[a-z0-9]", chr(b).lower()) is not None for b in range(256)])
_BYTE_CUT_START = _BYTE_SPACE.copy()  # a mark's first byte, or the whitespace before a word
_BYTE_CUT_START[_CUT_MARK_BYTES[:, 0]] = True
_BYTE_CUT_ALONE = np.zeros(256, dtype=bool)  # a one-byte mark
_BYTE_CUT_ALONE[_CUT_MARK_BYTES[_CUT_MARK_LENGTHS == 1, 0]] = True
_BYTE_CUT_SECOND = np.zeros(256, dtype=bool)  # the second byte of a longer mark, or a word's first letter
_BYTE_CUT_SECOND[_CUT_MARK_BYTES[_CUT_MARK_LENGTHS > 1, 1]] = True
for _letter in sorted({w[0] for w in _CUT_WORDS}):
    _BYTE_CUT_SECOND[[ord(_letter), ord(_letter.upper())]] = True
_BYTE_GROUP_CLOSE = np.zeros(256, dtype=np.uint8)  # _LEADING_GROUP's opening bracket -> its closing one
_BYTE_GROUP_CLOSE[ord("[")], _BYTE_GROUP_CLOSE[ord("(")] = ord("]"), ord(")")
_COMMA = ord(",")


@numba.njit(nogil=True, cache=True)
def _cuts_at(data: np.ndarray, at: int, end: int) -> bool:  # pragma: no cover - compiled
    """Whether ``_CUT`` matches ``data[at:end]`` (ASCII) at its start."""
    if not _BYTE_CUT_START[data[at]]:
        return False
    if _BYTE_CUT_ALONE[data[at]]:
        return True
    if at + 1 == end or not _BYTE_CUT_SECOND[data[at + 1]]:
        return False
    for m in range(len(_CUT_MARK_LENGTHS)):
        size = _CUT_MARK_LENGTHS[m]
        if at + size <= end:
            k = 0
            while k < size and data[at + k] == _CUT_MARK_BYTES[m, k]:
                k += 1
            if k == size:
                return True
    if not _BYTE_SPACE[data[at]]:
        return False
    for w in range(len(_CUT_WORD_LENGTHS)):
        size = _CUT_WORD_LENGTHS[w]
        if at + 1 + size < end and _BYTE_SPACE[data[at + 1 + size]]:
            k = 0
            while k < size and _BYTE_LOWER[data[at + 1 + k]] == _CUT_WORD_BYTES[w, k]:
                k += 1
            if k == size:
                return True
    return False


@numba.njit(nogil=True, cache=True)
def _head_span(data: np.ndarray, start: int, end: int) -> tuple[int, int]:  # pragma: no cover - compiled
    """The bytes of ``data[start:end]`` (an ASCII title) that hold :func:`title_head`'s words."""
    text = start  # after _LEADING_GROUP: whitespace, a bracketed or parenthesised group, whitespace
    at = start
    while at < end and _BYTE_SPACE[data[at]]:
        at += 1
    if at < end and _BYTE_GROUP_CLOSE[data[at]]:
        close = at + 1
        while close < end and data[close] != _BYTE_GROUP_CLOSE[data[at]]:
            close += 1
        if close < end:
            text = close + 1
            while text < end and _BYTE_SPACE[data[text]]:
                text += 1
    cut = text
    while cut < end and not (_BYTE_CUT_START[data[cut]] and _cuts_at(data, cut, end)):  # a call costs more than a lookup
        cut += 1
    for at in range(text, cut):
        if not _BYTE_SPACE[data[at]]:
            return text, cut
    comma = text  # a blank head: short_title(text) instead
    while comma < end and data[comma] != _COMMA:
        comma += 1
    return text, comma


@numba.njit(nogil=True, cache=True)
def _head_words(data: np.ndarray, offsets: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:  # pragma: no cover
    """The lower-cased ``[a-z0-9]+`` words of each title's head: their bytes back to back, their
    offsets into those, and each title's number of words (titles: ``data`` cut at ``offsets``)."""
    n = len(offsets) - 1
    spans = np.empty((n, 2), dtype=np.int64)
    counts = np.zeros(n, dtype=np.int64)
    n_bytes = 0
    for i in range(n):
        start, end = _head_span(data, offsets[i], offsets[i + 1])
        spans[i, 0], spans[i, 1] = start, end
        previous = False
        for at in range(start, end):
            word = _BYTE_WORD[data[at]]
            if word:
                n_bytes += 1
                if not previous:
                    counts[i] += 1
            previous = word
    word_bytes = np.empty(n_bytes, dtype=np.uint8)
    word_offsets = np.empty(counts.sum() + 1, dtype=np.int64)
    b, w = 0, 0
    for i in range(n):
        previous = False
        for at in range(spans[i, 0], spans[i, 1]):
            word = _BYTE_WORD[data[at]]
            if word:
                if not previous:
                    word_offsets[w] = b
                    w += 1
                word_bytes[b] = _BYTE_LOWER[data[at]]
                b += 1
            previous = word
    word_offsets[w] = b
    return word_bytes, word_offsets, counts


@dataclass(frozen=True)
class _NounCodes:
    """The nouns :func:`type_of_title` knows for one category, as integers: a noun of up to
    :data:`MAX_NOUN_WORDS` words is its words' ids (from 1) in base ``radix``, last word least
    significant, so that every sequence of words ending at a title's word has one code."""

    word_ids: dict[str, int]  # folded noun word -> id (0: any other word)
    radix: int
    codes: np.ndarray  # ascending
    ranks: np.ndarray  # per code: the category's own nouns above the lexicon's, then the longer
    types: np.ndarray  # per code: the type it names, an index into ``names``
    names: tuple[str, ...]  # lower-cased


@lru_cache(maxsize=4096)
def _noun_codes(own: tuple[tuple[str, str], ...]) -> _NounCodes:
    word_ids: dict[str, int] = {}
    names: dict[str, int] = {}
    known: dict[tuple[int, ...], tuple[int, int]] = {}  # word ids -> (rank, type)
    for priority, nouns in enumerate((_FOLDED_LEXICON, dict(own))):
        for key, name in nouns.items():
            ids = tuple(word_ids.setdefault(w, len(word_ids) + 1) for w in key.split())
            if 0 < len(ids) <= MAX_NOUN_WORDS:
                known[ids] = (priority * (MAX_NOUN_WORDS + 1) + len(ids), names.setdefault(name.lower(), len(names)))
    radix = len(word_ids) + 1
    codes = np.array([sum(w * radix ** i for i, w in enumerate(reversed(ids))) for ids in known], dtype=np.int64)
    order = np.argsort(codes)
    return _NounCodes(word_ids, radix, codes[order], np.array([r for r, _ in known.values()], dtype=np.int64)[order],
                      np.array([t for _, t in known.values()], dtype=np.int64)[order], tuple(names))


@numba.njit(nogil=True, cache=True)
def _rightmost_nouns(noun_word: np.ndarray, counts: np.ndarray, radix: int, codes: np.ndarray, ranks: np.ndarray,
                     types: np.ndarray) -> np.ndarray:  # pragma: no cover - compiled
    """Per title (``counts[i]`` words of ``noun_word``, titles back to back), the type of the best
    known noun ending at its rightmost word that ends one (:class:`_NounCodes`), or -1."""
    out = np.full(len(counts), -1, dtype=np.int64)
    first = 0
    for i in range(len(counts)):
        for end in range(first + counts[i], first, -1):
            code, best = 0, -1
            for size in range(1, min(MAX_NOUN_WORDS, end - first) + 1):
                word = noun_word[end - size]
                if word == 0:  # no known noun has this word
                    break
                code += word * radix ** (size - 1)
                slot = np.searchsorted(codes, code)
                if slot < len(codes) and codes[slot] == code and (best < 0 or ranks[slot] > ranks[best]):
                    best = slot
            if best >= 0:
                out[i] = types[best]
                break
        first += counts[i]
    return out


def title_types(titles: pa.Array | pa.ChunkedArray, own: dict[str, str]) -> tuple[list[str], np.ndarray]:
    """``type_of_title(title, own).lower()`` of every title, as the distinct types and each title's
    index into them.

    The heads' words are cut from the titles' bytes by a compiled scan, hashed by Arrow's
    dictionary encoding and looked up once per distinct word; a second compiled scan then reads
    each title's words from the right, as the definition does, with the known nouns as integers
    (:class:`_NounCodes`). Titles with non-ASCII text take the definition.
    """
    strings = pc.cast(titles, pa.large_string())  # int64 offsets
    if isinstance(strings, pa.ChunkedArray):
        strings = strings.combine_chunks()
    n = len(strings)
    offsets = np.frombuffer(strings.buffers()[1], dtype=np.int64)[strings.offset:strings.offset + n + 1]
    data = strings.buffers()[2]
    word_bytes, word_offsets, counts = _head_words(
        np.frombuffer(data if data is not None else b"", dtype=np.uint8), offsets)  # read-only, as compiled
    encoded = pc.dictionary_encode(pa.LargeStringArray.from_buffers(
        len(word_offsets) - 1, pa.py_buffer(word_offsets), pa.py_buffer(word_bytes)))
    vocabulary = encoded.dictionary.to_pylist()
    word_ids = encoded.indices.to_numpy(zero_copy_only=False).astype(np.int64)
    nouns = _noun_codes(tuple(own.items()))
    type_index = {name: i for i, name in enumerate(nouns.names)}  # type -> its index into the distinct types

    def index_of(name: str) -> int:
        return type_index.setdefault(name.lower(), len(type_index))

    noun_word = np.array([nouns.word_ids.get(_singular(w), 0) for w in vocabulary], dtype=np.int64)[word_ids]
    types = _rightmost_nouns(noun_word, counts, nouns.radix, nouns.codes, nouns.ranks, nouns.types)
    first_word = np.cumsum(counts) - counts
    fallback = np.flatnonzero((types < 0) & (counts > 0))  # no known noun: the head's last word with a letter
    if len(fallback):
        positions = first_word[fallback] + counts[fallback] - 1
        lettered = np.array([has_letter(word) for word in vocabulary], dtype=bool)
        for k in np.flatnonzero(~lettered[word_ids[positions]]).tolist():  # a head ending in a number
            position = positions[k]
            while position > first_word[fallback[k]] and not lettered[word_ids[position]]:
                position -= 1
            positions[k] = position if lettered[word_ids[position]] else positions[k]
        last_words, last_word_of = np.unique(word_ids[positions], return_inverse=True)
        types[fallback] = np.array([index_of(_singular(vocabulary[w])) for w in last_words.tolist()])[last_word_of]
    if not counts.all():  # no word at all
        types[counts == 0] = index_of(next(iter(own.values())))
    non_ascii = np.flatnonzero(~pc.string_is_ascii(strings).to_numpy(zero_copy_only=False))
    if len(non_ascii):
        for i, title in zip(non_ascii.tolist(), strings.take(pa.array(non_ascii)).to_pylist()):
            types[i] = index_of(type_of_title(title, own))
    return list(type_index), types


@dataclass(frozen=True)
class CategoryTypes:
    """The product types of one category: per row (keyed by catalog row) and the main one."""

    rows: np.ndarray  # the category's rows, ascending, as ``catalog.category_rows``
    main: str  # the most common type
    names: tuple[str, ...]  # the distinct types
    codes: np.ndarray  # each of ``rows``' index into ``names`` (read-only: the catalog keeps it)
    #: ``codes`` by catalog row (the catalog's one array for all categories, :data:`TYPE_CODES`, or a directory's
    #: stored ``type_code``), where this category's rows hold ``codes``; None: found by ``rows`` alone
    by_row: np.ndarray | None = None

    def type_of(self, row: int) -> str:
        """The type of catalog row ``row`` (a row of this category)."""
        by_row = self.by_row
        if by_row is not None:  # one read by row: a reset reads a few products' types, each out of cache
            return self.names[by_row.item(row)]
        return self.names[self.codes.item(self.rows.searchsorted(row))]  # the method: no numpy dispatch wrapper

    def row_types(self) -> list[str]:
        """The type of each of ``rows``, in order."""
        return [self.names[code] for code in self.codes.tolist()]

    def main_rows(self) -> np.ndarray:
        is_main = np.array([same_type(name, self.main) for name in self.names], dtype=bool)
        return self.rows[is_main[self.codes]]


def _own_nouns(catalog: Catalog, category: int) -> dict[str, str]:
    c = catalog.categories[category]
    leaf = c.name.split(",")[0].split("&")[0].strip()
    return {fold(leaf): leaf, fold(c.noun): c.noun}


def category_types(catalog: Catalog, category: int) -> CategoryTypes:
    """Types of one category's products, built once per catalog (derived data).

    The main type is the most common one, types counted by :func:`fold` (ties: the category's own
    noun, then the type seen first), as its first product spells it.
    """
    return CATEGORY_TYPES.of(catalog, category)


def _category_types(catalog: Catalog, category: int) -> CategoryTypes:
    rows = catalog.category_rows[category]
    stored = STORED_NAMES.of(catalog)
    if stored is not None:  # a catalog directory's, worked out by ``catalog build``
        return CategoryTypes(rows, stored.main_types[category], stored.type_names[category], stored.type_code[rows],
                             stored.type_code)
    own = _own_nouns(catalog, category)
    names, codes = title_types(catalog.titles.take(rows), own)
    used, first_of, count_of = np.unique(codes, return_index=True, return_counts=True)
    counts: dict[str, list[int]] = {}  # folded type -> [products, its first product's type], first seen first
    for _, code, count in sorted(zip(first_of.tolist(), used.tolist(), count_of.tolist())):
        counts.setdefault(fold(names[code]), [0, code])[0] += count
    if counts:
        main = names[counts[max(counts, key=lambda k: (counts[k][0], k in own))][1]]
    else:
        main = catalog.categories[category].noun.lower()
    codes.flags.writeable = False
    by_row = TYPE_CODES.of(catalog)
    by_row[rows] = codes  # before the category's types are kept: no reader sees its rows unset
    return CategoryTypes(rows, main, tuple(names), codes, by_row)


CATEGORY_TYPES = derived("category_types", _category_types)
#: Each product's index into its category's types (:attr:`CategoryTypes.codes` by catalog row), set as each
#: category's :data:`CATEGORY_TYPES` is built (-1 until then): a product's type is then one read by row, not a
#: search of its category's rows (4 bytes a product, for the catalog's life).
TYPE_CODES: Derived[np.ndarray] = derived("product_type_codes", lambda catalog: np.full(len(catalog), -1, np.int32))


def product_type(catalog: Catalog, row: int) -> str:
    """What product ``row`` is, e.g. "smartwatch", "strap", "running shoes"."""
    return category_types(catalog, catalog.category.item(row)).type_of(row)


def main_type(catalog: Catalog, category: int) -> str:
    """The type a request for ``category`` names: what most of its products are."""
    return category_types(catalog, category).main


def is_main_type(catalog: Catalog, row: int) -> bool:
    """Whether ``row`` is what its category's requests ask for (not an accessory or add-on)."""
    types = category_types(catalog, catalog.category.item(row))
    return same_type(types.type_of(row), types.main)


def main_type_mask(catalog: Catalog) -> np.ndarray:
    """Per product, :func:`is_main_type` (every category's types, computed once, cached on the catalog)."""
    return MAIN_TYPE_MASK.of(catalog)


def _main_type_mask(catalog: Catalog) -> np.ndarray:
    mask = np.zeros(len(catalog), dtype=bool)
    for category in range(len(catalog.categories)):
        mask[category_types(catalog, category).main_rows()] = True
    mask.flags.writeable = False
    return mask


MAIN_TYPE_MASK = derived("main_type_mask", _main_type_mask)


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


@lru_cache(maxsize=4096)
def spoken_noun(noun: str) -> str:
    """The noun as said after "the": "the running shoes", "the smartwatch" (kept per noun: a catalog has a few
    hundred types, and an order reference says one at every reset)."""
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
    """Every product of ``category`` -> the name a shopper says, built once per category (derived data).

    Brand + model words + product type, the model words taken from the title's head, else its
    first clause, else the whole title: the first of these that singles the product out within
    its category. When none does, the title's first clause (``unique`` tells whether even that is
    shared); never the whole listing title.
    """
    return SPOKEN_NAMES.of(catalog, category)


def _spoken_names(catalog: Catalog, category: int) -> dict[int, SpokenName]:
    info = category_types(catalog, category)
    rows = info.rows.tolist()
    titles = catalog.titles.take(info.rows).to_pylist() if rows else []
    # each row's columns read once for the category (not row by row from the catalog's accessors)
    texts = dict(zip(rows, zip([title_head(title) for title in titles], map(short_title, titles), titles)))
    nouns = dict(zip(rows, info.row_types()))
    brands = dict(zip(rows, [catalog.brands[code] for code in catalog.brand[info.rows].tolist()]))

    def option(row: int, level: int) -> tuple[str, str]:
        if level >= 3:  # the title's first clause; never the whole listing title (people do not say that)
            return texts[row][1], ""
        text = texts[row][level]
        noun, brand = nouns[row], brands[row]
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
    return names


SPOKEN_NAMES = derived("spoken_names", _spoken_names)


def spoken_name(catalog: Catalog, row: int) -> SpokenName:
    """The name a shopper uses for product ``row`` (see :func:`spoken_names`): read from a catalog
    directory's stored names when it has them, else worked out for its whole category on first use."""
    stored = STORED_NAMES.of(catalog)
    if stored is not None:
        return SpokenName(stored.spoken_text[row].as_py(), stored.spoken_model[row].as_py(),
                          bool(stored.spoken_unique[row]))
    return spoken_names(catalog, catalog.category.item(row))[int(row)]


@dataclass(frozen=True)
class StoredNames:
    """What ``catalog build`` works out of every title into the directory (``derived/``, memory-mapped):
    each category's types and main type, and each product's type and spoken name, exactly as
    :func:`category_types` and :func:`spoken_names` make them."""

    type_names: tuple[tuple[str, ...], ...]  # per category, its distinct types
    main_types: tuple[str, ...]  # per category
    type_code: np.ndarray  # per product, index into its category's ``type_names``
    spoken_text: pa.Array  # per product, :attr:`SpokenName.text`
    spoken_model: pa.Array  # per product, :attr:`SpokenName.model`
    spoken_unique: np.ndarray  # per product, :attr:`SpokenName.unique`


def stored_names_of(catalog: Catalog, progress: Callable[[int], None] = lambda n: None) -> StoredNames:
    """Every category's types and every product's spoken name, worked out now (what a directory stores);
    ``progress(n)`` after each category of ``n`` products."""
    n = len(catalog)
    type_code = np.zeros(n, dtype=np.int32)
    text: list[str] = [""] * n
    model: list[str] = [""] * n
    unique = np.zeros(n, dtype=bool)
    type_names, main_types = [], []
    for category in range(len(catalog.categories)):
        info = category_types(catalog, category)
        type_names.append(info.names)
        main_types.append(info.main)
        type_code[info.rows] = info.codes
        for row, name in _spoken_names(catalog, category).items():  # not kept: one category at a time
            text[row], model[row], unique[row] = name.text, name.model, name.unique
        progress(len(info.rows))
    return StoredNames(tuple(type_names), tuple(main_types), type_code, pa.array(text, pa.string()),
                       pa.array(model, pa.string()), unique)


#: A catalog directory's :class:`StoredNames` (installed when it is opened); None: work them out on first use.
STORED_NAMES: Derived[StoredNames | None] = derived("stored_names", lambda catalog: None)


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
