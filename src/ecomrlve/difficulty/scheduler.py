"""RLVE adaptive difficulty scheduler: one difficulty window ``[l, h]`` per environment.

Each env ``i`` keeps ``(l_i, h_i, a_i, b_i)``, all 0 at first; ``d ~ Uniform{l_i..h_i}``. Only
episodes at the upper edge (``d == h_i``) count: ``b_i += 1; a_i += is_correct``. Once
``b_i >= tau_num``: if ``a_i / b_i >= tau_acc`` then ``h_i += 1; l_i = max(l_i, h_i - d_delta)``;
either way ``a_i = b_i = 0``. So training stays where the policy is almost competent. ``h_i`` never
passes :data:`~ecomrlve.difficulty.axes.MAX_DIFFICULTY` (the supported range); at the ceiling the
counts still reset per decision but the window no longer moves. The state
is shared by a whole run (hence the lock) and checkpointed as JSON via atomic replace.
"""

from __future__ import annotations

import dataclasses
import difflib
import glob
import json
import os
import random
import tempfile
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ecomrlve.difficulty.axes import MAX_DIFFICULTY
from ecomrlve.errors import UserInputError, require_writable_file

_VERSION = 1
_FIELDS = ("low", "high", "correct", "attempts")
_Path = str | os.PathLike[str]


def _is_int(x: object) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


@dataclass(frozen=True)
class SchedulerConfig:
    """Thresholds of the promotion rule; validated eagerly so a typo fails at start-up."""

    tau_acc: float = 0.9  # accuracy needed at the upper edge to promote
    tau_num: int = 32  # episodes at the upper edge per decision
    d_delta: int = 4  # maximum window width (h - l)

    def __post_init__(self) -> None:
        acc = self.tau_acc
        if isinstance(acc, bool) or not isinstance(acc, (int, float)) or not 0 < acc <= 1:
            raise UserInputError(f"tau_acc must be a number in (0, 1], got {acc!r}")
        if not _is_int(self.tau_num) or self.tau_num < 1:
            raise UserInputError(f"tau_num must be an integer >= 1, got {self.tau_num!r}")
        if not _is_int(self.d_delta) or self.d_delta < 0:
            raise UserInputError(f"d_delta must be an integer >= 0, got {self.d_delta!r}")


@dataclass(frozen=True)
class DifficultyWindow:
    """An immutable snapshot of one environment's window and upper-edge counters."""

    low: int
    high: int
    correct: int
    attempts: int


