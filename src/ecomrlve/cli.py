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
from ecomrlve.evaluation.commands import compare_command, eval_command
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
    catalog: Annotated[str, typer.Option(help="'default', synthetic:N[:SEED], a catalog directory "
                                            "(`ecomrlve catalog build`) or a product file.")] = "default",
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
        scheduler = None
        if difficulties is None:
            scheduler = AdaptiveScheduler(env_ids, SchedulerConfig(tau_acc, tau_num, d_delta), checkpoint_path=scheduler_state)
        environment = EcomEnv(env_ids, catalog=cat, scheduler=scheduler, overrides=overrides, seed=seed)
    except (KeyError, ValueError) as exc:
        raise typer.BadParameter(str(exc.args[0] if exc.args else exc)) from None
    plan = Plan(env_ids, difficulties, episodes, seed)
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
    for column in ("env", "d", "n", "r_total", "success", "r_task", "r_eff", "r_hall", "turns"):
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
            environment.overrides = {k: v for k, v in record.axes.items() if k not in ("d", "adapted")}
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


catalog_app = typer.Typer(no_args_is_help=True, help="Build and inspect catalog directories (columns + BM25 + vectors).")
app.add_typer(catalog_app, name="catalog")


@catalog_app.command("build")
def catalog_build(
    source: Annotated[str, typer.Option(help="synthetic:N[:SEED], a JSONL/JSON/CSV/Parquet file, a datasets "
                                             "save_to_disk folder, or hf:NAME[:CONFIG[:SPLIT]].")],
    out: Annotated[Path, typer.Option(help="Catalog directory to write (resumes an interrupted embedding).")],
    embedder: Annotated[str, typer.Option(help="static:minilm-m2v (offline default), st:MODEL, or 'none' "
                                               "for a lexical-only directory.")] = "static:minilm-m2v",
    ray: Annotated[bool, typer.Option("--ray", help="Embed on Ray Data ($RAY_ADDRESS or a local Ray).")] = False,
    ray_workers: Annotated[int, typer.Option(min=1, help="Ray embedding workers.")] = 2,
    limit: Annotated[int | None, typer.Option(min=1, help="Read at most this many source rows.")] = None,
    threads: Annotated[int | None, typer.Option(min=1, help="Threads for FAISS/numba/BLAS (default: all cores).")] = None,
) -> None:
    """Build a catalog directory that `--catalog DIR` loads memory-mapped."""
    from ecomrlve.catalog.store import build_from_source

    with _progress() as progress:
        def stage(name: str, total: int):
            task = progress.add_task(name, total=total or None)
            return lambda n: progress.advance(task, n)

        try:
            manifest = build_from_source(source, out, embedder_name=None if embedder == "none" else embedder,
                                         progress=stage, ray_workers=ray_workers if ray else None, limit=limit,
                                         threads=threads)
        except (ValueError, FileNotFoundError) as exc:
            raise typer.BadParameter(str(exc)) from None
    _print_manifest(out, manifest)


@catalog_app.command("info")
def catalog_info(
    directory: Annotated[Path, typer.Argument(help="A catalog directory.")],
    verify: Annotated[bool, typer.Option("--verify", help="Recompute every file's SHA-256.")] = False,
) -> None:
    """Show a catalog directory's counts, embedder, build times and size."""
    from ecomrlve.catalog.store import read_manifest, verify_checksums

    try:
        manifest = read_manifest(directory)
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from None
    _print_manifest(directory, manifest)
    if verify:
        bad = verify_checksums(directory)
        if bad:
            console.print(f"[red]{len(bad)} file(s) differ from the manifest: {', '.join(bad)}")
            raise typer.Exit(1)
        console.print(f"[green]all {len(manifest['files'])} files match their checksums")


def _print_manifest(directory: Path, manifest: dict) -> None:
    table = Table(title=f"Catalog directory {directory}", show_header=False)
    embedder = manifest.get("embedder")
    report = manifest.get("source_metadata", {}).get("load_report")
    rows = [("source", str(manifest.get("source", manifest["name"]))),
            *((k, f"{v:,}") for k, v in manifest["counts"].items()),
            ("embedder", f"{embedder['name']} ({embedder['dim']}-d, {embedder['index']})" if embedder else "none (lexical only)"),
            ("size", f"{sum(f['bytes'] for f in manifest['files'].values()) / 2**20:,.1f} MiB"),
            ("build seconds", ", ".join(f"{k} {v:.1f}" for k, v in manifest["build_seconds"].items()))]
    if report:
        rows.append(("rows skipped", ", ".join(f"{k}: {v}" for k, v in report["skipped"].items()) or "none"))
    for key, value in rows:
        table.add_row(key, value)
    console.print(table)


app.command("eval")(eval_command)
app.command("compare")(compare_command)


if __name__ == "__main__":
    app()
