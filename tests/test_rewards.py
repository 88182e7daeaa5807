"""Reward composition and the CART unit-level F1 verifier."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from ecomrlve.difficulty import Difficulty
from ecomrlve.envs.cart.family import unit_f1
from ecomrlve.rewards import RewardWeights, compose_reward, efficiency_reward, hallucination_reward

IDS = st.sampled_from([f"P{i:08d}" for i in range(12)])


def _compose(**overrides):
    arguments = dict(r_task=1.0, is_correct=True, turns=3, user_caused_turns=0, t_max=5, used_ids=[],
                     surfaced_ids=set(), termination="answered")
    arguments.update(overrides)
    return compose_reward(**arguments)


# -- the worked examples -----------------------------------------------------------------------------

def test_worked_example_d1() -> None:
    """d=1 (T_max 6, the floor that leaves every procedure a spare turn), 3 turns with 1 user-caused, r_task 1,
    r_hall 0 -> r_eff 1 - 2·(2-1)/(6-1) = 0.60, r_total 0.75 + 0.15·0.6 = 0.84."""
    t_max = Difficulty.at(1).T_max
    assert t_max == 6
    assert efficiency_reward(3, 1, t_max) == pytest.approx(0.6, abs=0.005)
    reward = _compose(r_task=1.0, turns=3, user_caused_turns=1, t_max=t_max, used_ids=["PA"], surfaced_ids={"PA"})
    assert reward.r_hall == 0.0
    assert reward.r_eff == pytest.approx(0.60, abs=0.005)
    assert reward.r_total == pytest.approx(0.84, abs=0.005)
    assert reward.is_correct


def test_worked_example_d8() -> None:
    """d=8 (T_max 8), 8 turns with 2 user-caused, r_task 0 -> r_eff -0.43, r_total about -0.06."""
    t_max = Difficulty.at(8).T_max
    assert t_max == 8
    assert efficiency_reward(8, 2, t_max) == pytest.approx(-0.43, abs=0.005)
    reward = _compose(r_task=0.0, is_correct=False, turns=8, user_caused_turns=2, t_max=t_max)
    assert reward.r_eff == pytest.approx(-0.43, abs=0.005)
    assert reward.r_total == pytest.approx(-0.06, abs=0.005)


def test_weights_and_formula() -> None:
    """r_total is the weighted sum 0.75/0.15/0.10 by default and follows custom weights."""
    reward = _compose(r_task=0.5, turns=2, t_max=5, used_ids=["PA", "PB"], surfaced_ids={"PA"})
    assert reward.r_hall == -0.5
    assert reward.r_total == pytest.approx(0.75 * 0.5 + 0.15 * 0.5 + 0.10 * -0.5)
    custom = _compose(r_task=0.5, turns=2, t_max=5, weights=RewardWeights(task=1.0, efficiency=0.0, hallucination=0.0))
    assert custom.r_total == pytest.approx(0.5)
    with pytest.raises(ValueError):
        RewardWeights(task=-0.1)


# -- properties ------------------------------------------------------------------------------------

reward_inputs = st.fixed_dictionaries({
    "r_task": st.floats(-1, 1),
    "is_correct": st.booleans(),
    "turns": st.integers(0, 40),
    "user_caused_turns": st.integers(0, 40),
    "t_max": st.integers(1, 30),
    "used_ids": st.lists(IDS, max_size=8),
    "surfaced_ids": st.sets(IDS, max_size=8),
    "termination": st.sampled_from(["answered", "turn_budget", "user_gave_up"]),
})


@settings(max_examples=300)
@given(reward_inputs)
def test_total_in_range(inputs: dict) -> None:
    """r_total, r_eff are always in [-1, 1] and r_hall in [-1, 0]."""
    reward = compose_reward(**inputs)
    assert -1.0 <= reward.r_total <= 1.0
    assert -1.0 <= reward.r_eff <= 1.0
    assert -1.0 <= reward.r_hall <= 0.0


@settings(max_examples=200)
@given(reward_inputs, st.sampled_from(["invalid", "safety", "both"]))
def test_invalid_or_unsafe_is_minus_one(inputs: dict, kind: str) -> None:
    """An invalid output or a safety violation gives exactly -1 and is_correct False."""
    extra = {}
    if kind in ("invalid", "both"):
        extra["invalid_reason"] = "invalid_json: bad"
        extra["termination"] = "invalid_output"
    if kind in ("safety", "both"):
        extra["safety_violation"] = "denied category"
    reward = compose_reward(**(inputs | extra))
    assert reward.r_total == -1.0
    assert reward.is_correct is False


@settings(max_examples=300)
@given(reward_inputs)
def test_failed_episode_never_earns_efficiency(inputs: dict) -> None:
    """On an episode that is not correct r_eff is capped at 0 (failing fast earns nothing); a correct
    one keeps the uncapped r_eff."""
    reward = compose_reward(**inputs)
    raw = efficiency_reward(inputs["turns"], inputs["user_caused_turns"], inputs["t_max"])
    if reward.is_correct:
        assert reward.r_eff == raw
    else:
        assert reward.r_eff == min(raw, 0.0) <= 0.0


def test_immediate_wrong_answer_scores_no_efficiency() -> None:
    """A one-turn wrong answer (raw r_eff = +1) gets r_eff 0, so r_total is the task part alone."""
    reward = _compose(r_task=-1 / 3, is_correct=False, turns=1, t_max=4)
    assert reward.r_eff == 0.0
    assert reward.r_total == pytest.approx(0.75 * -1 / 3)


@given(st.integers(0, 50), st.integers(0, 50), st.integers(0, 50), st.integers(1, 30))
def test_efficiency_monotone_in_turns(t1: int, t2: int, user: int, t_max: int) -> None:
    """r_eff never increases when the agent takes more turns (same user-caused turns and budget)."""
    low, high = sorted((t1, t2))
    assert efficiency_reward(low, user, t_max) >= efficiency_reward(high, user, t_max)
    assert efficiency_reward(1, 0, t_max) == 1.0


@given(st.integers(2, 30))
def test_efficiency_endpoints(t_max: int) -> None:
    """r_eff is 1 for a one-turn episode and -1 when all T_max turns are agent-caused."""
    assert efficiency_reward(1, 0, t_max) == 1.0
    assert efficiency_reward(t_max, 0, t_max) == pytest.approx(-1.0)
    assert efficiency_reward(t_max + 5, 0, t_max) == -1.0
    assert efficiency_reward(t_max, t_max - 1, t_max) == 1.0  # all but one turn caused by the user


@given(st.lists(IDS, max_size=10), st.sets(IDS, max_size=10))
def test_hallucination_share(used: list[str], surfaced: set[str]) -> None:
    """r_hall is in [-1, 0], is 0 iff every used id was surfaced, and equals minus the unsurfaced share."""
    r_hall = hallucination_reward(used, surfaced)
    assert -1.0 <= r_hall <= 0.0
    assert (r_hall == 0.0) == set(used).issubset(surfaced)
    if used:
        assert r_hall == pytest.approx(-len(set(used) - surfaced) / len(set(used)))
    reward = compose_reward(r_task=1.0, is_correct=True, turns=1, user_caused_turns=0, t_max=4, used_ids=used,
                            surfaced_ids=surfaced, termination="answered")
    assert reward.r_hall == r_hall
    assert set(reward.hallucinated_ids) == set(used) - surfaced


# -- unit_f1 -----------------------------------------------------------------------------------------

ROWS = st.integers(0, 5)
VARIANTS = st.sampled_from([None, "Va", "Vb", "Vc"])


@st.composite
def requirements(draw):
    """Distinct products (as CART generates them), each with 'any variant' (None) or one variant, qty 1-4."""
    rows = draw(st.lists(ROWS, min_size=1, max_size=4, unique=True))
    return [(row, draw(VARIANTS), draw(st.integers(1, 4))) for row in rows]


@st.composite
def carts(draw):
    """Cart lines with unique (product, variant) keys, as the cart merges equal keys."""
    keys = draw(st.lists(st.tuples(ROWS, VARIANTS), max_size=6, unique=True))
    return [(row, variant, draw(st.integers(1, 4))) for row, variant in keys]


def exactly_satisfies(required, cart) -> bool:
    """Brute force: the cart holds exactly the required units ('any variant' where None)."""
    wanted = {row: (variant, qty) for row, variant, qty in required}
    per_row: dict[int, Counter] = {}
    for row, variant, qty in cart:
        if row not in wanted:
            return False
        per_row.setdefault(row, Counter())[variant] += qty
    for row, (variant, qty) in wanted.items():
        lines = per_row.get(row, Counter())
        if variant is None:
            if sum(lines.values()) != qty:
                return False
        elif dict(lines) != {variant: qty}:
            return False
    return True


@settings(max_examples=400)
@given(requirements(), carts())
def test_unit_f1_range_and_exactness(required, cart) -> None:
    """unit_f1 is in [0, 1] and equals 1 exactly when the cart is exactly the requirement."""
    f1, u_match, u_cart, u_req = unit_f1(required, cart)
    assert 0.0 <= f1 <= 1.0
    assert u_cart == sum(q for *_, q in cart) and u_req == sum(q for *_, q in required)
    assert 0 <= u_match <= min(u_cart, u_req)
    assert (f1 == 1.0) == exactly_satisfies(required, cart)


@given(requirements(), st.randoms(use_true_random=False))
def test_unit_f1_exact_cart_scores_one(required, rnd) -> None:
    """The requirement itself (any variant filled in arbitrarily) scores exactly 1."""
    cart = [(row, variant if variant is not None else rnd.choice([None, "Vz"]), qty) for row, variant, qty in required]
    assert unit_f1(required, cart) == (1.0, sum(q for *_, q in required), sum(q for *_, q in required),
                                       sum(q for *_, q in required))


@given(requirements(), st.integers(0, 3), st.integers(1, 3))
def test_unit_f1_extra_and_missing_units(required, index, extra) -> None:
    """Extra units lower precision only; missing units lower recall only; both keep F1 below 1."""
    index %= len(required)
    exact = list(required)
    # an unwanted product: precision drops, every required unit still matched
    f1, u_match, u_cart, u_req = unit_f1(required, exact + [(99, None, extra)])
    assert f1 < 1.0 and u_match == u_req and u_cart == u_req + extra
    # too many of a wanted product
    row, variant, qty = exact[index]
    over = exact[:index] + [(row, variant, qty + extra)] + exact[index + 1:]
    f1_over, m, c, r = unit_f1(required, over)
    assert f1_over < 1.0 and m == r and c == r + extra
    # missing units: recall drops, precision stays 1
    assume(qty > 1 or len(exact) > 1)
    under = exact[:index] + ([(row, variant, qty - 1)] if qty > 1 else []) + exact[index + 1:]
    f1_under, m, c, r = unit_f1(required, under)
    assert f1_under < 1.0 and m == c and c == r - 1
    # a wrong variant where one is required matches nothing for that product
    if variant is not None:
        wrong = exact[:index] + [(row, variant + "x", qty)] + exact[index + 1:]
        f1_wrong, m, _, r = unit_f1(required, wrong)
        assert f1_wrong < 1.0 and m == r - qty


def test_unit_f1_empty_cart() -> None:
    """An empty cart scores 0 (r_task = 2*0 - 1 = -1)."""
    assert unit_f1([(1, None, 2)], []) == (0.0, 0, 0, 2)


@given(surfaced=st.sets(IDS), r_task=st.floats(-1, 1), is_correct=st.booleans())
def test_with_no_ids_used_the_surfaced_ids_do_not_matter(surfaced: set[str], r_task: float, is_correct: bool) -> None:
    """The runtime reads the surfacing ledger only when the agent acted on ids."""
    reward = _compose(r_task=r_task, is_correct=is_correct, surfaced_ids=surfaced)
    assert reward == _compose(r_task=r_task, is_correct=is_correct, surfaced_ids=set())
