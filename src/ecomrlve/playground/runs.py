"""The run viewer's data: a runs file's episode records, their facets, filters, order and summary.

A runs file is JSONL of :class:`~ecomrlve.session.EpisodeRecord` (``ecomrlve run --out``,
``eval``'s ``episodes.jsonl``). Every record is over, so its goal may be shown: the viewer is for
whoever ran the episodes, not for agents.

A runs file is kept as its bytes (one copy) and an index: each line's span and a light copy of its
record (key, reward, run; no transcript, actions or goal) for the lists, filters and grid. The
record page parses its one line again, so a large file costs about its own size in memory.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from ecomrlve.runner import summarise
from ecomrlve.session import EpisodeRecord

#: the filters the viewer offers, in the order it shows them
FACETS = ("env", "d", "success", "termination", "agent", "model")
SORTS = ("file", "reward_desc", "reward_asc")
MAX_RUNS_BYTES = 64 * 2**20


class RunsFileError(ValueError):
    """The text is not a runs file; the message names the first bad line."""


#: what a light record leaves out (the lists show none of it)
_HEAVY: dict[str, Any] = {"messages": [], "actions": [], "goal": {}, "tools": [], "axes": {}, "shopper": None}


@dataclass(frozen=True)
class RunsFile:
    """A runs file's bytes, each record's line span, and light records (:data:`_HEAVY` left out) for the lists."""

    name: str
    data: bytes
    spans: tuple[tuple[int, int], ...]
    records: tuple[EpisodeRecord, ...]

    def record(self, index: int) -> EpisodeRecord:
        """The full record ``index`` (parsed again from its line)."""
        start, end = self.spans[index]
        return EpisodeRecord.model_validate_json(self.data[start:end])

    @property
    def size(self) -> int:
        return len(self.data)


def parse_runs(data: str | bytes, name: str) -> RunsFile:
    """Index every non-blank line as an :class:`EpisodeRecord`; the first bad line raises :class:`RunsFileError`."""
    data = data.encode() if isinstance(data, str) else data
    spans, records = [], []
    start, number = 0, 0
    while start < len(data):
        end = data.find(b"\n", start)
        end = len(data) if end < 0 else end
        number += 1
        line = data[start:end]
        if line.strip():
            try:
                line.decode("utf-8")
            except UnicodeDecodeError:
                raise RunsFileError(f"{name}:{number}: not UTF-8 text") from None
            try:
                record = EpisodeRecord.model_validate_json(line)
            except ValidationError as exc:
                first = exc.errors()[0]
                where = ".".join(str(p) for p in first["loc"]) or "record"
                raise RunsFileError(f"{name}:{number}: not an episode record ({where}: {first['msg']})") from None
            spans.append((start, end))
            records.append(record.model_copy(update=_HEAVY))
        start = end + 1
    if not records:
        raise RunsFileError(f"{name} holds no episode records")
    return RunsFile(name, data, tuple(spans), tuple(records))


def facet(record: EpisodeRecord, key: str) -> str:
    """The value of one filter facet for a record, as the filter form spells it ("" when unknown)."""
    run = record.run or {}
    reward = record.reward
    match key:
        case "env":
            return record.env_id
        case "d":
            return str(record.difficulty)
        case "success":
            return "" if reward is None else "yes" if reward.is_correct else "no"
        case "termination":
            return reward.termination if reward else ""
        case "agent" | "model":
            return str(run.get(key) or "")
    raise KeyError(key)


def facet_values(records: tuple[EpisodeRecord, ...]) -> dict[str, list[str]]:
    """The values each facet takes in the file (difficulties in numeric order)."""
    values = {key: sorted({facet(r, key) for r in records} - {""}) for key in FACETS}
    values["d"].sort(key=int)
    return values


def select(records: tuple[EpisodeRecord, ...], filters: Mapping[str, str], sort: str = "file"
           ) -> list[tuple[int, EpisodeRecord]]:
    """(index in the file, record) of the records matching every given facet, in the chosen order."""
    wanted = {key: value for key, value in filters.items() if key in FACETS and value}
    chosen = [(i, r) for i, r in enumerate(records) if all(facet(r, k) == v for k, v in wanted.items())]
    if sort != "file":
        chosen.sort(key=lambda item: item[1].reward.r_total if item[1].reward else float("-inf"),
                    reverse=sort == "reward_desc")
    return chosen


def success_grid(records: list[EpisodeRecord]) -> dict[str, Any]:
    """Success rate and episode count per env × d, for the heatmap (rows: envs, columns: every d seen)."""
    summary = summarise(records)
    ds = sorted({int(d) for by_d in summary.values() for d in by_d})
    rows = [{"env": env_id, "cells": [summary[env_id].get(str(d)) for d in ds]} for env_id in summary]
    return {"ds": ds, "rows": rows}


def transcript(record: EpisodeRecord) -> list[dict[str, Any]]:
    """The messages as the viewer shows them: tool results decoded (raw text kept for the fold)."""
    shown = []
    for message in record.messages:
        item = dict(message)
        if message.get("role") == "tool":
            try:
                item["decoded"] = json.loads(message.get("content") or "null")
            except json.JSONDecodeError:
                item["decoded"] = None
        shown.append(item)
    return shown
