"""The outputs of an evaluation: ``summary.json``, ``report.md`` (+ ``plots/*.png``) and a
self-contained ``report.html`` with the same plots embedded.

The Markdown is written once and the HTML is rendered from it (markdown-it, which ``rich``
already brings), so the two never disagree. Plots need matplotlib (the ``report`` extra).
"""

from __future__ import annotations

import base64
import io
import json
from pathlib import Path
from typing import Any

from ecomrlve.evaluation.run import SUMMARY_FILE, EvalSpec
from ecomrlve.evaluation.stats import summarise
from ecomrlve.session import EpisodeRecord
from ecomrlve.shopper import shopper_summary

MARKDOWN_FILE = "report.md"
HTML_FILE = "report.html"
PLOTS_DIR = "plots"


class ReportDependencyError(RuntimeError):
    """A package the report needs is not installed."""


def require_report_dependencies() -> None:
    """Fail early, before any episode is played, if the plots cannot be drawn."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise ReportDependencyError("the evaluation report draws plots with matplotlib: "
                                    "pip install 'ecomrlve[report]'") from None


def build_summary(spec: EvalSpec, records: list[EpisodeRecord], *, scheduler_state: dict[str, Any] | None,
                  complete: bool) -> dict[str, Any]:
    """Everything ``summary.json`` holds: the run's configuration, completeness and statistics."""
    summary: dict[str, Any] = {"config": spec.to_dict(), "complete": complete, "episodes": len(records),
                               "planned_episodes": spec.planned_episodes}
    summary.update(summarise(records, spec.trials))
    shopper = shopper_summary(records)
    if shopper:
        summary["shopper"] = shopper
    if scheduler_state is not None:
        summary["scheduler"] = scheduler_state
    return summary


def write_report(out_dir: Path, summary: dict[str, Any], records: list[EpisodeRecord]) -> dict[str, Path]:
    """Write summary.json, report.md, plots/*.png and report.html; returns their paths."""
    require_report_dependencies()
    out_dir = Path(out_dir)
    (out_dir / PLOTS_DIR).mkdir(exist_ok=True)
    paths = {"summary": out_dir / SUMMARY_FILE, "markdown": out_dir / MARKDOWN_FILE, "html": out_dir / HTML_FILE}
    paths["summary"].write_text(json.dumps(summary, indent=2), encoding="utf-8")
    plots = make_plots(summary, records)
    for name, png in plots.items():
        (out_dir / PLOTS_DIR / name).write_bytes(png)
    markdown = render_markdown(summary, [f"{PLOTS_DIR}/{name}" for name in plots])
    paths["markdown"].write_text(markdown, encoding="utf-8")
    paths["html"].write_text(render_html(markdown, {f"{PLOTS_DIR}/{n}": png for n, png in plots.items()}),
                             encoding="utf-8")
    return paths


# -- Markdown ---------------------------------------------------------------------------------

def _signed(x: float) -> str:
    return f"{round(x, 3) + 0.0:+.3f}"  # + 0.0: no "-0.000"


def _pct(x: float | None) -> str:
    return "–" if x is None else f"{100 * x:.1f}%"


def _title(summary: dict[str, Any]) -> str:
    config = summary["config"]
    llm = config.get("llm")
    return f"{config['agent']} ({llm['model']})" if llm else config["agent"]


def _columns(k: int) -> list[str]:
    return ["episodes", "r_total ± 95% CI", "success [95% CI]", f"pass^{k}", "r_task", "r_eff", "r_hall",
            "halluc.", "invalid", "turns", "tokens"]


def _cells(row: dict[str, Any], k: int) -> list[str]:
    low, high = row["success_ci95"]
    tokens = row.get("tokens")
    return [str(row["episodes"]), f"{_signed(row['r_total'])} ± {row['r_total_ci95']:.3f}",
            f"{_pct(row['success_rate'])} [{_pct(low)}, {_pct(high)}]", _pct(row["pass_hat_k"][str(k)]),
            _signed(row["r_task"]), _signed(row["r_eff"]), _signed(row["r_hall"]),
            _pct(row["hallucination_rate"]), _pct(row["invalid_rate"]), f"{row['turns']:.1f}",
            "–" if tokens is None else f"{tokens:,.0f}"]


