"""Tests for the RLVE adaptive difficulty scheduler (exact rule, invariants, checkpoints, threads)."""

from __future__ import annotations

import json
import os
import pickle
import random
import signal
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ecomrlve.difficulty import MAX_DIFFICULTY
from ecomrlve.difficulty import scheduler as scheduler_mod
from ecomrlve.difficulty.scheduler import AdaptiveScheduler, DifficultyWindow, SchedulerConfig
from ecomrlve.errors import UserInputError

ENV = "search"


def _promote_once(s: AdaptiveScheduler, env: str = ENV) -> None:
    """Drive one all-correct decision window at the current upper edge."""
    for _ in range(s.config.tau_num):
        s.update(env, s.window(env).high, True)


# --------------------------------------------------------------------------- config & construction


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"tau_acc": 0.0}, "tau_acc"),
        ({"tau_acc": 1.01}, "tau_acc"),
        ({"tau_acc": float("nan")}, "tau_acc"),
        ({"tau_acc": True}, "tau_acc"),
        ({"tau_acc": "0.9"}, "tau_acc"),
        ({"tau_num": 0}, "tau_num"),
        ({"tau_num": 2.0}, "tau_num"),
        ({"tau_num": True}, "tau_num"),
        ({"d_delta": -1}, "d_delta"),
        ({"d_delta": 1.5}, "d_delta"),
    ],
)
def test_config_rejects_bad_values_naming_the_field(kwargs: dict, field: str) -> None:
    with pytest.raises(ValueError, match=field):
        SchedulerConfig(**kwargs)


def test_config_defaults_and_boundaries() -> None:
    assert SchedulerConfig() == SchedulerConfig(tau_acc=0.9, tau_num=32, d_delta=4)
    edge = SchedulerConfig(tau_acc=1.0, tau_num=1, d_delta=0)  # inclusive bounds are accepted
    assert (edge.tau_acc, edge.tau_num, edge.d_delta) == (1.0, 1, 0)


@pytest.mark.parametrize("env_ids", [[], ["a", "b", "a"]])
def test_env_ids_must_be_non_empty_and_unique(env_ids: list[str]) -> None:
    with pytest.raises(ValueError, match="env_ids"):
        AdaptiveScheduler(env_ids)


def test_initial_state_is_all_zero() -> None:
    s = AdaptiveScheduler(["a", "b"])
    assert s.env_ids == ("a", "b")
    assert s.windows() == {e: DifficultyWindow(0, 0, 0, 0) for e in ("a", "b")}
    assert {s.sample("a", random.Random(i)) for i in range(20)} == {0}


def test_unknown_env_id_suggests_the_closest_match() -> None:
    s = AdaptiveScheduler([ENV, "cart"])
    for call in (lambda: s.sample("serch", random.Random(0)),
                 lambda: s.update("serch", 0, True), lambda: s.window("serch")):
        with pytest.raises(KeyError, match="did you mean 'search'"):
            call()


# --------------------------------------------------------------------------- exact promotion rule


def test_accuracy_exactly_at_threshold_promotes_on_the_last_episode() -> None:
    s = AdaptiveScheduler([ENV], SchedulerConfig(tau_acc=0.9, tau_num=10, d_delta=4))
    results = [s.update(ENV, 0, i != 0) for i in range(10)]  # 9/10 == tau_acc
    assert results == [False] * 9 + [True]
    assert s.window(ENV) == DifficultyWindow(low=0, high=1, correct=0, attempts=0)


def test_one_below_threshold_does_not_promote_and_resets() -> None:
    s = AdaptiveScheduler([ENV], SchedulerConfig(tau_acc=0.9, tau_num=10, d_delta=4))
    results = [s.update(ENV, 0, i >= 2) for i in range(10)]  # 8/10 < tau_acc
    assert not any(results)
    assert s.window(ENV) == DifficultyWindow(low=0, high=0, correct=0, attempts=0)
    assert s.window(ENV).attempts == 0  # counters reset after the failed decision, too


