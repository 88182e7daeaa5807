"""`ecomrlve train-plot`: a GRPO run's learning curve from the trainer state TRL saved."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ecomrlve.cli import app
from ecomrlve.integrations.learning_curve import newest_trainer_state, trailing_mean, training_steps

pytest.importorskip("matplotlib")


def _step(step: int, reward: float, success: float, episodes: int = 4, high: int = 0) -> dict[str, float]:
    """One logged step as EcomGRPOTrainer merges it into TRL's log (a subset of its keys)."""
    return {"step": step, "loss": 0.1, "ecom/episodes": episodes, "ecom/r_total": reward, "ecom/success": success,
            "ecom/CART/window_low": 0, "ecom/CART/window_high": high, "ecom/seconds/step": 200.0 + step}


def _write_state(directory: Path, log_history: list[dict[str, float]]) -> None:
    directory.mkdir(parents=True)
    (directory / "trainer_state.json").write_text(json.dumps({"global_step": len(log_history),
                                                              "log_history": log_history}))


def test_training_steps_keep_the_environment_steps_in_order_and_the_last_of_a_resumed_step() -> None:
    history = [_step(2, -0.5, 0.25), _step(1, -0.9, 0.0, high=1),
               {"step": 2, "train_runtime": 400.0, "train_loss": 0.2},  # TRL's end-of-training entry
               _step(2, -0.25, 0.5, episodes=3)]  # a resumed run logs step 2 again: the later one counts
    steps = training_steps(history)
    assert [s.step for s in steps] == [1, 2]
    assert (steps[0].reward, steps[0].windows) == (-0.9, {"CART": (0, 1)})
    assert (steps[1].reward, steps[1].success, steps[1].episodes) == (-0.25, 0.5, 3)


def test_trailing_mean_weights_each_step_by_its_rollouts() -> None:
    means = trailing_mean([0.0, 1.0, 1.0], [3, 1, 4], span=2)
    assert means[0] == 0.0
    assert means[1] == pytest.approx(1 / 4)
    assert means[2] == pytest.approx(1.0)


def test_newest_trainer_state_prefers_final_then_the_latest_checkpoint(tmp_path: Path) -> None:
    _write_state(tmp_path / "checkpoint-5", [_step(s, -0.9, 0.0) for s in range(1, 6)])
    _write_state(tmp_path / "checkpoint-10", [_step(s, -0.9, 0.0) for s in range(1, 11)])
    (tmp_path / "checkpoint-x").mkdir()
    assert newest_trainer_state(tmp_path) == tmp_path / "checkpoint-10" / "trainer_state.json"
    _write_state(tmp_path / "final", [_step(s, -0.9, 0.0) for s in range(1, 13)])
    assert newest_trainer_state(tmp_path) == tmp_path / "final" / "trainer_state.json"


def test_train_plot_writes_the_png_and_says_first_and_last_steps(tmp_path: Path) -> None:
    run = tmp_path / "run"
    _write_state(run / "checkpoint-6", [_step(s, -1.0 + 0.2 * s, s / 10, high=s // 3) for s in range(1, 7)])
    out = tmp_path / "docs" / "curve.png"
    result = CliRunner().invoke(app, ["train-plot", str(run), "--out", str(out), "--span", "3"])
    assert result.exit_code == 0, result.output
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # first three steps: rewards -0.8, -0.6, -0.4 -> -0.6; last three: -0.2, 0.0, 0.2 -> 0.0
    assert "6 steps" in result.output and "-0.600 (first 3) -> +0.000 (last 3)" in result.output
    assert "success 0.20 -> 0.50" in result.output


@pytest.mark.parametrize("make", ["nothing", "no_ecom_steps", "broken_json"])
def test_train_plot_refuses_a_directory_without_a_usable_state_in_one_line(tmp_path: Path, make: str) -> None:
    if make == "no_ecom_steps":
        _write_state(tmp_path / "checkpoint-1", [{"step": 1, "loss": 0.3}])
    elif make == "broken_json":
        (tmp_path / "final").mkdir()
        (tmp_path / "final" / "trainer_state.json").write_text("{not json")
    result = CliRunner().invoke(app, ["train-plot", str(tmp_path), "--out", str(tmp_path / "c.png")])
    assert result.exit_code == 2
    assert "Traceback" not in result.output and len(result.output.strip().splitlines()) == 1
    assert not (tmp_path / "c.png").exists()


def test_train_plot_without_matplotlib_says_so_in_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import ecomrlve.evaluation.report as report

    def missing() -> None:
        raise report.ReportDependencyError("the evaluation report draws plots with matplotlib: pip install x")

    monkeypatch.setattr(report, "require_report_dependencies", missing)
    _write_state(tmp_path / "checkpoint-1", [_step(1, -0.9, 0.0)])
    result = CliRunner().invoke(app, ["train-plot", str(tmp_path), "--out", str(tmp_path / "c.png")])
    assert result.exit_code == 2 and "matplotlib" in result.output and "Traceback" not in result.output
