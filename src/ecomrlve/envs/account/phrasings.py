"""How the account shopper (RETURN, STATUS, POLICY) says its acts."""

from __future__ import annotations

import random

from ecomrlve.catalog.product_type import indefinite
from ecomrlve.envs.account import acts as A
from ecomrlve.envs.recommend.phrasings import requirements_text
from ecomrlve.user.realiser import ActTemplates, pick


def _account_text(act: A.AccountAct, rng: random.Random) -> str:
    """Templates for the account acts (RETURN, STATUS, POLICY)."""
    if isinstance(act, A.RequestReturn):
        text = pick(rng, ["Hi, I'd like to return {item}.", "Hello, I want to send back {item}.",
                           "Hey, can you help me return {item}?", "I need to return {item}, please."]).format(item=act.item)
        if act.reason:
            text += " " + pick(rng, ["The problem: {r}.", "Reason: {r}.", "{R}."]).format(r=act.reason, R=act.reason[0].upper() + act.reason[1:])
        if act.replacement:
            wanted = _replacement_text(act.replacement, rng)
            text += " " + pick(rng, ["I'd also like a replacement: {x}.", "Could you also recommend {x} instead?",
                                      "And please suggest a replacement - {x}."]).format(x=wanted)
        if act.confirm_first:
            text += " " + pick(rng, ["Please check with me before you start the return.",
                                      "Ask me to confirm before starting anything.",
                                      "Don't start the return until I confirm, please."])
        return text
    if isinstance(act, A.AskOrderStatus):
        text = pick(rng, ["Hi, where is {o}?", "Hello, what's the status of {o}?", "Can you check on {o} for me?",
                           "Hey, any news on {o}?"]).format(o=act.order)
        if act.want_eta:
            text += " " + pick(rng, ["When will it arrive?", "And when should I expect it?",
                                      "What's the expected delivery date?"])
        return text
    if isinstance(act, A.AskPolicy):
        facts = " ".join(act.facts)
        lead = pick(rng, ["Hi, a question about your policy.", "Hello!", "Quick question.", "Hi there."])
        return " ".join(part for part in (lead, facts, act.question) if part)
    if isinstance(act, A.IdentifyItem):
        return pick(rng, ["I mean {i}.", "It's {i}.", "Sorry, I meant {i}."]).format(i=act.item)
    if isinstance(act, A.TellWhen):
        text = pick(rng, ["I ordered the {i} {w}.", "The {i}? I ordered it {w}."]).format(i=act.item, w=act.when)
        if not act.exact_date:
            text = pick(rng, ["I don't remember the exact date.", "Not sure of the exact day."]) + " " + text
        return text
    if isinstance(act, A.TellPrice):
        return pick(rng, ["I paid ${p} for the {i}.", "The {i} was ${p}."]).format(i=act.item, p=act.price)
    if isinstance(act, A.PickLine):
        return pick(rng, ["The {c} one - that's the {i}.", "It's the {c} one, the {i}."]).format(c=act.choice, i=act.item)
    if isinstance(act, A.NotThese):
        return pick(rng, ["Neither of those - I mean {i}.", "None of those, sorry. It's {i}."]).format(i=act.item)
    if isinstance(act, A.ExplainReason):
        return pick(rng, ["The reason: {r}.", "Well, {r}.", "Because {r}."]).format(r=act.reason)
    if isinstance(act, A.NothingMore):
        if act.replacement is None:
            return pick(rng, ["No, that's all, thanks.", "Nothing else, thanks.", "That's everything.",
                              "No, nothing more."])
        wanted = _replacement_text(act.replacement, rng)
        return pick(rng, ["That's all: {x}.", "Nothing more than I said - {x}.", "Just {x}, nothing else.",
                          "That's everything: {x}."]).format(x=wanted)
    if isinstance(act, A.CheckMyAccount):
        return pick(rng, ["It should all be in my account - can you check?", "You can see that in my account, right?",
                           "I already told you what I know; please look at my orders."])
    if isinstance(act, A.WrongItem):
        return pick(rng, ["That's not the one! I meant {w}.", "Wrong item - I was talking about {w}.",
                           "No, not that one. I mean {w}."]).format(w=act.wanted)
    raise TypeError(f"no template for dialogue act {type(act).__name__}")


def _replacement_text(replacement: tuple[str, tuple[tuple[str, str], ...]], rng: random.Random) -> str:
    """"another charger for $22 or less": the replacement and every requirement it has."""
    noun, requirements = replacement
    return " ".join(part for part in (_another(noun), requirements_text(requirements, rng)) if part)


def _another(noun: str) -> str:
    """"another keyboard", "another pair of running shoes"."""
    phrase = indefinite(noun)
    if phrase.startswith("some "):
        return "other " + phrase[5:]
    return "another " + phrase.split(" ", 1)[1]


ACCOUNT_TEMPLATES = ActTemplates(acts=A.AccountAct, text=_account_text, protected=A.account_values)