class AdaptiveScheduler:
    """Thread-safe per-environment difficulty windows, optionally checkpointed after each update."""

    def __init__(self, env_ids: Sequence[str], config: SchedulerConfig = SchedulerConfig(),
                 checkpoint_path: _Path | None = None) -> None:
        ids = tuple(env_ids)
        if not ids or len(set(ids)) != len(ids):
            raise UserInputError(f"env_ids must be non-empty and unique, got {list(ids)}")
        self._config = config
        self._lock = threading.Lock()
        self._ids = ids
        self._windows = {e: DifficultyWindow(0, 0, 0, 0) for e in ids}
        self._checkpoint = None if checkpoint_path is None else Path(checkpoint_path)
        if self._checkpoint is not None:
            _remove_stale_temp_files(self._checkpoint)
            if self._checkpoint.exists():
                self.load_state_dict(_read_json(self._checkpoint))
            else:  # refused now, not when the first finished episode writes it
                require_writable_file(self._checkpoint, "scheduler checkpoint")

    def __getstate__(self) -> dict[str, Any]:
        """Picklable (a Ray actor, another process): everything but the lock, which is per process."""
        with self._lock:
            return {k: v for k, v in vars(self).items() if k != "_lock"}

    def __setstate__(self, state: dict[str, Any]) -> None:
        vars(self).update(state)
        self._lock = threading.Lock()

    @property
    def config(self) -> SchedulerConfig:
        return self._config

    @property
    def env_ids(self) -> tuple[str, ...]:
        return self._ids

    def _get(self, env_id: str) -> DifficultyWindow:
        try:
            return self._windows[env_id]
        except KeyError:
            close = difflib.get_close_matches(str(env_id), self._ids, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else f"; known: {list(self._ids)}"
            raise KeyError(f"unknown env_id {env_id!r}{hint}") from None

    def sample(self, env_id: str, rng: random.Random) -> int:
        """Draw uniformly from the window; the caller owns the RNG so runs are reproducible."""
        with self._lock:
            w = self._get(env_id)
        return rng.randint(w.low, w.high)

    def update(self, env_id: str, difficulty: int, is_correct: bool) -> bool:
        """Record one episode's outcome; returns True iff this update promoted the window."""
        with self._lock:
            low, high, correct, attempts = dataclasses.astuple(self._get(env_id))
            if difficulty != high:
                return False  # only the upper edge is evidence about promotion
            c, correct, attempts = self._config, correct + bool(is_correct), attempts + 1
            promoted = attempts >= c.tau_num and correct / attempts >= c.tau_acc and high < MAX_DIFFICULTY
            if promoted:
                high, low = high + 1, max(low, high + 1 - c.d_delta)
            if attempts >= c.tau_num:  # a decision was made: start a fresh count either way
                correct = attempts = 0
            self._windows[env_id] = DifficultyWindow(low, high, correct, attempts)
            if self._checkpoint is not None:  # under the lock so an older state never wins
                _write_json(self._checkpoint, self._state_dict_locked())
            return promoted

    def window(self, env_id: str) -> DifficultyWindow:
        with self._lock:
            return self._get(env_id)

    def windows(self) -> dict[str, DifficultyWindow]:
        with self._lock:
            return dict(self._windows)

    def _state_dict_locked(self) -> dict[str, Any]:
        windows = {e: dataclasses.asdict(w) for e, w in self._windows.items()}
        return {"version": _VERSION, "config": dataclasses.asdict(self._config), "windows": windows}

    def state_dict(self) -> dict[str, Any]:
        """A JSON-serialisable snapshot: version, config and every window."""
        with self._lock:
            return self._state_dict_locked()

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Validate fully, then adopt ``state``; known ids absent from it restart at 0."""
        windows = _validate(state, self._config)
        with self._lock:
            self._ids += tuple(e for e in sorted(windows) if e not in self._ids)
            self._windows = {e: windows.get(e, DifficultyWindow(0, 0, 0, 0)) for e in self._ids}

    def save(self, path: _Path) -> None:
        """Write the state atomically: readers see either the old file or the new one."""
        with self._lock:
            _remove_stale_temp_files(Path(path))
            _write_json(Path(path), self._state_dict_locked())

    @classmethod
    def load(cls, path: _Path, config: SchedulerConfig | None = None) -> AdaptiveScheduler:
        """Rebuild from a file (without auto-checkpointing); ``config=None`` uses the stored one."""
        state = _read_json(Path(path))
        try:
            config = config or SchedulerConfig(**state["config"])
            sched = cls(sorted(state["windows"]), config)  # empty 'windows' -> ValueError
        except (TypeError, KeyError) as exc:
            raise UserInputError(f"{path}: malformed scheduler state ({exc!r})") from None
        sched.load_state_dict(state)
        return sched


def _validate(state: Any, config: SchedulerConfig) -> dict[str, DifficultyWindow]:
    if not isinstance(state, dict):
        raise UserInputError(f"scheduler state must be a dict, got {type(state).__name__}")
    if state.get("version") != _VERSION:
        raise UserInputError(f"unsupported scheduler state version {state.get('version')!r}")
    if state.get("config") != dataclasses.asdict(config):
        raise UserInputError(f"scheduler config mismatch: state has {state.get('config')!r}, scheduler "
                         f"has {dataclasses.asdict(config)!r}; use the stored config or a new file")
    if not isinstance(state.get("windows"), dict):
        raise UserInputError("scheduler state 'windows' must be a dict of env_id -> window")
    out: dict[str, DifficultyWindow] = {}
    for env, w in state["windows"].items():
        if not isinstance(env, str) or not isinstance(w, dict) or set(w) != set(_FIELDS):
            raise UserInputError(f"window {env!r} must be a dict with exactly the keys {_FIELDS}")
        if not all(_is_int(w[k]) for k in _FIELDS):
            raise UserInputError(f"window {env!r} values must be integers, got {w!r}")
        out[env] = win = DifficultyWindow(**w)
        if not 0 <= win.low <= win.high <= min(win.low + config.d_delta, MAX_DIFFICULTY):
            raise UserInputError(f"window {env!r} violates 0 <= low <= high <= low + d_delta, high <= "
                                 f"{MAX_DIFFICULTY}: {w!r}")
        if not 0 <= win.correct <= win.attempts < config.tau_num:
            raise UserInputError(f"window {env!r} violates 0 <= correct <= attempts < tau_num: {w!r}")
    return out


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise UserInputError(f"scheduler checkpoint {path} is corrupt or truncated: {exc}") from None
    except OSError as exc:
        raise UserInputError(f"scheduler checkpoint {path} cannot be read: {exc.strerror or exc}") from None


def _temp_prefix(path: Path) -> str:
    return f".{path.name}."


def _remove_stale_temp_files(path: Path) -> None:
    """Delete temp files of ``path`` left by a process killed mid-write (one writer per checkpoint)."""
    for stale in path.parent.glob(f"{glob.escape(_temp_prefix(path))}*.tmp"):
        stale.unlink(missing_ok=True)


def _write_json(path: Path, state: dict[str, Any]) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=_temp_prefix(path), suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(state, f, sort_keys=True)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)  # never leave a stray temp file behind
        raise
