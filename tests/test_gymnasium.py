"""The Gymnasium API: ids derived from the registry, ``check_env`` on every id, oracle episodes through
``step``, Gymnasium seeding, termination flags, and the adaptive curriculum fed by finished episodes."""

from __future__ import annotations

import json
import warnings

import pytest

gymnasium = pytest.importorskip("gymnasium")

from conftest import CATALOG_SEED, CATALOG_SIZE  # noqa: E402
from gymnasium.utils.env_checker import check_env  # noqa: E402

from ecomrlve.difficulty.scheduler import AdaptiveScheduler, SchedulerConfig  # noqa: E402
from ecomrlve.envs import env_collections  # noqa: E402
from ecomrlve.episode import EcomEnv  # noqa: E402
from ecomrlve.integrations import gymnasium as gym_api  # noqa: E402
from ecomrlve.registry import env_specs  # noqa: E402
from ecomrlve.runner import replay  # noqa: E402
from ecomrlve.session import MAX_ACTION_CHARS, RUNTIME_TERMINATIONS  # noqa: E402

ENV_IDS = [spec.id for spec in env_specs()]


CATALOG = f"synthetic:{CATALOG_SIZE}:{CATALOG_SEED}"


def make(gym_id: str, **kwargs):
    return gymnasium.make(gym_id, catalog=CATALOG, secret="gym-test", **kwargs)


def play_oracle(env, seed: int | None) -> tuple[list[str], float, bool, bool, dict]:
    """Reset, then let the episode's oracle play (its structured turns keep their call ids, which JOURNEY's
    oracle routes by); returns every observation text and how the episode ended."""
    text, info = env.reset(seed=seed)
    observations = [text]
    agent = env.unwrapped.ecom_env.audit().oracle()
    observation = gym_api.observation_from_text(text, info)
    terminated = truncated = False
    while not (terminated or truncated):
        text, reward, terminated, truncated, info = env.step(agent.act(observation))
        observations.append(text)
        observation = gym_api.observation_from_text(text, info, reward=reward, done=terminated or truncated)
    return observations, reward, terminated, truncated, info


def test_one_id_per_registered_environment_and_collection() -> None:
    names = dict.fromkeys([*ENV_IDS, *env_collections()])
    assert gym_api.GYM_IDS == [f"ecomrlve/{name}-v0" for name in names]
    assert all(gym_id in gymnasium.registry for gym_id in gym_api.GYM_IDS)
    assert gym_api.register_gym_envs() == gym_api.GYM_IDS  # idempotent


