"""Typed tools: one Python function each, its OpenAI schema generated from its signature.

A tool is ``def name(ctx: ToolContext, arg: T = default, ...) -> dict`` with a Google-style
docstring. The docstring *is* what the agent reads (first paragraph -> description, ``Args:``
-> parameter descriptions); the signature becomes a strict pydantic model (unknown keys and
wrong types are schema violations) and, from it, the OpenAI function schema. Business failures
raise :class:`ToolError` and come back to the agent as an error result; a schema violation is
a protocol error that ends the episode.
"""

from __future__ import annotations

import functools
import inspect
import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import cached_property, lru_cache
from typing import TYPE_CHECKING, Any, NamedTuple, get_type_hints

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model

if TYPE_CHECKING:
    import random

    from ecomrlve.catalog.search import SearchEngine
    from ecomrlve.difficulty import Difficulty
    from ecomrlve.world.state import World


class ToolError(Exception):
    """A business failure (unknown id, out of stock, ...): reported to the agent, episode continues."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message

    def result(self) -> dict[str, Any]:
        return {"error": self.code, "message": self.message}


class ToolArgumentsError(ValueError):
    """Arguments that violate the tool's schema: a protocol error."""


#: :meth:`ToolContext.surfaced_among` looks ids up from this many shown products per id on (below, it makes the
#: shown products' ids: a CART answer's two ids among four products' cost more to look up than to make)
_LOOKED_UP_FROM = 4


@dataclass
class ToolContext:
    """What tools may read and change during one episode."""

    world: World
    search: SearchEngine
    difficulty: Difficulty
    #: makes the search tools' random stream (:attr:`search_rng`) on their first use: seeding a Mersenne Twister
    #: costs ~10 µs, a tenth of an account episode's reset, and STATUS/RETURN/POLICY never search
    search_stream: Callable[[], random.Random]
    ask_user: Callable[[str], str]
    submit_answer: Callable[[BaseModel], None]
    hidden_card_fields: frozenset[str] = frozenset()  # the environment's ``unused_card_fields``
    #: whether results are written in the compact form (the session's verbosity): only then do the tools that list
    #: product cards build its tables with their result (:class:`ToolOutput`; order lines cost next to nothing)
    compact_results: bool = True

    @cached_property
    def search_rng(self) -> random.Random:
        """The random stream of the search tools (the distractors they inject), made on first use."""
        return self.search_stream()

    def surface(self, rows: Iterable[int], source: str) -> None:
        """Record that ``source`` (a tool name, or ``"user"``) showed these products (and so their variants)."""
        self.world.surfacing.record(source, rows=rows)

    def surface_account_ids(self, ids: Iterable[str], source: str) -> None:
        """Record order or order-line ids shown by ``order_list``/``order_get_details`` or the user."""
        self.world.surfacing.record(source, account_ids=ids)

    def surfaced_ids(self) -> set[str]:
        """Every product, order and order-line id shown so far (the world's surfacing ledger), and the
        variant ids of those products: the ids ``r_hall`` accepts.

        Variant ids of a product the agent only looked up by id are not surfaced either, so a
        guessed id cannot be laundered through ``catalog_get_variants``.
        """
        ledger = self.world.surfacing
        return self._with_products(ledger.account_ids(), ledger.rows())

    def _with_products(self, ids: set[str], rows: set[int]) -> set[str]:
        """``ids`` (a set of the caller's, updated) with the ids and variant ids of the products ``rows``."""
        world = self.world
        ids.update([world.catalog.product_id(row) for row in rows])  # the catalog's, then the world's
        for row in rows:
            ids.update(world.variant_ids(row))
        return ids

    def surfaced_among(self, ids: Iterable[str]) -> set[str]:
        """``set(ids) & self.surfaced_ids()`` (what ``r_hall`` reads of them). Where a few products were shown per id
        asked, it is that; else the given ids are looked up instead of every surfaced id made (an answer step made
        the ids and variant ids of every product shown so far): an account id in the ledger, a product id by its
        row among the shown ones, then a variant id among the shown products' variants (only while one is left);
        ids found in none of these (one never shown) are looked for among all the surfaced ids."""
        wanted = set(ids)
        ledger, world = self.world.surfacing, self.world
        accounts, rows = ledger.account_ids(), ledger.rows()
        if len(rows) < _LOOKED_UP_FROM * len(wanted):  # few products shown: their ids cost less than the look-ups
            return wanted & self._with_products(accounts, rows)
        found = wanted & accounts
        rest = wanted - found
        if rest:
            index_of = world.catalog.index_of
            shown = {i for i in rest if index_of(i) in rows}  # that row's product id is ``i``: shown
            found |= shown
            rest -= shown
            for row in rows if rest else ():
                variants = rest.intersection(world.variant_ids(row))
                if variants:
                    found |= variants
                    rest -= variants
                    if not rest:
                        break
        if rest:
            found |= rest & self._with_products(accounts, rows)
        return found


