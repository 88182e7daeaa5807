"""Statistics of an evaluation: pass^k, confidence intervals, per env × difficulty summaries.

A *task* is one ``(env_id, difficulty, seed)``; it is played ``n`` times (trials) with the same
seed, so only the agent's sampling differs. pass^k is τ-bench's estimator of the chance that
``k`` independent trials of a task all succeed: per task ``C(c, k) / C(n, k)`` with ``c``
successes out of ``n ≥ k`` trials, averaged over tasks.
"""

from __future__ import annotations

import math
import statistics
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from typing import Any

from ecomrlve.runner import by_env_and_difficulty, reward_means
from ecomrlve.session import EpisodeRecord

Z95 = 1.959963984540054  # two-sided 95 % normal quantile


def pass_hat_k(outcomes: Iterable[Sequence[bool]], k: int) -> float | None:
    """τ-bench pass^k over tasks (one sequence of trial outcomes each); tasks with < k trials are skipped."""
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    per_task = [math.comb(sum(map(bool, trials)), k) / math.comb(len(trials), k)
                for trials in outcomes if len(trials) >= k]
    return statistics.fmean(per_task) if per_task else None


def wilson_interval(successes: int, n: int) -> tuple[float, float]:
    """95 % Wilson score interval of a binomial proportion (sensible at 0 %, 100 % and small n)."""
    if n == 0:
        return 0.0, 1.0
    p, z = successes / n, Z95
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    low = 0.0 if successes == 0 else max(0.0, centre - half)  # exact at the ends, free of round-off
    high = 1.0 if successes == n else min(1.0, centre + half)
    return low, high


def mean_ci(values: Sequence[float]) -> tuple[float, float, float]:
    """``(mean, sample standard deviation, half-width of the normal 95 % interval)``."""
    mean = statistics.fmean(values)
    std = statistics.stdev(values) if len(values) > 1 else 0.0
    return mean, std, Z95 * std / math.sqrt(len(values))


def task_key(record: EpisodeRecord) -> tuple[str, int, int]:
    return record.env_id, record.difficulty, record.seed


def _usage(record: EpisodeRecord) -> dict[str, int] | None:
    return (record.run or {}).get("usage")


def group_row(records: list[EpisodeRecord], max_k: int) -> dict[str, Any]:
    """Every number the report shows for one group of finished episodes."""
    rewards = [r.reward for r in records if r.reward is not None]
    n = len(rewards)
    trials: dict[tuple[str, int, int], list[bool]] = defaultdict(list)
    for record in records:
        if record.reward is not None:
            trials[task_key(record)].append(record.reward.is_correct)
    means = reward_means(records)
    low, high = wilson_interval(sum(r.is_correct for r in rewards), n)
    _, std, half = mean_ci([r.r_total for r in rewards])
    row: dict[str, Any] = {
        "episodes": n, "tasks": len(trials), "trials": min(len(t) for t in trials.values()),
        "r_total": means["r_total"], "r_total_std": std, "r_total_ci95": half,
        "r_task": means["r_task"], "r_eff": means["r_eff"], "r_hall": means["r_hall"],
        "success_rate": means["success_rate"], "success_ci95": [low, high],
        "pass_hat_k": {str(k): pass_hat_k(trials.values(), k) for k in range(1, max_k + 1)},
        "hallucination_rate": sum(bool(r.hallucinated_ids) for r in rewards) / n,
        "invalid_rate": sum(r.termination == "invalid_output" for r in rewards) / n,
        "turns": means["turns"],
        "terminations": dict(sorted(Counter(r.termination for r in rewards).items())),
    }
    usages = [u for u in map(_usage, records) if u is not None]
    if usages:
        row["prompt_tokens"] = statistics.fmean(u["prompt_tokens"] for u in usages)
        row["completion_tokens"] = statistics.fmean(u["completion_tokens"] for u in usages)
        row["tokens"] = row["prompt_tokens"] + row["completion_tokens"]
    return row


def summarise(records: list[EpisodeRecord], max_k: int) -> dict[str, Any]:
    """``{"results": {env: {d: row, "all": row}}, "overall": row}`` over finished episodes."""
    finished = [r for r in records if r.reward is not None]
    results: dict[str, dict[str, Any]] = {}
    for env_id, groups in by_env_and_difficulty(finished).items():
        results[env_id] = {str(d): group_row(group, max_k) for d, group in groups.items()}
        results[env_id]["all"] = group_row([r for group in groups.values() for r in group], max_k)
    return {"results": results, "overall": group_row(finished, max_k) if finished else None}
