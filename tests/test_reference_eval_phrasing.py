"""The reference agents read the shopper's held-out phrasings too (`ecomrlve eval`'s default), not only the
training half they were written beside (`ecomrlve run`'s default).

Each key below failed before: with typo noise on the held-out half's small words, the agent dropped a requirement
("in te color Blue", "rating of at lest 4", "should be L, ot S"), read "an you recommend" as an article, or never
split "26-inch"; the shopper's values were spelled right and the verdicts were correct, so each was the agent's
misreading. Over C8 x d 0-15 x 20 keys (secret fixedsecret123, seed 0) that was 41 of 2,560 episodes; now none.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ecomrlve.envs import reference_agent
from ecomrlve.episode import EcomEnv
from ecomrlve.user.realiser import TemplateShopper

SECRET = "fixedsecret123"
AMAZEBAY = Path(__file__).parent / "data" / "amazebay_sample.parquet"


@pytest.mark.parametrize(("env_id", "difficulty", "seed", "slip"), [
    ("PD", 3, 2050046445, "in hte color Brown"),
    ("BUNDLE", 10, 290932206, "in te color Blue"),
    ("PD", 10, 458500132, "an you recommend"),
    ("PD", 11, 2073531845, "rating of at lest"),
    ("RETURN", 4, 40364074, "26-inch screen or bigger"),
    ("JOURNEY", 13, 1320826238, "should be L, ot S"),
])
def test_the_reference_agent_reads_the_held_out_phrasings_through_typos(env_id: str, difficulty: int, seed: int,
                                                                         slip: str) -> None:
    env = EcomEnv(env_id, realiser=TemplateShopper("eval"), secret=SECRET)
    _play_to_the_end(env, env_id, difficulty, seed, slip)


@pytest.mark.parametrize(("difficulty", "seed", "slip"), [
    (5, 598601803, "I'd like to byu the"),
    (13, 605650918, "I'd like to by the"),
])
def test_a_slipped_buy_still_opens_a_cart_request(difficulty: int, seed: int, slip: str) -> None:
    """JOURNEY on the amazebay_sample.parquet fixture: a cart request whose "buy" slipped was routed to the RETURN
    reference agent, which returned an order line nobody asked about (2 of 2,560 episodes, both wrong returns)."""
    env = EcomEnv("JOURNEY", catalog=str(AMAZEBAY), realiser=TemplateShopper("eval"), secret=SECRET)
    _play_to_the_end(env, "JOURNEY", difficulty, seed, slip)


def _play_to_the_end(env: EcomEnv, env_id: str, difficulty: int, seed: int, slip: str) -> None:
    agent = reference_agent(env_id)
    observation = env.reset(env_id=env_id, difficulty=difficulty, seed=seed)
    while not observation.done:
        observation = env.step(agent.act(observation))
    record = env.record
    assert record.shopper == {"realiser": "template", "phrasing": "eval"}
    assert record.reward is not None and record.reward.is_correct, (slip, record.reward)