class ToolOutput(NamedTuple):
    """A tool's result and its compact form (:func:`~ecomrlve.protocol.compact_result` of it, or None: not built),
    built together by tools whose results list products, from pieces kept per product: what
    :meth:`Tool.output` gives."""

    result: dict[str, Any]
    compact: Any = None


_STRICT = ConfigDict(extra="forbid", strict=True)


@dataclass(frozen=True)
class Tool:
    """A tool the agent can call: name, description, argument model and handler."""

    name: str
    description: str
    arguments: type[BaseModel]
    handler: Callable[..., dict[str, Any]]
    mutates: bool = False
    id_arguments: tuple[str, ...] = ()  # arguments holding ids the agent acts on (scored by r_hall)
    axes: tuple[str, ...] = ()  # difficulty axes the handler reads: they apply where the tool is offered
    irreversible: bool = False  # cannot be undone (a return): the system prompt's confirmation rule applies
    #: the tool as an environment that shows no such card fields offers it (None: the same everywhere)
    narrowed: Callable[[frozenset[str]], Tool] | None = None
    #: the handler's result with its compact form (None: the handler alone; the compact form is derived)
    written: Callable[..., ToolOutput] | None = None

    def offered(self, hidden_card_fields: frozenset[str]) -> Tool:
        """The tool as an environment with these ``unused_card_fields`` offers it: without options that select by
        fields its cards do not show (:attr:`narrowed`)."""
        return self.narrowed(hidden_card_fields) if self.narrowed is not None and hidden_card_fields else self

    def used_ids(self, arguments: BaseModel) -> list[str]:
        ids: list[str] = []
        for name in self.id_arguments:
            value = getattr(arguments, name, None)
            if isinstance(value, str):
                ids.append(value)
            elif isinstance(value, (list, tuple)):
                ids.extend(v for v in value if isinstance(v, str))
        return ids

    def validate(self, raw: dict[str, Any]) -> BaseModel:
        try:
            return self.arguments.model_validate(raw)
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in err['loc']) or '<root>'}: {err['msg']}" for err in exc.errors()
            )
            raise ToolArgumentsError(f"arguments of {self.name} violate its schema: {problems}") from None

    def run(self, ctx: ToolContext, arguments: BaseModel) -> dict[str, Any]:
        return self.handler(ctx, **arguments.__dict__)  # a model's __dict__ holds its fields, in order

    def output(self, ctx: ToolContext, arguments: BaseModel) -> ToolOutput:
        """:meth:`run`'s result, with its compact form where the tool builds it."""
        if self.written is None:
            return ToolOutput(self.handler(ctx, **arguments.__dict__))
        return self.written(ctx, **arguments.__dict__)

    def schema(self) -> dict[str, Any]:
        """The OpenAI function-calling schema as advertised: every ``$ref`` inlined, and no
        ``"additionalProperties": false`` (the system prompt says once that arguments outside a schema
        end the task; :meth:`validate` refuses them as strictly as ever)."""
        return _function_schema(self.name, self.description, self.arguments)


@lru_cache(maxsize=512)
def _cached_parameters(arguments: type[BaseModel]) -> str:
    parameters = _inline_refs(arguments.model_json_schema())
    parameters.pop("title", None)
    return json.dumps(parameters)


