"""The facts STATUS, RETURN and POLICY verdicts rest on: how the customer names the order (or states their
situation), and the order's status, the line's eligibility, the profile and the policy sections as the
account and policy tools show them."""

from __future__ import annotations

from typing import Any

from ecomrlve.envs.account.policy import KIND_BY_NAME
from ecomrlve.envs.explain import Fact, Failure, Said, Shown, ShownText, Transcript, Verdict, Where
from ecomrlve.envs.recommend.explain import in_stock_fact, kind_fact, product_facts, requirement_facts

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
    judged = answer is not None and given.get("order_id") == order  # the status counts only for the right order
    facts.append(Fact(f"order {order} status", goal.get("status", ""), Shown(order, "status", "order_id", _ORDER_TOOLS),
                      met=given.get("status") == goal.get("status") if judged else None))
    if goal.get("want_eta") and goal.get("eta"):
        facts.append(Fact(f"order {order} eta", goal["eta"], Shown(order, "eta", "order_id", _ORDER_TOOLS),
                          met=bool(task.get("eta_ok")) if judged else None))
    named = tuple(f.name for f in facts if f.name in ("order of", "identified by"))
    failures = [Failure("no answer")] if answer is None else []
    if answer is not None and given.get("order_id") != order:
        failures.append(Failure(f"answered order {given.get('order_id')}, the customer's is {order}", named))
    elif answer is not None and task.get("verified") is False:
        failures.append(Failure("no tool showed the order's status while the request was handled"))
    return Verdict(tuple(facts), turn, (), tuple(failures))


def returns(goal: dict[str, Any], task: dict[str, Any], answer: dict[str, Any] | None, turn: int | None,
            transcript: Transcript) -> Verdict:
    target = goal["target"]
    line, order = target["line_id"], target["order_id"]
    given = answer or {}
    facts = _identification(target.get("phrase", ""), target.get("exact", []), target, bool(target.get("ambiguous")))
    reason = goal.get("reason_phrase", "")
    fuzzy = " ".join("~" + w if len(w) >= 3 else w for w in reason.split())  # the reason's words are not protected
    facts.append(Fact("reason", reason, Said((fuzzy,)),
                      askable=bool(goal.get("reason_withheld"))))
    facts.append(Fact("line", line, Shown(line, "line_id", "line_id")))
    shown: tuple[Where, ...] = (Shown(line, "eligible", "line_id", ("return_check_eligibility",)),
                                ShownText((f"not_eligible_{goal.get('verdict_code')}",)))
    facts.append(Fact(f"line {line} eligible", str(goal.get("eligible")).lower(), shown,
                      met=None if answer is None else given.get("eligible") == goal.get("eligible")))
    replacement = goal.get("replacement")
    named = tuple(f.name for f in facts if f.name in ("order of", "identified by"))
    failures = [Failure("no answer")] if answer is None else []
    if answer is not None and (given.get("line_id"), given.get("order_id")) != (line, order):
        failures.append(Failure(f"answered line {given.get('line_id')} of order {given.get('order_id')}, the "
                                f"customer's is {line} of {order}", ("line", *named)))
    if answer is not None and goal.get("eligible") and not task.get("returned"):
        failures.append(Failure("the line is eligible and its return was not started", (f"line {line} eligible", *named)))
    if task.get("returned") and task.get("reason_ok") is False:
        failures.append(Failure("the return was started with another reason than the customer's", ("reason",)))
    if answer is not None and not goal.get("eligible") and task.get("verdict_shown") is False:
        failures.append(Failure("the line's eligibility verdict was never shown (return_check_eligibility)"))
    if replacement:
        requirements = replacement["requirements"]
        facts.append(Fact("replacement", replacement.get("noun", ""), Said((replacement.get("noun", ""),))))
        facts += requirement_facts(requirements, set(), name="replacement ")
        pid = given.get("replacement_product_id")
        if pid == target.get("product_id"):
            failures.append(Failure("the replacement is the product being returned", ("line", "replacement")))
        if pid:
            facts.append(kind_fact(transcript, pid, replacement.get("noun", ""), name="replacement "))
            facts += product_facts(transcript, pid, requirements, name="replacement ")
            facts.append(in_stock_fact(transcript, pid, False, turn))
        elif answer is not None:
            failures.append(Failure("no replacement answered", ("replacement",)))
    if task.get("wrong_returns"):
        failures.append(Failure(f"returned {task['wrong_returns']} line(s) the customer did not ask to return", named))
    if task.get("confirmed") is False:
        failures.append(Failure("the customer asked to confirm first; the return was started unconfirmed"))
    return Verdict(tuple(facts), turn, (), tuple(failures))


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
    given = f"answered {task.get('given')}, expected {expected}" + (
        f" (basis {task.get('given_basis')}, expected {task.get('expected_basis')})" if goal.get("expected_yes_no") else "")
    rests_on = tuple(dict.fromkeys(f.name for f in facts))
    if answer is None:
        return Verdict(tuple(facts), turn, (), (Failure("no answer"),))
    exact = task.get("given") == expected and task.get("given_basis") == task.get("expected_basis")
    return Verdict(tuple(facts), turn, (given,) if exact else (), () if exact else (Failure(given, rests_on),))
