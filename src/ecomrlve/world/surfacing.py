"""What the agent was shown, and the world events planned to react to it.

:class:`SurfacingLedger` is the one record of every id shown to the agent: which turn, by which
tool (or ``"user"`` for the shopper's own words), which products and which order/line ids. The
runtime's ``r_hall`` reads all of it; a recommendation verifier's ``is_correct`` reads the
products that discovery tools showed in the turns its request was handled.

:class:`PlannedSellOut` is a stock-out a generator plans ("this product sells out once the agent
has seen it"); the world executes it at the end of a turn (:meth:`World.run_planned_events`),
the shopper only reacts to the product being gone.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import dataclass, field
from typing import NamedTuple, Protocol

#: Tools whose results show products the agent can choose from (search results, browsing history).
DISCOVERY_SOURCES = ("catalog_search", "user_get_visit_history")
USER_SOURCE = "user"


class Surfacing(NamedTuple):
    """Ids shown to the agent at once: by tool ``source`` (or the user) during agent turn ``turn`` (a
    tuple: one is made per tool result, and a frozen dataclass's constructor costs several times a tuple's)."""

    turn: int
    source: str
    rows: tuple[int, ...] = ()
    account_ids: tuple[str, ...] = ()


@dataclass
class SurfacingLedger:
    """Append-only log of :class:`Surfacing` entries; ``turn`` is set by the runtime as turns begin."""

    entries: list[Surfacing] = field(default_factory=list)
    turn: int = 0

    def record(self, source: str, rows: Iterable[int] = (), account_ids: Iterable[str] = ()) -> None:
        entry = Surfacing(self.turn, source, tuple(map(int, rows)), tuple(account_ids))
        if entry.rows or entry.account_ids:
            self.entries.append(entry)

    def rows(self) -> set[int]:
        """Every product shown, by any source, in any turn."""
        return {row for entry in self.entries for row in entry.rows}

    def account_ids(self) -> set[str]:
        return {i for entry in self.entries for i in entry.account_ids}

    def account_ids_shown(self, sources: Collection[str], turns: Collection[int]) -> set[str]:
        """Order and order-line ids that one of ``sources`` showed during one of ``turns``."""
        return {i for entry in self.entries if entry.source in sources and entry.turn in turns for i in entry.account_ids}

    def rows_shown(self, sources: Collection[str], turns: Collection[int]) -> set[int]:
        """Products that one of ``sources`` showed during one of ``turns``."""
        return {row for entry in self.entries if entry.source in sources and entry.turn in turns for row in entry.rows}


class HandledTurns(Protocol):
    """A task state that lists the agent turns its request was handled in (see ``RecommendState``)."""

    handled_turns: list[int]


@dataclass
class PlannedSellOut:
    """Sell out ``row`` at the end of the first turn in which its task is handled and a discovery
    tool has shown ``row`` during one of the task's handled turns."""

    row: int
    task: HandledTurns
    done: bool = False

    def due(self, ledger: SurfacingLedger) -> bool:
        return not self.done and self.row in ledger.rows_shown(DISCOVERY_SOURCES, self.task.handled_turns)
