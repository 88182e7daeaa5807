"""Run an evaluation: every task ``k`` times, many episodes in flight, resumable from its JSONL.

An evaluation directory holds ``eval_config.json`` (what was asked, so a resumed run is the same
run), ``episodes.jsonl`` (one :class:`~ecomrlve.session.EpisodeRecord` per finished episode,
appended and flushed as each one ends, replayable with ``ecomrlve replay``), and after the run
``summary.json`` and the reports, and ``secret``, the deployment secret mixed into every episode
(``$ECOMRLVE_SECRET`` when set, else the installation's; set the same one to compare models on identical
episodes). Restarting with the same directory plays only the episodes
that are not in the JSONL yet. With an adaptive difficulty the scheduler's state is rebuilt by
replaying the recorded outcomes in the order they finished, so nothing else needs saving.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ecomrlve.catalog.schema import Catalog
from ecomrlve.catalog.search import SearchEngine
from ecomrlve.difficulty.scheduler import AdaptiveScheduler, SchedulerConfig
from ecomrlve.episode import EcomEnv
from ecomrlve.protocol import Agent
from ecomrlve.runner import AgentFactory, Curriculum, EpisodeLoop, Plan, PlayableEnv, RunLoop, Scheduler, Task
from ecomrlve.session import EpisodeRecord, resolve_secret
from ecomrlve.user.realiser import Realiser, RealiserFactory

CONFIG_FILE = "eval_config.json"
EPISODES_FILE = "episodes.jsonl"
SECRET_FILE = "secret"  # the deployment secret of the episodes (ECOMRLVE_SECRET, else the installation's)
SUMMARY_FILE = "summary.json"


@dataclass(frozen=True)
class EvalSpec:
    """What an evaluation plays; stored in the directory so a resume cannot silently change it.

    ``difficulties=None`` means adaptive: each task's difficulty is drawn from the RLVE scheduler
    when its first trial starts. ``tasks`` counts per environment (and per difficulty if fixed).
    """

    env_ids: tuple[str, ...]
    difficulties: tuple[int, ...] | None
    tasks: int
    trials: int
    seed: int = 0
    agent: str = "heuristic"
    catalog: str = "default"
    overrides: dict[str, Any] = field(default_factory=dict)
    scheduler: SchedulerConfig | None = None
    llm: dict[str, Any] | None = None
    shopper: dict[str, Any] | None = None  # how the shopper phrases (ShopperOptions.describe); None: train templates

    def __post_init__(self) -> None:
        if self.tasks < 1 or self.trials < 1:
            raise ValueError(f"tasks and trials must be >= 1, got {self.tasks} and {self.trials}")
        if self.difficulties is None and self.scheduler is None:
            object.__setattr__(self, "scheduler", SchedulerConfig())

    @property
    def adaptive(self) -> bool:
        return self.difficulties is None

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["env_ids"] = list(self.env_ids)
        out["difficulties"] = None if self.difficulties is None else list(self.difficulties)
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> EvalSpec:
        data = dict(data)
        data["env_ids"] = tuple(data["env_ids"])
        if data["difficulties"] is not None:
            data["difficulties"] = tuple(data["difficulties"])
        if data.get("scheduler") is not None:
            data["scheduler"] = SchedulerConfig(**data["scheduler"])
        return cls(**data)

    def plan(self) -> Plan:
        """Fixed: env × difficulty × task (as ``ecomrlve run``); adaptive: ``tasks`` per env, index-major."""
        return Plan(self.env_ids, self.difficulties, self.tasks, self.seed)

    @property
    def planned_episodes(self) -> int:
        return len(self.plan()) * self.trials


class EvalConfigMismatch(ValueError):
    """The directory holds a different evaluation; resuming would mix two runs."""


def _identity(config: dict[str, Any]) -> dict[str, Any]:
    """The part of a stored config that defines the evaluation (not the endpoint's address)."""
    if config.get("llm"):
        config = {**config, "llm": {k: v for k, v in config["llm"].items() if k != "base_url"}}
    return config


def read_records(path: Path) -> list[EpisodeRecord]:
    """The finished episodes in ``path``; a torn last line (interrupted write) is dropped from the file."""
    if not path.exists():
        return []
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    records: list[EpisodeRecord] = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            records.append(EpisodeRecord.model_validate_json(line))
        except ValidationError:
            if number != len(lines) or line.endswith("\n"):
                raise ValueError(f"{path}:{number} is not an episode record; the file is damaged") from None
            path.write_text("".join(lines[:-1]), encoding="utf-8")
    return records


class Evaluation:
    """One evaluation directory: plan, finished records, curriculum, and the loop that fills it."""

    def __init__(self, spec: EvalSpec, out_dir: Path, *, catalog: Catalog | None, search: SearchEngine | None = None,
                 secret: str | None = None, make_env: Callable[[], PlayableEnv] | None = None,
                 scheduler: Scheduler | None = None, realiser: Realiser | RealiserFactory | None = None) -> None:
        """``make_env`` and ``scheduler`` play elsewhere (e.g. on a server and its curriculum: ``eval --server``);
        by default episodes run in-process on ``catalog`` with a scheduler of the evaluation's own and the
        shopper ``realiser`` (None: the default templates)."""
        self.spec = spec
        self.realiser = realiser
        self.out_dir = Path(out_dir)
        self.catalog, self.search = catalog, search
        self._made_directory = not self.out_dir.exists()
        self.out_dir.mkdir(parents=True, exist_ok=True)
        self._adopt_config()
        self.secret = self._adopt_secret(secret)
        self.episodes_path = self.out_dir / EPISODES_FILE
        self.records = read_records(self.episodes_path)
        if scheduler is None and spec.adaptive and spec.scheduler:
            scheduler = AdaptiveScheduler(spec.env_ids, spec.scheduler)
        self._make_env = make_env or self._make_local_env
        self.curriculum = Curriculum.per_task(scheduler, spec.seed) if scheduler else Curriculum()
        self._finished: set[tuple[str, int]] = set()
        tasks = {task.slot: task for task in spec.plan()}
        for record in sorted(self.records, key=lambda r: r.run["completed"] if r.run else 0):
            run = record.run or {}
            if "slot" not in run or run["slot"] not in tasks:
                raise ValueError(f"{self.episodes_path} holds records not written by this evaluation")
            self._finished.add((run["slot"], run["trial"]))
            self.curriculum.observe(tasks[run["slot"]], record)

    @property
    def scheduler(self) -> Scheduler | None:
        return self.curriculum.scheduler

    def _adopt_secret(self, wanted: str | None) -> str:
        """One deployment secret per evaluation directory (kept apart from the agent), reused on resume."""
        path = self.out_dir / SECRET_FILE
        if path.exists():
            stored = resolve_secret(path.read_text(encoding="utf-8").strip())
            if wanted is not None and wanted != stored:
                raise EvalConfigMismatch(f"{self.out_dir} was played with another secret; use another output "
                                         "directory or --overwrite")
            return stored
        secret = resolve_secret(wanted)
        path.write_text(secret + "\n", encoding="utf-8")
        return secret

    def _adopt_config(self) -> None:
        """Refuse to resume a different evaluation; where the model is served may change."""
        path = self.out_dir / CONFIG_FILE
        wanted = self.spec.to_dict()
        if path.exists():
            stored, new = _identity(json.loads(path.read_text(encoding="utf-8"))), _identity(wanted)
            changed = sorted(k for k in new.keys() | stored.keys() if new.get(k) != stored.get(k))
            if changed:
                details = "; ".join(f"{k}: {stored.get(k)!r} -> {new.get(k)!r}" for k in changed)
                raise EvalConfigMismatch(f"{self.out_dir} holds a different evaluation ({details}); "
                                         "use another output directory or --overwrite")
        path.write_text(json.dumps(wanted, indent=2), encoding="utf-8")

    def forget(self) -> None:
        """Remove the config, secret and records of an evaluation that finished no episode (and the directory
        if it made it and nothing else is there), so a retry with other settings needs no ``--overwrite``."""
        if self.records:
            raise RuntimeError("an evaluation with finished episodes is resumed, never forgotten")
        for name in (CONFIG_FILE, SECRET_FILE, EPISODES_FILE):
            (self.out_dir / name).unlink(missing_ok=True)
        if self._made_directory and not any(self.out_dir.iterdir()):
            self.out_dir.rmdir()

    def pending(self) -> list[tuple[Task, int]]:
        """Episodes still to play, in plan order."""
        return [(task, trial) for task in self.spec.plan() for trial in range(self.spec.trials)
                if (task.slot, trial) not in self._finished]

    @property
    def complete(self) -> bool:
        return len(self._finished) >= self.spec.planned_episodes

    async def run(self, make_agent: AgentFactory, *, concurrency: int = 8,
                  on_episode: Callable[[EpisodeRecord], None] | None = None, loop: EpisodeLoop | None = None) -> None:
        """Play every pending episode, ``concurrency`` at a time; each is written as soon as it ends.

        ``loop`` plays them elsewhere (a Ray pool over this evaluation's curriculum) instead of in
        this process. The first error (e.g. the endpoint went away) stops the run: episodes in
        flight are abandoned, finished ones are already on disk, and running again resumes.
        """
        loop = loop or RunLoop(self._make_env, self.curriculum, make_agent)
        with self.episodes_path.open("a", encoding="utf-8") as sink:
            def finished(task: Task, trial: int, record: EpisodeRecord, agent: Agent) -> None:
                record = self._annotate(task, trial, record, agent)
                sink.write(record.to_json() + "\n")
                sink.flush()
                os.fsync(sink.fileno())
                if on_episode is not None:
                    on_episode(record)
            await loop.run(self.pending(), finished, concurrency=concurrency)

    def _make_local_env(self) -> EcomEnv:
        return EcomEnv(self.spec.env_ids, catalog=self.catalog, search=self.search, overrides=self.spec.overrides,
                       secret=self.secret, realiser=self.realiser)

    def _annotate(self, task: Task, trial: int, record: EpisodeRecord, agent: Agent) -> EpisodeRecord:
        """Add who played and how (``record.run``) and keep the record."""
        self._finished.add((task.slot, trial))
        run: dict[str, Any] = {"agent": self.spec.agent, "slot": task.slot, "task": task.index, "trial": trial,
                               "completed": len(self.records)}
        if self.spec.llm is not None:
            run["model"] = self.spec.llm.get("model")
        usage = getattr(agent, "usage", None)
        if usage is not None:
            run["usage"] = asdict(usage)
        if self.scheduler is not None:
            window = self.scheduler.window(task.env_id)
            run["window"] = [window.low, window.high]
        record = record.model_copy(update={"run": run})
        self.records.append(record)
        return record