@pytest.mark.parametrize("gym_id", gym_api.GYM_IDS)
def test_check_env_passes(gym_id: str) -> None:
    env = make(gym_id, difficulty=3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the checker's warnings count as failures too
        check_env(env.unwrapped)
    env.close()


def test_spaces_are_text_that_accepts_real_text(catalog, search) -> None:
    env = make("ecomrlve/CART-v0")
    assert isinstance(env.action_space, gymnasium.spaces.Text)
    assert env.action_space.max_length == MAX_ACTION_CHARS
    turn = ('Sure! <tool_call>{"name": "catalog_search", "arguments": {"query": "café crème 20€ — 日本"}}'
            "</tool_call>\n\t(ok?)")
    assert env.action_space.contains(turn)
    assert env.action_space.contains(json.dumps({"message": "hi", "tool_calls": []}))
    emoji = gym_api.render_observation(gym_api.observation_from_text('{"messages": []}', {}).model_copy(
        update={"messages": [{"role": "user", "content": "gift 🎁 please"}]}), with_tools=False)
    assert env.observation_space.contains(emoji)
    assert json.loads(emoji)["messages"][0]["content"] == "gift 🎁 please"
    assert env.action_space is not make("ecomrlve/CART-v0").action_space


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_an_oracle_episode_through_the_gym_api_scores_one(env_id: str) -> None:
    """Full task marks, answered, nothing hallucinated; the record replays in-process byte for byte."""
    env = make(f"ecomrlve/{env_id}-v0", difficulty=4)
    observations, reward, terminated, truncated, info = play_oracle(env, seed=5)
    breakdown = info["reward"]
    assert (breakdown["r_task"], breakdown["is_correct"], breakdown["r_hall"]) == (1.0, True, 0.0)
    assert (terminated, truncated, info["termination"]) == (True, False, "answered")
    assert json.loads(observations[0])["tools"] and "tools" not in json.loads(observations[1])
    assert all(env.observation_space.contains(text) for text in observations)
    record = env.unwrapped.record
    assert record.reward is not None and record.reward.r_total == reward
    assert replay(EcomEnv(env_id, catalog=gym_api.shared_catalog(CATALOG)), record).to_json() == record.to_json()
    hidden = json.dumps(record.goal, sort_keys=True)
    assert "goal" not in info and str(record.seed) not in json.dumps(info) and hidden not in "".join(observations)


def test_same_seed_same_records_and_reset_without_seed_continues_the_stream(catalog, search) -> None:
    def records(seeds: list[int | None]) -> list[str]:
        env = make("ecomrlve/C8-v0", difficulty=2)
        out = []
        for seed in seeds:
            play_oracle(env, seed)
            out.append(env.unwrapped.record.to_json())
        return out

    first = records([7, None, None])
    assert first == records([7, None, None])
    assert first[0] == records([7])[0] and first[0] != first[1]
    assert records([3, 7, None])[1:] == first[:2]  # reseeding restarts the stream, whatever came before


def test_malformed_action_ends_with_minus_one_and_terminated(catalog, search) -> None:
    env = make("ecomrlve/CART-v0")
    env.reset(seed=0)
    text, reward, terminated, truncated, info = env.step('<tool_call>{"name": "catalog_search", "arguments": [1]}')
    assert (reward, terminated, truncated, info["termination"]) == (-1.0, True, False, "invalid_output")
    assert info["invalid_reason"]
    assert json.loads(text) == {"messages": []}


def test_running_out_of_turns_is_truncated() -> None:
    """An agent that only chats with a budget of three turns: the turn budget ends it, as ``truncated``."""
    env = make("ecomrlve/CART-v0", overrides={"T_max": 3})
    env.reset(seed=1)
    for _ in range(3):
        _, reward, terminated, truncated, info = env.step("Could you tell me a bit more?")
    assert (terminated, truncated, info["termination"]) == (False, True, "turn_budget") and reward <= 0


def chat(env, turns: int) -> tuple[float, bool, bool, dict]:
    for _ in range(turns):
        _, reward, terminated, truncated, info = env.step("Could you tell me a bit more?")
    return reward, terminated, truncated, info


def finished_in_process(seed_env, turns: int):
    """The same episode played in-process for ``turns`` turns, then ended by ``session.finish``."""
    record = seed_env.unwrapped.record
    env = EcomEnv(record.env_id, catalog=gym_api.shared_catalog(CATALOG), secret=record.secret)
    env.reset(env_id=record.env_id, difficulty=record.difficulty, seed=record.seed)
    for _ in range(turns):
        env.step("Could you tell me a bit more?")
    env.session.finish(gym_api.TRUNCATED_OUTSIDE)
    return env.record


def test_a_time_limit_applied_by_hand_yields_a_scored_record() -> None:
    """The env cannot see a wrapper outside it: reading the record ends the episode, as session.finish does."""
    env = gymnasium.wrappers.TimeLimit(make("ecomrlve/CART-v0"), 2)
    env.reset(seed=1)
    reward, terminated, truncated, info = chat(env, 2)
    assert (terminated, truncated) == (False, True) and "termination" not in info
    record = env.unwrapped.record
    assert record.reward is not None and record.reward.termination == "truncated" and len(record.actions) == 2
    assert record.reward.r_task == -1.0 and not record.reward.is_correct  # unanswered, scored as it stands
    assert record.to_json() == finished_in_process(env, 2).to_json()
    assert replay(EcomEnv("CART", catalog=gym_api.shared_catalog(CATALOG)), record).to_json() == record.to_json()
    assert env.unwrapped.finish() is None  # already over: a second ending changes nothing
    env.reset(seed=1)
    assert chat(env, 1)[2] is False  # a new episode, the limit counted afresh


@pytest.mark.parametrize("wrap", ["make", "by hand"])
def test_a_step_limit_returns_the_score_on_the_step_it_cuts(wrap: str) -> None:
    if wrap == "make":
        env = make("ecomrlve/CART-v0", max_episode_steps=2)
    else:
        env = gym_api.ScoreTruncation(gymnasium.wrappers.TimeLimit(make("ecomrlve/CART-v0"), 2))
    env.reset(seed=1)
    reward, terminated, truncated, info = chat(env, 2)
    record = env.unwrapped.record
    assert (terminated, truncated, info["termination"]) == (False, True, "truncated")
    assert reward == record.reward.r_total == info["reward"]["r_total"] and info["is_correct"] is False
    assert record.to_json() == finished_in_process(env, 2).to_json()


def test_a_truncated_episode_feeds_the_adaptive_curriculum() -> None:
    scheduler = AdaptiveScheduler(["CART"], SchedulerConfig(tau_acc=0.5, tau_num=2))
    env = make("ecomrlve/CART-v0", difficulty="adaptive", scheduler=scheduler, max_episode_steps=1)
    env.reset(seed=0)
    chat(env, 1)
    assert scheduler.windows()["CART"].attempts == 1


@pytest.mark.parametrize("name", ["CART", "JOURNEY", "C8"])
def test_registered_step_limits_leave_the_turn_budget_to_end_episodes(name: str) -> None:
    """Each id declares max_episode_steps, room for several times the largest turn budget (the shopper's
    own turns come on top): the episodes end on their own, never at the limit."""
    env = make(f"ecomrlve/{name}-v0", difficulty=15)
    limit = env.spec.max_episode_steps
    assert limit == gymnasium.spec(f"ecomrlve/{name}-v0").max_episode_steps == gym_api.step_limit(name)
    for seed in range(2):
        _, _, terminated, truncated, info = play_oracle(env, seed)
        reward = env.unwrapped.record.reward
        assert (terminated, truncated, info["termination"]) == (True, False, "answered")
        assert limit >= gym_api.STEPS_PER_BUDGET_TURN * reward.t_max > reward.turns


def test_every_runtime_ending_maps_to_exactly_one_flag() -> None:
    assert gym_api.TRUNCATED < RUNTIME_TERMINATIONS
    assert RUNTIME_TERMINATIONS - gym_api.TRUNCATED == {"answered", "user_gave_up", "invalid_output"}


def test_adaptive_difficulty_draws_from_and_feeds_one_shared_scheduler(catalog, search) -> None:
    scheduler = AdaptiveScheduler(["CART", "STATUS"], SchedulerConfig(tau_acc=0.5, tau_num=2))
    envs = [make(gym_id, difficulty="adaptive", scheduler=scheduler)
            for gym_id in ("ecomrlve/CART-v0", "ecomrlve/STATUS-v0")]
    for seed in range(2):
        for env in envs:
            play_oracle(env, seed)
            assert env.unwrapped.record.difficulty == 0
    assert {env_id: w.high for env_id, w in scheduler.windows().items()} == {"CART": 1, "STATUS": 1}
    play_oracle(envs[0], 9)
    assert envs[0].unwrapped.record.difficulty in (0, 1)


def test_bad_difficulty_is_refused(catalog, search) -> None:
    with pytest.raises(ValueError, match="difficulty"):
        make("ecomrlve/CART-v0", difficulty=16)
    env = make("ecomrlve/CART-v0")
    with pytest.raises(ValueError, match="difficulty"):
        env.reset(seed=0, options={"difficulty": "7"})


def test_reset_options_say_what_they_take(catalog, search) -> None:
    """One episode's options fix a level ('adaptive' is the env's own setting) and nothing else is ignored."""
    env = make("ecomrlve/CART-v0")
    with pytest.raises(ValueError, match=r"options\['difficulty'\] must be an integer in 0..15") as refused:
        env.reset(seed=0, options={"difficulty": "adaptive"})
    assert "or 'adaptive'" not in str(refused.value)
    with pytest.raises(ValueError, match=r"unknown reset options \['difficult'\]"):
        env.reset(seed=0, options={"difficult": 3})


@pytest.mark.parametrize("turn", [
    '<tool_call>{"name": "catalog_search", "arguments": {"query": "crème"}}</tool_call>',
    '{"message": null, "tool_calls": [{"name": "catalog_search", "arguments": {"query": "crème"}}]}',
])
def test_text_turns_call_tools(turn: str) -> None:
    env = make("ecomrlve/CART-v0")
    env.reset(seed=0)
    text, reward, terminated, truncated, info = env.step(turn)
    [message] = [m for m in json.loads(text)["messages"] if m["role"] == "tool"]
    assert message["name"] == "catalog_search" and "results" in json.loads(message["content"])
    assert not (terminated or truncated) and info["turn"] == 1


def test_vector_envs_share_the_catalog_and_seed_like_single_envs() -> None:
    """``make_vec`` seeds sub-env i with seed + i (Gymnasium's rule): each plays the single env's episode."""
    envs = gymnasium.make_vec("ecomrlve/C8-v0", num_envs=2, vectorization_mode="sync", difficulty=2,
                              catalog=CATALOG, secret="gym-test")
    observations, _ = envs.reset(seed=4)
    assert list(observations) == [make("ecomrlve/C8-v0", difficulty=2).reset(seed=4 + i)[0] for i in range(2)]
    catalogs = {id(env.unwrapped.ecom_env.catalog) for env in envs.unwrapped.envs}
    assert catalogs == {id(gym_api.shared_catalog(CATALOG))}
    envs.close()


@pytest.mark.slow
def test_async_vector_envs_hand_out_every_observation() -> None:
    """``vectorization_mode="async"`` with Gymnasium's default shared memory: each step's observations are the
    sync vector env's (Gymnasium read a Text space's shared memory once: a million NULs every time)."""
    settings = dict(num_envs=2, difficulty=2, catalog=CATALOG, secret="gym-test")
    sync = gymnasium.make_vec("ecomrlve/C8-v0", vectorization_mode="sync", **settings)
    parallel = gymnasium.make_vec("ecomrlve/C8-v0", vectorization_mode="async", **settings)
    try:
        expected, got = [sync.reset(seed=9)[0]], [parallel.reset(seed=9)[0]]
        for turn in ('<tool_call>{"name": "catalog_search", "arguments": {"query": "lamp"}}</tool_call>', "thanks"):
            expected.append(sync.step((turn, turn))[0])
            got.append(parallel.step((turn, turn))[0])
        assert got == expected and isinstance(got[0], tuple)
        assert got[0][0] != got[0][1] and all(json.loads(text)["messages"] for step in got for text in step)
    finally:
        sync.close()
        parallel.close()


@pytest.mark.slow
def test_async_vector_env_without_copy_reads_the_latest_step() -> None:
    """``copy=False`` hands out the shared memory itself, as for arrays: the next step's texts show through."""
    envs = gymnasium.vector.AsyncVectorEnv([lambda: make("ecomrlve/CART-v0", difficulty=1)] * 2, copy=False)
    try:
        live, _ = envs.reset(seed=[1, 2])
        first = tuple(live)
        assert isinstance(live, gym_api.SharedTexts) and first[0] != first[1] and live[:1] == first[:1]
        envs.step(("hello", "hello"))
        assert tuple(live) != first and json.loads(live[0])["messages"][0]["role"] == "user"
    finally:
        envs.close()
