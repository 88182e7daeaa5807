"""Order histories and the ways customers refer to an order, shared by RETURN, STATUS and POLICY.

Generators append orders to ``world.account`` (never replace them). A customer names an order
line at the ``order_reference`` level of the difficulty table: by id (low d), by product and
exact order date (middle), or only by product type and a rough time ("the blender I ordered
about 3 weeks ago", high d).
A vague reference is *ambiguous* when the words the customer says fit another line with the same
noun: its order age lies in the span the spoken rough time covers (:func:`rough_span`: "about 3
months ago" covers 74-106 days, so 78 and 105 days ago both fit), or it was ordered less than
:data:`DISTINCT_DAYS` days apart. Then the customer gives the exact item when asked: with the exact
order date below the :data:`BY_TYPE_AND_TIME` level, from there on only with a rough time (what,
roughly when), so the agent still has to match the description against the order list.

Asked a fair question about the line (which one, when it was ordered, what it cost, or which of a
few named dates or prices), the customer answers with what they know (:func:`line_question_reply`):
the exact date only below the :data:`BY_TYPE_AND_TIME` level, the price they paid always, never an id.
"""

from __future__ import annotations

import datetime as dt
import functools
import math
import random
import zlib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
from pydantic import BaseModel, ConfigDict

from ecomrlve.catalog.derived import Derived, derived, kept_per_category, kept_per_category_each, kept_per_product
from ecomrlve.catalog.product_type import SpokenName, fold, product_type, spoken_name, spoken_noun
from ecomrlve.catalog.schema import Catalog, Category, short_title
from ecomrlve.envs.account import acts as A
from ecomrlve.envs.base import GenerationError
from ecomrlve.user.dialogue import ItemNames
from ecomrlve.user.understanding import LINE_PRICE_WORDS, LINE_WHEN_WORDS, InPlay, named_dates, named_prices
from ecomrlve.world.account import Order, OrderLine, OrderStatus
from ecomrlve.world.policy import SHIPPING_METHODS, is_final_sale
from ecomrlve.world.state import World

DISTINCT_DAYS = 14  # orders of the same category closer than this are told apart only by the exact item
# How the customer names an order (the ``order_reference`` difficulty axis).
BY_ORDER_ID, BY_TITLE_AND_DATE, BY_TYPE_AND_TIME = 0, 1, 2
MAX_LINES = 3
_SAMPLE_TRIES = 200


