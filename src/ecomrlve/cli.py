"""The ``ecomrlve`` command line: ``run``, ``replay``, ``difficulty`` and ``catalog build|info`` here;
``eval``/``compare``, ``playground``, ``serve``/``status`` and ``train``/``export-sft`` are defined with
their packages and registered on this app.

Every user mistake (an unknown name, a bad range, an unreadable file, a broken catalog
directory or endpoint) is a :class:`~ecomrlve.errors.UserInputError` raised where it is found;
:class:`_OneLineErrors`, the app's one error boundary, prints it as one line on stderr and exits 2.
"""

from __future__ import annotations

import asyncio
import json
import os
import warnings
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Annotated, Any, Optional

import typer
from pydantic import ValidationError
from rich.console import Console
from rich.table import Table

from ecomrlve import __version__
from ecomrlve.agents import BUILTIN_AGENTS
from ecomrlve.catalog import Catalog, is_catalog_directory, load_catalog
from ecomrlve.difficulty import Difficulty, every_axis, parse_overrides
from ecomrlve.difficulty.scheduler import AdaptiveScheduler, SchedulerConfig
from ecomrlve.envs import environment_axes, resolve_env_ids
from ecomrlve.envs.capabilities import (
    CatalogUnsupportedError,
    capabilities,
    capability_rows,
    require_support,
    stored_arrays,
)
from ecomrlve.envs.explain import Explanation
from ecomrlve.envs.explain import explain as explain_record
from ecomrlve.episode import EcomEnv, shared_search_engine
from ecomrlve.errors import UnknownNameError, UserInputError, require_output_directory, require_writable_file
from ecomrlve.evaluation import commands as evaluation_commands
from ecomrlve.evaluation.commands import (
    RayAddress,
    RayWorkers,
    compare_command,
    eval_command,
    progress_bar,
    progress_label,
)
from ecomrlve.evaluation.run import Evaluation
from ecomrlve.integrations.learning_curve import train_plot_command
from ecomrlve.integrations.train import export_sft_command, train_command
from ecomrlve.playground.command import playground_command
from ecomrlve.protocol import DEFAULT_VERBOSITY, VERBOSITIES, Agent
from ecomrlve.registry import env_specs
from ecomrlve.runner import (
    Curriculum,
    EpisodeLoop,
    Plan,
    PlayableEnv,
    RunLoop,
    Scheduler,
    Task,
    agent_factory,
    parse_difficulty,
    replay,
    summarise,
)
from ecomrlve.server import commands as server_commands
from ecomrlve.server.commands import (
    DDelta,
    Overrides,
    ServerSessions,
    ServerToken,
    ServerUrl,
    TauAcc,
    TauNum,
    env_option,
    require_server_options,
    serve_command,
    status_command,
)
from ecomrlve.session import EpisodeRecord, resolve_secret
from ecomrlve.shopper import shopper_summary
from ecomrlve.shopper.options import (
    DEFAULT_BASE_URL,
    SHOPPER_PARAMETERS,
    PhrasingOption,
    ShopperOptions,
    UserApiKeyEnv,
    UserBaseUrl,
    UserCache,
    UserConcurrency,
    UserModel,
    print_shopper_summary,
)

if TYPE_CHECKING:
    from ecomrlve.server.app import ServerConfig


class _OneLineErrors(typer.core.TyperGroup):
    """The CLI's error boundary: a :class:`UserInputError` from any command becomes one line on stderr, exit 2."""

    def invoke(self, ctx: Any) -> Any:  # ctx: the click Context typer vendors
        try:
            return super().invoke(ctx)
        except UserInputError as exc:
            typer.echo(f"error: {exc}", err=True)
            raise typer.Exit(2) from None


#: help as click lays it out: option names, then their text wrapped to the terminal, complete at any width (rich's
#: help panels give the text a narrow column at 80 and cut defaults and examples with "…")
HELP_LAYOUT: dict[str, Any] = {"rich_markup_mode": None}
app = typer.Typer(cls=_OneLineErrors, add_completion=False, no_args_is_help=True,
                  help="Adaptive, verifiable e-commerce agent environments.", **HELP_LAYOUT)