def _table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def render_markdown(summary: dict[str, Any], plot_paths: list[str]) -> str:
    """The human report: configuration, per-environment and per-difficulty tables, plots."""
    config = summary["config"]
    k = config["trials"]
    difficulty = "adaptive (RLVE scheduler)" if config["difficulties"] is None else \
        ", ".join(map(str, config["difficulties"]))
    out = [f"# EcomRLVE-Gym evaluation: {_title(summary)}", ""]
    facts = [("environments", ", ".join(config["env_ids"])), ("difficulty", difficulty),
             ("tasks", f"{config['tasks']} per environment" + ("" if config["difficulties"] is None
                                                               else " and difficulty")),
             ("trials per task", f"{k} (same seed; pass^{k} = all {k} succeed)"),
             ("episodes", f"{summary['episodes']} of {summary['planned_episodes']} planned"
              + ("" if summary["complete"] else " — **incomplete run**")),
             ("catalog", config["catalog"]), ("seed", str(config["seed"]))]
    if config.get("overrides"):
        facts.append(("axis overrides", ", ".join(f"{a}={v}" for a, v in config["overrides"].items())))
    if config.get("llm"):
        llm = config["llm"]
        facts.append(("endpoint", f"{llm['base_url']} ({llm['mode']} tool calling)"))
        facts.append(("sampling", ", ".join(f"{a}={v}" for a, v in llm["sampling"].items()) or "server defaults"))
    out += [f"- **{name}**: {value}" for name, value in facts]
    if summary["overall"] is None:
        return "\n".join(out + ["", "No episode has finished yet."]) + "\n"
    out += ["", "## Per environment", "",
            _table(["env", *_columns(k)], [[env, *_cells(rows["all"], k)] for env, rows in summary["results"].items()]
                   + [["**all**", *_cells(summary["overall"], k)]]),
            "", "## Per environment and difficulty", "",
            _table(["env", "d", *_columns(k)], [[env, d, *_cells(row, k)] for env, rows in summary["results"].items()
                                            for d, row in rows.items() if d != "all"])]
    if k > 1:
        out += ["", "## pass^k", "", _table(["env", *(f"pass^{i}" for i in range(1, k + 1))], [
            [env, *(_pct(rows["all"]["pass_hat_k"][str(i)]) for i in range(1, k + 1))]
            for env, rows in summary["results"].items()])]
    out += ["", "## How episodes ended", "",
            _table(["env", "d", "terminations"], [[env, d, ", ".join(f"{t}: {n}" for t, n in row["terminations"].items())]
                                                  for env, rows in summary["results"].items()
                                                  for d, row in rows.items() if d != "all"])]
    if "scheduler" in summary:
        windows = summary["scheduler"]["windows"]
        out += ["", "## Final difficulty windows", "",
                _table(["env", "low", "high", "correct at high", "attempts at high"],
                       [[env, str(w["low"]), str(w["high"]), str(w["correct"]), str(w["attempts"])]
                        for env, w in windows.items()])]
    if plot_paths:
        out += ["", "## Plots", ""] + [f"![{Path(p).stem}]({p})\n" for p in plot_paths]
    out += ["", ("Columns: r_total is the episode reward (mean ± normal 95% interval); success uses a Wilson "
            "interval; pass^k is τ-bench's estimator (per task C(c,k)/C(n,k), averaged); halluc. is the share "
            "of episodes that acted on an id never surfaced to the agent; invalid is the share ended by "
            "malformed output; tokens are prompt + completion tokens per episode. Intervals treat episodes as "
            "independent (trials of one task are not), so with k > 1 they are optimistic.")]
    return "\n".join(out) + "\n"


_HTML = """<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1"><title>{title}</title>
<style>body{{font-family:system-ui,sans-serif;max-width:1200px;margin:2em auto;padding:0 1em;color:#222}}
table{{border-collapse:collapse;margin:1em 0;font-size:14px;display:block;overflow-x:auto}}
th,td{{border:1px solid #ccc;padding:4px 8px;
text-align:right}}th{{background:#f3f3f3}}td:first-child,th:first-child{{text-align:left}}
img{{max-width:100%}}</style></head><body>
{body}</body></html>
"""


def render_html(markdown: str, images: dict[str, bytes]) -> str:
    """The Markdown report as one HTML file, images inlined as data URIs."""
    from markdown_it import MarkdownIt

    body = MarkdownIt("commonmark").enable("table").render(markdown)
    for path, png in images.items():
        body = body.replace(f'src="{path}"', f'src="data:image/png;base64,{base64.b64encode(png).decode()}"')
    title = markdown.splitlines()[0].lstrip("# ")
    return _HTML.format(title=title, body=body)


# -- plots --------------------------------------------------------------------------------------

