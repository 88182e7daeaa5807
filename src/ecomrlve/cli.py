"""The ``ecomrlve`` command line: run, replay, difficulty."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from ecomrlve.catalog import load_catalog
from ecomrlve.difficulty import AXES, Difficulty, parse_overrides
from ecomrlve.difficulty.scheduler import AdaptiveScheduler, SchedulerConfig
from ecomrlve.envs import resolve_env_ids
from ecomrlve.episode import EcomEnv, EpisodeRecord
from ecomrlve.runner import Plan, episode_seed, parse_difficulty, play, replay, summarise

app = typer.Typer(add_completion=False, no_args_is_help=True, help="Adaptive, verifiable e-commerce agent environments.")
console = Console()


def _progress() -> Progress:
    return Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                    console=console, transient=False)


@app.command()
def run(
    env: Annotated[Optional[str], typer.Option(help="Environment id(s), comma separated, e.g. CART.")] = None,
    collection: Annotated[Optional[str], typer.Option(help="A collection instead: C1, ...")] = None,
    agent: Annotated[str, typer.Option(help="oracle | heuristic | random")] = "heuristic",
    episodes: Annotated[int, typer.Option(min=1, help="Episodes (per difficulty when a range is given).")] = 20,
    difficulty: Annotated[str, typer.Option(help="N, LOW-HIGH, or 'adaptive'.")] = "0",
    seed: Annotated[int, typer.Option(help="Base seed of the run.")] = 0,
    catalog: Annotated[str, typer.Option(help="Catalog spec: synthetic:N[:SEED] or 'default'.")] = "default",
    override: Annotated[list[str], typer.Option(help="Override a difficulty axis: AXIS=VALUE (repeatable).")] = [],  # noqa: B006
    out: Annotated[Optional[Path], typer.Option(help="Write episode records (JSONL) here.")] = None,
    summary_json: Annotated[Optional[Path], typer.Option(help="Write the summary as JSON here.")] = None,
    scheduler_state: Annotated[Optional[Path], typer.Option(help="Adaptive: checkpoint/resume scheduler state.")] = None,
    tau_acc: Annotated[float, typer.Option(help="Adaptive: accuracy needed to promote.")] = 0.9,
    tau_num: Annotated[int, typer.Option(help="Adaptive: episodes at the upper edge per decision.")] = 32,
    d_delta: Annotated[int, typer.Option(help="Adaptive: maximum window width.")] = 4,
) -> None:
    """Run episodes with a built-in agent and print a summary per environment and difficulty."""
    try:
        env_ids = resolve_env_ids(env or collection or "C1")
        difficulties = parse_difficulty(difficulty)
        overrides = parse_overrides(override)
        cat = load_catalog(catalog)
    except (KeyError, ValueError) as exc:
        raise typer.BadParameter(str(exc.args[0] if exc.args else exc)) from None
    scheduler = None
    if difficulties is None:
        scheduler = AdaptiveScheduler(env_ids, SchedulerConfig(tau_acc, tau_num, d_delta), checkpoint_path=scheduler_state)
    environment = EcomEnv(env_ids, catalog=cat, scheduler=scheduler, overrides=overrides, seed=seed)
    plan = Plan(env_ids, difficulties, episodes)
    records: list[EpisodeRecord] = []
    sink = out.open("w") if out else None
    try:
        with _progress() as progress:
            task = progress.add_task(f"{agent} on {','.join(env_ids)}", total=len(plan))
            for env_id, d, index in plan:
                record = play(environment, agent, env_id=env_id, difficulty=d,
                              seed=episode_seed(seed, env_id, "adaptive" if d is None else d, index))
                records.append(record)
                if sink:
                    sink.write(record.to_json() + "\n")
                progress.advance(task)
    finally:
        if sink:
            sink.close()
    summary = summarise(records)
    _print_summary(summary)
    if scheduler is not None:
        _print_windows(scheduler)
    if summary_json:
        payload = {"agent": agent, "catalog": cat.name, "seed": seed, "results": summary}
        if scheduler is not None:
            payload["scheduler"] = scheduler.state_dict()
        summary_json.write_text(json.dumps(payload, indent=2))


def _print_summary(summary: dict) -> None:
    table = Table(title="Results (means per environment and difficulty)")
    for column in ("env", "d", "episodes", "r_total", "success", "r_task", "r_eff", "r_hall", "turns"):
        table.add_column(column, justify="right" if column not in ("env",) else "left")
    for env_id, rows in summary.items():
        for d, row in rows.items():
            table.add_row(env_id, d, str(row["episodes"]), f"{row['r_total']:+.3f}", f"{row['success_rate']:.0%}",
                          f"{row['r_task']:+.3f}", f"{row['r_eff']:+.3f}", f"{row['r_hall']:+.3f}", f"{row['turns']:.1f}")
    console.print(table)


def _print_windows(scheduler: AdaptiveScheduler) -> None:
    table = Table(title="Adaptive difficulty windows")
    for column in ("env", "low", "high", "correct", "attempts"):
        table.add_column(column)
    for env_id, w in scheduler.windows().items():
        table.add_row(env_id, str(w.low), str(w.high), str(w.correct), str(w.attempts))
    console.print(table)


@app.command("replay")
def replay_command(
    runs: Annotated[Path, typer.Argument(help="A JSONL file written by `ecomrlve run --out`.")],
) -> None:
    """Re-run every recorded episode from its seed and actions; fail on any difference."""
    mismatches = 0
    lines = [line for line in runs.read_text().splitlines() if line.strip()]
    environments: dict[str, EcomEnv] = {}
    with _progress() as progress:
        task = progress.add_task("replaying", total=len(lines))
        for number, line in enumerate(lines, 1):
            record = EpisodeRecord.model_validate_json(line)
            environment = environments.get(record.catalog)
            if environment is None:
                environment = environments[record.catalog] = EcomEnv(record.env_id, catalog=load_catalog(record.catalog))
            environment.env_ids = resolve_env_ids(record.env_id)
            environment.overrides = {k: v for k, v in record.axes.items() if k != "d"}
            again = replay(environment, record)
            if again.to_json() != record.to_json():
                mismatches += 1
                old = record.reward.r_total if record.reward else None
                new = again.reward.r_total if again.reward else None
                console.print(f"[red]line {number}: {record.env_id} d={record.difficulty} seed={record.seed} "
                              f"differs (r_total {old} -> {new})")
            progress.advance(task)
    if mismatches:
        console.print(f"[red]{mismatches} of {len(lines)} episodes did not reproduce")
        raise typer.Exit(1)
    console.print(f"[green]all {len(lines)} episodes reproduced exactly")


@app.command("difficulty")
def difficulty_command(
    levels: Annotated[str, typer.Option(help="Difficulty range LOW-HIGH.")] = "0-15",
    override: Annotated[list[str], typer.Option(help="AXIS=VALUE (repeatable).")] = [],  # noqa: B006
) -> None:
    """Print every difficulty axis for a range of d."""
    ds = parse_difficulty(levels) or ()
    overrides = parse_overrides(override)
    table = Table(title="Difficulty axes")
    table.add_column("axis")
    table.add_column("formula")
    for d in ds:
        table.add_column(f"d={d}", justify="right")
    resolved = [Difficulty.at(d, overrides).as_dict() for d in ds]
    for axis in AXES:
        values = [r[axis.name] for r in resolved]
        table.add_row(axis.name, axis.formula, *(f"{v:.2f}" if isinstance(v, float) else str(v) for v in values))
    console.print(table)


if __name__ == "__main__":
    app()