console = Console()
#: what other packages warn about that a user of the command cannot act on (shown with --verbose)
THIRD_PARTY_WARNINGS = (DeprecationWarning, PendingDeprecationWarning, FutureWarning)


def _print_version(requested: bool) -> None:
    if requested:
        typer.echo(f"ecomrlve {__version__}")
        raise typer.Exit()


@app.callback()
def main(
    version: Annotated[bool, typer.Option("--version", is_eager=True, callback=_print_version,
                                          help="Print the installed version and exit.")] = False,
    verbose: Annotated[bool, typer.Option("--verbose", help="Also show other packages' log lines (Ray's "
                                          "INFO/WARNING) and deprecation warnings.")] = False,
) -> None:
    """Adaptive, verifiable e-commerce agent environments."""
    if not verbose:
        quiet_third_party()


def quiet_third_party() -> None:
    """Keep Ray's start-up lines and other packages' deprecation warnings out of the commands' output, in this
    process and in the ones it starts (Ray workers); a variable the user set stays as it is."""
    for category in THIRD_PARTY_WARNINGS:
        warnings.filterwarnings("ignore", category=category)
    os.environ.setdefault("PYTHONWARNINGS", ",".join(f"ignore::{c.__name__}" for c in THIRD_PARTY_WARNINGS))
    os.environ.setdefault("RAY_LOGGER_LEVEL", "error")  # read when ray is first imported (only --ray imports it)


