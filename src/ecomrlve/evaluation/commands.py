"""``ecomrlve eval`` and ``ecomrlve compare``: option parsing and console output only.

Registered on the main CLI app in :mod:`ecomrlve.cli`; the work is done by
:class:`~ecomrlve.evaluation.run.Evaluation`, :mod:`.report` and :mod:`.compare`.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from ecomrlve.agents import BUILTIN_AGENTS
from ecomrlve.agents.llm import MODES, ChatEndpoint, EndpointError, LLMConfig, Mode, SamplingParams, api_key_from_env
from ecomrlve.catalog import load_catalog
from ecomrlve.difficulty import parse_overrides
from ecomrlve.difficulty.scheduler import SchedulerConfig
from ecomrlve.envs import resolve_env_ids
from ecomrlve.errors import UserInputError, require_output_directory, require_writable_file
from ecomrlve.evaluation import compare as comparison
from ecomrlve.evaluation.report import (
    HTML_FILE,
    MARKDOWN_FILE,
    PLOTS_DIR,
    ReportDependencyError,
    build_summary,
    require_report_dependencies,
    write_report,
)
from ecomrlve.evaluation.run import (
    CONFIG_FILE,
    EPISODES_FILE,
    SUMMARY_FILE,
    EvalSpec,
    Evaluation,
)
from ecomrlve.runner import EpisodeLoop, agent_factory, parse_difficulty
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
)
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

console = Console()
AGENTS = (*BUILTIN_AGENTS, "openai")
_LABEL_ENVS = 24  # longest list of environment ids a bar's label spells out; beyond it, their count


def progress_bar(console: Console = console) -> Progress:
    """The bar of every long command (label, bar, done/total, time): whole at 80 columns with a label from
    :func:`progress_label`."""
    return Progress(TextColumn("{task.description}"), BarColumn(bar_width=24), MofNCompleteColumn(),
                    TimeElapsedColumn(), console=console)


def progress_label(agent: str, env_ids: tuple[str, ...] | list[str]) -> str:
    """``heuristic on CART,PD``, or ``heuristic on 8 environments`` when the ids would not fit."""
    names = ",".join(env_ids)
    return f"{agent} on {names if len(names) <= _LABEL_ENVS else f'{len(env_ids)} environments'}"
#: ``eval --ray``: (evaluation, workers, Ray address, shopper) -> the pool that plays it. The Ray integration is a
#: layer above this one, so :mod:`ecomrlve.cli` installs it (``ecomrlve.integrations.ray.evaluation_pool``).
ray_pool: Callable[[Evaluation, int, str | None, ShopperOptions], EpisodeLoop] | None = None
#: ``run --ray`` and ``eval --ray``: how many environment actors, on which cluster.
RayWorkers = Annotated[int, typer.Option(min=1, help="--ray: environment actors.")]
RayAddress = Annotated[str | None, typer.Option(help="--ray: an existing cluster (default $RAY_ADDRESS, "
                                                "else a local Ray).")]


def _llm_config(model: str | None, base_url: str, api_key_env: str | None, mode: Mode, temperature: float | None,
                top_p: float | None, max_tokens: int | None, sampling_seed: int | None, timeout: float,
                max_retries: int, extra_body: str | None) -> LLMConfig:
    if not model:
        raise UserInputError("--model: --agent openai needs --model (the served model name)")
    try:
        body = json.loads(extra_body) if extra_body else {}
    except json.JSONDecodeError as exc:
        raise UserInputError(f"--extra-body: not JSON: {exc}") from None
    if not isinstance(body, dict):
        raise UserInputError("--extra-body: must be a JSON object")
    return LLMConfig(model=model, base_url=base_url, api_key=api_key_from_env(api_key_env), mode=mode,
                     sampling=SamplingParams(temperature, top_p, max_tokens, sampling_seed), timeout=timeout,
                     max_retries=max_retries, extra_body=body)


def eval_command(
    ctx: typer.Context,
    out: Annotated[Path, typer.Option(help="Evaluation directory: episodes.jsonl, summary.json, report.md/.html. "
                                      "Running again with the same directory resumes.")],
    env: Annotated[str | None, typer.Option(help="Environment id(s), comma separated.")] = None,
    collection: Annotated[str | None, typer.Option(help="A collection instead: C1, ... (default C1).")] = None,
    agent: Annotated[str, typer.Option(help="oracle | reference | heuristic | random | openai")] = "heuristic",
    model: Annotated[str | None, typer.Option(help="openai: the served model name.")] = None,
    base_url: Annotated[str, typer.Option(help="openai: the OpenAI-compatible endpoint.")] = "http://localhost:8000/v1",
    api_key_env: Annotated[str | None, typer.Option(help="openai: variable holding the API key "
                                                       "(default OPENAI_API_KEY, else none).")] = None,
    mode: Annotated[str, typer.Option(help="openai: native tool calling, or text (tools in the prompt, "
                                      "<tool_call> blocks).")] = "native",
    temperature: Annotated[float | None, typer.Option(help="openai: sampling temperature.")] = None,
    top_p: Annotated[float | None, typer.Option(help="openai: nucleus sampling.")] = None,
    max_tokens: Annotated[int | None, typer.Option(help="openai: completion tokens per turn.")] = None,
    sampling_seed: Annotated[int | None, typer.Option(help="openai: base sampling seed (each trial derives "
                                                         "its own).")] = None,
    extra_body: Annotated[str | None, typer.Option(help="openai: extra request fields as JSON, e.g. "
                                                      "'{\"chat_template_kwargs\": {\"enable_thinking\": false}}'.")] = None,
    timeout: Annotated[float, typer.Option(help="openai: seconds per request before retrying.")] = 120.0,
    max_retries: Annotated[int, typer.Option(min=0, help="openai: retries of transient errors (backoff).")] = 4,
    concurrency: Annotated[int, typer.Option(min=1, help="Episodes in flight at once.")] = 8,
    difficulty: Annotated[str, typer.Option(help="N, LOW-HIGH, or 'adaptive'.")] = "0-3",
    tasks: Annotated[int, typer.Option(min=1, help="Tasks per environment (and per difficulty when fixed).")] = 20,
    trials: Annotated[int, typer.Option(min=1, help="Trials per task (same seed): pass^k up to k = trials.")] = 1,
    seed: Annotated[int, typer.Option(help="Base seed of the run.")] = 0,
    catalog: Annotated[str, typer.Option(help="Catalog spec (as for `ecomrlve run`).")] = "default",
    override: Overrides = [],  # noqa: B006
    tau_acc: TauAcc = SchedulerConfig.tau_acc,
    tau_num: TauNum = SchedulerConfig.tau_num,
    d_delta: DDelta = SchedulerConfig.d_delta,
    overwrite: Annotated[bool, typer.Option("--overwrite", help="Discard an earlier evaluation in --out instead of resuming.")] = False,
    ray: Annotated[bool, typer.Option("--ray", help="Play on Ray environment actors sharing one curriculum "
                                      "(built-in agents).")] = False,
    workers: RayWorkers = 2,
    ray_address: RayAddress = None,
    server: ServerUrl = None,
    token: ServerToken = None,
    user_model: UserModel = None,
    user_base_url: UserBaseUrl = DEFAULT_BASE_URL,
    user_api_key_env: UserApiKeyEnv = None,
    user_cache: UserCache = None,
    user_concurrency: UserConcurrency = 8,
    phrasing: PhrasingOption = "eval",
) -> None:
    """Evaluate an agent (built-in or any OpenAI-compatible model): k trials per task, pass^k, reports."""
    if agent not in AGENTS:
        raise UserInputError(f"--agent: choose one of {', '.join(AGENTS)}")
    if mode not in MODES:
        raise UserInputError(f"--mode: choose one of {', '.join(MODES)}")
    if ray and server:
        raise UserInputError("--ray and --server: choose one (a server plays its own episodes)")
    if ray and agent == "openai":
        raise UserInputError("--ray plays built-in agents; a model's episodes wait on its endpoint, so raise "
                             "--concurrency instead")
    try:
        require_report_dependencies()
        require_output_directory(out, "--out")
        env_ids = resolve_env_ids(env_option(env, collection, "C1"))
        difficulties = parse_difficulty(difficulty)
        overrides = parse_overrides(override)
        llm = None
        if agent == "openai":
            llm = _llm_config(model, base_url, api_key_env, mode, temperature, top_p, max_tokens, sampling_seed,
                              timeout, max_retries, extra_body)
        endpoint = ChatEndpoint(llm) if llm else None
        if server:
            require_server_options(ctx, "catalog", "override", "tau_acc", "tau_num", "d_delta", *SHOPPER_PARAMETERS)
        remote = ServerSessions(server, token, env_ids, agent=agent) if server else None
        shopper_options = None if remote else ShopperOptions(user_model, user_base_url, user_api_key_env, user_cache,
                                                             user_concurrency, phrasing=phrasing)
        spec = EvalSpec(env_ids, difficulties, tasks, trials, seed, agent, f"server:{server}" if server else catalog,
                        overrides,
                        SchedulerConfig(tau_acc, tau_num, d_delta) if difficulties is None else None,
                        llm.describe() if llm else None, shopper_options.describe() if shopper_options else None)
        if overwrite:
            _discard(out)
        if remote is not None:  # the server's episodes (its secret and shopper) and curriculum (it counts every outcome)
            evaluation = Evaluation(spec, out, catalog=None, make_env=remote.make_env,
                                    scheduler=remote.scheduler if difficulties is None else None)
        elif ray:  # each Ray worker builds its own shopper from the options
            evaluation = Evaluation(spec, out, catalog=load_catalog(catalog))
        else:
            assert shopper_options is not None
            evaluation = Evaluation(spec, out, catalog=load_catalog(catalog), realiser=shopper_options.build())
    except (ReportDependencyError, EndpointError) as exc:
        raise UserInputError(str(exc)) from None
    except (KeyError, ValueError) as exc:  # EvalConfigMismatch and damaged records included
        raise UserInputError(str(exc.args[0] if exc.args else exc)) from None
    done = len(evaluation.records)
    if done:
        console.print(f"resuming {out}: {done} of {spec.planned_episodes} episodes already finished")
    loop = None
    if ray:
        if ray_pool is None:
            raise UserInputError("--ray: the Ray integration is not installed in this command")
        assert shopper_options is not None
        loop = ray_pool(evaluation, workers, ray_address, shopper_options)
    try:
        failure = _play(evaluation, agent, endpoint, concurrency, loop)
    finally:
        if remote is not None:
            remote.close()
        getattr(evaluation.realiser, "close", lambda: None)()
    if failure is not None and not evaluation.records:  # nothing to resume: leave nothing that blocks a retry
        _discard(out)
        evaluation.forget()
        typer.echo(f"error: {' '.join(failure.split())}; no episode finished, so nothing of this run was kept",
                   err=True)
        raise typer.Exit(2)
    summary = build_summary(spec, evaluation.records, complete=evaluation.complete,
                            scheduler_state=evaluation.scheduler.state_dict() if evaluation.scheduler else None)
    paths = write_report(out, summary, evaluation.records)
    if evaluation.records:
        _print_results(summary, sorted({f for r in evaluation.records if (f := r.fingerprint())}))
    if summary.get("shopper"):
        print_shopper_summary(console, summary["shopper"])
    console.print(f"report: {paths['markdown']} and {paths['html']}; records: {evaluation.episodes_path}")
    if failure is not None:
        one_line = " ".join(failure.split())
        typer.echo(f"error: {one_line}; {len(evaluation.records)} of {spec.planned_episodes} episodes are finished "
                   "and saved; run the same command again to resume", err=True)
        raise typer.Exit(2)


def _discard(out: Path) -> None:
    for name in (CONFIG_FILE, EPISODES_FILE, SUMMARY_FILE, MARKDOWN_FILE, HTML_FILE):
        (out / name).unlink(missing_ok=True)
    for png in (out / PLOTS_DIR).glob("*.png"):
        png.unlink()


def _play(evaluation: Evaluation, agent: str, endpoint: ChatEndpoint | None, concurrency: int,
          loop: EpisodeLoop | None) -> str | None:
    """Run the pending episodes with a progress bar; returns what stopped the run early, if anything."""
    pending = len(evaluation.pending())
    if not pending:
        return None

    async def main(advance: Any) -> None:
        try:
            if endpoint is not None:
                await endpoint.check()
            await evaluation.run(agent_factory(agent, endpoint), concurrency=concurrency,
                                 on_episode=lambda record: advance(), loop=loop)
        finally:
            if endpoint is not None:
                await endpoint.aclose()

    with progress_bar() as progress:
        bar = progress.add_task(progress_label(agent, evaluation.spec.env_ids), total=pending)
        try:
            asyncio.run(main(lambda: progress.advance(bar)))
        except EndpointError as exc:
            return str(exc)
        except KeyboardInterrupt:
            return "interrupted"
    return None


def _print_results(summary: dict[str, Any], fingerprints: list[str]) -> None:
    """The evaluation's table; the title names the episodes' secret (the server's with --server) by fingerprint."""
    k = summary["config"]["trials"]
    table = Table(title=f"Evaluation (per environment and difficulty; secret {', '.join(fingerprints)})")
    for column in ("env", "d", "n", "r_total", "success", f"pass^{k}", "invalid", "turns", "tokens"):
        table.add_column(column, justify="left" if column == "env" else "right", overflow="fold")
    for env_id, rows in summary["results"].items():
        for d, row in rows.items():
            pass_k = row["pass_hat_k"][str(k)]
            table.add_row(env_id, d, str(row["episodes"]), f"{row['r_total']:+.3f}", f"{row['success_rate']:.0%}",
                          "–" if pass_k is None else f"{pass_k:.0%}", f"{row['invalid_rate']:.0%}", f"{row['turns']:.1f}",
                          f"{row['tokens']:,.0f}" if "tokens" in row else "–")
    console.print(table)


def compare_command(
    first: Annotated[Path, typer.Argument(help="Evaluation directory (or summary.json) A, e.g. before training.")],
    second: Annotated[Path, typer.Argument(help="Evaluation directory (or summary.json) B, e.g. after training.")],
    markdown: Annotated[Path | None, typer.Option(help="Also write the comparison as Markdown here.")] = None,
) -> None:
    """Two evaluations side by side: differences, and whether they exceed run-to-run noise (95%)."""
    if markdown is not None:
        require_writable_file(markdown, "--markdown")
    try:
        a, b = comparison.load_summary(first), comparison.load_summary(second)
    except (FileNotFoundError, ValueError) as exc:
        raise UserInputError(str(exc)) from None
    rows = comparison.compare(a, b)
    if not rows:
        console.print("[red]the two evaluations have no environment and difficulty in common")
        raise typer.Exit(1)
    def delta(m: comparison.MetricDelta, text: str) -> str:
        return f"[bold green]{text} ✔[/]" if m.significant and m.delta > 0 else \
            f"[bold red]{text} ✔[/]" if m.significant else f"{text} [dim](noise)[/]"

    # one table per metric: nine columns side by side do not fit 80 columns
    for metric, value, difference in (("r_total", "{:+.3f}", "{:+.3f}"), ("success", "{:.1%}", "{:+.1%}")):
        table = Table(title=f"{metric}: A = {comparison.describe(a)}, B = {comparison.describe(b)}")
        for column in ("env", "d", "n A/B", "A", "B", "Δ (B − A)"):
            table.add_column(column, justify="left" if column == "env" else "right", overflow="fold")
        for row in rows:
            m = row.r_total if metric == "r_total" else row.success_rate
            table.add_row(row.env_id, row.difficulty, f"{row.episodes[0]}/{row.episodes[1]}", value.format(m.a),
                          value.format(m.b), delta(m, difference.format(m.delta)))
        console.print(table)
    console.print("✔ = the difference exceeds run-to-run noise (two-sided z-test, 95%).")
    if markdown:
        markdown.write_text(comparison.render_markdown(a, b, rows), encoding="utf-8")