def make_plots(summary: dict[str, Any], records: list[EpisodeRecord]) -> dict[str, bytes]:
    """PNG images by file name: success and reward by difficulty, pass^k, scheduler windows."""
    if summary["overall"] is None:
        return {}
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot as plt
    from matplotlib.ticker import MaxNLocator

    results = summary["results"]
    k = summary["config"]["trials"]
    plots: dict[str, bytes] = {}

    entries = len(results) * (2 if k > 1 else 1)
    legend_columns = 1 if entries <= 12 else 2
    fig, ax = plt.subplots(figsize=(7 + 1.6 * legend_columns, 4))
    handles: list[Any] = []  # in the order drawn: each env's success, then its pass^k
    for env_id, rows in results.items():
        ds = [int(d) for d in rows if d != "all"]
        rates = [rows[str(d)]["success_rate"] for d in ds]
        errors = [[r - rows[str(d)]["success_ci95"][0] for d, r in zip(ds, rates)],
                  [rows[str(d)]["success_ci95"][1] - r for d, r in zip(ds, rates)]]
        line = ax.errorbar(ds, rates, yerr=errors, marker="o", capsize=3, label=f"{env_id} success")
        handles.append(line)
        if k > 1:
            handles += ax.plot(ds, [rows[str(d)]["pass_hat_k"][str(k)] for d in ds], linestyle="--", marker="x",
                               color=line[0].get_color(), label=f"{env_id} pass^{k}")
    ax.set(xlabel="difficulty d", ylabel="rate", ylim=(-0.02, 1.02), title="Success rate (95% Wilson CI) by difficulty")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    # beside the axes, never over the lines (a C8 run with k > 1 has 16 entries)
    ax.legend(handles=handles, fontsize=8, loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0,
              ncol=legend_columns)
    plots["success_by_difficulty.png"] = _png(fig)

    components = ("r_total", "r_task", "r_eff", "r_hall")
    columns = min(4, len(results))
    grid_rows = -(-len(results) // columns)
    fig, axes = plt.subplots(grid_rows, columns, figsize=(4.5 * columns, 3.4 * grid_rows), squeeze=False, sharey=True)
    for ax in axes.flat[len(results):]:
        ax.set_visible(False)
    for ax, (env_id, rows) in zip(axes.flat, results.items()):
        ds = [int(d) for d in rows if d != "all"]
        for name in components:
            ax.plot(ds, [rows[str(d)][name] for d in ds], marker="o", label=name)
        ax.axhline(0, color="#999", linewidth=0.8)
        ax.set(title=env_id, xlabel="difficulty d", ylim=(-1.05, 1.05))
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    axes[0][0].set_ylabel("mean reward")
    axes[0][0].legend(fontsize=8)
    fig.suptitle("Reward components by difficulty")
    plots["reward_by_difficulty.png"] = _png(fig)

    if k > 1:
        fig, ax = plt.subplots(figsize=(6, 3.6))
        for env_id, rows in results.items():
            ax.plot(range(1, k + 1), [rows["all"]["pass_hat_k"][str(i)] for i in range(1, k + 1)], marker="o",
                    label=env_id)
        ax.set(xlabel="k", ylabel="pass^k", ylim=(-0.02, 1.02), title="pass^k: all k trials of a task succeed")
        ax.set_xticks(range(1, k + 1))
        ax.legend(fontsize=8)
        plots["pass_k.png"] = _png(fig)

    adaptive = sorted((r for r in records if r.run and "window" in r.run), key=lambda r: _run(r)["completed"])
    if adaptive:
        env_ids = [e for e in results if any(r.env_id == e for r in adaptive)]
        fig, axes = plt.subplots(len(env_ids), 1, figsize=(7, 0.6 + 1.7 * len(env_ids)), squeeze=False, sharex=True)
        for ax, env_id in zip(axes[:, 0], env_ids):
            played = [r for r in adaptive if r.env_id == env_id]
            x = [_run(r)["completed"] for r in played]
            low, high = zip(*(_run(r)["window"] for r in played))
            ax.fill_between(x, low, high, step="post", alpha=0.25, label="window [l, h] after the episode")
            ax.scatter(x, [r.difficulty for r in played], s=8, c=["tab:green" if r.reward and r.reward.is_correct
                                                                 else "tab:red" for r in played],
                       label="episode (green: correct)")
            ax.set_ylabel(env_id)
            ax.yaxis.set_major_locator(MaxNLocator(integer=True))
        axes[0, 0].set_title("Adaptive scheduler: difficulty window and episodes played")
        axes[0, 0].legend(fontsize=7, loc="upper left")
        axes[-1, 0].set_xlabel("episodes finished (whole run)")
        plots["scheduler_windows.png"] = _png(fig)
    return plots


def _run(record: EpisodeRecord) -> dict[str, Any]:
    """The scheduler's view of an adaptive episode (present on every record the plot keeps)."""
    return record.run or {}


def _png(fig: Any) -> bytes:
    from matplotlib import pyplot as plt

    buffer = io.BytesIO()
    fig.tight_layout()
    fig.savefig(buffer, format="png", dpi=100, metadata={"Software": None})
    plt.close(fig)
    return buffer.getvalue()