@app.command(short_help="Play episodes with a built-in agent.")
def run(
    ctx: typer.Context,
    env: Annotated[Optional[str], typer.Option(help="Environment id(s), comma separated, e.g. CART.")] = None,
    collection: Annotated[Optional[str], typer.Option(help="A collection instead: C1, ... (default C1).")] = None,
    agent: Annotated[str, typer.Option(help="oracle | reference | heuristic | random")] = "heuristic",
    episodes: Annotated[int, typer.Option(min=1, help="Episodes per environment × difficulty (N or LOW-HIGH); "
                                          "with 'adaptive', the total (each one's environment drawn).")] = 20,
    difficulty: Annotated[str, typer.Option(help="N, LOW-HIGH, or 'adaptive'.")] = "0",
    seed: Annotated[int, typer.Option(help="Base seed of the run.")] = 0,
    secret: Annotated[Optional[str], typer.Option(envvar="ECOMRLVE_SECRET", show_envvar=True,
                                                  help="Deployment secret mixed into every episode (records keep it "
                                                  "for replay); default: this installation's secret.")] = None,
    catalog: Annotated[str, typer.Option(help="'default', synthetic:N[:SEED], a catalog directory "
                                            "(`ecomrlve catalog build`) or a product file.")] = "default",
    override: Overrides = [],  # noqa: B006
    out: Annotated[Optional[Path], typer.Option(help="Write episode records (JSONL) here.")] = None,
    summary_json: Annotated[Optional[Path], typer.Option(help="Write the summary as JSON here.")] = None,
    scheduler_state: Annotated[Optional[Path], typer.Option(help="Adaptive: checkpoint/resume scheduler state.")] = None,
    tau_acc: TauAcc = SchedulerConfig.tau_acc,
    tau_num: TauNum = SchedulerConfig.tau_num,
    d_delta: DDelta = SchedulerConfig.d_delta,
    ray: Annotated[bool, typer.Option("--ray", help="Play on Ray environment actors sharing one curriculum.")] = False,
    workers: RayWorkers = 2,
    ray_address: RayAddress = None,
    server: ServerUrl = None,
    token: ServerToken = None,
    user_model: UserModel = None,
    user_base_url: UserBaseUrl = DEFAULT_BASE_URL,
    user_api_key_env: UserApiKeyEnv = None,
    user_cache: UserCache = None,
    user_concurrency: UserConcurrency = 8,
    phrasing: PhrasingOption = "train",
    verbosity: Annotated[str, typer.Option(help="How tool results are written: compact (product cards as "
                                           "tables) or full (every card field spelled out, for reading by "
                                           "eye). The same episode either way.")] = DEFAULT_VERBOSITY,
) -> None:
    """Run episodes with a built-in agent and print a summary per environment and difficulty."""
    if verbosity not in VERBOSITIES:
        raise UserInputError(f"--verbosity: choose one of {', '.join(VERBOSITIES)}, not {verbosity!r}")
    if verbosity != DEFAULT_VERBOSITY and (server or ray):
        raise UserInputError("--verbosity full plays in-process only (not with --ray or --server)")
    if agent not in BUILTIN_AGENTS:
        raise UnknownNameError(f"--agent: unknown agent {agent!r}; choose {', '.join(BUILTIN_AGENTS)} "
                               "(models: `ecomrlve eval --agent openai`)")
    env_ids = resolve_env_ids(env_option(env, collection, "C1"))
    difficulties = parse_difficulty(difficulty)
    overrides = parse_overrides(override)
    config = SchedulerConfig(tau_acc, tau_num, d_delta)
    shopper_options = ShopperOptions(user_model, user_base_url, user_api_key_env, user_cache, user_concurrency,
                                     phrasing=phrasing)
    remote = None
    shopper = None
    scheduler: Scheduler | None = None
    for path, option in ((out, "--out"), (summary_json, "--summary-json"), (scheduler_state, "--scheduler-state")):
        if path is not None:  # before the run, not after it
            require_writable_file(path, option)
    if server and ray:
        raise UserInputError("--ray and --server: choose one (a server plays its own episodes)")
    if server:  # the server's catalog, secret and curriculum (it counts every finished episode itself)
        require_server_options(ctx, "catalog", "secret", "override", "scheduler_state", "tau_acc", "tau_num",
                               "d_delta", *SHOPPER_PARAMETERS)
        remote = ServerSessions(server, token, env_ids, agent=agent)
        make_env: Callable[[], PlayableEnv] = remote.make_env
        scheduler, catalog_name = remote.scheduler if difficulties is None else None, server
    else:
        cat = load_catalog(catalog)
        if difficulties is None:
            scheduler = AdaptiveScheduler(env_ids, config, checkpoint_path=scheduler_state)
        run_secret = resolve_secret(secret)  # one secret for the whole run: records keep it for replay
        _print_load_report(cat)
        try:
            require_support(cat, env_ids)
        except CatalogUnsupportedError as exc:
            raise UserInputError(str(exc)) from None
        shared_search_engine(cat).retriever  # noqa: B018 - open the indexes now: a broken directory fails before episode 1
        shopper = None if ray else shopper_options.build()  # Ray workers build their own
        make_env = lambda: EcomEnv(env_ids, catalog=cat, overrides=overrides, secret=run_secret,
                                   realiser=shopper, verbosity=verbosity)  # type: ignore[arg-type]
        catalog_name = cat.name
    plan = Plan(env_ids, difficulties, episodes, seed, draw_envs=True)
    curriculum = Curriculum.sequential(scheduler, seed) if scheduler else Curriculum()
    loop: EpisodeLoop
    if ray:
        integration = _ray_integration()
        recipe = integration.EnvRecipe(env_ids, catalog, overrides, run_secret, shopper_options)
        loop = integration.run_pool(recipe, curriculum, agent, workers=workers, address=ray_address)
    else:
        loop = RunLoop(make_env, curriculum, agent_factory(agent))
    records: list[EpisodeRecord] = []
    sink = out.open("w") if out else None
    try:
        with progress_bar(console) as progress:
            bar = progress.add_task(progress_label(agent, env_ids), total=len(plan))

            def finished(task: Task, trial: int, record: EpisodeRecord, player: Agent) -> None:
                record = record.model_copy(update={"run": {"agent": agent, **(record.run or {})}})  # who played
                records.append(record)
                if sink:
                    sink.write(record.to_json() + "\n")
                progress.advance(bar)

            asyncio.run(loop.run(((task, 0) for task in plan), finished))  # one at a time: records in plan order
    finally:
        if sink:
            sink.close()
        if remote:
            remote.close()
        getattr(shopper, "close", lambda: None)()
    summary = summarise(records)
    fingerprints = sorted({f for r in records if (f := r.fingerprint())})
    _print_summary(summary, fingerprints)
    if out:
        console.print(f"wrote {len(records)} records to {out}", soft_wrap=True)
    shopper_rows = shopper_summary(records)
    if shopper_rows:
        print_shopper_summary(console, shopper_rows)
    if scheduler is not None:
        _print_windows(scheduler)
    if summary_json:
        payload = {"agent": agent, "catalog": catalog_name, "seed": seed, "secret_fingerprint": ",".join(fingerprints),
                   "results": summary}
        if shopper_rows:
            payload["shopper"] = shopper_rows
        if scheduler is not None:
            payload["scheduler"] = scheduler.state_dict()
        summary_json.write_text(json.dumps(payload, indent=2))