class LineRef(BaseModel):
    """Where a referenced line lives, and how the customer names it (hidden-goal part)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    order_id: str
    line_id: str
    product_id: str
    row: int
    title: str  # short title, e.g. "Brightix Nova 21 Headphones"
    brand: str
    model: str
    noun: str
    placed: dt.date
    phrase: str  # how the customer first refers to it
    exact: tuple[str, ...]  # parts of the phrase that must reach the agent verbatim (ids, dates)
    ambiguous: bool  # the phrase fits other lines too; the customer identifies the item when asked
    identification: str  # what the customer says when asked which item they mean (never an id)
    when: str  # when they ordered it, as they remember it: "on March 3" (exact date), or "about 3 weeks ago"
    paid: str  # the unit price they paid, as said ("24.99")

    @property
    def names(self) -> ItemNames:
        return ItemNames(self.product_id, self.brand.lower(), self.model.lower(), self.noun.lower())


def line_names(world: World, row: int) -> ItemNames:
    """The words that name a product in conversation (brand, model words, noun), kept per product: the shopper
    reads every message against those of each ordered product."""
    return kept_per_product(world.catalog, LINE_ITEM_NAMES, row, _line_item_names)


def _line_item_names(catalog: Catalog, row: int) -> ItemNames:
    return ItemNames(catalog.product_id(row), catalog.brand_of(row).lower(), spoken_name(catalog, row).model.lower(),
                     spoken_noun(product_type(catalog, row)))


LINE_ITEM_NAMES: Derived[dict[int, ItemNames]] = derived("order_item_names", lambda catalog: {})


def orders_in_play(world: World) -> InPlay:
    """The customer's ordered products and the dates of their orders (placed, delivered), as a message may
    name them to ask which order is meant ("the one from September 10 or the one from September 11?", "Was it
    the Kinwear hoodie?")."""
    orders = world.account.orders
    days = {day for order in orders for day in (order.placed, order.delivered) if day is not None}
    rows = dict.fromkeys(line.row for order in orders for line in order.lines)
    return InPlay(items=tuple(line_names(world, row) for row in rows),
                  dates=tuple(spoken_date(day) for day in sorted(days)))


def noun_key(world: World, row: int) -> str:
    """What a product is called in conversation, folded (:func:`~ecomrlve.catalog.product_type.fold`):
    products with equal keys are told apart only by more than their type."""
    return _folded_type(product_type(world.catalog, row))


@functools.lru_cache(maxsize=4096)
def _folded_type(noun: str) -> str:
    """:func:`~ecomrlve.catalog.product_type.fold` of a product type: a catalog has a few hundred, and a high-d
    reset compares the types of most of the customer's ordered products."""
    return fold(noun)


def same_noun(world: World, row: int, other: int) -> bool:
    """Whether two products are called the same in conversation (their product types agree)."""
    return noun_key(world, row) == noun_key(world, other)


@functools.lru_cache(maxsize=4096)
def spoken_date(day: dt.date) -> str:
    """"March 3": an episode's orders fall on a few hundred dates, each spelled once."""
    return f"{day:%B} {day.day}"


@functools.lru_cache(maxsize=1024)
def _rough(days: int) -> tuple[str, int, int]:
    """How a shopper says "``days`` ago" roughly, and the ages (days) a listener can take it to mean:
    half a unit either side of what is said, plus a day ("about 3 weeks ago": 17-25 days)."""
    if days < 7:
        return "a few days ago", 0, 9
    weeks = round(days / 7)
    if weeks <= 1:
        text, unit, count = "about a week ago", 7, 1
    elif weeks < 9:
        text, unit, count = f"about {weeks} weeks ago", 7, weeks
    else:
        count = round(days / 30)
        text, unit = f"about {count} months ago", 30
    return text, math.ceil(unit * (count - 0.5) - 1), math.floor(unit * (count + 0.5) + 1)


def rough_time(days: int) -> str:
    """How a shopper says "``days`` ago" roughly (a few days, weeks, months)."""
    return _rough(days)[0]


def rough_span(days: int) -> tuple[int, int]:
    """The ages (days, inclusive) that :func:`rough_time` of ``days`` fits: "about 3 months ago" (said of
    78 days) fits 74-106 days, so an order 105 days ago fits it too."""
    return _rough(days)[1:]


def fits_rough_time(said_days: int, days: int) -> bool:
    """Whether an order ``days`` old fits the rough time said of one ``said_days`` old."""
    low, high = rough_span(said_days)
    return low <= days <= high


def has_look_alike(world: World, row: int) -> bool:
    """Whether ``row``'s category holds another product (a real catalog may have one-product categories)."""
    return len(world.catalog.category_rows[int(world.catalog.category[row])]) > 1


def sample_row(world: World, rng: random.Random, *, exclude: set[int], category: int | None = None,
               returnable: bool | None = None, accept: Callable[[Category], bool] | None = None) -> int:
    """A product that is not denied nor named by another task's request (:meth:`World.name_ordered`) (and, if
    asked, of ``category`` / (non-)final-sale / whose catalog category ``accept`` takes).

    Rejection sampling first; when the wanted categories are too rare for that (a real catalog), the
    draw is made among the rows of the qualifying categories instead.
    """
    catalog = world.catalog

    def qualifies(c: Category) -> bool:
        return (returnable is None or is_final_sale(c.name) != returnable) and (accept is None or accept(c))

    filtered = returnable is not None or accept is not None  # else every category qualifies
    pool = catalog.category_rows[category] if category is not None else None
    for _ in range(_SAMPLE_TRIES):
        row = int(pool[rng.randrange(len(pool))]) if pool is not None else rng.randrange(len(catalog))
        if row in exclude or row in world.named or world.is_denied(row) or (
                filtered and not qualifies(catalog.category_of(row))):
            continue
        return row
    wanted = [i for i, c in enumerate(catalog.categories) if qualifies(c) and (category is None or i == category)]
    pool = np.flatnonzero(np.isin(catalog.category, wanted))
    for _ in range(_SAMPLE_TRIES if len(pool) else 0):
        row = int(pool[rng.randrange(len(pool))])
        if row not in exclude and row not in world.named and not world.is_denied(row):
            return row
    raise GenerationError(f"could not sample an order product from catalog {catalog.name}")


def ordered_rows(world: World) -> set[int]:
    """The products the customer's orders hold so far (a request's own product must not be one: the name and
    time it is asked by could fit that order too)."""
    return {line.row for order in world.account.orders for line in order.lines}


def has_category(world: World, accept: Callable[[Category], bool]) -> bool:
    """Whether any category of the catalog qualifies (so a filtered draw can succeed)."""
    return any(accept(c) for c in world.catalog.categories)


def order_items(world: World, rng: random.Random, rows: list[int]) -> list[tuple[int, str | None, int, int]]:
    """Order items for ``rows``: a variant when the product has one, mostly single units, catalog price."""
    items = []
    for row in rows:
        variant_id = world.chosen_variant_id(row, rng)
        items.append((row, variant_id, 1 if rng.random() < 0.8 else 2, world.catalog.price_cents.item(row)))
    return items


def place(world: World, rng: random.Random, rows: list[int], status: OrderStatus, age_days: int,
          method: str | None = None) -> Order:
    """Append an order of ``rows`` (first row first) with ``status``; see :func:`~ecomrlve.world.account.schedule`."""
    method = method or rng.choice(SHIPPING_METHODS)
    return world.account.place_order(order_items(world, rng, rows), status, method, age_days, rng)


def random_status_order(world: World, rng: random.Random, rows: list[int], status: OrderStatus) -> Order:
    """An order in ``status`` with plausible random dates."""
    if status == "in_transit":
        method = rng.choice(("standard", "expedited"))
        return place(world, rng, rows, status, rng.randint(1, world.policy.shipping_days[method] - 1), method)
    if status == "shipped":
        return place(world, rng, rows, status, 0)
    if status == "processing":
        return place(world, rng, rows, status, rng.randint(0, world.policy.handling_days - 1))
    if status == "cancelled":
        return place(world, rng, rows, status, rng.randint(2, 90))
    return place(world, rng, rows, status, rng.randint(1, 150))


def fillers(world: World, rng: random.Random, exclude: set[int]) -> list[int]:
    """0-2 other products that share an order with the one that matters (fewer when the catalog
    has fewer other products: a real file may hold one or two)."""
    rows: list[int] = []
    for _ in range(min(rng.randint(0, MAX_LINES - 1), len(world.catalog) - len(exclude))):
        rows.append(sample_row(world, rng, exclude=exclude | set(rows)))
    return rows


def reference(world: World, order: Order, line: OrderLine, level: int, rng: random.Random, *, vague_phrases: tuple[str, ...] = ("the {noun} I ordered {when}",)) -> LineRef:
    """How the customer refers to ``line`` of ``order`` at reference ``level`` (see the module docstring)."""
    catalog = world.catalog
    kept = _kept_line_name(catalog, line.row)  # its :func:`line_name`, and the words of it its title shows
    title, model = kept.text, spoken_name(catalog, line.row).model
    brand = catalog.brand_of(line.row)
    noun = spoken_noun(product_type(catalog, line.row))
    if level == BY_ORDER_ID:
        phrase, exact, ambiguous = f"the {title} from order {order.order_id}", (order.order_id,), False
    elif level == BY_TITLE_AND_DATE:
        when = spoken_date(order.placed)
        phrase, exact, ambiguous = f"the {title} I ordered on {when}", (when,), False
    else:
        age = (world.today - order.placed).days
        when = rough_time(age)
        phrase, exact = rng.choice(vague_phrases).format(noun=noun.lower(), when=when), (when,)
        key, (low, high) = noun_key(world, line.row), rough_span(age)  # (what fits_rough_time(age, ...) reads)
        ambiguous = any(  # the dates first: they rule out most orders for the price of a subtraction
            other is not line and noun_key(world, other.row) == key
            for o in world.account.orders
            if abs((o.placed - order.placed).days) < DISTINCT_DAYS or low <= (world.today - o.placed).days <= high
            for other in o.lines
        )
    when = f"on {spoken_date(order.placed)}" if level < BY_TYPE_AND_TIME else when
    paid = f"{line.unit_price_cents / 100:.2f}"
    identification = f"the {title} I ordered {when}"
    # name_fits_another(world, line.row, title), the name's words kept with it: "the TRAVO desk lamp" fits two
    # lamps, the price tells them apart
    if _words_fit_another(world, line.row, kept.shown_words):
        identification += f", the one I paid ${paid} for"
    return LineRef(order_id=order.order_id, line_id=line.line_id, product_id=catalog.product_id(line.row),
                   row=line.row, title=title, brand=brand, model=model, noun=noun, placed=order.placed,
                   phrase=phrase, exact=exact, ambiguous=ambiguous, identification=identification,
                   when=when, paid=paid)


def line_name(world: World, row: int) -> str:
    """How the customer names an ordered product: brand, model words and type ("Brightix Nova 21 headphones"), or
    the listing title's first clause as order lines show it when the brand or model words lie past it ("Zentari
    Wall Mounted Spice Rack", not "Zentari Store Sport 7S spice rack": words the agent cannot see)."""
    return _kept_line_name(world.catalog, row).text


@dataclass(frozen=True)
class LineName:
    """A product's :func:`line_name` and the folded words of it that its own listing title shows (what another
    product's title must hold for the name to fit it too, :func:`name_fits_another`): one product's, kept.
    ``title_words``: the folded words of its whole title, where its category's names were worked out at once
    (None: a large category's product, whose title is folded only where a check needs it)."""

    text: str
    shown_words: frozenset[str]
    title_words: frozenset[str] | None = None


def _kept_line_name(catalog: Catalog, row: int) -> LineName:
    """:class:`LineName` of ``row``, worked out for its whole category on its first use (~30 µs per product) or
    once for the product (:func:`~ecomrlve.catalog.derived.kept_per_category`)."""
    return kept_per_category(catalog, row, CATEGORY_LINE_NAMES, LINE_NAMES, _line_name)


def _kept_line_names(catalog: Catalog, rows: Sequence[int]) -> list[LineName]:
    """:func:`_kept_line_name` of each of ``rows``, the catalog's look-ups made once for them all
    (:func:`name_fits_another` reads every line of the customer's orders, where a look-up cost more than the check)."""
    return kept_per_category_each(catalog, rows, CATEGORY_LINE_NAMES, LINE_NAMES, _line_name)


def _line_name(catalog: Catalog, row: int) -> LineName:
    return _named(spoken_name(catalog, row), catalog.title(row), catalog.brand_of(row))


def _named(name: SpokenName, title: str, brand: str, title_words: frozenset[str] | None = None) -> LineName:
    """:class:`LineName` of a product of spoken ``name``, listing ``title`` and ``brand``; ``title_words``: the
    title's folded words where already worked out, else the title is folded only when a word of the name may lie
    past its first clause."""
    shown = short_title(title)
    shown_words = frozenset(fold(shown).split())  # the title's first clause: all of them are the title's words
    if not set(fold(f"{brand} {name.model}").split()) <= shown_words:
        return LineName(shown, shown_words, title_words)
    words = set(fold(name.text).split())
    if title_words is None:
        rest = words - shown_words  # the title's words past its first clause, if any: folded only when one may be
        lowered = title.lower()
        if not any(_may_show(lowered, word) for word in rest):
            return LineName(name.text, frozenset(words & shown_words))
        title_words = frozenset(fold(title).split())
    return LineName(name.text, frozenset(words & title_words), title_words)


def _category_line_names(catalog: Catalog, category: int) -> dict[int, LineName]:
    """:class:`LineName` of every product of a category, with its title's folded words: RETURN/STATUS resets then
    look their ordered products up, where one product at a time cost ~30 µs for its name and ~18 µs for the check
    against the other ordered lines' titles per product not yet seen."""
    rows = np.asarray(catalog.category_rows[category], dtype=np.int64)
    titles = catalog.titles.take(pa.array(rows)).to_pylist()  # at once: row by row costs more than the folding
    brands = [catalog.brands[code] for code in np.asarray(catalog.brand)[rows].tolist()]
    names = {row: _named(spoken_name(catalog, row), title, brand, frozenset(fold(title).split()))
             for row, title, brand in zip(rows.tolist(), titles, brands)}
    bits = TITLE_BITS.of(catalog)
    for row, name in names.items():
        bits[row] = _word_bits(name.title_words or ())
    return names


def _word_bits(words: Iterable[str]) -> int:
    """A 64-bit signature of folded ``words`` (one bit per word, by a stable hash): a title whose signature lacks
    a bit of the name's lacks one of its words, so :func:`name_fits_another` need not look that title up."""
    bits = 0
    for word in words:
        bits |= 1 << (zlib.crc32(word.encode()) & 63)
    return bits


_ALL_BITS = (1 << 64) - 1  # a product whose title's signature is not worked out: it may hold any name

LINE_NAMES: Derived[dict[int, LineName]] = derived("order_line_names", lambda catalog: {})
CATEGORY_LINE_NAMES: Derived[dict[int, LineName]] = derived("order_category_line_names", _category_line_names)
#: :func:`_word_bits` of each product's title words, filled in for a whole category with its
#: :data:`CATEGORY_LINE_NAMES` (all bits set until then, and for a large category's products: checked in full).
#: A list: a reset reads ~13 of them, where a numpy array's calls cost more than the reads.
TITLE_BITS: Derived[list[int]] = derived("order_title_bits", lambda catalog: [_ALL_BITS] * len(catalog))


def name_fits_another(world: World, row: int, name: str) -> bool:
    """Whether the words of a spoken ``name`` that the product's own listing title shows all are in the listing
    title of another product of the customer's orders: a name unique in its category ("TRAVO desk lamp", no model
    words) may still fit "Desk Lamp for Home Office - TRAVO Flex 8X Architect Task Lamp", so it does not tell the
    customer's lines apart (the agent sees titles, not the catalog's brand field "TRAVO Store")."""
    catalog = world.catalog
    kept = _kept_line_name(catalog, row)
    if name == kept.text:  # the customer's own name for it: its words worked out once
        words: set[str] | frozenset[str] = kept.shown_words
    else:
        own = kept.title_words if kept.title_words is not None else set(fold(catalog.title(row)).split())
        words = set(fold(name).split()) & own
    return _words_fit_another(world, row, words)


def _words_fit_another(world: World, row: int, words: set[str] | frozenset[str]) -> bool:
    """Whether the listing title of another product of the customer's orders than ``row`` holds all the folded
    ``words`` (:func:`name_fits_another`, its name's words worked out)."""
    catalog = world.catalog
    need, bits = _word_bits(words), TITLE_BITS.of(catalog)
    others = [line.row for order in world.account.orders for line in order.lines  # a title lacking a bit of
              if line.row != row and bits[line.row] & need == need]  # the name lacks a word of it: not looked up
    return any(_title_holds(catalog, other, other_name, words)
               for other, other_name in zip(others, _kept_line_names(catalog, others)))


def _title_holds(catalog: Catalog, row: int, name: LineName, words: set[str] | frozenset[str]) -> bool:
    """Whether the listing title of ``row`` (whose :class:`LineName` is ``name``) holds every one of the folded
    ``words``: its title's words where its category's names were worked out at once, else its title folded only
    where it may hold them all."""
    if name.title_words is not None:
        return words <= name.title_words
    title = catalog.title(row).lower()
    return all(_may_show(title, word) for word in words) and words <= set(fold(title).split())


def _may_show(lowered: str, word: str) -> bool:
    """Whether the lower-cased text ``lowered`` may hold the folded ``word`` once folded: a folded word less its
    last letter lies in the text it came from ("batter" of "battery" in "batteries"), so a text lacking it need
    not be folded to know."""
    return word[:-1] in lowered


def place_copy(world: World, rng: random.Random, rows: list[int], target: Order, older_by: tuple[int, int],
               level: int) -> Order:
    """A delivered order of ``rows`` (the target's product first) placed, half of the time when the target is
    old enough, after ``target``, else ``older_by`` days before it; at the ``BY_TYPE_AND_TIME`` level never at
    the target's rough time.

    Always older made "the newest order of that product" a rule that tells the copies apart without reading
    the date the customer gave; at high d the rough time is what tells them apart, so the copy's age must lie
    outside the span it covers (:func:`rough_span`), not merely be said differently.
    """
    method = rng.choice(SHIPPING_METHODS)
    lead = world.policy.handling_days + world.policy.shipping_days[method]  # from order to delivery
    age = (world.today - target.placed).days  # days ago, as the copy's candidate placements below
    newer: Sequence[int] = range(lead + 1, age)  # exact dates: every other day tells them apart
    older: Sequence[int] = range(age + older_by[0], age + older_by[1] + 1)
    if level >= BY_TYPE_AND_TIME:  # (not fits_rough_time(age, days), the span read once)
        low, high = rough_span(age)
        newer = [days for days in newer if not low <= days <= high]
        older = [days for days in older if not low <= days <= high]
    placed = rng.choice(newer) if newer and rng.random() < 0.5 else rng.choice(older)
    return place(world, rng, rows, "delivered", placed - lead, method)


@dataclass(frozen=True)
class Distractors:
    """Which look-alike orders a history gets at an order reference level."""

    same_product: bool  # the same product again in an older or newer order (told apart by date)
    same_category_close: bool  # another product of the same category ordered within DISTINCT_DAYS

    @classmethod
    def at(cls, level: int, rng: random.Random) -> Distractors:
        return cls(same_product=level >= BY_TITLE_AND_DATE and rng.random() < 0.5,
                   same_category_close=level >= BY_TYPE_AND_TIME and rng.random() < 0.5)


# -- the customer's answers to questions about the line they mean ---------------------------------

MAX_CANDIDATES = 3  # named dates or prices the customer picks among; more is a list to read, not a question


def line_question_reply(text: str, target: LineRef) -> A.AccountAct:
    """The customer's answer to a fair question about the line they mean (lower-cased ``text``, which the
    shopper's understanding read as asking which line is meant): a pick among up to :data:`MAX_CANDIDATES` named dates (when they know
    the exact date) or prices, "neither" when none is theirs, when they ordered it, what they paid, or which
    item it is (product and date as they remember it). Never an id."""
    knows_date = target.when.startswith("on ")
    dates, prices = named_dates(text), named_prices(text)
    if knows_date and 2 <= len(dates) <= MAX_CANDIDATES:
        mine = (target.placed.month, target.placed.day)
        return A.PickLine(target.when[3:], target.title) if mine in dates else A.NotThese(target.identification,
                                                                                             (target.title,))
    if 2 <= len(prices) <= MAX_CANDIDATES:
        paid = float(target.paid)
        if any(abs(price - paid) < 0.005 for price in prices):
            return A.PickLine("$" + target.paid, target.title)
        return A.NotThese(target.identification, (target.title,))
    if any(w in text for w in LINE_PRICE_WORDS):
        return A.TellPrice(target.title, target.paid)
    if any(w in text for w in LINE_WHEN_WORDS) or dates:
        return A.TellWhen(target.title, target.when, knows_date)
    return A.IdentifyItem(target.identification, (target.title,))
