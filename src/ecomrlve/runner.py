"""Running many episodes: agents by name, seeds per episode, summaries per env × difficulty."""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from ecomrlve.agents import RandomAgent, heuristic_agent
from ecomrlve.agents.base import Agent
from ecomrlve.agents.llm import ChatEndpoint, LLMAgent, SamplingParams
from ecomrlve.difficulty import MAX_DIFFICULTY
from ecomrlve.episode import EcomEnv, EpisodeRecord
from ecomrlve.rng import derive_rng, derive_seed


def make_agent(name: str, env: EcomEnv, seed: int, *, endpoint: ChatEndpoint | None = None,
               sampling: SamplingParams | None = None) -> Agent:
    """A fresh agent for the episode that ``env`` has just reset (``openai`` needs an ``endpoint``)."""
    if name == "oracle":
        return env.environment.oracle(env.problem)
    if name == "heuristic":
        return heuristic_agent(env.environment.env_id)
    if name == "random":
        return RandomAgent(seed)
    if name == "openai":
        if endpoint is None:
            raise ValueError("the openai agent needs an endpoint: use `ecomrlve eval --agent openai --model NAME --base-url URL`")
        return LLMAgent(endpoint, sampling)
    raise ValueError(f"unknown agent {name!r}; choose oracle, heuristic, random or openai")


def episode_seed(base_seed: int, env_id: str, difficulty: int | str, index: int) -> int:
    """Independent seed of the ``index``-th episode of a run (named derivation, no arithmetic)."""
    return derive_seed("run", base_seed, env_id, difficulty, index) & 0x7FFFFFFF


def play(env: EcomEnv, agent_name: str, *, env_id: str, difficulty: int | None, seed: int) -> EpisodeRecord:
    """Play one episode to the end with a built-in agent and return its record."""
    observation = env.reset(env_id=env_id, difficulty=difficulty, seed=seed)
    agent = make_agent(agent_name, env, seed)
    while not observation.done:
        observation = env.step(agent.act(observation))
    return env.record


def replay(env: EcomEnv, record: EpisodeRecord) -> EpisodeRecord:
    """Re-run a recorded episode from its key (secret included) and actions; returns the new record (same
    ``run`` metadata). ``env`` adopts the record's secret."""
    env.secret = record.secret
    observation = env.reset(env_id=record.env_id, difficulty=record.difficulty, seed=record.seed)
    for action in record.actions:
        if observation.done:
            break
        observation = env.step(action)
    return env.record.model_copy(update={"run": record.run})


@dataclass(frozen=True)
class Plan:
    """Which (env, difficulty) to run next.

    Fixed difficulties: every env × difficulty × ``episodes``. Adaptive (``difficulties=None``):
    ``episodes`` in all, each environment drawn uniformly from ``env_ids`` (seeded by ``seed``),
    its difficulty left to the scheduler.
    """

    env_ids: tuple[str, ...]
    difficulties: tuple[int, ...] | None
    episodes: int
    seed: int = 0

    def __iter__(self) -> Iterator[tuple[str, int | None, int]]:
        if self.difficulties is None:
            for index in range(self.episodes):
                yield derive_rng("plan", self.seed, index).choice(self.env_ids), None, index
            return
        for env_id in self.env_ids:
            for d in self.difficulties:
                for index in range(self.episodes):
                    yield env_id, d, index

    def __len__(self) -> int:
        return self.episodes * (1 if self.difficulties is None else len(self.env_ids) * len(self.difficulties))


def parse_difficulty(text: str) -> tuple[int, ...] | None:
    """``"3"`` -> (3,), ``"0-15"`` -> (0, ..., 15), ``"adaptive"`` -> None."""
    if text == "adaptive":
        return None
    low, sep, high = text.partition("-")
    try:
        lo, hi = int(low), int(high) if sep else int(low)
    except ValueError:
        raise ValueError(f"difficulty must be N, LOW-HIGH or 'adaptive', got {text!r}") from None
    if not 0 <= lo <= hi <= MAX_DIFFICULTY:
        raise ValueError(f"difficulty {text!r} is outside the supported range 0..{MAX_DIFFICULTY} (or LOW > HIGH)")
    return tuple(range(lo, hi + 1))


_METRICS: dict[str, Callable[[Any], float]] = {
    "r_total": lambda r: r.r_total, "r_task": lambda r: r.r_task, "r_eff": lambda r: r.r_eff,
    "r_hall": lambda r: r.r_hall, "success_rate": lambda r: float(r.is_correct), "turns": lambda r: float(r.turns),
}


def summarise(records: list[EpisodeRecord]) -> dict[str, dict[str, dict[str, float]]]:
    """``{env_id: {difficulty: {episodes, r_total, r_task, r_eff, r_hall, success_rate, turns}}}`` (means)."""
    groups: dict[tuple[str, int], list] = defaultdict(list)
    for record in records:
        groups[(record.env_id, record.difficulty)].append(record.reward)
    out: dict[str, dict[str, dict[str, float]]] = defaultdict(dict)
    for (env_id, d), rewards in sorted(groups.items()):
        row: dict[str, float] = {"episodes": len(rewards)}
        row.update({name: round(statistics.fmean(f(r) for r in rewards), 4) for name, f in _METRICS.items()})
        out[env_id][str(d)] = row
    return dict(out)
