"""``ecomrlve train-plot RUN_DIR``: the learning curve of a GRPO run, read from what the trainer saved.

TRL writes every logged step into ``trainer_state.json`` (each checkpoint, and ``final/`` once the run
ends), together with the ``ecom/*`` metrics ``EcomGRPOTrainer`` merges in: so a run that was killed and
resumed, or is still going, can be plotted from its newest checkpoint without anything logged twice.
A step holds few rollouts (G per prompt), so the plot draws each step and a trailing mean beside it.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import typer

from ecomrlve.errors import UserInputError

TRAINER_STATE = "trainer_state.json"


@dataclass(frozen=True)
class TrainingStep:
    """One optimizer step as the environments saw it: its rollouts' reward and success, each curriculum window."""

    step: int
    episodes: int
    reward: float
    success: float
    windows: dict[str, tuple[int, int]]
    seconds: float | None


def newest_trainer_state(run_dir: Path) -> Path:
    """``final/trainer_state.json`` when the run ended, else the one of its latest checkpoint."""
    final = run_dir / "final" / TRAINER_STATE
    if final.is_file():
        return final
    checkpoints = [(int(p.name.split("-")[1]), p / TRAINER_STATE) for p in run_dir.glob("checkpoint-*")
                   if p.name.split("-")[1].isdigit() and (p / TRAINER_STATE).is_file()]
    if not checkpoints:
        raise UserInputError(f"{run_dir}: no {TRAINER_STATE} in final/ or a checkpoint-N/ (set grpo.save_steps)")
    return max(checkpoints)[1]


def training_steps(log_history: list[dict[str, Any]]) -> list[TrainingStep]:
    """The steps of a trainer's ``log_history`` that carry the environments' metrics, in step order."""
    steps: dict[int, TrainingStep] = {}
    for entry in log_history:
        if "ecom/episodes" not in entry or "step" not in entry:
            continue
        windows = {key.split("/")[1]: (int(entry[key]), int(entry[key.replace("window_low", "window_high")]))
                   for key in sorted(entry) if key.endswith("/window_low")}
        seconds = entry.get("ecom/seconds/step")
        steps[int(entry["step"])] = TrainingStep(int(entry["step"]), int(entry["ecom/episodes"]),
                                                 float(entry["ecom/r_total"]), float(entry["ecom/success"]),
                                                 windows, None if seconds is None else float(seconds))
    return [steps[s] for s in sorted(steps)]


def trailing_mean(values: list[float], weights: list[int], span: int) -> list[float]:
    """Each point's mean over the last ``span`` steps, weighted by their rollouts (a step may log fewer)."""
    means = []
    for end in range(1, len(values) + 1):
        window = range(max(0, end - span), end)
        total = sum(weights[i] for i in window)
        means.append(sum(values[i] * weights[i] for i in window) / total if total else math.nan)
    return means


def plot_learning_curve(steps: list[TrainingStep], out: Path, *, span: int, title: str) -> None:
    """Reward and success per step (with a trailing mean), and each environment's curriculum window."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot as plt
    from matplotlib.ticker import MaxNLocator

    x = [s.step for s in steps]
    weights = [s.episodes for s in steps]
    env_ids = sorted({env_id for s in steps for env_id in s.windows})
    fig, axes = plt.subplots(2 + len(env_ids), 1, figsize=(7, 5 + 1.4 * len(env_ids)), sharex=True,
                             gridspec_kw={"height_ratios": [3, 3] + [1.4] * len(env_ids)})
    for ax, name, values, ylim in ((axes[0], "mean r_total", [s.reward for s in steps], (-1.05, 1.05)),
                                   (axes[1], "success rate", [s.success for s in steps], (-0.02, 1.02))):
        ax.plot(x, values, marker="o", markersize=3, linewidth=0.8, alpha=0.6, label="each step")
        ax.plot(x, trailing_mean(values, weights, span), linewidth=2, label=f"mean of the last {span} steps")
        ax.set(ylabel=name, ylim=ylim)
        ax.legend(fontsize=8, loc="upper left")
    for ax, env_id in zip(axes[2:], env_ids):
        shown = [s for s in steps if env_id in s.windows]
        ax.fill_between([s.step for s in shown], [s.windows[env_id][0] for s in shown],
                        [s.windows[env_id][1] for s in shown], step="post", alpha=0.3)
        ax.plot([s.step for s in shown], [s.windows[env_id][1] for s in shown], drawstyle="steps-post")
        ax.set_ylabel(f"{env_id}\nwindow d")
        ax.set_ylim(-0.5, max(s.windows[env_id][1] for s in shown) + 0.5)
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    axes[0].set_title(title)
    axes[-1].set_xlabel(f"optimizer step ({sum(weights)} rollouts in all)")
    axes[-1].xaxis.set_major_locator(MaxNLocator(integer=True))
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, format="png", dpi=100, metadata={"Software": None})
    plt.close(fig)


def train_plot_command(
    run_dir: Annotated[Path, typer.Argument(help="A train run's grpo.output_dir.")],
    out: Annotated[Path, typer.Option(help="PNG to write.")] = Path("learning_curve.png"),
    span: Annotated[int, typer.Option(min=1, help="Steps in the trailing mean.")] = 5,
    title: Annotated[str | None, typer.Option(help="Plot title (default: the run directory).")] = None,
) -> None:
    """Plot a GRPO run's reward, success and curriculum windows per step (also while it runs)."""
    from ecomrlve.evaluation.report import ReportDependencyError, require_report_dependencies

    try:
        require_report_dependencies()
    except ReportDependencyError as exc:  # one line, as every user mistake
        raise UserInputError(str(exc)) from None
    state_file = newest_trainer_state(run_dir)
    try:
        log_history = json.loads(state_file.read_text())["log_history"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise UserInputError(f"{state_file}: not a trainer state ({exc})") from None
    steps = training_steps(log_history)
    if not steps:
        raise UserInputError(f"{state_file}: no step logged the environments' metrics (ecom/*)")
    plot_learning_curve(steps, out, span=span, title=title or f"GRPO learning curve: {run_dir.name}")
    head, tail = steps[:span], steps[-span:]
    typer.echo(f"{out}: {len(steps)} steps from {state_file}; mean r_total {_mean(head, 'reward'):+.3f} "
               f"(first {len(head)}) -> {_mean(tail, 'reward'):+.3f} (last {len(tail)}), success "
               f"{_mean(head, 'success'):.2f} -> {_mean(tail, 'success'):.2f}")


def _mean(steps: list[TrainingStep], field: str) -> float:
    """Rollout-weighted mean of one field over some steps."""
    return sum(getattr(s, field) * s.episodes for s in steps) / sum(s.episodes for s in steps)
