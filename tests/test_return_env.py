"""RETURN end to end: oracle, consistency of tools / goal / history, exploits, the customer's behaviour."""

from __future__ import annotations

import re
from typing import Any

import pytest
from account_helpers import NeverAnswer, call, find_episode, mean_total, reply

from ecomrlve.actions import AgentAction
from ecomrlve.difficulty import Difficulty
from ecomrlve.envs.account.acts import NothingMore
from ecomrlve.envs.account.orders import BY_ORDER_ID
from ecomrlve.envs.account.returns import return_score
from ecomrlve.episode import EcomEnv
from ecomrlve.protocol import tool_results
from ecomrlve.tools import TOOLS
from ecomrlve.world.account import ORDER_ID

ENV = "RETURN"
ALL_D = list(range(16))
EXPLOIT_D = [0, 2, 4, 6, 8, 10, 12, 14]
EXPLOIT_SEEDS = range(12)


@pytest.fixture(scope="module")
def env(catalog, search) -> EcomEnv:
    return EcomEnv(ENV, catalog=catalog, search=search)


def _run_tool(env: EcomEnv, name: str, **arguments: Any) -> dict[str, Any]:
    tool = TOOLS[name]
    return tool.run(env.audit().context, tool.validate(arguments))


def test_tool_eligibility_agrees_with_the_goal_and_mentioned_orders_are_listed(env) -> None:
    """One source of truth: the tool's verdict on the target is the goal's; the user's orders exist."""
    eligible_seen = set()
    for d in ALL_D:
        for seed in range(25):
            observation = env.reset(env_id=ENV, difficulty=d, seed=seed)
            goal = env.audit().problem.goal
            listed = {o["order_id"] for o in _run_tool(env, "order_list")["orders"]}
            assert goal.target.order_id in listed and set(goal.order_ids) <= listed
            assert set(re.findall(ORDER_ID, observation.messages[-1]["content"])) <= listed
            checked = _run_tool(env, "return_check_eligibility", order_id=goal.target.order_id,
                                line_id=goal.target.line_id)
            assert checked["eligible"] == goal.eligible and checked["code"] == goal.verdict_code, (d, seed)
            eligible_seen.add(goal.eligible)
    assert eligible_seen == {True, False}


def test_references_follow_difficulty(env) -> None:
    hardest_by_id = max(d for d in range(16) if Difficulty.at(d).order_reference == BY_ORDER_ID)
    env.reset(env_id=ENV, difficulty=hardest_by_id, seed=0)
    assert env.audit().problem.goal.target.order_id in env.audit().problem.opening
    for d in (8, 12, 15):
        for seed in range(10):
            env.reset(env_id=ENV, difficulty=d, seed=seed)
            target = env.audit().problem.goal.target
            assert target.order_id not in env.audit().problem.opening
            assert target.brand not in target.phrase and target.noun.lower() in target.phrase


def test_high_difficulty_has_distractors_and_ineligible_edges(env) -> None:
    same_product = ambiguous = ineligible = 0
    for seed in range(80):
        env.reset(env_id=ENV, difficulty=12, seed=seed)
        goal, account = env.audit().problem.goal, env.audit().world.account
        rows = [line.row for o in account.orders for line in o.lines]
        same_product += rows.count(goal.target.row) > 1
        ambiguous += goal.target.ambiguous
        ineligible += not goal.eligible
    assert same_product >= 10 and ambiguous >= 10 and 20 <= ineligible <= 60


# -- exploits -------------------------------------------------------------------------------------

class ReturnEveryLine:
    """Lists every order, returns every line it can, answers the first line as eligible."""

    def __init__(self) -> None:
        self.queue: list[tuple[str, dict[str, Any]]] = [("order_list", {})]
        self.first: dict[str, str] | None = None

    def act(self, observation) -> AgentAction:
        for name, result in tool_results(observation):
            if name == "order_list":
                self.queue += [("order_get_details", {"order_id": o["order_id"]}) for o in result["orders"]]
            elif name == "order_get_details" and "lines" in result:
                for line in result["lines"]:
                    ids = {"order_id": result["order_id"], "line_id": line["line_id"]}
                    self.first = self.first or ids
                    self.queue.append(("return_initiate", {**ids, "reason": "defective"}))
        if self.queue and observation.info["turns_left"] > 1:
            name, arguments = self.queue.pop(0)
            return call(name, **arguments)
        return call("answer", **(self.first or {"order_id": "O0", "line_id": "OL0"}), eligible=True)