def test_counters_accumulate_until_the_decision() -> None:
    s = AdaptiveScheduler([ENV], SchedulerConfig(tau_acc=0.75, tau_num=4, d_delta=4))
    s.update(ENV, 0, True)
    s.update(ENV, 0, False)
    s.update(ENV, 0, True)
    assert s.window(ENV) == DifficultyWindow(0, 0, correct=2, attempts=3)
    assert s.update(ENV, 0, True)  # 3/4 == 0.75
    assert s.window(ENV) == DifficultyWindow(0, 1, 0, 0)


def test_episodes_off_the_upper_edge_are_ignored() -> None:
    s = AdaptiveScheduler([ENV], SchedulerConfig(tau_acc=1.0, tau_num=2, d_delta=4))
    _promote_once(s)
    s.update(ENV, 1, True)
    before = s.window(ENV)
    assert before == DifficultyWindow(0, 1, 1, 1)
    for d in (0, 2, 7, -1):  # below the edge, above it, nonsense
        assert s.update(ENV, d, True) is False
    assert s.window(ENV) == before


def test_low_follows_high_minus_d_delta() -> None:
    s = AdaptiveScheduler([ENV], SchedulerConfig(tau_acc=1.0, tau_num=1, d_delta=2))
    seen = []
    for _ in range(5):
        assert s.update(ENV, s.window(ENV).high, True)
        w = s.window(ENV)
        seen.append((w.low, w.high))
    assert seen == [(0, 1), (0, 2), (1, 3), (2, 4), (3, 5)]


def test_zero_width_window_pins_low_to_high() -> None:
    s = AdaptiveScheduler([ENV], SchedulerConfig(tau_acc=1.0, tau_num=1, d_delta=0))
    for h in range(1, 4):
        _promote_once(s)
        assert s.window(ENV) == DifficultyWindow(h, h, 0, 0)
        assert s.sample(ENV, random.Random(h)) == h


def test_sample_covers_the_window_uniformly() -> None:
    s = AdaptiveScheduler([ENV], SchedulerConfig(tau_acc=1.0, tau_num=1, d_delta=3))
    for _ in range(5):
        _promote_once(s)
    assert (s.window(ENV).low, s.window(ENV).high) == (2, 5)
    rng = random.Random(1234)
    draws = [s.sample(ENV, rng) for _ in range(4000)]
    assert set(draws) == {2, 3, 4, 5}
    assert all(800 < draws.count(d) < 1200 for d in range(2, 6))


def test_window_never_passes_the_difficulty_ceiling() -> None:
    """A perfect policy promotes up to d=15 and stays there (RETURN once reached 37)."""
    s = AdaptiveScheduler([ENV], SchedulerConfig(tau_acc=0.5, tau_num=2, d_delta=4))
    for _ in range(200):
        s.update(ENV, s.window(ENV).high, True)
    assert (s.window(ENV).low, s.window(ENV).high) == (MAX_DIFFICULTY - 4, MAX_DIFFICULTY)
    state = s.state_dict()
    state["windows"][ENV] = {"low": 14, "high": 16, "correct": 0, "attempts": 0}
    with pytest.raises(ValueError, match="high <= 15"):
        s.load_state_dict(state)


# --------------------------------------------------------------------------- property tests

configs = st.builds(
    SchedulerConfig,
    tau_acc=st.one_of(st.sampled_from([0.5, 0.75, 0.9, 1.0]), st.floats(0.01, 1.0)),
    tau_num=st.integers(1, 6),
    d_delta=st.integers(0, 4),
)
# None = "play at the current upper edge"; an int = offset from it (0 is also the edge).
ops = st.lists(st.tuples(st.one_of(st.none(), st.integers(-3, 3)), st.booleans()), max_size=150)


def _apply(s: AdaptiveScheduler, op: tuple[int | None, bool]) -> bool:
    offset, ok = op
    return s.update(ENV, s.window(ENV).high + (offset or 0), ok)