def _print_summary(summary: dict, fingerprints: list[str]) -> None:
    """The means per environment and difficulty; the title names the secret by its fingerprint only."""
    table = Table(title=f"Results (means per environment and difficulty; secret {', '.join(fingerprints) or '–'})")
    for column in ("env", "d", "n", "r_total", "success", "r_task", "r_eff", "r_hall", "turns"):
        table.add_column(column, justify="right" if column not in ("env",) else "left", overflow="fold")
    for env_id, rows in summary.items():
        for d, row in rows.items():
            table.add_row(env_id, d, str(row["episodes"]), f"{row['r_total']:+.3f}", f"{row['success_rate']:.0%}",
                          f"{row['r_task']:+.3f}", f"{row['r_eff']:+.3f}", f"{row['r_hall']:+.3f}", f"{row['turns']:.1f}")
    console.print(table)


def _print_windows(scheduler: Scheduler) -> None:
    table = Table(title="Adaptive difficulty windows")
    for column in ("env", "low", "high", "correct", "attempts"):
        table.add_column(column, overflow="fold")
    for env_id, w in scheduler.state_dict()["windows"].items():
        table.add_row(env_id, str(w["low"]), str(w["high"]), str(w["correct"]), str(w["attempts"]))
    console.print(table)


@app.command("replay", short_help="Re-run recorded episodes; fail on a difference.")
def replay_command(
    runs: Annotated[Path, typer.Argument(help="A JSONL file written by `ecomrlve run --out`.")],
    explain: Annotated[bool, typer.Option("--explain", help="After each failed episode's verdict, print why: "
                                          "the facts it rests on and where each was observable.")] = False,
) -> None:
    """Re-run every recorded episode from its seed and actions; fail on any difference."""
    mismatches = 0
    lines = _record_lines(runs)
    environments: dict[str, EcomEnv] = {}
    with progress_bar(console) as progress:
        task = progress.add_task("replaying", total=len(lines))
        for number, line in lines:
            record = _parse_record(runs, number, line)
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
            if explain and record.reward is not None and not record.reward.is_correct:
                _print_explanation(number, explain_record(record))
            progress.advance(task)
    if mismatches:
        console.print(f"[red]{mismatches} of {len(lines)} episodes did not reproduce")
        raise typer.Exit(1)
    console.print(f"[green]all {len(lines)} episodes reproduced exactly")


def _print_explanation(number: int, explanation: Explanation) -> None:
    e = explanation
    console.print(f"line {number}: {e.env_id} d={e.difficulty} seed={e.seed}", markup=False)
    for text in e.lines():
        console.print("  " + text, markup=False, highlight=False, soft_wrap=True)


