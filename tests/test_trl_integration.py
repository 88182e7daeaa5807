"""TRL: generated tools match our schemas, and one real GRPO optimizer step runs through our environments."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

pytest.importorskip("trl")
torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from transformers.utils import get_json_schema  # noqa: E402

from ecomrlve.integrations.trl import (  # noqa: E402
    CUT_REASONS,
    CUT_SHORT,
    ROLLOUT_ENDED,
    TRLEnvironments,
    make_dataset,
    measure_lengths,
)
from ecomrlve.session import toolset  # noqa: E402


def _non_null(schema: dict) -> dict:
    options = [s for s in schema.get("anyOf", [schema]) if s.get("type") != "null"]
    return options[0]


def test_generated_methods_are_the_toolsets_with_their_schemas() -> None:
    envs = TRLEnvironments("C8", difficulty="adaptive", secret="test")
    for (env_id, d), name in sorted(envs._toolset_names.items()):
        if d % 5:
            continue
        from ecomrlve.difficulty import Difficulty
        from ecomrlve.envs import get_environment

        tools, _ = toolset(get_environment(env_id), Difficulty.at(d))
        instance = envs.factories[name]()
        public = sorted(n for n in vars(type(instance)) if not n.startswith("_"))
        assert public == sorted(tools)
        for tool in tools.values():
            ours = tool.schema()["function"]
            theirs = get_json_schema(getattr(instance, tool.name))["function"]
            assert theirs["name"] == ours["name"] and theirs["description"] == ours["description"]
            params = ours["parameters"]
            assert set(theirs["parameters"]["properties"]) == set(params["properties"])
            assert set(theirs["parameters"].get("required", [])) == set(params.get("required", []))
            for arg, prop in params["properties"].items():
                mine, got = _non_null(prop), theirs["parameters"]["properties"][arg]
                assert got.get("type") == mine.get("type"), (tool.name, arg)
                assert got.get("enum") == mine.get("enum"), (tool.name, arg)
                if mine.get("description") or prop.get("description"):
                    assert got["description"].startswith((prop.get("description") or mine["description"]).strip())


def test_one_message_is_one_turn_and_the_reward_reaches_the_curriculum() -> None:
    envs = TRLEnvironments("C1", difficulty="adaptive", secret="test")
    row = next(iter(make_dataset(envs, 1)))
    env = envs.factories[row.pop("environment")]()
    opening = env.reset(**row)
    assert opening and opening in env._session().public_state().messages[1]["content"]

    async def message(*calls: tuple[str, dict]) -> list[str]:  # what TRL does with one message's async calls
        return await asyncio.gather(*(getattr(env, name)(**args) for name, args in calls))

    results = asyncio.run(message(("user_get_visit_history", {}), ("catalog_search", {"query": "notebook"})))
    state = env._session().public_state()
    assert state.turn == 1  # both calls in one turn; at d=0 B_tool=1 refuses the second
    assert json.loads(results[1])["error"] == "tool_budget_exceeded"
    bad = asyncio.run(message(("cart_add", {"product_id": "P1", "colour": "red"})))
    assert json.loads(bad[0])["error"] == "invalid_output" and env._session().done
    assert env.get_reward() == -1.0
    window = envs.scheduler.window("CART")
    assert window.attempts == 1  # observed once, even if asked twice
    env.get_reward()
    assert envs.scheduler.window("CART").attempts == 1
    metrics = envs.stats.flush(envs.scheduler)
    assert metrics["ecom/episodes"] == 1 and metrics["ecom/tool_call_validity"] == pytest.approx(2 / 3)
    assert metrics["ecom/CART/window_high"] == 0


def test_an_unfinished_rollout_is_scored_as_it_stands() -> None:
    envs = TRLEnvironments("C1", difficulty="0", secret="test")
    row = make_dataset(envs, 1)[0]
    env = envs.factories[row.pop("environment")]()
    env.reset(**row)
    assert env.get_reward() < 0
    assert env._session().record().reward.termination == ROLLOUT_ENDED


def test_a_row_from_another_secret_is_refused() -> None:
    row = make_dataset(TRLEnvironments("C1", difficulty="0", secret="a"), 1)[0]
    envs = TRLEnvironments("C1", difficulty="0", secret="b")
    env = envs.factories[row.pop("environment")]()
    with pytest.raises(ValueError, match="another episode key"):
        env.reset(**row)


def test_a_row_made_under_other_overrides_is_refused_though_its_prompt_is_the_same() -> None:
    """The row's ``key`` names the secret, catalog and overrides: an override the system prompt does not show
    (CART's prompt says no date either) still makes another episode."""
    row = make_dataset(TRLEnvironments("C1", difficulty="0", secret="a", overrides={"p_variant": 1.0}), 1)[0]
    envs = TRLEnvironments("C1", difficulty="0", secret="a")
    assert row["prompt"] == make_dataset(envs, 1)[0]["prompt"]
    env = envs.factories[row.pop("environment")]()
    with pytest.raises(ValueError, match="another episode key"):
        env.reset(**row)


@pytest.mark.slow
def test_a_real_grpo_step_through_our_environments(tmp_path) -> None:
    """One optimizer step of GRPOTrainer (DAPO loss): tools reached the episodes, rewards came from get_reward,
    the scheduler saw every rollout, and our metrics were logged."""
    from trl import GRPOConfig
    from trl_tiny import teach, tiny_model, tiny_tokenizer

    from ecomrlve.integrations.trl import ecom_trainer_class

    envs = TRLEnvironments("C1", difficulty="adaptive", secret="test")
    dataset = make_dataset(envs, 1)  # the one task the model was taught to open with a tool call
    row = next(iter(make_dataset(TRLEnvironments("C1", difficulty="adaptive", secret="test"), 1)))
    probe = envs.factories[row["environment"]]()
    opening = probe.reset(**{k: v for k, v in row.items() if k != "environment"})
    tools = [getattr(probe, name) for name in sorted(vars(type(probe))) if not name.startswith("_")]
    prompt = [row["prompt"][0], {"role": "user", "content": opening}]
    tokenizer = tiny_tokenizer([tokenizer_text for tokenizer_text in (json.dumps([get_json_schema(t) for t in tools]),
                                                                      prompt[0]["content"], opening)])
    prompt_ids = tokenizer.apply_chat_template(prompt, tools=tools, add_generation_prompt=True, tokenize=True,
                                               return_dict=False)
    call = '<tool_call>\n{"name": "user_get_visit_history", "arguments": {}}\n</tool_call><|im_end|>'
    model = tiny_model(tokenizer)
    teach(model, list(prompt_ids), tokenizer.encode(call))

    calls: list[str] = []
    original = type(probe)._play_turn

    def spy(self, turn_calls):
        calls.extend(c.name for c in turn_calls)
        return original(self, turn_calls)

    rewards: list[float] = []
    get_reward = type(probe).get_reward

    def spy_reward(self):
        rewards.append(get_reward(self))
        return rewards[-1]

    cls = type(probe)
    cls._play_turn, cls.get_reward = spy, spy_reward
    try:
        needed = measure_lengths(envs, tokenizer).round_trip  # the least the start-up check lets through
        args = GRPOConfig(output_dir=str(tmp_path), max_steps=1, per_device_train_batch_size=2, num_generations=2,
                          max_completion_length=needed, max_tool_calling_iterations=1, loss_type="dapo", epsilon=0.2,
                          epsilon_high=0.28, beta=0.0, learning_rate=1e-5, temperature=0.2, use_cpu=True,
                          report_to="none", logging_steps=1, save_strategy="no", seed=0)
        trainer = ecom_trainer_class()(model=model, args=args, train_dataset=dataset, processing_class=tokenizer,
                                       environments=envs)
        trainer.train()
    finally:
        cls._play_turn, cls.get_reward = original, get_reward
    assert trainer.state.global_step == 1
    assert "user_get_visit_history" in calls  # tool calls reached our episodes
    assert len(rewards) == 2  # one get_reward per rollout (G = 2)
    logged = trainer.state.log_history[0]
    assert logged["rewards/CART/mean"] == pytest.approx(sum(rewards) / 2)
    window = envs.scheduler.window("CART")
    assert window.attempts == 2  # the scheduler saw both outcomes (d = 0 is the window's upper edge)
    assert logged["ecom/episodes"] == 2 and "ecom/CART/d0/r_total" in logged and "ecom/CART/window_high" in logged
    # every rollout TRL stopped at the length limit is counted as cut short (an untrained model rarely stops itself)
    assert logged["ecom/cut_short/completion_length"] == pytest.approx(2 * logged["completions/clipped_ratio"])
    assert logged["ecom/cut_short"] == sum(logged[f"ecom/cut_short/{reason}"] for reason in CUT_REASONS)
    # where the step's seconds went: rollouts (of which the environment) and learning
    assert 0 < logged["ecom/seconds/rollouts"] < logged["ecom/seconds/step"]
    assert logged["ecom/seconds/learning"] == pytest.approx(logged["ecom/seconds/step"] - logged["ecom/seconds/rollouts"])
    assert 0 < logged["ecom/seconds/environment"] < logged["ecom/seconds/rollouts"]
    assert logged["ecom/environment_share"] == pytest.approx(logged["ecom/seconds/environment"]
                                                             / logged["ecom/seconds/step"])
    # `ecomrlve train-plot` reads this very log: one step, its rollouts, reward and window
    from ecomrlve.integrations.learning_curve import training_steps

    (step,) = training_steps(trainer.state.log_history)
    assert (step.step, step.episodes, step.reward) == (1, 2, pytest.approx(sum(rewards) / 2))
    assert step.windows == {"CART": (window.low, window.high)}


def test_held_outcomes_reach_the_scheduler_only_when_applied_in_order() -> None:
    """What EcomGRPOTrainer does between processes: outcomes wait until every process's are applied."""
    envs = TRLEnvironments("C1", difficulty="adaptive", secret="test")
    envs.hold_outcomes()
    row = next(iter(make_dataset(envs, 1)))
    env = envs.factories[row.pop("environment")]()
    env.reset(**row)
    env.get_reward()
    assert envs.scheduler.window("CART").attempts == 0
    outcomes = envs.take_outcomes()
    envs.apply_outcomes(outcomes + outcomes)  # e.g. the same number from a second process
    assert envs.scheduler.window("CART").attempts == 2 and envs.take_outcomes() == []


def test_rollout_func_plays_on_a_real_server(tmp_path) -> None:
    """GRPOTrainer with ServerRollouts: every rollout is an episode on a loopback `ecomrlve serve`, whose
    scheduler sees each outcome; rewards reach the trainer through server_reward."""
    pytest.importorskip("openenv")
    import httpx
    from server_support import running_server
    from trl import GRPOConfig, GRPOTrainer
    from trl_tiny import tiny_model, tiny_tokenizer

    from ecomrlve.catalog.synthetic import default_catalog
    from ecomrlve.integrations.trl import ServerRollouts, server_reward
    from ecomrlve.server import ServerConfig

    with running_server(ServerConfig(env="C1", secret="rollout-test", max_sessions=4), default_catalog()) as url:
        rollouts = ServerRollouts(url, seed=0, max_new_tokens=6)
        tokenizer = tiny_tokenizer(["catalog_search cart_add answer customer notebook <tool_call> {} []"])
        args = GRPOConfig(output_dir=str(tmp_path), max_steps=1, per_device_train_batch_size=2, num_generations=2,
                          max_completion_length=64, loss_type="dapo", beta=0.0, use_cpu=True, report_to="none",
                          logging_steps=1, save_strategy="no", seed=0)
        from datasets import Dataset

        prompts = Dataset.from_dict({"prompt": [[{"role": "user", "content": "shop"}]] * 2})
        trainer = GRPOTrainer(model=tiny_model(tokenizer), reward_funcs=[server_reward], args=args,
                              train_dataset=prompts, processing_class=tokenizer, rollout_func=rollouts)
        trainer.train()
        windows = httpx.get(f"{url}/scheduler").json()["windows"]
    assert trainer.state.global_step == 1
    metrics = rollouts.stats.flush()
    assert metrics["ecom/episodes"] == 2  # one prompt x G = 2, both played to the end on the server
    assert metrics["ecom/turns_per_episode"] >= 1
    assert windows["CART"]["attempts"] == 2  # the server's scheduler saw both outcomes
    assert trainer.state.log_history[0]["rewards/server_reward/mean"] == pytest.approx(metrics["ecom/r_total"])


@pytest.mark.parametrize(("section", "config", "fragment"), [
    ("grpo", {"grpo": {"max_stepz": 2}}, "--config grpo: "),
    ("scheduler", {"scheduler": {"tau_ac": 0.5}, "environment": {"difficulty": "adaptive"}}, "--config scheduler: "),
    ("environment", {"environment": {"sever": "local"}}, "--config environment: "),
    ("threads", {"environment": {"server": "local", "rollout_threads": 0}}, "rollout_threads must be a positive"),
])
def test_a_misspelt_config_key_is_one_line(tmp_path, section: str, config: dict, fragment: str) -> None:
    """`ecomrlve train --config`: a key GRPOConfig or the scheduler does not take names its section, no traceback."""
    from ecomrlve.errors import UserInputError
    from ecomrlve.integrations.train import train

    config = {"model": {"name": "unused"}, **config}
    config["grpo"] = {"output_dir": str(tmp_path / "out"), "report_to": "none", "use_cpu": True, "bf16": False,
                      **config.get("grpo", {})}
    with pytest.raises(UserInputError, match=fragment) as refused:
        train(config)
    assert {"grpo": "max_stepz", "scheduler": "tau_ac", "environment": "sever", "threads": "0"}[section] in str(refused.value)
    assert "\n" not in str(refused.value)


@pytest.fixture(scope="module")
def tiny() -> tuple:
    """The C1 d=0 environments and a tiny tokenizer trained on one episode's prompt and tool schemas."""
    from trl_tiny import tiny_tokenizer

    envs = TRLEnvironments("C1", difficulty="0", secret="lengths")
    row = make_dataset(envs, 1)[0]
    probe = envs.factories[row["environment"]]()
    tools = [getattr(probe, name) for name in sorted(vars(type(probe))) if not name.startswith("_")]
    return envs, tiny_tokenizer([json.dumps([get_json_schema(t) for t in tools]), row["prompt"][0]["content"]])


def test_a_completion_length_that_cannot_hold_one_tool_round_trip_is_refused_in_one_line(tiny) -> None:
    """TRL would drop the search result and end the rollout silently: the trainer refuses at start-up, before it
    builds anything, and names the smallest value that works (which it then accepts)."""
    from trl import GRPOConfig
    from trl_tiny import tiny_model

    from ecomrlve.errors import UserInputError
    from ecomrlve.integrations.trl import check_lengths, ecom_trainer_class

    envs, tokenizer = tiny
    lengths = measure_lengths(envs, tokenizer)
    assert lengths.episode >= lengths.round_trip > 0 and lengths.prompt > 0 and lengths.where == "CART d=0"
    args = GRPOConfig(output_dir="unused", max_completion_length=lengths.round_trip - 1, use_cpu=True,
                      report_to="none", num_generations=2, per_device_train_batch_size=2)
    with pytest.raises(UserInputError) as refused:
        ecom_trainer_class()(model=tiny_model(tokenizer), args=args, train_dataset=make_dataset(envs, 1),
                             processing_class=tokenizer, environments=envs)
    message = str(refused.value)
    assert "\n" not in message and f"max_completion_length={lengths.round_trip - 1}" in message
    assert f"at least {lengths.round_trip}" in message
    assert check_lengths(envs, tokenizer, max_completion_length=lengths.round_trip, max_model_length=None) == lengths
    with pytest.raises(UserInputError, match=f"needs at least {lengths.prompt + lengths.round_trip}"):
        check_lengths(envs, tokenizer, max_completion_length=None, max_model_length=lengths.prompt + 10)


def test_a_rollout_trl_cut_short_is_counted_and_not_silently_scored() -> None:
    """What TRL kept of a rollout decides: a dropped tool result, a completion stopped at the length limit, tool
    calls left unplayed; a cut episode ends as cut_short and shows in the metrics by reason."""
    envs = TRLEnvironments("C1", difficulty="0", secret="test")
    row = make_dataset(envs, 1)[0]
    env = envs.factories[row.pop("environment")]()
    call = {"role": "assistant", "content": "", "tool_calls": [{"type": "function", "function": {
        "name": "catalog_search", "arguments": {"query": "notebook"}}}]}
    env.reset(**row)
    asyncio.run(env.catalog_search(query="notebook"))  # played, handed to TRL ...
    assert env._note_completion([call], ended=True) == "tool_result_dropped"  # ... and not kept
    assert env.get_reward() < 0 and env._session().record().reward.termination == CUT_SHORT
    env.reset(**row)
    result = asyncio.run(env.catalog_search(query="notebook"))
    kept = [call, {"role": "tool", "name": "catalog_search", "content": result}]
    assert env._note_completion(kept + [{"role": "assistant", "content": "The note"}], ended=False) == "completion_length"
    env.get_reward()
    env.reset(**row)
    result = asyncio.run(env.catalog_search(query="notebook"))
    assert env._note_completion(kept + [call], ended=True) == "tool_iterations"
    env.get_reward()
    env.reset(**row)
    asyncio.run(env.answer(done=True))  # the episode ended: what TRL did afterwards cuts nothing short
    assert env._note_completion([call], ended=False) is None and env.get_reward() < 0
    env.reset(**row)
    assert env._note_completion([{"role": "assistant", "content": "Hello"}], ended=True) is None
    assert env.get_reward() < 0 and env._session().record().reward.termination == ROLLOUT_ENDED
    metrics = envs.stats.flush()
    assert metrics["ecom/episodes"] == 5 and metrics["ecom/cut_short"] == 3
    assert all(metrics[f"ecom/cut_short/{reason}"] == 1 for reason in CUT_REASONS)


def test_train_speaks_from_the_first_second_and_refuses_a_short_completion_in_one_line(tiny, tmp_path) -> None:
    """`ecomrlve train`: its own progress lines (imports, environments, model) come before TRL's, and a
    max_completion_length that cannot hold one tool round trip stops it with the smallest value that works."""
    from trl_tiny import tiny_model

    from ecomrlve.errors import UserInputError
    from ecomrlve.integrations.train import progress_line, train

    envs, tokenizer = tiny
    tiny_model(tokenizer).save_pretrained(tmp_path / "model")
    tokenizer.save_pretrained(tmp_path / "model")
    from transformers import AutoTokenizer

    needed = measure_lengths(envs, AutoTokenizer.from_pretrained(tmp_path / "model")).round_trip  # as train loads it
    config = {"model": {"name": str(tmp_path / "model")},
              "environment": {"collection": "C1", "difficulty": "0", "secret": "lengths", "prompts": 1},
              "grpo": {"output_dir": str(tmp_path / "out"), "max_completion_length": 16, "use_cpu": True,
                       "report_to": "none", "num_generations": 2, "per_device_train_batch_size": 2}}
    lines: list[str] = []
    with pytest.raises(UserInputError, match=f"max_completion_length=16 .* at least {needed} ") as refused:
        train(config, say=lines.append)
    assert "\n" not in str(refused.value)
    stages = ["importing TRL", "building the environments: C1 at difficulty 0", "loading the model", "measuring"]
    assert [next(i for i, line in enumerate(lines) if stage in line) for stage in stages] == [0, 1, 2, 3]
    line = progress_line({"step": 3, "ecom/episodes": 4, "ecom/r_total": 0.25, "ecom/success": 0.5,
                          "ecom/cut_short": 1, "ecom/CART/window_low": 0, "ecom/CART/window_high": 2}, 30)
    assert line == "step 3/30: reward +0.250, success 0.50 (4 rollouts, 1 cut short by TRL), window CART 0-2"
    timed = progress_line({"step": 1, "ecom/episodes": 2, "ecom/r_total": -1.0, "ecom/success": 0.0,
                           "ecom/seconds/step": 20.0, "ecom/seconds/rollouts": 15.0, "ecom/seconds/learning": 5.0,
                           "ecom/environment_share": 0.001}, 30)
    assert timed == ("step 1/30: reward -1.000, success 0.00 (2 rollouts); 20.0 s: rollouts 15.0 (environment 0.10%), "
                     "learning 5.0")


def test_train_on_a_local_server_plays_whole_episodes_in_the_server_format(tiny, tmp_path) -> None:
    """`environment.server: local`: `ecomrlve train` serves the collection on loopback and plays every rollout
    there (the format `ecomrlve eval` and an SFT export see); the log carries the rollouts and the server's
    curriculum, whose checkpoint lands in the output directory, and `train-plot` reads the saved log."""
    pytest.importorskip("openenv")
    from trl_tiny import tiny_model

    from ecomrlve.integrations.learning_curve import training_steps
    from ecomrlve.integrations.train import train

    _, tokenizer = tiny
    tiny_model(tokenizer).save_pretrained(tmp_path / "model")
    tokenizer.save_pretrained(tmp_path / "model")
    config = {"model": {"name": str(tmp_path / "model")},
              "environment": {"collection": "C1", "difficulty": "adaptive", "secret": "server-train", "prompts": 2,
                              "server": "local", "max_new_tokens": 6, "rollout_threads": 1},
              "grpo": {"output_dir": str(tmp_path / "out"), "max_steps": 1, "per_device_train_batch_size": 2,
                       "num_generations": 2, "max_completion_length": 48, "loss_type": "dapo", "beta": 0.0,
                       "use_cpu": True, "report_to": "none", "logging_steps": 1, "save_strategy": "no", "seed": 0}}
    lines: list[str] = []
    result = train(config, say=lines.append)
    assert result["steps"] == 1
    logged = next(entry for entry in result["log"] if "ecom/episodes" in entry)
    assert logged["ecom/episodes"] == 2 and logged["ecom/CART/window_high"] == 0
    assert logged["rewards/server_reward/mean"] == pytest.approx(logged["ecom/r_total"])
    assert 0 < logged["ecom/seconds/rollouts"] < logged["ecom/seconds/step"]
    assert json.loads((tmp_path / "out" / "scheduler.json").read_text())["windows"]["CART"]["attempts"] == 2
    assert any("rollouts on http://127.0.0.1:" in line for line in lines)
    assert any("step 1/1: reward" in line for line in lines)  # the progress line, as in-process
    saved = json.loads((tmp_path / "out" / "final" / "trainer_state.json").read_text())["log_history"]
    (step,) = training_steps(saved)
    assert (step.episodes, step.reward) == (2, pytest.approx(logged["ecom/r_total"]))


def test_torch_threads_holds_the_count_inside_the_block_and_restores_it() -> None:
    """`environment.rollout_threads`: generation runs on that many torch threads, learning on the count set before,
    also when a rollout fails; None leaves the count alone."""
    import torch

    from ecomrlve.integrations.trl import torch_threads

    before = torch.get_num_threads()
    with torch_threads(1):
        assert torch.get_num_threads() == 1
    assert torch.get_num_threads() == before
    with pytest.raises(RuntimeError), torch_threads(1):
        raise RuntimeError("a rollout failed")
    assert torch.get_num_threads() == before
    with torch_threads(None):
        assert torch.get_num_threads() == before


def test_rollouts_on_a_server_need_its_adaptive_curriculum(tmp_path) -> None:
    from ecomrlve.errors import UserInputError
    from ecomrlve.integrations.train import train

    config = {"model": {"name": "unused"}, "environment": {"difficulty": "0", "server": "local"},
              "grpo": {"output_dir": str(tmp_path / "out"), "use_cpu": True, "report_to": "none"}}
    with pytest.raises(UserInputError, match="set environment.difficulty to adaptive"):
        train(config)


@pytest.mark.parametrize("name", sorted(p.name for p in (Path(__file__).parents[1] / "configs").glob("*.yaml")))
def test_every_shipped_config_has_only_keys_train_takes(name: str) -> None:
    """A misspelt key in a shipped config would be refused at start-up, or (environment) silently ignored."""
    from ecomrlve.difficulty.scheduler import SchedulerConfig
    from ecomrlve.integrations.train import ENVIRONMENT_KEYS, load_config

    config = load_config(Path(__file__).parents[1] / "configs" / name)
    assert set(config.get("environment") or {}) <= set(ENVIRONMENT_KEYS)
    SchedulerConfig(**(config.get("scheduler") or {}))
    import dataclasses

    from trl import GRPOConfig

    assert set(config["grpo"]) <= {f.name for f in dataclasses.fields(GRPOConfig)}


def test_turn_cache_reads_only_the_new_tokens_and_scores_as_a_full_read() -> None:
    """ServerRollouts' cache: the G rollouts read their common opening once, and each later turn reads only what
    the environment added; the next-token scores equal those of reading the whole conversation again."""
    from trl_tiny import tiny_model, tiny_tokenizer

    from ecomrlve.integrations.trl import TurnCache

    tokenizer = tiny_tokenizer(["catalog_search cart_add answer customer notebook <tool_call> {} [] the blue mug"])
    model = tiny_model(tokenizer, seed=3).eval()
    for parameter in model.parameters():  # an untrained tiny model scores nearly evenly: spread its logits
        torch.nn.init.normal_(parameter, std=0.5)
    read: list[int] = []
    hook = model.model.register_forward_pre_hook(lambda _, args, kwargs: read.append(kwargs["input_ids"].shape[1]),
                                                 with_kwargs=True)
    prompt = tokenizer.encode("the blue mug catalog_search customer notebook answer cart_add") * 4
    greedy = {"max_new_tokens": 6, "do_sample": False, "pad_token_id": tokenizer.pad_token_id,
              "output_scores": True, "return_dict_in_generate": True}

    def full_read(context: list[int]) -> tuple[list[int], list[torch.Tensor]]:
        ids = torch.tensor([context])
        with torch.no_grad():
            out = model.generate(ids, attention_mask=torch.ones_like(ids), **greedy)
        return out.sequences[0, len(context):].tolist(), list(out.scores)

    shared = TurnCache.of_prompt(model, prompt)
    assert read == [len(prompt) - 1]
    environment = tokenizer.encode("customer notebook the blue mug {} []")
    for _rollout in range(2):  # two rollouts from one read of the opening
        cache, context = shared.copy(), list(prompt)
        for _ in range(3):  # three turns, the environment's tokens between them
            read.clear()
            expected, expected_scores = full_read(context)
            read.clear()
            scores: list[torch.Tensor] = []
            generated = cache.generate(model, context, logits_processor=[_Keep(scores)],
                                       **{k: v for k, v in greedy.items() if k not in ("output_scores",
                                                                                         "return_dict_in_generate")})
            assert generated == expected
            assert all(torch.allclose(a, b, atol=1e-4) for a, b in zip(scores, expected_scores))
            assert read[0] <= len(environment) + 1  # the first forward pass reads the new tokens only
            context += generated + environment
    hook.remove()


class _Keep:
    """A logits processor that keeps each step's scores (what ``output_scores`` returns)."""

    def __init__(self, kept: list) -> None:
        self.kept = kept

    def __call__(self, input_ids: torch.Tensor, scores: torch.Tensor) -> torch.Tensor:
        self.kept.append(scores.clone())
        return scores