@settings(max_examples=150, deadline=None)
@given(config=configs, seq=ops, seed=st.integers(0, 2**32))
def test_invariants_and_reference_model(config: SchedulerConfig, seq: list, seed: int) -> None:
    s = AdaptiveScheduler([ENV], config)
    rng = random.Random(seed)
    low = high = correct = attempts = 0  # independent reference model of the spec
    for offset, ok in seq:
        d = high + (offset or 0)
        promoted = s.update(ENV, d, ok)
        expect_promote = False
        if d == high:
            correct, attempts = correct + ok, attempts + 1
            if attempts >= config.tau_num:
                expect_promote = correct / attempts >= config.tau_acc and high < MAX_DIFFICULTY
                assert attempts == config.tau_num
                if expect_promote:
                    high += 1
                    low = max(low, high - config.d_delta)
                correct = attempts = 0
        assert promoted == expect_promote  # promotion only when window accuracy >= tau_acc
        w = s.window(ENV)
        assert w == DifficultyWindow(low, high, correct, attempts)
        assert 0 <= w.low <= w.high <= MAX_DIFFICULTY and w.high - w.low <= config.d_delta
        assert 0 <= w.correct <= w.attempts < config.tau_num
        assert w.low <= s.sample(ENV, rng) <= w.high


@settings(max_examples=100, deadline=None)
@given(config=configs, seq=ops)
def test_high_and_low_never_decrease(config: SchedulerConfig, seq: list) -> None:
    s = AdaptiveScheduler([ENV], config)
    last = s.window(ENV)
    for op in seq:
        promoted = _apply(s, op)
        w = s.window(ENV)
        assert w.high == last.high + promoted and w.low >= last.low
        last = w


# --------------------------------------------------------------------------- checkpoint / resume


@settings(max_examples=40, deadline=None)
@given(config=configs, before=ops, after=ops, seed=st.integers(0, 2**32))
def test_checkpoint_round_trip_continues_identically(
    config: SchedulerConfig, before: list, after: list, seed: int
) -> None:
    s = AdaptiveScheduler([ENV, "cart"], config)
    for op in before:
        _apply(s, op)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "sched.json"
        s.save(path)
        assert os.listdir(tmp) == ["sched.json"]  # no temp files left behind
        r = AdaptiveScheduler.load(path)
        assert r.config == s.config and set(r.env_ids) == set(s.env_ids)
        assert r.windows() == s.windows() and r.state_dict() == s.state_dict()
        assert json.loads(path.read_text()) == s.state_dict()
    rng_a, rng_b = random.Random(seed), random.Random(seed)
    for op in after:
        assert _apply(s, op) == _apply(r, op)
        assert s.sample(ENV, rng_a) == r.sample(ENV, rng_b)
    assert r.state_dict() == s.state_dict()


def test_checkpoint_path_autosaves_and_resumes(tmp_path: Path) -> None:
    cfg = SchedulerConfig(tau_acc=1.0, tau_num=3, d_delta=1)
    path = tmp_path / "ckpt.json"
    s = AdaptiveScheduler([ENV, "old_env"], cfg, checkpoint_path=path)
    assert not path.exists()  # nothing written until the first update
    for _ in range(2):
        _promote_once(s)
    s.update(ENV, 2, True)
    assert json.loads(path.read_text()) == s.state_dict()
    assert sorted(os.listdir(tmp_path)) == ["ckpt.json"]

    r = AdaptiveScheduler([ENV, "new_env"], cfg, checkpoint_path=path)
    assert r.window(ENV) == DifficultyWindow(1, 2, 1, 1)
    assert r.window("new_env") == DifficultyWindow(0, 0, 0, 0)  # absent from file: starts at 0
    assert r.window("old_env") == s.window("old_env")  # in file only: kept
    assert set(r.env_ids) == {ENV, "new_env", "old_env"}
    r.update("new_env", 0, True)
    assert json.loads(path.read_text())["windows"]["new_env"]["attempts"] == 1


def test_resume_with_a_different_config_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "ckpt.json"
    AdaptiveScheduler([ENV], SchedulerConfig(tau_num=5)).save(path)
    with pytest.raises(ValueError, match="config mismatch"):
        AdaptiveScheduler([ENV], SchedulerConfig(tau_num=6), checkpoint_path=path)
    with pytest.raises(ValueError, match="config mismatch"):
        AdaptiveScheduler.load(path, SchedulerConfig(tau_num=6))
    assert AdaptiveScheduler.load(path).config == SchedulerConfig(tau_num=5)


