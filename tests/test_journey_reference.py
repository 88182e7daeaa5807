"""The JOURNEY reference agent: each request's reference agent, started as an episode of its own kind would start
(its task and answer description), reaches the bar (is_correct >= 95 % at every difficulty); requests are told
apart, interruptions split off the reply they follow, a rejected answer re-routes its request, and it plays the
same on JSON round-tripped observations."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from ecomrlve.actions import AgentAction
from ecomrlve.envs import get_environment
from ecomrlve.envs.journey.family import sub_problems
from ecomrlve.envs.journey.heuristic import JourneyHeuristic
from ecomrlve.envs.journey.reference import (
    JourneyReference,
    classify,
    kind_answer_description,
    kind_system,
    kind_tasks,
    split_interruption,
)
from ecomrlve.envs.recommend.bundle import slot_of
from ecomrlve.episode import EcomEnv
from ecomrlve.protocol import Observation

DATA = Path(__file__).parent / "data"
AMAZEBAY = DATA / "amazebay_sample.parquet"
BAR = 0.95


def play(env: EcomEnv, d: int, seed: int,
         seen: Callable[[Observation], Observation] = lambda o: o) -> tuple[list[AgentAction], dict]:
    """One JOURNEY episode of the reference agent; ``seen`` is what the agent is shown of each observation."""
    agent = JourneyReference()
    observation = env.reset(env_id="JOURNEY", difficulty=d, seed=seed)
    actions: list[AgentAction] = []
    while not observation.done:
        action = agent.act(seen(observation))
        actions.append(action)
        observation = env.step(action)
    return actions, env.record.reward.model_dump()


def correct_share(env: EcomEnv, ds: range | tuple[int, ...], seeds: range) -> dict[int, float]:
    return {d: sum(play(env, d, seed)[1]["is_correct"] for seed in seeds) / len(seeds) for d in ds}


@pytest.fixture(scope="module")
def synthetic_env(catalog, search) -> EcomEnv:
    return EcomEnv("JOURNEY", catalog=catalog, search=search)


def test_the_reference_agent_meets_the_bar_on_a_sample(synthetic_env) -> None:
    """d in {0, 5, 10, 15} x 8 seeds on the suite's synthetic catalog (main: 12-100 % by d)."""
    shares = correct_share(synthetic_env, (0, 5, 10, 15), range(8))
    assert all(share >= BAR for share in shares.values()), shares


def test_the_reference_agent_meets_the_bar_on_the_amazebay_file() -> None:
    shares = correct_share(EcomEnv("JOURNEY", catalog=str(AMAZEBAY)), (0, 8, 15), range(6))
    assert all(share >= BAR for share in shares.values()), shares


@pytest.mark.slow
def test_the_reference_agent_meets_the_bar_at_every_difficulty(synthetic_env) -> None:
    """Every d 0..15 x 20 seeds on the synthetic catalog."""
    env = synthetic_env
    shares = correct_share(env, range(16), range(20))
    assert all(share >= BAR for share in shares.values()), shares


def test_the_reference_agent_sees_only_observations(synthetic_env) -> None:
    """It plays every episode identically when each observation is JSON round-tripped first (no hidden object
    references into the episode)."""
    def round_trip(observation: Observation) -> Observation:
        return Observation.model_validate(json.loads(observation.model_dump_json()))

    for d, seed in ((2, 1), (9, 2), (15, 3)):
        direct = play(synthetic_env, d, seed)
        assert play(synthetic_env, d, seed, round_trip) == direct


def test_each_sub_agent_starts_on_its_own_kind_of_task(synthetic_env) -> None:
    """A PD sub-agent is not told the journey's whole task list (SUB's "out of stock: find similar" among it made
    every PD request play as a SUB), and its answer tool says its own k_rec."""
    observation = synthetic_env.reset(env_id="JOURNEY", difficulty=4, seed=0)
    system = observation.messages[0]["content"]
    tasks = kind_tasks(system)
    assert set(tasks) == {env.env_id for env in get_environment("JOURNEY").played_envs()}
    own = kind_system(system, "PD")
    assert tasks["PD"] in own and tasks["SUB"] not in own and own.endswith(system[system.index("\n\nRules:"):])
    answer = next(t for t in observation.tools or [] if t["function"]["name"] == "answer")["function"]["description"]
    pd = kind_answer_description(answer, "PD", list(tasks))
    assert pd.startswith("product_ids (") and "k_rec" in pd and "SUB:" not in pd and "BUNDLE" not in pd
    # kinds that answer alike are described once ("PD and SUB: ..."; audit 19 finding 10: tokens)
    assert kind_answer_description(answer, "SUB", list(tasks)) == pd and answer.count("ranked recommendations") == 1


