"""Side by side: two evaluation summaries (e.g. before and after training), with the difference
of each metric and whether it exceeds run-to-run noise.

"Exceeds noise" is a two-sided z-test at 95 % on the difference of means, treating episodes as
independent: ``|Δ| > 1.96 · sqrt(s_a²/n_a + s_b²/n_b)``, with the sample standard deviation for
r_total and ``sqrt(p(1-p))`` for the success rate. Rows are the (env, difficulty) groups both
runs have, plus each environment's ``all`` row.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ecomrlve.evaluation.run import SUMMARY_FILE
from ecomrlve.evaluation.stats import Z95


def load_summary(path: Path) -> dict[str, Any]:
    """A ``summary.json``, given the file or the evaluation directory that holds it."""
    path = Path(path)
    if path.is_dir():
        path = path / SUMMARY_FILE
    if not path.exists():
        raise FileNotFoundError(f"{path} not found; pass an evaluation directory or its {SUMMARY_FILE}")
    try:
        summary = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:  # a runs file, a folder named summary.json
        raise ValueError(f"{path} is not an evaluation summary (written by `ecomrlve eval`): {exc}") from None
    if not isinstance(summary, dict) or "results" not in summary or "config" not in summary:
        raise ValueError(f"{path} is not an evaluation summary (written by `ecomrlve eval`)")
    return summary


@dataclass(frozen=True)
class MetricDelta:
    a: float
    b: float
    noise: float  # 1.96 × standard error of the difference

    @property
    def delta(self) -> float:
        return self.b - self.a

    @property
    def significant(self) -> bool:
        return abs(self.delta) > self.noise


@dataclass(frozen=True)
class ComparisonRow:
    env_id: str
    difficulty: str
    episodes: tuple[int, int]
    r_total: MetricDelta
    success_rate: MetricDelta


def _noise(std_a: float, n_a: int, std_b: float, n_b: int) -> float:
    return Z95 * math.sqrt(std_a ** 2 / n_a + std_b ** 2 / n_b)


def _bernoulli_std(p: float) -> float:
    return math.sqrt(p * (1 - p))


def compare(a: dict[str, Any], b: dict[str, Any]) -> list[ComparisonRow]:
    """One row per (env, difficulty) present in both summaries."""
    rows = []
    for env_id, groups_a in a["results"].items():
        groups_b = b["results"].get(env_id, {})
        for d, ra in groups_a.items():
            rb = groups_b.get(d)
            if rb is None:
                continue
            na, nb = ra["episodes"], rb["episodes"]
            rows.append(ComparisonRow(
                env_id, d, (na, nb),
                MetricDelta(ra["r_total"], rb["r_total"], _noise(ra["r_total_std"], na, rb["r_total_std"], nb)),
                MetricDelta(ra["success_rate"], rb["success_rate"],
                            _noise(_bernoulli_std(ra["success_rate"]), na, _bernoulli_std(rb["success_rate"]), nb)),
            ))
    return rows


def describe(summary: dict[str, Any]) -> str:
    config = summary["config"]
    llm = config.get("llm")
    return config["agent"] + (f" ({llm['model']})" if llm else "")


def render_markdown(a: dict[str, Any], b: dict[str, Any], rows: list[ComparisonRow]) -> str:
    """The comparison as a Markdown table; '✔' marks a difference beyond run-to-run noise."""
    def cell(m: MetricDelta, fmt: str) -> list[str]:
        return [format(m.a, fmt), format(m.b, fmt), format(m.delta, "+" + fmt.lstrip("+")),
                "✔" if m.significant else ""]

    header = ["env", "d", "episodes A/B", "r_total A", "r_total B", "Δ", "beyond noise",
              "success A", "success B", "Δ", "beyond noise"]
    lines = [f"A: {describe(a)}  \nB: {describe(b)}", "",
             "| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    for row in rows:
        cells = [row.env_id, row.difficulty, f"{row.episodes[0]}/{row.episodes[1]}",
                 *cell(row.r_total, "+.3f"), *cell(row.success_rate, ".1%")]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"