def test_crash_during_write_keeps_old_file_and_leaves_no_temp(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "ckpt.json"
    s = AdaptiveScheduler([ENV], SchedulerConfig(tau_num=2))
    s.save(path)
    old = path.read_bytes()
    s.update(ENV, 0, True)

    def boom(*_: object) -> None:
        raise OSError("simulated crash before rename")

    monkeypatch.setattr(scheduler_mod.os, "replace", boom)
    with pytest.raises(OSError, match="simulated crash"):
        s.save(path)
    assert path.read_bytes() == old
    assert os.listdir(tmp_path) == ["ckpt.json"]


@pytest.mark.parametrize("content", [b"", b'{"version": 1, "config": {"tau_', b"\xff\xfe garbage"])
def test_corrupt_checkpoint_gives_a_clear_error(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "ckpt.json"
    path.write_bytes(content)
    with pytest.raises(ValueError, match="corrupt or truncated"):
        AdaptiveScheduler.load(path)
    with pytest.raises(ValueError, match="corrupt or truncated"):
        AdaptiveScheduler([ENV], checkpoint_path=path)


def _good_state() -> dict:
    return AdaptiveScheduler([ENV], SchedulerConfig(tau_num=4, d_delta=2)).state_dict()


def _with_window(**fields: object) -> dict:
    state = _good_state()
    state["windows"][ENV].update(fields)
    return state


@pytest.mark.parametrize(
    ("state", "message"),
    [
        ([], "must be a dict"),
        ({**_good_state(), "version": 2}, "version"),
        ({**_good_state(), "config": {"tau_acc": 0.9, "tau_num": 5, "d_delta": 2}}, "config mismatch"),
        ({**_good_state(), "windows": [ENV]}, "windows"),
        (_with_window(low=3, high=2), "low <= high"),
        (_with_window(low=-1), "low <= high"),
        (_with_window(low=0, high=3), "d_delta"),
        (_with_window(correct=2, attempts=1), "correct <= attempts"),
        (_with_window(correct=0, attempts=4), "attempts < tau_num"),
        (_with_window(high=True), "integers"),
        (_with_window(high=1.0), "integers"),
        ({**_good_state(), "windows": {ENV: {"low": 0, "high": 0}}}, "exactly the keys"),
    ],
)
def test_load_state_dict_rejects_bad_data(state: object, message: str) -> None:
    s = AdaptiveScheduler([ENV], SchedulerConfig(tau_num=4, d_delta=2))
    with pytest.raises(ValueError, match=message):
        s.load_state_dict(state)  # type: ignore[arg-type]
    assert s.window(ENV) == DifficultyWindow(0, 0, 0, 0)  # a rejected state changes nothing


# --------------------------------------------------------------------------- thread safety

THREADS, PER_THREAD = 8, 2000


@pytest.fixture
def fast_thread_switching():
    """Switch threads very often so an unlocked read-modify-write would actually race."""
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    yield
    sys.setswitchinterval(old)


def _run_threads(target) -> list:
    results: list = [None] * THREADS
    barrier = threading.Barrier(THREADS)

    def runner(i: int) -> None:
        barrier.wait()
        results[i] = target(i)

    threads = [threading.Thread(target=runner, args=(i,)) for i in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results


@pytest.mark.usefixtures("fast_thread_switching")
def test_threads_each_at_their_upper_edge_account_exactly() -> None:
    """Every update is at the upper edge (one writer per env, shared scheduler and lock)."""
    envs = [f"env{i}" for i in range(THREADS)]
    tau_num = 200  # PER_THREAD // tau_num = 10 promotions, below the difficulty ceiling
    s = AdaptiveScheduler(envs, SchedulerConfig(tau_acc=0.9, tau_num=tau_num, d_delta=4))

    def work(i: int) -> int:
        return sum(s.update(envs[i], s.window(envs[i]).high, True) for _ in range(PER_THREAD))

    promotions = _run_threads(work)
    for env, p in zip(envs, promotions):
        w = s.window(env)
        assert p * tau_num + w.attempts == PER_THREAD
        assert w.high == p == PER_THREAD // tau_num and w.low == w.high - 4


@pytest.mark.usefixtures("fast_thread_switching")
def test_threads_on_one_env_lose_no_updates() -> None:
    """All threads hit the same counters at a pinned edge (no decision can fire)."""
    s = AdaptiveScheduler([ENV], SchedulerConfig(tau_num=THREADS * PER_THREAD + 1))
    _run_threads(lambda i: [s.update(ENV, 0, k % 2 == 0) for k in range(PER_THREAD)])
    assert s.window(ENV) == DifficultyWindow(0, 0, THREADS * PER_THREAD // 2, THREADS * PER_THREAD)


@pytest.mark.usefixtures("fast_thread_switching")
def test_threads_on_one_env_count_every_promotion_once() -> None:
    """Racing at a moving edge: stale updates are ignored, but promotions are never lost."""
    s = AdaptiveScheduler([ENV], SchedulerConfig(tau_acc=0.9, tau_num=10, d_delta=4))
    promotions = sum(_run_threads(
        lambda i: sum(s.update(ENV, s.window(ENV).high, True) for _ in range(PER_THREAD))))
    w = s.window(ENV)
    assert promotions == w.high > 0
    assert w.low == max(0, w.high - 4) and w.correct == w.attempts < 10
    assert promotions * 10 + w.attempts <= THREADS * PER_THREAD


def test_a_write_killed_midway_leaves_no_temp_file_after_restart(tmp_path: Path) -> None:
    """SIGKILL inside the atomic write (between creating the temp file and the rename)."""
    path = tmp_path / "ckpt.json"
    script = (
        "import os, signal, sys\n"
        "import ecomrlve.difficulty.scheduler as sch\n"
        "real = sch.os.replace\n"
        "sch.os.replace = lambda *a: os.kill(os.getpid(), signal.SIGKILL)\n"
        f"s = sch.AdaptiveScheduler(['{ENV}'], checkpoint_path={str(path)!r})\n"
        f"s.update('{ENV}', 0, True)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], env={**os.environ}, check=False)
    assert done.returncode == -signal.SIGKILL
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")]  # the kill left one
    (tmp_path / "other.json.x.tmp").write_text("not ours")
    s = AdaptiveScheduler([ENV], checkpoint_path=path)
    assert sorted(os.listdir(tmp_path)) == ["other.json.x.tmp"]
    s.update(ENV, 0, True)
    assert sorted(os.listdir(tmp_path)) == ["ckpt.json", "other.json.x.tmp"]


def test_an_unreadable_checkpoint_is_a_value_error(tmp_path: Path) -> None:
    (tmp_path / "dir.json").mkdir()
    with pytest.raises(ValueError, match="cannot be read"):
        AdaptiveScheduler([ENV], checkpoint_path=tmp_path / "dir.json")


def test_a_pickled_scheduler_keeps_its_state_and_gets_its_own_lock(tmp_path) -> None:
    """Ray ships the run's scheduler to its curriculum actor by pickling it."""
    sched = AdaptiveScheduler(["CART"], SchedulerConfig(tau_acc=0.5, tau_num=1), checkpoint_path=tmp_path / "s.json")
    sched.update("CART", 0, True)
    copy = pickle.loads(pickle.dumps(sched))
    assert copy.state_dict() == sched.state_dict() and copy._lock is not sched._lock
    copy.update("CART", 1, True)  # the copy checkpoints to the same file
    assert AdaptiveScheduler.load(tmp_path / "s.json").window("CART").high == 2


def test_a_checkpoint_in_a_missing_folder_is_refused_at_construction(tmp_path) -> None:
    """Refused when made, not when the first finished episode tries to write it."""
    with pytest.raises(UserInputError, match="no such directory"):
        AdaptiveScheduler(["CART"], checkpoint_path=tmp_path / "missing" / "scheduler.json")