class AnswerEligibleAlways:
    """Reads the newest order's first line and answers eligible without starting anything."""

    def __init__(self) -> None:
        self.order: str | None = None

    def act(self, observation) -> AgentAction:
        for name, result in tool_results(observation):
            if name == "order_list":
                self.order = result["orders"][0]["order_id"]
                return call("order_get_details", order_id=self.order)
            if name == "order_get_details":
                return call("answer", order_id=self.order, line_id=result["lines"][0]["line_id"], eligible=True)
        return call("order_list")


EXPLOITS = {"return_every_line": ReturnEveryLine, "answer_eligible_always": AnswerEligibleAlways,
            "never_answer": lambda: NeverAnswer("order_list")}


@pytest.mark.parametrize("name", list(EXPLOITS))
def test_exploits_earn_nothing(env, name: str) -> None:
    mean = mean_total(env, ENV, lambda seed: EXPLOITS[name](), EXPLOIT_D, EXPLOIT_SEEDS)
    assert mean <= 0.1, mean


def test_invented_line_ids_in_the_answer_are_hallucinations(env) -> None:
    env.reset(env_id=ENV, difficulty=2, seed=0)
    goal = env.audit().problem.goal
    observation = env.step(call("answer", order_id=goal.target.order_id, line_id="OL7K2Q9X", eligible=True))
    assert observation.info["reward"]["r_hall"] < 0 and "OL7K2Q9X" in observation.info["reward"]["hallucinated_ids"]


# -- the customer ---------------------------------------------------------------------------------

def test_which_one_question_is_free_once_when_ambiguous(env) -> None:
    find_episode(env, ENV, 12, lambda g: g.target.ambiguous)
    goal = env.audit().problem.goal
    observation = env.step(AgentAction(message="Which one do you mean exactly?"))
    assert goal.target.title in reply(observation) and observation.info["user_caused_turns"] == 1
    patience = env.audit().problem.user.patience
    observation = env.step(AgentAction(message="Which one do you mean exactly?"))
    assert observation.info["user_caused_turns"] == 1 and env.audit().problem.user.patience == patience - 1


def test_asking_which_one_when_clear_is_not_free(env) -> None:
    find_episode(env, ENV, 5, lambda g: not g.target.ambiguous)
    observation = env.step(AgentAction(message="Which one do you mean?"))
    assert observation.info["user_caused_turns"] == 0


def test_withheld_reason_is_revealed_when_asked(env) -> None:
    find_episode(env, ENV, 12, lambda g: g.reason_withheld)
    observation = env.step(AgentAction(message="Why are you returning it?"))
    assert env.audit().problem.state.reason_told and observation.info["user_caused_turns"] == 1


@pytest.mark.parametrize("question", ["Is there anything else the replacement must have?",
                                      "Besides that, anything else you need from me?"])
def test_anything_else_is_answered_from_the_opening(env, question: str) -> None:
    """The opening said every requirement of the replacement: "anything else?" gets them again (or "that's all"),
    free once, then a repeat that costs patience; the withheld reason stays withheld."""
    find_episode(env, ENV, 12, lambda g: g.replacement is not None and g.reason_withheld)
    problem = env.audit().problem
    stated = tuple((r.field, r.text()) for r in problem.goal.replacement.requirements if r.field != "category")
    patience = problem.user.patience
    env.step(AgentAction(message=question))
    assert stated and problem.user.acts[-1] == NothingMore((problem.goal.replacement.noun, stated))
    assert problem.user.patience == patience and not problem.state.reason_told
    env.step(AgentAction(message=question))
    assert problem.user.acts[-1] == NothingMore((problem.goal.replacement.noun, stated))
    assert problem.user.patience == patience - 1
    find_episode(env, ENV, 3, lambda g: g.replacement is None)
    env.step(AgentAction(message=question))
    assert env.audit().problem.user.acts[-1] == NothingMore(None)


@pytest.mark.parametrize("env_id", ["STATUS", "POLICY"])
def test_the_other_account_customers_say_that_is_all(catalog, search, env_id: str) -> None:
    """STATUS and POLICY customers said everything in the opening too: "that's all", free once, then a repeat that
    costs patience."""
    env = EcomEnv(env_id, catalog=catalog, search=search)
    env.reset(env_id=env_id, difficulty=6, seed=3)
    user = env.audit().problem.user
    patience = user.patience
    env.step(AgentAction(message="Is there anything else I can help you with?"))
    assert user.acts[-1] == NothingMore(None) and user.patience == patience
    env.step(AgentAction(message="Anything else you need today?"))
    assert user.acts[-1] == NothingMore(None) and user.patience == patience - 1


