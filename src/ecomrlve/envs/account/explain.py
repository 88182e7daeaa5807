"""The facts STATUS, RETURN and POLICY verdicts rest on: how the customer names the order (or states their
situation), and the order's status, the line's eligibility, the profile and the policy sections as the
account and policy tools show them."""

from __future__ import annotations

from typing import Any

from ecomrlve.envs.account.policy import KIND_BY_NAME
from ecomrlve.envs.explain import Fact, Said, Shown, ShownText, Transcript, Verdict, Where
from ecomrlve.envs.recommend.explain import product_facts, requirement_facts

_ORDER_TOOLS = ("order_list", "order_get_details")


def _identification(phrase: str, exact: list[str], target: dict[str, Any], ambiguous: bool) -> list[Fact]:
    """How the customer names the order (``phrase``): the item when the phrase names it, and each exact
    detail (a date, an order id); an ambiguous reference is resolved when the agent asks which one."""
    name = " ".join(x for x in (target.get("brand"), target.get("model"), target.get("noun")) if x)
    named = next((n for n in (name, target.get("noun", "")) if n and n.lower() in phrase.lower()), None)
    facts = [Fact("order of", named, Said((named,)))] if named else []
    facts += [Fact("identified by", e, Said((e,)), askable=ambiguous) for e in exact]
    return facts


def status(goal: dict[str, Any], task: dict[str, Any], answer: dict[str, Any] | None, turn: int | None,
           transcript: Transcript) -> Verdict:
    target = goal["target"]
    order = target["order_id"]
    facts = _identification(goal.get("phrase", ""), goal.get("exact", []), target, bool(goal.get("ambiguous")))
    given = answer or {}
    facts.append(Fact(f"order {order} status", goal.get("status", ""), Shown(order, "status", "order_id", _ORDER_TOOLS),
                      met=None if answer is None else (given.get("order_id") == order and given.get("status") == goal.get("status"))))
    if goal.get("want_eta") and goal.get("eta"):
        facts.append(Fact(f"order {order} eta", goal["eta"], Shown(order, "eta", "order_id", _ORDER_TOOLS),
                          met=None if answer is None else bool(task.get("eta_ok"))))
    notes = ["no answer"] if answer is None else []
    if answer is not None and given.get("order_id") != order:
        notes.append(f"answered order {given.get('order_id')}, the customer's is {order}")
    return Verdict(tuple(facts), turn, tuple(notes))


def returns(goal: dict[str, Any], task: dict[str, Any], answer: dict[str, Any] | None, turn: int | None,
            transcript: Transcript) -> Verdict:
    target = goal["target"]
    line, order = target["line_id"], target["order_id"]
    given = answer or {}
    facts = _identification(target.get("phrase", ""), target.get("exact", []), target, bool(target.get("ambiguous")))
    facts.append(Fact("reason", goal.get("reason_phrase", ""), Said((goal.get("reason_phrase", ""),)),
                      askable=bool(goal.get("reason_withheld"))))
    facts.append(Fact("line", line, Shown(line, "line_id", "line_id"),
                      met=None if answer is None else (given.get("line_id") == line and given.get("order_id") == order)))
    shown: tuple[Where, ...] = (Shown(line, "eligible", "line_id", ("return_check_eligibility",)),
                                ShownText((f"not_eligible_{goal.get('verdict_code')}",)))
    facts.append(Fact(f"line {line} eligible", str(goal.get("eligible")).lower(), shown,
                      met=None if answer is None else given.get("eligible") == goal.get("eligible")))
    replacement = goal.get("replacement")
    notes = ["no answer"] if answer is None else []
    if replacement:
        requirements = replacement["requirements"]
        facts.append(Fact("replacement", replacement.get("noun", ""), Said((replacement.get("noun", ""),))))
        facts += requirement_facts(requirements, set(), name="replacement ")
        pid = given.get("replacement_product_id")
        if pid:
            facts += product_facts(transcript, pid, requirements, name="replacement ")
        elif answer is not None:
            notes.append("no replacement answered")
    if task.get("wrong_returns"):
        notes.append(f"returned {task['wrong_returns']} line(s) the customer did not ask to return")
    if task.get("confirmed") is False:
        notes.append("the customer asked to confirm first; the return was started unconfirmed")
    return Verdict(tuple(facts), turn, tuple(notes))


def policy(goal: dict[str, Any], task: dict[str, Any], answer: dict[str, Any] | None, turn: int | None,
           transcript: Transcript) -> Verdict:
    """The stated facts of the situation, the hidden ones (the profile's tier, the order's item) and the
    policy sections the answer is worked out from."""
    facts = [Fact("customer says", e, Said((e,))) for e in goal.get("exact", [])]
    for condition in goal.get("hidden", []):
        if condition == "tier":
            facts.append(Fact("membership tier", str(goal["situation"].get("tier")),
                              ShownText(("tier",), ("user_get_profile",))))
        elif goal.get("order_id"):
            value = goal["situation"].get(condition)
            facts.append(Fact(f"order {goal['order_id']} {condition}", str(value),
                              Shown(goal["order_id"], "order_id", "order_id", _ORDER_TOOLS)))
    kind = KIND_BY_NAME.get(goal.get("kind", ""))
    for section in kind.sections if kind is not None else ():
        facts.append(Fact("policy section", section, Shown(section, "text", "section_id", ("policy_search",))))
    expected = goal.get("expected_number") if goal.get("expected_yes_no") is None else goal.get("expected_yes_no")
    notes = ["no answer"] if answer is None else [f"expected {expected}, answered {task.get('given')}"
                                                   + (f" (basis {task.get('given_basis')}, expected "
                                                      f"{task.get('expected_basis')})" if goal.get("expected_yes_no") else "")]
    return Verdict(tuple(facts), turn, tuple(notes))
