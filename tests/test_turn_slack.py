"""Every environment leaves its prescribed procedure a turn to spare.

The oracle follows each environment's instructions in full (RETURN checks eligibility before it starts a
return, as its instructions say, even when the line is eligible); at every d it must finish with at
least one agent-caused turn left of the budget, so an honest agent that does what the prompt asks is
never pushed to skip a step.
"""

from __future__ import annotations

import pytest

from ecomrlve.envs.account.returns import ReturnOracle
from ecomrlve.episode import EcomEnv
from ecomrlve.registry import env_specs
from ecomrlve.runner import play

SEEDS = 6


def _spare_turns(env: EcomEnv, env_id: str, d: int, seed: int) -> tuple[int, bool]:
    record = play(env, "oracle", env_id=env_id, difficulty=d, seed=seed)
    reward = record.reward
    return reward.t_max - (reward.turns - reward.user_caused_turns), reward.is_correct


@pytest.mark.parametrize("env_id", [spec.id for spec in env_specs()])
def test_oracle_leaves_a_turn_to_spare(catalog, search, env_id) -> None:
    env = EcomEnv(env_id, catalog=catalog, search=search)
    tight = []
    for d in range(16):
        for seed in range(SEEDS):
            spare, correct = _spare_turns(env, env_id, d, seed)
            assert correct, (env_id, d, seed)
            if spare < 1:
                tight.append((d, seed, spare))
    assert not tight, f"{env_id}: (d, seed, turns to spare) {tight}"


def test_return_oracle_checks_eligibility_before_every_return(catalog, search) -> None:
    """The full RETURN procedure: an eligibility check on the line precedes its return_initiate."""
    env = EcomEnv("RETURN", catalog=catalog, search=search)
    for d in (0, 1, 6, 12):
        for seed in range(8):
            observation = env.reset(env_id="RETURN", difficulty=d, seed=seed)
            oracle = env.oracle()
            assert isinstance(oracle, ReturnOracle)
            calls: list[str] = []
            while not observation.done:
                action = oracle.act(observation)
                calls += [call.name for call in action.tool_calls]
                observation = env.step(action)
            assert "return_check_eligibility" in calls, (d, seed)
            if "return_initiate" in calls:
                assert calls.index("return_check_eligibility") < calls.index("return_initiate"), (d, seed)