def test_requests_are_told_apart_through_typos(synthetic_env) -> None:
    """Every request of 64 journeys is read as its own kind (the keyword scores of the heuristic miss some:
    "csrt" is no cart, "andd" is an "add", a policy question about a refund reads as a return)."""
    wrong = []
    for d in range(16):
        for seed in range(4):
            synthetic_env.reset(env_id="JOURNEY", difficulty=d, seed=seed)
            problem = synthetic_env.audit().problem
            wrong += [(intent.env_id, sub.opening) for intent, sub in zip(problem.goal.intents, sub_problems(problem))
                      if classify(sub.opening) != intent.env_id]
    assert not wrong
    assert classify("Hey, please put the Pixelnest Echo 18 5W desk lamp in my csrt.") == "CART"
    assert classify("Quick question. It's about the Blueora Lite 3 garden hose I ordered on September 1. I've opened "
                    "it. I wanna return it bc I changed my mind. If I retirn it, how much money woulld I get back, "
                    "in dollars?") == "POLICY"
    assert classify("Hello, I'd like to byu the Tusk & Tern Vela 56 notebook (Green).") == "CART"
    assert classify("Hello, I'd like to by the Orrinda Nimbus 65 hoodie (Medium) and 2x the Brevik Nimbus 4 notebook.") == "CART"
    assert classify("Hey, I'd like to buy a bottle not cheaper than $10.") == "PD"


def test_an_interruption_is_split_from_the_reply_it_follows() -> None:
    """The lead may follow the reply to the request being handled, and the new request may hold a colon of its own."""
    reply, request = split_interruption(
        "Juts one of the Terrawave Elite 23 knife set. Old on, let's do tjis first: Hi, I'd like to return the "
        "Aurco Studio 8 sleeping bag from order OTZ8AYMWD. The problem: it doesn't match the description.")
    assert reply == "Juts one of the Terrawave Elite 23 knife set."
    assert request is not None and request.startswith("Hi, I'd like to return") and request.endswith("description.")
    assert split_interruption("No preference on color. The problem: it broke.") == (
        "No preference on color. The problem: it broke.", None)
    assert split_interruption("Oh wait, before tht - smth more urgent: Where is my order?") == ("", "Where is my order?")


def test_a_rejected_answer_re_routes_its_request(synthetic_env) -> None:
    """When the store says the request being handled takes another answer, the request is played again by the
    reference agent of the kind whose answer fields the error names."""
    seed = next(s for s in range(50) if synthetic_env.reset(env_id="JOURNEY", difficulty=0, seed=s) is not None
                and synthetic_env.audit().problem.goal.intents[0].env_id == "CART")
    agent = JourneyReference()
    agent.act(synthetic_env.reset(env_id="JOURNEY", difficulty=0, seed=seed))
    agent.kinds[0] = "PD"  # as if the request had been misread
    error = {"error": "answer_does_not_fit",
             "message": "The request you are handling takes answer(done); got fields ['product_ids']."}
    rejected = Observation(messages=[{"role": "tool", "tool_call_id": "j0:call_0", "name": "answer",
                                      "content": json.dumps(error)}], info={})
    agent.act(rejected)
    assert agent.kinds[0] == "CART" and agent.open == [0]


def test_the_heuristic_still_routes_with_the_journey_prompt(synthetic_env) -> None:
    """The heuristic's sub-agents keep the journey's own system message (its records are unchanged)."""
    heuristic = JourneyHeuristic()
    observation = synthetic_env.reset(env_id="JOURNEY", difficulty=0, seed=0)
    heuristic.act(observation)
    assert heuristic.setup_for(0) == (observation.messages[0], observation.tools)


@pytest.mark.parametrize(("path", "d", "seed"), [
    ("amazon_meta_sample.jsonl", 10, 1985490278), ("amazon_meta_sample.jsonl", 12, 2123601526),
    ("amazon_meta_sample.jsonl", 13, 375999408), ("amazebay_sample.parquet", 11, 595391221),
    ("amazebay_sample.parquet", 12, 1291511554)])
def test_no_other_request_orders_the_product_a_request_names(path, d, seed) -> None:
    """A STATUS or RETURN request names its order's product and when it was ordered; another request of the same
    journey (before or after it) placed an order of that product at a time the name fits, so the request named
    two orders (these episodes of a small real file did on main; the reference agent failed them)."""
    env = EcomEnv("JOURNEY", catalog=str(DATA / path), secret="fixedsecret123")
    env.reset(env_id="JOURNEY", difficulty=d, seed=seed)
    audit = env.audit()
    orders = audit.world.account.orders
    for intent in audit.problem.goal.intents:
        if intent.env_id in ("STATUS", "RETURN"):
            target = intent.goal.target
            holding = {o.order_id for o in orders for line in o.lines
                       if audit.world.catalog.product_id(line.row) == target.product_id}
            assert holding <= set(intent.goal.order_ids), (intent.env_id, target.identification)


@pytest.mark.parametrize(("d", "seed"), [(4, 1481917618), (6, 1201898391), (10, 2121070732), (11, 1513838014)])
def test_no_other_request_sells_out_a_product_a_bundle_slot_takes(d, seed) -> None:
    """A BUNDLE slot takes any product of its kind, from any category of that main type (a real file files
    keyboards under "Computers" and "Keyboards"); a SUB or PD request of the same journey planned to sell one out
    after the BUNDLE was answered (these amazebay_sample episodes did on main: the reference agent's pick sold out)."""
    env = EcomEnv("JOURNEY", catalog=str(AMAZEBAY), secret="fixedsecret123")
    env.reset(env_id="JOURNEY", difficulty=d, seed=seed)
    audit = env.audit()
    catalog = audit.world.catalog
    bundles = [i.goal for i in audit.problem.goal.intents if i.env_id == "BUNDLE"]
    assert bundles
    for goal in bundles:
        assert not [catalog.product_id(row) for row in audit.world.doomed
                    if slot_of(catalog, goal.categories, goal.nouns, row) is not None]