def _function_schema(name: str, description: str, arguments: type[BaseModel]) -> dict[str, Any]:
    return {"type": "function", "function": {"name": name, "description": description,
                                             "parameters": json.loads(_cached_parameters(arguments))}}


def _inline_refs(schema: dict[str, Any]) -> dict[str, Any]:
    defs = schema.pop("$defs", {})

    def resolve(node: Any) -> Any:
        if isinstance(node, dict):
            if "$ref" in node:
                return resolve(defs[node["$ref"].rsplit("/", 1)[-1]])
            options = node.get("anyOf")
            if isinstance(options, list) and len(options) == 2 and {"type": "null"} in options:
                # an optional argument (``T | None = None``): said once as T, and left out of "required"
                [option] = [o for o in options if o != {"type": "null"}]
                node = {**resolve(option), **{k: v for k, v in node.items() if k != "anyOf"}}
                if node.get("default", 0) is None:
                    del node["default"]
            # "additionalProperties": false on every object is said once, in the system prompt's rules
            # (validation stays strict: an unknown argument is still a protocol error)
            return {k: resolve(v) for k, v in node.items()
                    if k != "title" and not (k == "additionalProperties" and v is False)}
        if isinstance(node, list):
            return [resolve(v) for v in node]
        return node

    return resolve(schema)


_ARG_LINE = re.compile(r"^\s{2,}(\w+)(?:\s*\([^)]*\))?:\s*(.*)$")


def parse_docstring(doc: str) -> tuple[str, dict[str, str]]:
    """Split a Google docstring into (description, {argument: description})."""
    doc = inspect.cleandoc(doc or "")
    head, _, rest = doc.partition("\nArgs:\n")
    description = " ".join(head.split("\n\n")[0].split())
    args: dict[str, str] = {}
    current = None
    for line in rest.splitlines():
        if line.strip().endswith(":") and not line.startswith(" "):
            break  # next section (Returns:, Raises:)
        match = _ARG_LINE.match(line)
        if match:
            current = match.group(1)
            args[current] = match.group(2).strip()
        elif current and line.strip():
            args[current] += " " + line.strip()
    return description, args


def tool(fn: Callable[..., Any] | None = None, *, mutates: bool = False, id_arguments: tuple[str, ...] = (),
         axes: tuple[str, ...] = (), irreversible: bool = False, written: bool = False) -> Any:
    """Decorator turning a typed function into a :class:`Tool`. ``written``: the function returns a
    :class:`ToolOutput` (its result and compact form), and the tool's handler its result."""

    def build(func: Callable[..., Any]) -> Tool:
        description, arg_docs = parse_docstring(func.__doc__ or "")
        hints = get_type_hints(func, include_extras=True)
        fields: dict[str, Any] = {}
        for name, param in list(inspect.signature(func).parameters.items())[1:]:
            default = ... if param.default is inspect.Parameter.empty else param.default
            fields[name] = (hints[name], Field(default, description=arg_docs.get(name)))
        model = create_model(f"{func.__name__}_arguments", __config__=_STRICT, **fields)
        if not written:
            return Tool(func.__name__, description, model, func, mutates, id_arguments, axes, irreversible)

        @functools.wraps(func)
        def handler(*args: Any, **kwargs: Any) -> dict[str, Any]:
            result: dict[str, Any] = func(*args, **kwargs).result
            return result

        return Tool(func.__name__, description, model, handler, mutates, id_arguments, axes, irreversible,
                    written=func)

    return build(fn) if fn is not None else build


def answer_tool(arguments: type[BaseModel], description: str, id_arguments: tuple[str, ...] = ()) -> Tool:
    """The environment-specific terminal ``answer`` tool."""

    def submit(ctx: ToolContext, **values: Any) -> dict[str, Any]:
        ctx.submit_answer(arguments.model_construct(**values))
        return {"status": "submitted"}

    return Tool("answer", description, arguments, submit, mutates=True, id_arguments=id_arguments)