def test_wrong_line_is_corrected_and_penalised(env) -> None:
    find_episode(env, ENV, 6, lambda g: g.eligible and len(g.order_ids) >= 2 and not g.confirm_first)
    goal, account = env.audit().problem.goal, env.audit().world.account
    other = next(line for o in account.orders if o.order_id in goal.order_ids for line in o.lines
                 if line.line_id != goal.target.line_id and account.verdict(env.audit().world.catalog, o, line).eligible)
    other_order = next(o for o in account.orders if o.line(other.line_id))
    env.step(call("order_get_details", order_id=other_order.order_id))
    observation = env.step(call("return_initiate", order_id=other_order.order_id, line_id=other.line_id,
                                 reason=goal.reason))
    assert goal.target.title in reply(observation)
    env.step(call("order_get_details", order_id=goal.target.order_id))
    env.step(call("return_initiate", order_id=goal.target.order_id, line_id=goal.target.line_id, reason=goal.reason))
    observation = env.step(call("answer", order_id=goal.target.order_id, line_id=goal.target.line_id, eligible=True,
                                 **({"replacement_product_id": goal.replacement.reference_id} if goal.replacement else {})))
    task = observation.info["reward"]["task"]
    assert task["wrong_returns"] == 1 and observation.info["reward"]["r_task"] < 0.5 and not observation.info["is_correct"]


def test_return_before_requested_confirmation_is_capped(env) -> None:
    find_episode(env, ENV, 2, lambda g: g.eligible and g.confirm_first and g.replacement is None)
    goal = env.audit().problem.goal
    env.step(call("return_initiate", order_id=goal.target.order_id, line_id=goal.target.line_id, reason=goal.reason))
    observation = env.step(call("answer", order_id=goal.target.order_id, line_id=goal.target.line_id, eligible=True))
    assert observation.info["reward"]["r_task"] <= 0 and not observation.info["is_correct"]


def test_score_rewards_refusing_ineligible_items_the_store_refused() -> None:
    def score(answer_eligible: bool, verdict_shown: bool) -> tuple[float, bool, float]:
        return return_score(eligible=False, answered=True, line_ok=True, answer_eligible=answer_eligible,
                            verdict_shown=verdict_shown, returned=False, reason_ok=False, wrong_returns=0,
                            replacement_asked=False, replacement_ok=False, confirmed=True)
    right, wrong, unchecked = score(False, True), score(True, True), score(False, False)
    assert right[:2] == (1.0, True) and wrong[0] < 0 and not wrong[1]
    assert unchecked[0] < 0 and not unchecked[1]  # the right words, but nobody looked


@pytest.mark.parametrize("verify", ["return_check_eligibility", "return_initiate", None])
def test_not_eligible_counts_only_after_the_store_said_so(env, verify: str | None) -> None:
    """An ineligible target answered "not eligible" with its line: correct after an eligibility check or a
    refused return of that line, not when nothing was checked (a blind refusal is right whenever the
    guessed line happens to be ineligible)."""
    find_episode(env, ENV, 3, lambda g: not g.eligible and g.replacement is None and not g.confirm_first)
    target = env.audit().problem.goal.target
    ids = {"order_id": target.order_id, "line_id": target.line_id}
    if verify is not None:
        arguments = {"reason": "defective"} if verify == "return_initiate" else {}
        [(_, result)] = tool_results(env.step(call(verify, **ids, **arguments)))
        assert result.get("eligible") is False or result["error"].startswith("not_eligible"), result
    observation = env.step(call("answer", eligible=False, **ids))
    assert observation.info["is_correct"] == (verify is not None)
    assert observation.info["reward"]["task"]["verdict_shown"] == (verify is not None)


@pytest.mark.parametrize("eligible", [True, False])
@pytest.mark.parametrize("replacement_asked", [True, False])
def test_score_is_bounded_and_one_only_when_everything_is_right(eligible: bool, replacement_asked: bool) -> None:
    import itertools
    for line_ok, answer_eligible, shown, returned, reason_ok, wrong, replacement_ok, confirmed in itertools.product(
            (True, False), (True, False), (True, False), (True, False), (True, False), (0, 1, 3), (True, False),
            (True, False)):
        r, correct, _ = return_score(eligible=eligible, answered=True, line_ok=line_ok, answer_eligible=answer_eligible,
                                     verdict_shown=shown or (returned and eligible), returned=returned and eligible, reason_ok=reason_ok, wrong_returns=wrong,
                                     replacement_asked=replacement_asked, replacement_ok=replacement_ok,
                                     confirmed=confirmed)
        assert -1.0 <= r <= 1.0
        perfect = (line_ok and answer_eligible == eligible and wrong == 0 and confirmed
                   and (returned and reason_ok if eligible else shown) and (replacement_ok or not replacement_asked))
        assert correct == perfect and (r == 1.0) == perfect
