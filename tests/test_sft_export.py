"""export-sft: a datasets dataset split by seed, every row replays to its reward, and SFTTrainer takes it."""

from __future__ import annotations

import json

import pytest

datasets = pytest.importorskip("datasets")
pytest.importorskip("trl")

from ecomrlve.episode import EcomEnv  # noqa: E402
from ecomrlve.integrations.sft import export_sft, replay_row  # noqa: E402


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    out = tmp_path_factory.mktemp("sft") / "data"
    counts = export_sft(EcomEnv("C2", secret="sft"), (0, 2), 3, out, agents=("oracle", "heuristic"),
                        eval_fraction=0.3)
    return out, counts


def test_the_export_loads_split_by_seed_and_replays_to_its_reward(exported) -> None:
    out, counts = exported
    data = datasets.load_from_disk(str(out))
    assert set(data) == {"train", "test"} and len(data["train"]) == counts["train"] and counts["train"] > 0
    keys = {split: {(r["env_id"], r["difficulty"], r["seed"]) for r in data[split]} for split in data}
    assert not keys["train"] & keys["test"]
    assert {r["agent"] for r in data["train"]} <= {"oracle", "heuristic"}
    env = EcomEnv("C2", secret="sft")
    for split in data:
        for row in data[split]:
            record = replay_row(env, row)
            assert record.reward.is_correct and record.reward.r_total == pytest.approx(row["r_total"])
            assert [t["function"]["name"] for t in json.loads(row["tools"])] == record.tools
    call = next(m for m in data["train"][0]["messages"] if m["tool_calls"])["tool_calls"][0]
    assert isinstance(call["function"]["arguments"], dict)  # JSON objects, as chat templates render them


def test_sft_trainer_takes_one_step_on_the_export(exported, tmp_path) -> None:
    from trl import SFTConfig, SFTTrainer
    from trl_tiny import tiny_model, tiny_tokenizer

    out, _ = exported
    train = datasets.load_from_disk(str(out))["train"].select(range(2))
    tokenizer = tiny_tokenizer([json.dumps(row["messages"]) + row["tools"] for row in train])
    args = SFTConfig(output_dir=str(tmp_path), max_steps=1, per_device_train_batch_size=1, use_cpu=True,
                     report_to="none", save_strategy="no", max_length=4096, learning_rate=1e-3)
    trainer = SFTTrainer(model=tiny_model(tokenizer), args=args, train_dataset=train, processing_class=tokenizer)
    trainer.train()
    assert trainer.state.global_step == 1 and trainer.state.log_history[-1]["train_loss"] > 0


@pytest.mark.parametrize(("args", "fragment"), [
    (["train", "--config", "no-such-config.yaml"], "no-such-config.yaml"),
    (["export-sft", "--out", "x", "--difficulty", "adaptive"], "export-sft needs N or LOW-HIGH"),
    (["export-sft", "--out", "x", "--collection", "NOPE"], "unknown environment or collection 'NOPE'"),
])
def test_training_commands_fail_in_one_line(args, fragment, tmp_path, monkeypatch) -> None:
    from typer.testing import CliRunner

    from ecomrlve.cli import app

    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2 and len(result.stderr.splitlines()) == 1 and fragment in result.stderr, result.stderr


def test_a_config_without_its_sections_fails_in_one_line(tmp_path) -> None:
    from typer.testing import CliRunner

    from ecomrlve.cli import app

    config = tmp_path / "bad.yaml"
    config.write_text("grpo: {}\nmodels: {}\n")
    result = CliRunner().invoke(app, ["train", "--config", str(config)])
    assert result.exit_code == 2 and "expected the sections model, grpo" in result.stderr


def test_resume_without_a_checkpoint_fails_in_one_line(tmp_path) -> None:
    from typer.testing import CliRunner

    from ecomrlve.cli import app

    config = tmp_path / "c.yaml"
    config.write_text(f"model: {{name: x}}\ngrpo: {{output_dir: '{tmp_path / 'out'}', use_cpu: true}}\n")
    result = CliRunner().invoke(app, ["train", "--config", str(config), "--resume"])
    assert result.exit_code == 2 and "no checkpoint" in result.stderr, result.stderr


@pytest.mark.parametrize(("shopper", "flags", "fragment"), [
    ("shopper: {model: m, base_url: 'http://127.0.0.1:{port}/v1'}\n", [], "--user-base-url"),
    ("", ["--user-model", "m", "--user-base-url", "http://127.0.0.1:{port}/v1"], "--user-base-url"),
    ("shopper: {voice: loud}\n", [], "shopper:"),
])
def test_the_shopper_of_a_training_run_is_checked_before_the_model_loads(shopper, flags, fragment, tmp_path) -> None:
    """The config's shopper section and the --user-* flags build the run's shopper; a shopper endpoint that is
    down (or an unknown setting) is one line before any model is loaded."""
    import socket

    from typer.testing import CliRunner

    from ecomrlve.cli import app

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # closed when the block ends: nothing listens there
    config = tmp_path / "c.yaml"
    config.write_text("model: {name: never-loaded}\n"
                      f"grpo: {{output_dir: '{tmp_path / 'out'}', use_cpu: true}}\n"
                      "environment: {collection: CART, difficulty: '0', prompts: 2}\n"
                      + shopper.replace("{port}", str(port)))
    args = ["train", "--config", str(config), *(flag.replace("{port}", str(port)) for flag in flags)]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2 and len(result.stderr.splitlines()) == 1 and fragment in result.stderr, result.stderr


def test_a_split_without_episodes_is_left_out(tmp_path) -> None:
    out = tmp_path / "data"
    counts = export_sft(EcomEnv("C1", secret="sft"), (0,), 2, out, eval_fraction=0.0)
    data = datasets.load_from_disk(str(out))
    assert counts["test"] == 0 and set(data) == {"train"} and len(data["train"]) == counts["train"] == 2


def test_export_sft_and_train_show_progress_from_the_start(tmp_path, monkeypatch) -> None:
    """export-sft: a line per start-up stage, then a bar that counts every episode; train: a line per stage
    (environments, model, ...) before anything slow ends (here the model load is made to fail)."""
    from typer.testing import CliRunner

    from ecomrlve.cli import app
    from ecomrlve.errors import UserInputError
    from ecomrlve.integrations import train

    result = CliRunner().invoke(app, ["export-sft", "--out", str(tmp_path / "data"), "--collection", "CART",
                                      "--difficulty", "0-1", "--episodes", "2", "--heuristic"])
    assert result.exit_code == 0, result.output
    assert "loading the catalog and the environments: done in" in result.output
    assert "oracle+heuristic episodes" in result.output and "8/8" in result.output

    def no_model(spec):
        raise UserInputError("model not loaded in this test")

    monkeypatch.setattr(train, "load_model", no_model)
    config = tmp_path / "c.yaml"
    config.write_text(f"model: {{name: tiny}}\ngrpo: {{output_dir: '{tmp_path / 'out'}', use_cpu: true}}\n"
                      "environment: {collection: CART, difficulty: '0', prompts: 2}\n")
    result = CliRunner().invoke(app, ["train", "--config", str(config)])
    assert result.exit_code == 2 and "model not loaded in this test" in result.stderr
    stages = [line for line in result.stdout.splitlines() if line.startswith("[")]  # "[  0.0s] what it does now"
    assert [line.split("] ", 1)[1] for line in stages][:3] == [
        "importing TRL and transformers", "building the environments: CART at difficulty 0", "loading the model tiny"]
