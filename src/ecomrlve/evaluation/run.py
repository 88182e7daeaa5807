"""Run an evaluation: every task ``k`` times, many episodes in flight, resumable from its JSONL.

An evaluation directory holds ``eval_config.json`` (what was asked, so a resumed run is the same
run), ``episodes.jsonl`` (one :class:`~ecomrlve.episode.EpisodeRecord` per finished episode,
appended and flushed as each one ends, replayable with ``ecomrlve replay``), and after the run
``summary.json`` and the reports, and ``secret``, the deployment secret mixed into every episode
(``$ECOMRLVE_SECRET`` when set, else random; set the same one to compare models on identical
episodes). Restarting with the same directory plays only the episodes
that are not in the JSONL yet. With an adaptive difficulty the scheduler's state is rebuilt by
replaying the recorded outcomes in the order they finished, so nothing else needs saving.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ecomrlve.agents.base import Agent
from ecomrlve.agents.llm import ChatEndpoint
from ecomrlve.catalog.schema import Catalog
from ecomrlve.catalog.search import SearchEngine
from ecomrlve.difficulty.scheduler import AdaptiveScheduler, SchedulerConfig
from ecomrlve.episode import EcomEnv, EpisodeRecord, resolve_secret
from ecomrlve.rng import derive_rng, derive_seed
from ecomrlve.runner import episode_seed, make_agent

CONFIG_FILE = "eval_config.json"
EPISODES_FILE = "episodes.jsonl"
SECRET_FILE = "secret"  # the deployment secret of the episodes (ECOMRLVE_SECRET, else random)
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

    def tasks_in_order(self) -> Iterator[Task]:
        """Fixed: env × difficulty × index (as ``ecomrlve run``); adaptive: index-major over envs."""
        if self.difficulties is None:
            for index in range(self.tasks):
                for env_id in self.env_ids:
                    yield Task(env_id, None, index, episode_seed(self.seed, env_id, "adaptive", index))
            return
        for env_id in self.env_ids:
            for d in self.difficulties:
                for index in range(self.tasks):
                    yield Task(env_id, d, index, episode_seed(self.seed, env_id, d, index))

    @property
    def planned_episodes(self) -> int:
        per_env = self.tasks * (1 if self.difficulties is None else len(self.difficulties))
        return per_env * len(self.env_ids) * self.trials


@dataclass(frozen=True)
class Task:
    """One ``(env, difficulty, seed)`` slot of the plan; ``difficulty=None`` until the scheduler picks it."""

    env_id: str
    difficulty: int | None
    index: int
    seed: int

    @property
    def slot(self) -> str:
        return f"{self.env_id}/{'adaptive' if self.difficulty is None else self.difficulty}/{self.index}"


#: builds the agent for one episode: (environment just reset, task, trial) -> agent
AgentFactory = Callable[[EcomEnv, Task, int], Agent]


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
    """One evaluation directory: plan, finished records, scheduler, and the loop that fills it."""

    def __init__(self, spec: EvalSpec, out_dir: Path, *, catalog: Catalog, search: SearchEngine | None = None,
                 secret: str | None = None) -> None:
        self.spec = spec
        self.out_dir = Path(out_dir)
        self.catalog, self.search = catalog, search
        self.out_dir.mkdir(parents=True, exist_ok=True)
        self._adopt_config()
        self.secret = self._adopt_secret(secret)
        self.episodes_path = self.out_dir / EPISODES_FILE
        self.records = read_records(self.episodes_path)
        self.scheduler = AdaptiveScheduler(spec.env_ids, spec.scheduler) if spec.adaptive and spec.scheduler else None
        self._difficulty: dict[str, int] = {}
        self._finished: set[tuple[str, int]] = set()
        for record in sorted(self.records, key=lambda r: r.run["completed"] if r.run else 0):
            run = record.run or {}
            if "slot" not in run:
                raise ValueError(f"{self.episodes_path} holds records not written by an evaluation")
            self._finished.add((run["slot"], run["trial"]))
            self._difficulty[run["slot"]] = record.difficulty
            if self.scheduler is not None and record.reward is not None:
                self.scheduler.update(record.env_id, record.difficulty, record.reward.is_correct)

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

    def pending(self) -> list[tuple[Task, int]]:
        """Episodes still to play, in plan order."""
        return [(task, trial) for task in self.spec.tasks_in_order() for trial in range(self.spec.trials)
                if (task.slot, trial) not in self._finished]

    @property
    def complete(self) -> bool:
        return len(self._finished) >= self.spec.planned_episodes

    async def run(self, make_agent: AgentFactory, *, concurrency: int = 8,
                  on_episode: Callable[[EpisodeRecord], None] | None = None) -> None:
        """Play every pending episode, ``concurrency`` at a time; each is written as soon as it ends.

        The first error (e.g. the endpoint went away) stops the run: episodes in flight are
        abandoned, finished ones are already on disk, and running again resumes.
        """
        jobs = iter(self.pending())
        with self.episodes_path.open("a", encoding="utf-8") as sink:
            async def worker() -> None:
                env = EcomEnv(self.spec.env_ids, catalog=self.catalog, search=self.search, overrides=self.spec.overrides,
                              secret=self.secret)
                for task, trial in jobs:  # one shared iterator: each job goes to one worker
                    record = await self._play(env, make_agent, task, trial)
                    sink.write(record.to_json() + "\n")
                    sink.flush()
                    os.fsync(sink.fileno())
                    if on_episode is not None:
                        on_episode(record)
            workers = [asyncio.ensure_future(worker()) for _ in range(max(1, concurrency))]
            try:
                done, _ = await asyncio.wait(workers, return_when=asyncio.FIRST_EXCEPTION)
            finally:
                for task in workers:
                    task.cancel()
                await asyncio.gather(*workers, return_exceptions=True)
            for task in done:
                task.result()

    async def _play(self, env: EcomEnv, make_agent: AgentFactory, task: Task, trial: int) -> EpisodeRecord:
        d = task.difficulty
        if d is None:
            d = self._difficulty.get(task.slot)
            if d is None:
                assert self.scheduler is not None
                d = self._difficulty[task.slot] = self.scheduler.sample(
                    task.env_id, derive_rng("eval-difficulty", self.spec.seed, task.slot))
        observation = env.reset(env_id=task.env_id, difficulty=d, seed=task.seed)
        agent = make_agent(env, task, trial)
        act_async = getattr(agent, "act_async", None)
        while not observation.done:
            action = await act_async(observation) if act_async else agent.act(observation)
            observation = env.step(action)
        record = env.record
        assert record.reward is not None
        self._finished.add((task.slot, trial))
        run: dict[str, Any] = {"agent": self.spec.agent, "slot": task.slot, "task": task.index, "trial": trial,
                               "completed": len(self.records)}
        if self.spec.llm is not None:
            run["model"] = self.spec.llm.get("model")
        usage = getattr(agent, "usage", None)
        if usage is not None:
            run["usage"] = asdict(usage)
        if self.scheduler is not None:
            self.scheduler.update(task.env_id, d, record.reward.is_correct)
            window = self.scheduler.window(task.env_id)
            run["window"] = [window.low, window.high]
        record = record.model_copy(update={"run": run})
        self.records.append(record)
        return record


def trial_sampling_seed(base: int, task: Task, trial: int) -> int:
    """A distinct, reproducible sampling seed for each trial of a task."""
    return derive_seed("eval-sampling", base, task.slot, trial) & 0x7FFFFFFF


def agent_factory(name: str, endpoint: ChatEndpoint | None = None) -> AgentFactory:
    """Agents by name (:func:`ecomrlve.runner.make_agent`); with a sampling seed, each trial gets its own."""
    def make(env: EcomEnv, task: Task, trial: int) -> Agent:
        sampling = None
        if endpoint is not None and endpoint.config.sampling.seed is not None:
            sampling = replace(endpoint.config.sampling,
                               seed=trial_sampling_seed(endpoint.config.sampling.seed, task, trial))
        return make_agent(name, env, task.seed, endpoint=endpoint, sampling=sampling)
    return make
