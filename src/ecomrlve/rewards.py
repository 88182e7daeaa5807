"""Reward composition, as pure functions.

``r_total = -1`` if the output was invalid or a safety rule was broken; otherwise
``r_total = clip(w_task·r_task + w_eff·r_eff + w_hall·r_hall, -1, 1)`` with

* ``r_task ∈ [-1, 1]`` from the environment's verifier (-1 when the episode ended unanswered),
* ``r_eff = clip(1 - 2·(T_eff - 1)/(T_max - 1), -1, 1)``, ``T_eff = max(1, T - T_user)``, where
  ``T_user`` counts the turns the user caused (withheld constraints revealed, user-side events,
  confirmations the user asked for); on an episode that is not correct ``r_eff`` is capped at 0,
  so failing fast never earns efficiency credit,
* ``r_hall = -(share of ids the agent acted on that no discovery tool or user message surfaced)``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict, Field


@dataclass(frozen=True)
class RewardWeights:
    task: float = 0.75
    efficiency: float = 0.15
    hallucination: float = 0.10

    def __post_init__(self) -> None:
        for name in ("task", "efficiency", "hallucination"):
            if getattr(self, name) < 0:
                raise ValueError(f"reward weight {name} must be >= 0")


def _clip(x: float, low: float = -1.0, high: float = 1.0) -> float:
    return max(low, min(high, x))


def efficiency_reward(turns: int, user_caused_turns: int, t_max: int) -> float:
    """``r_eff``: 1 for a one-turn episode, falling linearly to -1 at ``T_max`` agent-caused turns."""
    t_eff = max(1, turns - user_caused_turns)
    if t_max <= 1:
        return 1.0 if t_eff <= 1 else -1.0
    return _clip(1 - 2 * (t_eff - 1) / (t_max - 1))


def hallucination_reward(used_ids: Iterable[str], surfaced_ids: set[str]) -> float:
    """``r_hall``: minus the share of distinct ids acted on that were never surfaced."""
    used = set(used_ids)
    if not used:
        return 0.0
    return -len(used - surfaced_ids) / len(used)


class RewardBreakdown(BaseModel):
    """The final reward and everything it was computed from (the episode's ``info["reward"]``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    r_total: float
    r_task: float
    r_eff: float
    r_hall: float
    is_correct: bool
    turns: int = Field(description="Agent turns taken.")
    user_caused_turns: int = Field(description="Turns the user caused (not counted against the agent).")
    t_max: int
    termination: str = Field(description="answered | turn_budget | user_gave_up | invalid_output, or the reason "
                             "given to EpisodeSession.finish")
    invalid_reason: str | None = None
    safety_violation: str | None = None
    hallucinated_ids: list[str] = Field(default_factory=list)
    task: dict = Field(default_factory=dict, description="The environment verifier's details.")


def compose_reward(*, r_task: float, is_correct: bool, turns: int, user_caused_turns: int, t_max: int,
                   used_ids: Iterable[str], surfaced_ids: set[str], termination: str,
                   weights: RewardWeights = RewardWeights(), invalid_reason: str | None = None,
                   safety_violation: str | None = None, task_details: dict | None = None) -> RewardBreakdown:
    """Combine the parts into a :class:`RewardBreakdown` (the formula in the module docstring)."""
    used = sorted(set(used_ids))
    voided = invalid_reason is not None or safety_violation is not None
    is_correct = is_correct and not voided
    r_eff = efficiency_reward(turns, user_caused_turns, t_max)
    if not is_correct:
        r_eff = min(r_eff, 0.0)  # efficiency credits finishing the task, never failing fast
    r_hall = hallucination_reward(used, surfaced_ids)
    if voided:
        r_total = -1.0
    else:
        r_total = _clip(weights.task * r_task + weights.efficiency * r_eff + weights.hallucination * r_hall)
    return RewardBreakdown(
        r_total=r_total, r_task=r_task, r_eff=r_eff, r_hall=r_hall, is_correct=is_correct, turns=turns,
        user_caused_turns=user_caused_turns, t_max=t_max, termination=termination,
        invalid_reason=invalid_reason, safety_violation=safety_violation,
        hallucinated_ids=[i for i in used if i not in surfaced_ids], task=task_details or {},
    )