@app.command("explain", short_help="Explain recorded verdicts: what each rests on and where it was shown.")
def explain_command(
    runs: Annotated[Path, typer.Argument(help="A JSONL file written by `ecomrlve run --out` (or a server's records).")],
    every: Annotated[bool, typer.Option("--all", help="Explain correct verdicts too (default: failed ones).")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON explanation per line instead of text.")] = False,
    fault: Annotated[Optional[str], typer.Option(help="Explain only failed verdicts of this fault: agent or "
                                                "environment (the table still counts every episode).")] = None,
) -> None:
    """For each verdict: the requirements that decided it (where the agent could learn each: the opening or a
    shopper reply, with the turn) and each answered item's deciding value (which tool result showed it, at
    which turn). A failed verdict's fault is `agent` when every fact it rests on was observable before the
    answer, `environment` when one was not. Reads only the records: no catalog, no replay, no secret."""
    if fault not in (None, "agent", "environment"):
        raise UserInputError(f"--fault must be agent or environment, not {fault!r}")
    counts: dict[str, list[int]] = {}
    for number, line in _record_lines(runs):
        record = _parse_record(runs, number, line)
        explanation = explain_record(record)
        row = counts.setdefault(record.env_id, [0, 0, 0, 0])
        row[0] += 1
        row[1] += not explanation.is_correct
        row[2] += explanation.fault == "agent"
        row[3] += explanation.fault == "environment"
        if fault is not None and explanation.fault != fault:
            continue
        if as_json:
            typer.echo(json.dumps({"line": number} | explanation.to_json()))
        elif every or not explanation.is_correct:
            _print_explanation(number, explanation)
    if as_json:
        return
    table = Table(title=f"verdicts of {runs.name}")
    for column in ("env", "episodes", "failed", "fault: agent", "fault: environment"):
        table.add_column(column, justify="left" if column == "env" else "right")
    for env_id, row in sorted(counts.items()):
        table.add_row(env_id, *map(str, row))
    console.print(table)


def _record_lines(runs: Path) -> list[tuple[int, str]]:
    """The non-blank lines of a runs file with their 1-based line numbers; none at all is an error."""
    try:
        text = runs.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UserInputError(f"cannot read {runs}: {getattr(exc, 'strerror', None) or exc}") from None
    lines = [(number, line) for number, line in enumerate(text.splitlines(), 1) if line.strip()]
    if not lines:
        raise UserInputError(f"{runs} holds no episode records")
    return lines


def _parse_record(runs: Path, number: int, line: str) -> EpisodeRecord:
    try:
        return EpisodeRecord.model_validate_json(line)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "record"
        raise UserInputError(f"{runs}:{number}: not an episode record ({where}: {first['msg']}; "
                             "truncated or not written by `ecomrlve run --out`?)") from None


@app.command("difficulty", short_help="Print the difficulty axes for levels of d.")
def difficulty_command(
    levels: Annotated[str, typer.Option(help="A level N or a range LOW-HIGH (0..15).")] = "0-15",
    override: Annotated[list[str], typer.Option(help="AXIS=VALUE (repeatable).")] = [],  # noqa: B006
) -> None:
    """Print every difficulty axis for a range of d, with the environments that read it."""
    ds = parse_difficulty(levels)
    if ds is None:
        raise UserInputError("--levels takes N or LOW-HIGH; 'adaptive' is a scheduler, not a level")
    overrides = parse_overrides(override)
    resolved = [Difficulty.at(d, overrides).as_dict() for d in ds]
    specs = env_specs()
    axes_of = {s.id: environment_axes(s.id) for s in specs}
    about = Table(title="Difficulty axes")
    for column in ("axis", "formula", "read by"):
        about.add_column(column, overflow="fold")
    values: dict[str, list[str]] = {}
    for axis in every_axis():
        readers = [s.id for s in specs if axis.name in axes_of[s.id]]
        about.add_row(axis.name, axis.formula, "all" if len(readers) == len(specs) else ", ".join(readers))
        values[axis.name] = [f"{v:.2f}" if isinstance(v, float) else str(v) for v in (r[axis.name] for r in resolved)]
    console.print(about)
    _print_split_columns("Values", "axis", [f"d={d}" for d in ds], values)


def _print_split_columns(title: str, key: str, headers: list[str], rows: dict[str, list[str]]) -> None:
    """A wide table (a key column, then one column per header) as as many tables as the console's width needs,
    each with the key column and an equal share of the others: complete at any width, nothing cut."""
    key_width = max(len(key), *map(len, rows))
    column_width = max(*map(len, headers), *(len(v) for row in rows.values() for v in row))
    fits = max(1, (console.width - key_width - 5) // (column_width + 3))  # borders and padding of rich's boxes
    parts = -(-len(headers) // fits)
    share = -(-len(headers) // parts)
    for start in range(0, len(headers), share):
        chunk = range(start, min(start + share, len(headers)))
        table = Table(title=f"{title} ({headers[chunk[0]]} to {headers[chunk[-1]]})" if parts > 1 else title)
        table.add_column(key, no_wrap=True, overflow="fold")
        for i in chunk:
            table.add_column(headers[i], justify="right", no_wrap=True, overflow="fold")
        for name, row in rows.items():
            table.add_row(name, *(row[i] for i in chunk))
        console.print(table)


catalog_app = typer.Typer(no_args_is_help=True, help="Build and inspect catalog directories (columns + BM25 + vectors).",
                          **HELP_LAYOUT)
app.add_typer(catalog_app, name="catalog", short_help="Build and inspect catalog directories.")


@catalog_app.command("build", short_help="Build a catalog directory.")
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
    schema: Annotated[str, typer.Option(help="How source rows are read: auto (per row; the report says how), "
                                             "amazon (Amazon Reviews 2023 / Amazebay metadata) or products.")] = "auto",
) -> None:
    """Build a catalog directory that `--catalog DIR` loads memory-mapped."""
    from ecomrlve.catalog.loaders import SCHEMAS
    from ecomrlve.catalog.store import build_from_source

    require_output_directory(out, "--out")
    if schema not in SCHEMAS:  # a synthetic source reads no rows, but a misspelt schema is still a mistake
        raise UserInputError(f"--schema: unknown schema {schema!r}; expected one of {', '.join(SCHEMAS)}")

    with progress_bar(console) as progress:
        def stage(name: str, total: int) -> Callable[[int], None]:
            task = progress.add_task(name, total=total or None)
            return lambda n: progress.advance(task, n)

        try:
            manifest = build_from_source(source, out, embedder_name=None if embedder == "none" else embedder,
                                         progress=stage, ray_workers=ray_workers if ray else None, limit=limit,
                                         threads=threads, schema=schema,
                                         describe=lambda c: {"capabilities": capabilities(c).as_dict()},
                                         arrays=stored_arrays)
        except (ValueError, FileNotFoundError, ImportError) as exc:
            raise UserInputError(str(exc)) from None  # a bad source spec, a missing source file or embedder extra
    _print_manifest(out, manifest)


@catalog_app.command("info", short_help="What a catalog holds and supports.")
def catalog_info(
    source: Annotated[str, typer.Argument(help="A catalog directory, a product file, hf:NAME or synthetic:N.")],
    verify: Annotated[bool, typer.Option("--verify", help="Directories: recompute every file's SHA-256.")] = False,
    schema: Annotated[str, typer.Option(help="Product files: auto, amazon or products.")] = "auto",
) -> None:
    """Show what a catalog holds and which environments and difficulty features it supports.

    A directory shows its manifest (counts, embedder, build times, size, load and capability
    reports); a product file is loaded and analysed.
    """
    from ecomrlve.catalog.store import read_manifest, verify_checksums

    directory = Path(source)
    if not is_catalog_directory(directory):  # a product file, a datasets folder or a spec
        _print_catalog_file(source, schema)
        return
    try:
        manifest = read_manifest(directory)  # says in one line if the folder is not a catalog directory
    except ValueError as exc:
        raise UserInputError(str(exc)) from None
    _print_manifest(directory, manifest)
    if verify:
        bad = verify_checksums(directory)
        if bad:
            console.print(f"[red]{len(bad)} file(s) differ from the manifest: {', '.join(bad)}")
            raise typer.Exit(1)
        console.print(f"[green]all {len(manifest['files'])} files match their checksums")


def _print_catalog_file(source: str, schema: str) -> None:
    from ecomrlve.catalog.loaders import load_products

    try:
        if source.startswith("synthetic:") or source == "default":
            cat = load_catalog(source)
        else:
            cat, _ = load_products(source, schema=schema)
    except (ValueError, FileNotFoundError) as exc:
        raise UserInputError(str(exc)) from None
    table = Table(title=f"Catalog {source}", show_header=False)
    table.add_column(overflow="fold")
    table.add_column(overflow="fold")
    for key, value in _report_rows(cat.metadata.get("load_report"), capabilities(cat).as_dict()):
        table.add_row(key, value)
    console.print(table)


def _report_rows(load_report: dict | None, report: dict | None) -> list[tuple[str, str]]:
    """Rows for the load report (every dropped-row reason) and the capability report."""
    from ecomrlve.catalog.loaders import format_load_report
    from ecomrlve.envs.capabilities import CAPABILITIES_VERSION, CatalogCapabilities

    rows = [("load", format_load_report(load_report))] if load_report else []
    if report and report.get("version") == CAPABILITIES_VERSION:
        rows += [("counts", ", ".join(f"{k} {v:,}" for k, v in report["counts"].items()))]
        rows += capability_rows(CatalogCapabilities.from_dict(report))
    return rows


def _print_load_report(cat: Catalog) -> None:
    """``run --catalog FILE``: what the load read and dropped, one short block on stderr."""
    from ecomrlve.catalog.loaders import format_load_report

    report = cat.metadata.get("load_report")
    if report and "directory" not in cat.metadata:
        typer.echo(format_load_report(report), err=True)


def _print_manifest(directory: Path, manifest: dict) -> None:
    table = Table(title=f"Catalog directory {directory}", show_header=False)
    table.add_column(overflow="fold")
    table.add_column(overflow="fold")
    embedder = manifest.get("embedder")
    rows = [("source", str(manifest.get("source", manifest["name"]))),
            *((k, f"{v:,}") for k, v in manifest["counts"].items()),
            ("embedder", f"{embedder['name']} ({embedder['dim']}-d, {embedder['index']})" if embedder else "none (lexical only)"),
            ("size", f"{sum(f['bytes'] for f in manifest['files'].values()) / 2**20:,.1f} MiB"),
            ("build seconds", ", ".join(f"{k} {v:.1f}" for k, v in manifest["build_seconds"].items())),
            *_report_rows(manifest.get("source_metadata", {}).get("load_report"), manifest.get("capabilities"))]
    for key, value in rows:
        table.add_row(key, value)
    console.print(table)


def _ray_integration() -> ModuleType:
    """``ecomrlve.integrations.ray``, imported (and ray with it) only for ``--ray``; ray missing is one line."""
    try:
        from ecomrlve.integrations import ray as integration
    except ImportError as exc:
        raise UserInputError(f"--ray: {exc}") from None
    return integration


def _ray_evaluation_pool(evaluation: Evaluation, workers: int, address: str | None,
                         shopper: ShopperOptions) -> EpisodeLoop:
    pool: EpisodeLoop = _ray_integration().evaluation_pool(evaluation, workers=workers, address=address,
                                                           shopper=shopper)
    return pool


evaluation_commands.ray_pool = _ray_evaluation_pool


def _serve_replicas(config: ServerConfig, replicas: int, address: str | None) -> None:
    """``serve --replicas``: ``ecomrlve.integrations.ray_server``, imported (and ray with it) only then."""
    try:
        from ecomrlve.integrations.ray_server import serve_replicas
    except ImportError as exc:
        raise UserInputError(f"--replicas: {exc}") from None
    serve_replicas(config, replicas, address)


server_commands.serve_replicas = _serve_replicas
app.command("eval", short_help="Evaluate an agent or a served model: pass^k.")(eval_command)
app.command("compare", short_help="Two evaluations side by side.")(compare_command)
app.command("playground", short_help="Play in the browser; browse recorded runs.")(
    playground_command)
app.command("train", short_help="Train a policy with GRPO (TRL).")(train_command)
app.command("train-plot", short_help="Plot a training run's learning curve.")(train_plot_command)
app.command("export-sft", short_help="Export solved episodes as an SFT dataset.")(
    export_sft_command)

app.command("serve", short_help="Serve the environments (openenv, WebSocket).")(serve_command)
app.command("status", short_help="Print a server's curriculum windows.")(status_command)


if __name__ == "__main__":
    app()
