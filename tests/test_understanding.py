"""The shopper understands natural messages (issue 29 §1): the bank's train half, the issue's examples in
real episodes, and no withheld value for a message that did not ask for it."""

from __future__ import annotations

from typing import Any

import pytest
from understanding_bank import (
    BLIND_BATCHES,
    CORPUS_BATCHES,
    GROUPS,
    RETIRED,
    TRAIN_BATCHES,
    fold,
    leak_seeds,
    leaks,
    load_bank,
    seen_texts,
    understanding_rates,
)

from ecomrlve.actions import AgentAction
from ecomrlve.episode import EcomEnv
from ecomrlve.protocol import Observation
from ecomrlve.user.dialogue import ItemNames
from ecomrlve.user.understanding import InPlay, rule_reading, understand

BAR = 0.95
BANK = load_bank()


@pytest.fixture(scope="module")
def c8(catalog, search) -> EcomEnv:
    return EcomEnv("C8", catalog=catalog, search=search, overrides={"p_noise": 0.0})


def reply(observation: Observation) -> str:
    return " ".join(m["content"] for m in observation.messages if m["role"] == "user")


def find(env: EcomEnv, env_id: str, difficulty: int, predicate: Any, seeds: range = range(300)) -> int:
    """The first seed whose episode the predicate accepts (called with the audit)."""
    for seed in seeds:
        env.reset(env_id=env_id, difficulty=difficulty, seed=seed)
        if predicate(env.audit()):
            return seed
    raise AssertionError(f"no {env_id} episode at d={difficulty} fits")


class Rewording:
    """The environment's oracle, with one of its messages said in other words."""

    def __init__(self, oracle: Any, replace: Any) -> None:
        self.oracle, self.replace = oracle, replace

    def act(self, observation: Observation) -> AgentAction:
        action = self.oracle.act(observation)
        message = self.replace(action.message) if action.message else action.message
        return AgentAction(message=message, tool_calls=action.tool_calls)


def play_from_reset(env: EcomEnv, env_id: str, difficulty: int, seed: int, replace: Any) -> Observation:
    observation = env.reset(env_id=env_id, difficulty=difficulty, seed=seed)
    agent = Rewording(env.audit().oracle(), replace)
    for _ in range(60):
        observation = env.step(agent.act(observation))
        if observation.done:
            return observation
    raise AssertionError("episode did not end")


# -- the bank ------------------------------------------------------------------------------------------

def test_bank_train_half_meets_the_bar() -> None:
    rates = understanding_rates([m for m in BANK if m.half == "train"])
    assert set(rates) == set(GROUPS)
    for group, (hit, total) in rates.items():
        assert total >= 10 and hit / total >= BAR, (group, hit, total)


def test_bank_is_large_and_split_evenly() -> None:
    assert len(BANK) >= 300
    for group in GROUPS:
        halves = [m.half for m in BANK if m.group == group]
        assert abs(halves.count("train") - halves.count("heldout")) <= 1


@pytest.mark.parametrize("name", TRAIN_BATCHES)
def test_training_batches_are_understood(name: str) -> None:
    """Each training batch (written to find misreadings, varied styles) is read exactly, all of it; the held-out
    seventh batch stays as written (60 messages, every group) and is never asserted on here."""
    trained = load_bank(name)
    assert len(trained) >= 15 and {m.half for m in trained} == {"train"}
    missed = [m.id for m in trained if not m.understood(understand(m.text, m.in_play))]
    assert not missed, missed
    held = load_bank(BLIND_BATCHES[1])
    assert len(held) >= 60 and {m.half for m in held} == {"heldout"} and {m.group for m in held} == set(GROUPS)


def test_a_contraction_is_no_slip_of_a_cue_word() -> None:
    """"That's" is not a slip of "what's": the statement before the question asks nothing."""
    cable = InPlay(values={"connector": ("USB-C", "Lightning")})
    reading = understand("That's the Bolt 3 in USB-C. Checkout?", cable)
    assert reading.confirm and not reading.topics
    assert understand("Is that deliverd by friday?").topics == frozenset({"shipping"})  # a slip is still one


def test_a_value_after_a_dash_or_a_size_number_after_its_article() -> None:
    two = InPlay(values={"size": ("XS", "M", "XXL"), "connector": ("USB-C", "Lightning", "Micro-USB")})
    reading = understand("For the Nexworks jacket, is it XS or M? And the Voltix cable - Lightning?", two)
    assert reading.topics == frozenset({"size", "connector"})
    shoes = InPlay(values={"size": ("9", "10", "11")})
    assert understand("Are you an 11?", shoes).topics == frozenset({"size"})
    assert understand("Is one that ships in 10 days fine?", shoes).topics == frozenset({"shipping"})


def test_a_value_with_its_apostrophe_s_or_as_a_verb() -> None:
    mug = InPlay(values={"material": ("Stainless Steel", "Ceramic", "Wood")})
    assert understand("Wood's lovely but so is ceramic - which d'you fancy?", mug).topics == frozenset({"material"})
    pan = InPlay(values={"brand": ("Culina", "Ferro"), "form": ("Cream", "Stick")})
    assert understand("Any make you'd rather stick with?", pan).topics == frozenset({"brand"})


@pytest.mark.parametrize("text", ["anythign else i should keep in mind", "So, what are we shopping for today?",
                                  "Whats the tee for - running, lounging, work?", "How do you picture using it?",
                                  "Right then, what are we after?", "Are there any non-negotiables?",
                                  "What should I keep an eye out for?"])
def test_open_questions_in_other_forms(text: str) -> None:
    reading = understand(text)
    assert reading.open and not reading.topics and not reading.confirm


@pytest.mark.parametrize(("text", "topics"), [
    ("Size-wise, what do you need?", {"size"}),
    ("What do you need the mug made of?", {"material"}),
    ("What will you be using the keyboard with?", {"connector"}),
    ("I'll add it now - colour?", {"color"}),
    ("Does the lamp need to be very bright, or is a soft glow fine?", {"wattage"}),
    ("Hiya! Just need your size for the Atlas 22 and we're sorted :)", {"size"}),
    ("Is there a price you don't want to go past?", {"price"}),
    ("Do you need them here by Friday?", {"shipping"}),
    ("Has the monitor got to be a particular size, like 27 inches or more?", {"screen"}),
    ("Is getting it quickly important?", {"shipping"}),
])
def test_a_topic_asked_in_other_words_asks_that_topic_alone(text: str, topics: set[str]) -> None:
    reading = understand(text)
    assert reading.topics == topics and not (reading.open or reading.confirm)


@pytest.mark.parametrize(("text", "which", "reason"), [
    ("Why's it going back?", False, True),
    ("Are you returning it because it's faulty?", False, True),
    ("What's prompting the return?", False, True),
    ("When did the one with the problem arrive?", True, False),
    ("Is the hoodie the one with the issue?", True, False),
])
def test_why_and_which_about_a_returned_item(text: str, which: bool, reason: bool) -> None:
    reading = understand(text, InPlay(dates=("September 10", "September 11")))
    assert (reading.which, reading.reason, reading.confirm) == (which, reason, False)


@pytest.mark.parametrize("text", ["Want me to kick off the return?", "Are we all done then?"])
def test_go_ahead_in_other_words(text: str) -> None:
    assert understand(text).confirm


@pytest.mark.parametrize(("text", "values", "topics"), [
    ("For the Nexworks Atlas 22 rain jacket, would you like XS, M or XXL?", {"size": ("XS", "M", "XXL")}, {"size"}),
    ("Stainless Steel, Ceramic or Wood?", {"material": ("Stainless Steel", "Ceramic", "Wood")}, {"material"}),
    ("What device will you use the keyboard with?", {}, {"connector"}),
    ("What size do you usually wear?", {}, {"size"}),
    ("When do you need it by?", {}, {"shipping"}),
    ("Do you have a favourite make?", {}, {"brand"}),
])
def test_the_issues_attribute_questions(text: str, values: dict, topics: set[str]) -> None:
    reading = understand(text, InPlay(values=values))
    assert reading.topics == topics and not (reading.open or reading.confirm or reading.which)


@pytest.mark.parametrize("text", ["Can I finalize it?", "Should I proceed?", "Good to go?",
                                  "Want me to go ahead with the return?"])
def test_the_issues_confirmations(text: str) -> None:
    reading = understand(text)
    assert reading.confirm and not reading.topics


@pytest.mark.parametrize("text", ["Tell me a bit more about what you need.", "Is there anything I should avoid?"])
def test_the_issues_open_questions(text: str) -> None:
    assert understand(text).open


@pytest.mark.parametrize("text", ["Is it the one from September 10 or the one from September 11?",
                                  "Do you remember roughly when you ordered it?"])
def test_the_issues_disambiguation(text: str) -> None:
    assert understand(text, InPlay(dates=("September 10", "September 11"))).which


def test_a_single_number_is_no_option_list() -> None:
    """A bare number counts as a size only in a list ("9 or 10?"), never "ships in 7 days"."""
    shoes = InPlay(values={"size": ("7", "9", "10")})
    assert understand("Is one that ships in 7 days fine?", shoes).topics == frozenset({"shipping"})
    assert understand("Are you a 9 or a 10?", shoes).topics == frozenset({"size"})


def test_a_value_said_with_its_article_or_noun_names_its_topic() -> None:
    """A common word that is a value counts as one when said as one ("a black one", "in wood")."""
    hoodie = InPlay(values={"color": ("Black", "Navy")})
    assert understand("Do you want a black one?", hoodie).topics == frozenset({"color"})
    assert understand("Would you like it in wood?", InPlay(values={"material": ("Wood", "Glass")})).topics == {"material"}


def test_greetings_and_what_to_do_questions_are_no_go_ahead() -> None:
    """The go-ahead is read only in the sentences that ask, and not in a clause asking what to do."""
    reading = understand("Happy to help! What do you need the lamp to do?")
    assert reading.open and not reading.confirm
    assert not understand("Where should I start?").confirm
    assert understand("I can place the order whenever you're ready. Should I?").confirm
    assert understand("How about I place the order now?").confirm


def test_an_open_question_with_examples_keeps_its_topics() -> None:
    reading = understand("What matters most to you, e.g. price or brand?")
    assert reading.open and reading.topics == frozenset({"price", "brand"})


def test_a_choice_among_unknown_options_is_no_open_question(c8: EcomEnv) -> None:
    """"Any preference between oak, pine and maple?" asks about those options, not for every requirement:
    where no item has them the shopper reveals nothing (it was read as "any preference?" and told all)."""
    assert not understand("Any preference between oak, pine and maple?").open
    assert understand("Any hard requirements or nice-to-haves?").open
    assert understand("Is this for sport, work or casual wear?").open
    seed = find(c8, "PD", 10, lambda a: bool(a.problem.state.withheld))
    c8.reset(env_id="PD", difficulty=10, seed=seed)
    state = c8.audit().problem.state
    withheld = set(state.withheld)
    c8.step(AgentAction(message="Any preference between oak, pine and maple?"))
    assert state.withheld == withheld


def test_which_is_asked_only_about_the_customers_orders() -> None:
    """Without orders in play a message asks no "which order" ("more details so I can find the best match"
    asks for requirements); with them, a question about the item asks which line is meant."""
    details = "Could you give me some more details so I can find the best match?"
    assert understand(details).open and not understand(details).which
    orders = InPlay(dates=("September 10", "September 11"))
    for text in ("How recent was it?", "Do you recall what the item cost?", "Was it bought in July or August?"):
        reading = understand(text, orders)
        assert reading.which and not reading.topics, text


def test_reading_is_deterministic() -> None:
    for m in BANK[::7]:
        assert understand(m.text, m.in_play) == understand(m.text, m.in_play)


# -- the issue's examples in episodes ---------------------------------------------------------------------

def test_cart_finalize_meets_the_wish_to_confirm(c8: EcomEnv) -> None:
    """A perfect cart, then "Can I finalize it?": the shopper confirms and the episode is correct."""
    seed = find(c8, "CART", 2, lambda a: a.problem.goal.confirm_first)
    final = play_from_reset(c8, "CART", 2, seed, lambda m: "Can I finalize it?" if "confirm" in m else m)
    assert final.info["reward"]["is_correct"], final.info["reward"]
    assert final.info["reward"]["r_task"] == 1.0


def test_cart_option_list_of_real_values_gets_the_variant(c8: EcomEnv) -> None:
    """A withheld variant asked as "would you like A, B or C?" with the product's real values is answered."""
    def withheld_variant_only(audit: Any) -> bool:
        goal = audit.problem.goal
        return bool(goal.withheld) and all(kind == "variant" for _, kind in goal.withheld) and not any(
            it.stock_out for it in goal.items)

    seed = find(c8, "CART", 8, withheld_variant_only)
    c8.reset(env_id="CART", difficulty=8, seed=seed)
    audit = c8.audit()
    i, _ = audit.problem.goal.withheld[0]
    item = audit.problem.goal.items[i]
    values = [v.value for v in audit.world.variants(item.row)]
    assert item.variant_value in values
    question = f"For {item.full_phrase[4:]}, would you like {', '.join(values[:-1])} or {values[-1]}?"
    observation = c8.step(AgentAction(message=question))
    assert item.variant_value in reply(observation)
    assert all(c.revealed for c in audit.problem.state.constraints if c.item == i and c.attribute == "variant")


def test_pd_tell_me_more_reveals_a_withheld_requirement(c8: EcomEnv) -> None:
    seed = find(c8, "PD", 10, lambda a: bool(a.problem.state.withheld))
    c8.reset(env_id="PD", difficulty=10, seed=seed)
    state = c8.audit().problem.state
    withheld = [state.requirements[i] for i in sorted(state.withheld)]
    observation = c8.step(AgentAction(message="Tell me a bit more about what you need."))
    assert not state.withheld
    assert all(r.text() in reply(observation) for r in withheld)
    assert observation.info["user_caused_turns"] == 1


def test_return_go_ahead_in_other_words_is_a_confirmation(c8: EcomEnv) -> None:
    def asks_first(audit: Any) -> bool:
        return audit.problem.goal.confirm_first and audit.problem.goal.eligible

    seed = find(c8, "RETURN", 3, asks_first)
    final = play_from_reset(c8, "RETURN", 3, seed,
                            lambda m: "Want me to go ahead with the return?" if "Please confirm" in m else m)
    assert final.info["reward"]["is_correct"], final.info["reward"]


def test_status_when_did_you_order_identifies_the_order(c8: EcomEnv) -> None:
    seed = find(c8, "STATUS", 12, lambda a: a.problem.goal.ambiguous)
    c8.reset(env_id="STATUS", difficulty=12, seed=seed)
    observation = c8.step(AgentAction(message="Do you remember roughly when you ordered it?"))
    assert c8.audit().problem.state.identified
    assert observation.info["user_caused_turns"] == 1


# -- no say-everything shortcut -------------------------------------------------------------------------

@pytest.mark.parametrize("env_id", ["CART", "PD", "SUB", "BUNDLE"])
def test_messages_that_ask_nothing_reveal_nothing(c8: EcomEnv, env_id: str) -> None:
    """Every negative of the bank, said first in episodes with withheld values: nothing is revealed."""
    seeds = leak_seeds(c8, env_id, 12, 3)
    assert seeds
    found = [leak for m in BANK if m.group == "none" for leak in leaks(c8, env_id, 12, seeds, m)]
    assert not found, found[:5]


@pytest.mark.slow
@pytest.mark.parametrize("env_id", ["CART", "PD", "SUB", "BUNDLE"])
def test_blind_negatives_of_batches_6_to_13_reveal_nothing(c8: EcomEnv, env_id: str) -> None:
    """The negatives of blind batches 6-13 (read by the leak benchmark with no leak since suite 10), said first:
    nothing is revealed (a rule or threshold that reads a topic in a statement fails here)."""
    seeds = leak_seeds(c8, env_id, 12, 3)
    found = [leak for name in BLIND_BATCHES[:8] for m in load_bank(name) if m.group == "none"
             for leak in leaks(c8, env_id, 12, seeds, m)]
    assert not found, found[:5]


def test_return_reason_is_told_only_when_asked(c8: EcomEnv) -> None:
    """RETURN withholds the reason: every negative, which-order and go-ahead question of the bank (train
    half), said first, leaves it untold; every question about the reason gets it."""
    seeds = leak_seeds(c8, "RETURN", 12, 2)
    assert seeds
    found = [leak for m in BANK if m.group in ("none", "which", "confirm") and m.half == "train"
             for leak in leaks(c8, "RETURN", 12, seeds, m)]
    assert not found, found[:5]
    for m in (m for m in BANK if m.group == "reason" and m.half == "train"):
        c8.reset(env_id="RETURN", difficulty=12, seed=seeds[0])
        c8.step(AgentAction(message=m.text))
        assert c8.audit().problem.state.reason_told, m.text


#: Messages that mention a fault or the reason without asking why (train-half examples written for the fix):
#: a statement before the question, a clause that waives the question, a subordinate or sympathetic clause,
#: a fault that only describes the item a which-order or go-ahead question is about. (text, which, confirm)
REASON_MENTIONED_NOT_ASKED = [
    ("Sorry to hear it's broken. Which order is it from?", True, False),
    ("That's a shame it arrived damaged. Could you tell me the order date?", True, False),
    ("There's no need to explain why, just tell me which item it is.", True, False),
    ("Which of the orders is the defective one?", True, False),
    ("Which item has the issue?", True, False),
    ("Defective items are refunded in full. Do you want me to go ahead?", False, True),
    ("I've noted the reason. Can I submit the return?", False, True),
    ("No matter what the reason is, shall I start the return?", False, True),
    ("Regardless of why, returns within 30 days are free - want me to set it up?", False, True),
    ("Since it's not working, may I process the return now?", False, True),
    ("Shall I send it back for you?", False, True),
    ("Shall I return the faulty cable?", False, True),
    ("Faulty items get a full refund, so shall I start the return?", False, True),
    ("Sorry it's faulty - want me to start the return?", False, True),
    ("Why not let me start the return now?", False, True),
    ("Is that the broken one?", True, False),
    ("When was the broken cable delivered?", True, False),
    ("Just so you know why I'm asking: which order was it?", True, False),
    ("Which order went wrong?", True, False),
    ("Is the problem with the September 10 order?", True, False),
    ("No problem, which order is it?", True, False),
]
#: Messages that ask the reason, alone or beside another question (they must keep asking it).
REASON_ASKED = [
    "Got it. Could you tell me what's wrong with it?",
    "If you don't mind me asking, what's the problem with it?",
    "Is it broken, or just not what you expected?",
    "So what happened with the headphones?",
    "Something wrong with it?",
    "Which order is it, and why are you sending it back?",
    "Which item is it and what went wrong?",
    "Could you tell me why you want to return it?",
    "When did it stop working?",
    "Broken or faulty - which is it?",
    "Faulty, damaged, or did you change your mind?",
    "It was damaged, was it?",
    "Can you tell me if it's damaged?",
    "Did it arrive damaged?",
    "Is the hoodie faulty?",
    "Was there an issue with the fit?",
    "What went wrong?",
]
ORDERS = InPlay(dates=("September 10", "September 11", "August 2"))


@pytest.mark.parametrize(("text", "which", "confirm"), REASON_MENTIONED_NOT_ASKED)
def test_a_reason_mentioned_is_not_asked(text: str, which: bool, confirm: bool) -> None:
    """The reason is asked only by an asking clause that asks for the cause ("why", "what went wrong") or
    asks about the item's state and nothing else ("Is it faulty?")."""
    reading = understand(text, ORDERS)
    assert (reading.reason, reading.which, reading.confirm) == (False, which, confirm), reading


@pytest.mark.parametrize("text", REASON_ASKED)
def test_a_reason_asked_is_read(text: str) -> None:
    assert understand(text, ORDERS).reason


def test_a_value_or_topic_said_in_a_statement_is_not_asked() -> None:
    """What a message asks is read from its sentences that ask: a topic or value a statement before the
    question names ("Delivery is free this week.") is not asked."""
    lamp = InPlay(values={"color": ("Black", "White"), "brand": ("Lumora", "Brightix")})
    assert understand("Delivery is free this week. Any colour you'd like?", lamp).topics == {"color"}
    assert understand("Lumora makes lovely lamps. What's your budget?", lamp).topics == {"price"}
    mug = InPlay(values={"material": ("Ceramic", "Wood"), "size": ("12 oz", "16 oz")})
    assert understand("The ceramic one is lovely. What size do you need?", mug).topics == {"size"}
    assert understand("Ceramic or wood?", mug).topics == {"material"}
    assert understand("What matters most to you, e.g. price or brand?").topics == {"price", "brand"}


def test_a_statement_before_the_question_reveals_nothing_it_names(c8: EcomEnv) -> None:
    """PD and CART, said first: a statement naming every topic before a question about another reveals
    none of the withheld values of the topics it named."""
    from understanding_bank import BankMessage

    text = ("Prices start at $20, delivery is fast, reviews are great and every brand, size and material is in "
            "stock. Which colour would you like?")
    expect = {"topics": ["color"], "open": False, "confirm": False, "which": False, "reason": False}
    message = BankMessage("statement", "attribute", "train", "", text, expect, InPlay())
    for env_id in ("PD", "CART"):
        seeds = leak_seeds(c8, env_id, 12, 3)
        assert seeds
        assert understand(text).topics == {"color"}
        found = leaks(c8, env_id, 12, seeds, message)
        assert not found, found


def test_return_reason_mentioned_but_not_asked_stays_untold(c8: EcomEnv) -> None:
    """RETURN withholds the reason: said first, no message that only mentions a fault or the reason gets it
    (each asks which order or the go-ahead, and gets that answered); one that asks gets it."""
    seeds = leak_seeds(c8, "RETURN", 12, 2)
    assert seeds
    for text, _which, _confirm in REASON_MENTIONED_NOT_ASKED:
        for seed in seeds:
            c8.reset(env_id="RETURN", difficulty=12, seed=seed)
            c8.step(AgentAction(message=text))
            assert not c8.audit().problem.state.reason_told, text
    c8.reset(env_id="RETURN", difficulty=12, seed=seeds[0])
    c8.step(AgentAction(message=REASON_ASKED[0]))
    assert c8.audit().problem.state.reason_told


@pytest.mark.parametrize("env_id", ["CART", "PD"])
def test_a_question_about_one_topic_reveals_no_other(c8: EcomEnv, env_id: str) -> None:
    """Each attribute question of the bank (train half) reveals only withheld values of the topics it asks."""
    seeds = leak_seeds(c8, env_id, 12, 2, minimum=2)
    assert seeds
    found = [leak for m in BANK if m.group == "attribute" and m.half == "train"
             for leak in leaks(c8, env_id, 12, seeds, m)]
    assert not found, found[:5]


def test_cart_open_question_reveals_the_withheld_constraints_once(c8: EcomEnv) -> None:
    """"What do you need?" in CART: every withheld constraint, once and user-caused; asked again, only what
    was asked for, and it costs patience."""
    seed = find(c8, "CART", 12, lambda a: bool(a.problem.goal.withheld))
    c8.reset(env_id="CART", difficulty=12, seed=seed)
    audit = c8.audit()
    patience = audit.problem.user.patience
    first = c8.step(AgentAction(message="What do you need?"))
    assert all(c.known_to_agent for c in audit.problem.state.constraints)
    assert first.info["user_caused_turns"] == 1
    c8.step(AgentAction(message="What do you need?"))
    again = c8.step(AgentAction(message="What do you need?"))
    assert again.info["user_caused_turns"] == 1
    assert audit.problem.user.patience == patience - 1


# -- one reading of "which order?" -------------------------------------------------------------------------

@pytest.mark.parametrize("env_id", ["STATUS", "RETURN"])
def test_the_account_shoppers_answer_which_line_exactly_when_the_reading_asks_it(c8: EcomEnv, env_id: str) -> None:
    """STATUS and RETURN answer a question about the line the customer means (which one, when, what it
    cost) exactly when the shopper's understanding reads it as asking which line: one mechanism, no second
    keyword list beside it. Every train-half message of the bank, said first in an ambiguous episode."""
    from ecomrlve.envs.account.orders import orders_in_play

    def ambiguous(audit: Any) -> bool:
        goal = audit.problem.goal
        return bool(goal.ambiguous if env_id == "STATUS" else goal.target.ambiguous)

    seed = find(c8, env_id, 12, ambiguous)
    answered_by_reading = 0
    for m in (m for m in BANK if m.half == "train"):
        c8.reset(env_id=env_id, difficulty=12, seed=seed)
        audit = c8.audit()
        reading = understand(m.text, orders_in_play(audit.world))
        c8.step(AgentAction(message=m.text))
        asked = reading.which and not (env_id == "RETURN" and reading.confirm)
        assert audit.problem.state.identified == asked, (m.text, reading)
        answered_by_reading += asked
    assert answered_by_reading >= 40


def test_status_questions_about_the_item_in_other_words_identify_the_order(c8: EcomEnv) -> None:
    """"How recent was it?", "Could you tell me a little more about it?": fair questions about the order."""
    seed = find(c8, "STATUS", 12, lambda a: a.problem.goal.ambiguous)
    for question in ("How recent was it?", "Could you tell me a little more about it?", "Is it the latest one?"):
        c8.reset(env_id="STATUS", difficulty=12, seed=seed)
        observation = c8.step(AgentAction(message=question))
        assert c8.audit().problem.state.identified, question
        assert observation.info["user_caused_turns"] == 1


# -- the eighth training batch's rules (issue 29 §1: reasons, go-aheads, values and near-misses in other words) --

#: Reasons asked in wordings of a fault or a mismatch that name no cause word ("why", "what's wrong").
REASON_IN_OTHER_WORDS = [
    "Has it packed in?",
    "Was it the wrong colour?",
    "Was it not as advertised?",
    "Is the size wrong?",
    "Has it stopped charging?",
    "Did it fall short somehow?",
    "What's led to the return?",
    "Were you unhappy with it?",
    "Did it turn up chipped?",
    "Just checking - is it a faulty return or a change of heart?",
]


@pytest.mark.parametrize("text", REASON_IN_OTHER_WORDS)
def test_a_reason_in_other_words_is_asked(text: str) -> None:
    reading = understand(text, ORDERS)
    assert reading.reason and not reading.confirm, reading


#: Problem words that do not ask about the customer's item: a problem supposed of a choice, the customer's past with a
#: kind of thing, a purpose, the agent recording the reason. Said in RETURN they must not draw the withheld reason.
PROBLEM_NOT_THE_ITEMS = [
    ("Would it be an issue if it took a week?", False),
    ("Is it a problem if it's a bit heavy?", False),
    ("Would a size that runs small be a problem?", False),
    ("Should I log the reason as faulty and proceed?", True),
]


@pytest.mark.parametrize(("text", "confirm"), PROBLEM_NOT_THE_ITEMS)
def test_a_problem_word_that_asks_no_reason(text: str, confirm: bool) -> None:
    reading = understand(text, ORDERS)
    assert not reading.reason and reading.confirm == confirm, reading


@pytest.mark.parametrize("text", ["Do you want the return processed?", "Return it?", "Can I take that as a yes?",
                                  "Alright for me to pop it through?", "I can book the return now. Would you like that?",
                                  "Any objections to me checking out?"])
def test_a_go_ahead_in_other_words(text: str) -> None:
    reading = understand(text, CART_KEYBOARD)
    assert reading.confirm and not reading.topics, reading


def test_a_question_about_the_past_or_a_value_asks_no_go_ahead() -> None:
    """"Did you buy it ...?" asks what the customer did; "Shall I look for X?", "X, right?" and "gel or cream?" after
    the agent's intent ask the value; "your size before checking out" asks the size; "want me to pay" is no price."""
    assert not understand("Did you buy it last month?", ORDERS).confirm
    assert understand("Did you buy it last month?", ORDERS).which
    keyboard = understand("Shall I look for the Bluetooth one?", CART_KEYBOARD)
    assert (keyboard.topics, keyboard.confirm) == ({"connector"}, False)
    assert understand("USB-A, right?", CART_KEYBOARD).topics == {"connector"}
    cream = understand("I'll add it now - gel or cream?", InPlay(values={"form": ("Cream", "Gel", "Spray")}))
    assert (cream.topics, cream.confirm) == ({"form"}, False)
    size = understand("I'll need your size before checking out.", InPlay(values={"size": ("S", "M")}))
    assert (size.topics, size.confirm) == ({"size"}, False)
    pay = understand("All done. Want me to pay for it now?", CART_KEYBOARD)
    assert (pay.topics, pay.confirm) == (frozenset(), True)


def test_values_in_the_plural_from_the_store_or_next_to_an_alternative() -> None:
    cream = InPlay(values={"form": ("Cream", "Gel")})
    assert understand("Do you get on with creams or gels?", cream).topics == {"form"}
    assert understand("Do you like creams?", cream).topics == frozenset()  # a kind, not a choice
    # "spray" is a store value beside the in-play "gel": both count, so the form is asked, not a version
    assert understand("Would you want the spray version, or is gel better?", cream).topics == {"form"}
    hoodie = understand("Navy ok, or do you want something else?", InPlay(values={"color": ("Navy", "Olive")}))
    assert (hoodie.topics, hoodie.open) == ({"color"}, False)
    brands = understand("Are you after something from Sonora or Brightix?")
    assert not brands.open  # two names offered: no open question (in CART it would draw every withheld value)


def test_a_topic_named_beside_a_weaker_cue() -> None:
    assert understand("What size monitor did you have in mind?").topics == {"screen"}
    assert understand("What colours do you usually wear?").topics == {"color"}
    assert understand("Does it need to be particularly bright?").topics == {"wattage"}
    assert understand("How long are you happy to wait for it?").topics == {"shipping"}
    assert understand("What would you be plugging it into?").topics == {"connector"}


def test_a_request_for_later_asks_nothing() -> None:
    assert not understand("Let me know if you change your mind about the colour later.").asks
    assert understand("Let me know which colour you'd like.").topics == {"color"}


CART_KEYBOARD = InPlay(values={"connector": ("USB-C", "USB-A", "Bluetooth")})


@pytest.mark.parametrize("name", TRAIN_BATCHES[1:])
def test_training_batches_reveal_nothing_unasked(c8: EcomEnv, name: str) -> None:
    """The eighth to thirteenth training batches' negatives and attribute questions (many with a problem word, a value
    or an order in them), said first: RETURN keeps its reason (also to its which-order and go-ahead questions, the
    ninth's naming the reason as already given), CART its withheld variants and quantities (also to "how much does
    X matter?"), PD and SUB their withheld requirements (also to statements that open like a question)."""
    batch = load_bank(name)
    found = []
    for env_id, groups in (("RETURN", ("none", "attribute", "which", "confirm")), ("CART", ("none", "attribute")),
                           ("PD", ("none", "attribute")), ("SUB", ("none", "attribute"))):
        seeds = leak_seeds(c8, env_id, 12, 2)
        assert seeds
        found += [leak for m in batch if m.group in groups for leak in leaks(c8, env_id, 12, seeds, m)]
    assert not found, found[:5]


def test_an_item_named_in_other_words_or_by_its_place() -> None:
    """A multi-item question names its item by another word for it ("the coat", "the lead"), where the word ends its
    noun phrase (not "your top priorities"), or by its place ("the second item"); a value that only picks the item
    ("The Voltix one - ...") is not asked beside the list after it."""
    two = InPlay((ItemNames("P1", "nexworks", "atlas 22", "rain jacket"), ItemNames("C1", "voltix", "bolt 3", "charging cable")),
                 {"size": ("XS", "M", "XXL"), "connector": ("USB-C", "Lightning")})
    assert understand("What size coat are you after?", two).items == (0,)
    assert understand("Which plug for the lead?", two).items == (1,)
    assert understand("For the second item, USB-C or Lightning?", two).items == (1,)
    hoodie = InPlay((ItemNames("H1", "kinwear", "core 4", "hoodie"), ItemNames("M1", "culina", "terra 5", "travel mug")),
                    {"color": ("Black", "Navy")})
    assert understand("What are your top priorities?", hoodie).items == ()
    bundle = InPlay(values={"brand": ("Nexworks", "Vistaro"), "size": ("XS", "M", "XXL")})
    assert understand("The Nexworks one - XS, M or XXL?", bundle).topics == {"size"}


def test_every_item_a_question_names_beside_the_strongly_named_one() -> None:
    """Found by hand play (audit 19, finding 3) and in corpus 32/33: a question about two items read only the one named
    by model words ("How many of the Bolt 3 cables, and what size on the jacket?"), or only the first type ("How many
    mugs, and which colour for the hoodie?"), or dropped one named by brand and type ("the Brightwave desk lamp").
    Every item its asking sentences name counts; one named only in a statement beside the question does not, and a
    go-ahead is asked for every item its summary names."""
    three = InPlay((ItemNames("H1", "kinwear", "core 4", "hoodie"), ItemNames("M1", "culina", "terra 5", "travel mug"),
                    ItemNames("S1", "stridex", "trek 9", "running shoes")), {"color": ("Black", "Navy")})
    assert understand("How many mugs, and which colour for the hoodie?", three).items == (0, 1)
    assert understand("Hoodie colour what, and shoe number what?", three).items == (0, 2)
    assert understand("Which colour for the Kinwear Core 4 hoodie, and how many Culina mugs?", three).items == (0, 1)
    assert understand("What colour for the hoodie? The mug and the shoes are done.", three).items == (0,)
    assert understand("For the Trek 9 shoes, what size? The hoodie and mug are noted.", three).items == (2,)
    assert understand("Hoodie, mug and shoes, all three. Shall I order them?", three).items == (0, 1, 2)
    two = InPlay((ItemNames("N1", "halewave", "vista 7", "notebook"), ItemNames("L1", "brightwave", "pulse 15 10w", "desk lamp")),
                 {"color": ("Black", "Navy")})
    assert understand("Which colour for the Halewave Vista 7 notebook, and which for the Brightwave Pulse 15 desk lamp?",
                      two).items == (0, 1)
    assert understand("Which colour for the Halewave Vista 7 notebook?", two).items == (0,)


def test_blind_paraphrase_set_20_losses_read_as_meant() -> None:
    """Families behind what blind paraphrase set 20 lost, read after it was measured (each with a near miss): the options
    the agent gathers ask no version ("Before I put options together, does any item ... have specific needs"); "one X,
    or more than that?" asks how many, also after "Should I add"; reviewing the cart asks the go-ahead, not reviews; a
    choice between two ordered items is "which one?", also where the model reads a go-ahead ("could you confirm if
    it's the A or the B?")."""
    bundle = InPlay((ItemNames("D1", "oakline", "arc 2", "desk"), ItemNames("M1", "vistaro", "view 27", "monitor")),
                    {"color": ("Black", "White")})
    reading = understand("Before I put options together, does any item on your list have specific needs", bundle)
    assert reading.open and not reading.topics
    assert understand("Which options do you want for the monitor?", bundle).topics == {"variant"}
    cable = InPlay((ItemNames("C1", "voltix", "bolt 3", "charging cable"),), CABLE.values)
    reading = understand("Should I add one Voltix Bolt 3 charging cable, or more than that?", cable)
    assert reading.topics == {"quantity"} and not reading.confirm
    assert understand("Should I add the Voltix Bolt 3 cable?", cable).confirm
    reading = understand("Please review the cart and let me know if it looks right.", cable)
    assert reading.confirm and not reading.topics
    assert understand("Do the reviews matter to you?", cable).topics == {"rating"}
    two_clocks = InPlay((ItemNames("W1", "northio", "fusion 6", "wall clock"), ItemNames("W2", "kinwave", "vista 6", "wall clock")),
                        dates=ORDERS.dates)
    for text in ("To make sure I pull up the correct product, could you confirm if it's the Northio Fusion 6 wall clock "
                 "or the Kinwave Vista 6 wall clock?", "Happy to help with that. Would that be the Northio Fusion 6 wall clock "
                 "or the Kinwave Vista 6 wall clock?"):
        reading = understand(text, two_clocks)
        assert reading.which and not reading.confirm, text
    assert understand("Shall I start the return for the Northio Fusion 6 wall clock?", two_clocks).confirm


def test_blind_paraphrase_set_21_losses_read_as_meant() -> None:
    """The families behind what blind paraphrase set 21 lost, read after it was measured: the options the agent picks
    ask no version ("Before I pick options, are there special requirements for any item?"), "let me know if it's right"
    after the cart asks the go-ahead, and a type word in a compliment before an open question names no item. Near
    misses: options asked of an item, a statement that the item is right, the type word in the question."""
    bundle = InPlay((ItemNames("D1", "oakline", "arc 2", "desk"), ItemNames("M1", "vistaro", "view 27", "monitor")),
                    {"color": ("Black", "White")})
    reading = understand("Before I pick options, are there special requirements for any item?", bundle)
    assert reading.open and not reading.topics
    assert understand("Which options would you like for the monitor?", bundle).topics == {"variant"}
    cable = InPlay((ItemNames("C1", "voltix", "bolt 3", "charging cable"),), CABLE.values)
    assert understand("Please review your cart and let me know if it's right.", cable).confirm
    assert not understand("The Bolt 3 cable is right for your phone.", cable).asks_anything
    # a type word in a compliment before the question names no item ("a nice set" is no knife set)
    kit = InPlay((ItemNames("K1", "zenwear", "lite 3", "knife set"), ItemNames("P1", "oakora", "trek 18", "pillow")))
    reading = understand("Great, that's a nice set. Do you have anything particular in mind for any of them", kit)
    assert reading.open and reading.items == ()
    assert understand("Anything particular in mind for the set?", kit).items == (0,)


def test_blind_paraphrase_set_22_loss_reads_as_meant() -> None:
    """What blind paraphrase set 22 lost, read after it was measured: "Is one X enough?" asks how many whatever the
    item's name ("Is one Nexworks Atlas 22 rain jacket enough, or do you need more?"), also asked of two items in one
    message; "What would you like for the X? We have A, B or C." asks among the options. Near misses: "one" of a unit
    or of a set, and a degree ("fast enough") ask no quantity; the question alone asks openly."""
    two = InPlay((ItemNames("J1", "nexworks", "atlas 22", "rain jacket"), ItemNames("C1", "voltix", "bolt 3", "charging cable")))
    for text in ("Is one Nexworks Atlas 22 rain jacket enough, or do you need more?", "Is one rain jacket enough?",
                 "Is one Nexworks Atlas 22 rain jacket enough, or do you need more? Is one Voltix Bolt 3 charging cable "
                 "enough, or do you need more?", "Will a single cable be enough?"):
        assert understand(text, two).topics == {"quantity"}, text
    for text, topics in (("Is one of the colours good enough?", {"color"}), ("Is one day shipping fast enough?", {"shipping"}),
                         ("Is one star enough?", {"rating"})):
        assert understand(text, two).topics == topics, text
    # options offered right after a question are what it asks among (not an open question), also in a longer message
    hoodie = InPlay((ItemNames("H1", "kinwear", "core 4", "hoodie"),), HOODIE.values)
    for text in ("What would you like for the Kinwear Core 4 hoodie? We have Black, Navy or Olive.",
                 "What would you like for the hoodie? It comes in Black, Navy or Olive. Anything else?"):
        reading = understand(text, hoodie)
        assert "color" in reading.topics and reading.items == (0,), text
    assert understand("What would you like for the hoodie? We have Black, Navy or Olive.", hoodie).open is False
    reading = understand("What would you like for the hoodie?", hoodie)
    assert reading.open and not reading.topics  # no options offered: what they want of it
    assert not understand("We have Black, Navy or Olive.", hoodie).asks_anything


@pytest.mark.parametrize(("text", "topics"), [
    ("Weather's lovely, prices vary. What's the highest you'd go on the speaker?", {"price"}),
    ("Do you want the cheapest one?", {"price"}),
    ("Screen dimensions for the monitor, please.", {"screen"}),
    ("What dimensions should the desk have?", {"size"}),
    ("Brate, what size shoe do you take?", {"size"}),
    ("Any minimum raiting you want?", {"rating"}),
    ("For the photo-shoot light - how bright must it be, like how many watts?", {"wattage"}),
])
def test_blind_batch_20_and_21_leak_families(text: str, topics: set[str]) -> None:
    """The families behind every leak of blind batches 20 and 21 (four messages, read after both were measured, then
    retired from blind use), in my words: the highest one would go asks the budget (it was an open question that drew
    every withheld value); a screen's dimensions ask the screen, not a size; a greeting before the question is no slip
    of a cue ("Brate" was read as "rated": the typo index paired words a letter apart at both ends); "how many watts"
    as an example asks the wattage, not an open question with a count beside it."""
    reading = understand(text)
    assert reading.topics == topics and not reading.open, text


def test_first_paraphrase_set_losses_read_as_meant() -> None:
    """Families behind what the first blind paraphrase set lost (read after its measurement), each with a near miss:
    an open noun listed beside topics asks openly ("whether any of the items need particular features, sizes or a
    certain budget?" drew only "No preference on size"), not where it is about them ("Any requirements on size or
    budget?"); the cart's go-ahead as whether it is how the customer wants it or correct; "Quantities for each?"."""
    bundle = InPlay((ItemNames("D1", "oakline", "arc 2", "desk"), ItemNames("M1", "vistaro", "view 27", "monitor")), JACKET.values)
    reading = understand("Could you tell me whether any of the items need particular features, sizes or a certain budget?",
                         bundle)
    assert reading.open and reading.topics == {"price", "size"}
    reading = understand("Any requirements on size or budget?", bundle)
    assert not reading.open and reading.topics == {"price", "size"}
    cable = InPlay((ItemNames("C1", "voltix", "bolt 3", "charging cable"),), CABLE.values)
    for text in ("Everything has been added. Is the cart exactly how you want it",
                 "Would you mind confirming that your cart is correct?",
                 "All set on my end. Would you mind confirming the cart is accurate?"):
        reading = understand(text, cable)
        assert reading.confirm and not reading.topics, text
    assert understand("Is the connector how you want it?", cable).topics == {"connector"}
    assert understand("Quantities for each?", cable).topics == {"quantity"}
    hose = InPlay((ItemNames("G1", "blueora", "terra 9", "garden hose"),),
                  {"color": ("Black", "Blue", "Green"), "material": ("Stainless Steel", "Rubber")})
    # a value inside the catalog title the agent names the product by is no topic asked
    reading = understand("Could you tell me which one you'd like for the Blueora Terra 9 Stainless Steel Garden Hose? "
                         "The choices are Black, Blue or Green.", hose)
    assert reading.topics == {"color"}
    assert understand("Is the Terra 9 garden hose in Stainless Steel ok?", hose).topics == {"material"}


def test_a_question_that_only_goes_on_about_another_item_asks_no_act() -> None:
    """"And for the Aurwave Metro 4 dog leash?" after a colour question goes on with that question (the CART shopper
    reads it so); the intent model, retrained with corpus 32 and 33, read it as a go-ahead at 0.42, which would have
    confirmed the cart. Near miss: one that asks leave about the item still does."""
    two = InPlay((ItemNames("W1", "zenly", "edge 5", "water bottle"), ItemNames("L1", "aurwave", "metro 4", "dog leash")),
                 {"color": ("Orange", "Red")})
    for text in ("And for the Aurwave Metro 4 dog leash?", "What about the leash?", "Same for the dog leash?"):
        reading = understand(text, two)
        assert reading.asks and reading.items == (1,) and not reading.asks_anything, text
    assert understand("And the leash - shall I order it?", two).confirm


@pytest.mark.parametrize(("text", "topics"), [
    ("How much do star ratings matter to you?", {"rating"}),
    ("How much does it bother you if delivery takes a week?", {"shipping"}),
    ("how much of a must is the brand", {"brand"}),
    ("How much weight would you give to the colour?", {"color"}),
    ("How much emphasis do you put on price, roughly?", {"price"}),
    ("How many do you need?", {"quantity"}),
    ("How much of it do you need - two packs?", {"quantity"}),
])
def test_how_much_that_weighs_a_topic_asks_no_amount(text: str, topics: set[str]) -> None:
    """"How much does X matter?" weighs how important X is: it asks X, never the quantity (a CART shopper told to
    say the quantity would give away a withheld one); "how much of it do you need" still asks the amount."""
    assert understand(text).topics == topics


@pytest.mark.parametrize("text", ["Can I go ahead and submit it with the reason you provided?",
                                  "Shall we process the refund for the issue you flagged?",
                                  "Happy for me to raise the return under the mentioned reason?",
                                  "Okay to log the return, citing that reason?"])
def test_a_go_ahead_naming_a_reason_already_given_asks_no_reason(text: str) -> None:
    """A go-ahead that names the reason as already given ("with the reason you gave") or as what the step records
    ("citing that reason") asks leave, not why: the RETURN shopper who withholds the reason keeps it; a clause that
    asks the reason still asks it."""
    reading = understand(text, ORDERS)
    assert reading.confirm and not reading.reason and not reading.which
    assert understand("And what is the reason for the return?", ORDERS).reason


def test_retired_messages_are_ids_of_held_out_messages() -> None:
    """Each retired id names exactly one held-out message (so the blind numbers without them drop what they say)."""
    held = [m for name in ("bank.jsonl", *BLIND_BATCHES) for m in load_bank(name) if m.half == "heldout"]
    assert sorted(m.id for m in held if m.id in RETIRED) == sorted(RETIRED)


def test_seen_texts_are_every_training_message_folded() -> None:
    """The blind columns marked "*" drop a held-out message that says a training message's words: the set holds
    every training message (bank's train half, each training batch, the intent model's corpus) in any case and
    spacing, and no other."""
    seen = seen_texts()
    trained = [m for name in ("bank.jsonl", *TRAIN_BATCHES, *CORPUS_BATCHES) for m in load_bank(name) if m.half == "train"]
    assert {fold(m.text) for m in trained} == seen
    assert fold("  Anything   ELSE?") == fold("anything else?") == "anything else?"


# -- issue 29 §1, tenth training batch: what asks, and what a question's words are grounded in ---------------

HOODIE = InPlay(values={"color": ("Black", "Navy", "Olive", "Rose Gold")})
SPEAKER = InPlay(values={"brand": ("Sonora", "Voltix"), "color": ("Black", "White"),
                         "connector": ("USB-C", "Bluetooth")})


@pytest.mark.parametrize(("text", "in_play"), [
    ("What a lovely choice, the olive one really suits autumn.", HOODIE),
    ("How about that, the rose gold is back in stock.", HOODIE),
    ("How nice that you went for the navy one!", HOODIE),
    ("Any of these would ship by Friday.", SPEAKER),
    ("Which is great news: the Sonora models are on sale.", SPEAKER),
    ("When an item is faulty we cover the postage.", ORDERS),
    ("Who knew the hoodie would shrink that much, sorry about that.", ORDERS),
    ("Black or navy are both in stock.", HOODIE),
])
def test_a_statement_that_opens_like_a_question_asks_nothing(text: str, in_play: InPlay) -> None:
    """Without a question mark, an opening question word asks only in a question's shape: an exclamation ("What a
    ...", "How nice"), a relative or subordinate clause ("Which is ...", "When an item is faulty we ...") or "any"
    that states tells, so the value or fault it names is not asked."""
    assert not understand(text, in_play).asks


@pytest.mark.parametrize(("text", "in_play", "expected"), [
    ("I'll need to know how big a screen you want.", InPlay(), {"topics": {"screen"}}),
    ("If you tell me your budget I can narrow it down quickly.", InPlay(), {"topics": {"price"}}),
    ("colour for the hoodie pls", HOODIE, {"topics": {"color"}}),
    ("the connector you need is which one", CART_KEYBOARD, {"topics": {"connector"}}),
    ("so usb-c usb-a or bluetooth", CART_KEYBOARD, {"topics": {"connector"}}),
    ("black navy olive or rose gold", HOODIE, {"topics": {"color"}}),
    ("May I ask which brand you prefer for your headphones?", SPEAKER, {"topics": {"brand"}}),
    ("I'm guessing Bluetooth is a must, is that right?", SPEAKER, {"topics": {"connector"}}),
    ("Do you need this one by a particular date?", SPEAKER, {"topics": {"shipping"}}),
    ("Do you want them by the 20th? That's when the sale ends.", SPEAKER, {"topics": {"shipping"}}),
    ("Feel free to tell me everything you need in one go.", InPlay(), {"open": True}),
    ("Paint me a picture of your ideal pair.", InPlay(), {"open": True}),
    ("I'd need a few more details about what you want.", InPlay(), {"open": True}),
    ("Before I place it, is there anything else you wanted?", HOODIE, {"open": True}),
    ("Shall we go through what you need from the replacement?", InPlay(), {"open": True}),
    ("All three are ready, do i place order", HOODIE, {"confirm": True}),
    ("I would like your confirmation before purchase.", HOODIE, {"confirm": True}),
    ("everything look good to you", HOODIE, {"confirm": True}),
    ("I'd need to know which order it is.", ORDERS, {"which": True}),
    ("I'd need the reason for the return.", ORDERS, {"reason": True}),
    ("Doesn't it work properly?", ORDERS, {"reason": True}),
    ("Wasn't it as described on the site?", ORDERS, {"reason": True}),
    ("Were they uncomfortable?", ORDERS, {"reason": True}),
    ("Which bit isn't working?", ORDERS, {"reason": True}),
    ("What went wrong with it, and shall I start the return now?", ORDERS, {"reason": True, "confirm": True}),
    ("Was it damaged in transit? Want me to arrange a replacement?", ORDERS, {"reason": True, "confirm": True}),
    ("Could you tell me why, so I can process the return?", ORDERS, {"reason": True}),
    ("What do they need to be good at?", InPlay(), {"open": True}),
    ("What're you hoping to get from a new pair?", InPlay(), {"open": True}),
    ("so i order it yes?", HOODIE, {"confirm": True}),
    ("Ceramic mugs can chip, so would steel suit you better?", InPlay(values={"material": ("Stainless Steel", "Ceramic")}),
     {"topics": {"material"}}),
    ("I'm thinking 27 inches - too big, too small, or about right?", InPlay(values={"size": ("Small", "Large")}),
     {"topics": {"screen"}}),
    ("Is there a style or spec you're set on?", InPlay(), {"open": True}),
    ("Talk me through what didn't work with the old one.", InPlay(), {"open": True}),
    ("Tell me a bit about how you work.", InPlay(), {"open": True}),
    ("Tell me when you're ready.", InPlay(), {}),
    ("Was it too small?", ORDERS, {"reason": True}),
])
def test_questions_and_requests_in_other_shapes(text: str, in_play: InPlay, expected: dict[str, Any]) -> None:
    """Needs said as statements ("I'd need ...", "I'll need to know ..."), invitations, a question word at the end, a
    closing "please", a bare list of values, a dropped auxiliary, a checking tag after a supposed wish, a negative
    question that supposes a fault: each asks exactly what it asks ("May I ask ..." and "Before I place it, ..." ask
    no go-ahead; "a particular date" asks the delivery time, not every requirement)."""
    reading = understand(text, in_play)
    want = {"topics": set(), "open": False, "confirm": False, "which": False, "reason": False} | expected
    got = {"topics": set(reading.topics), "open": reading.open, "confirm": reading.confirm, "which": reading.which,
           "reason": reading.reason}
    assert got == want


@pytest.mark.parametrize(("text", "in_play", "topics"), [
    ("Since your old pan was from Culina, what material would you like?",
     InPlay(values={"brand": ("Culina", "Ferro"), "material": ("Cast Iron", "Ceramic")}), {"material"}),
    ("The last speaker was delivered late, what colour would you like?", SPEAKER, {"color"}),
    ("What colour would you like, given the Sonora ones sold out last week?", SPEAKER, {"color"}),
    ("Would you like the black one, which ships tomorrow?", SPEAKER, {"color"}),
    ("The Voltix ships next day so which colour would you like?", SPEAKER, {"color"}),
    ("Wood's lovely but so is ceramic - which d'you fancy?", InPlay(values={"material": ("Ceramic", "Wood")}),
     {"material"}),
    ("You don't mind which brand, do you?", SPEAKER, {"brand"}),
])
def test_a_question_asks_only_what_its_asking_clauses_name(text: str, in_play: InPlay, topics: set[str]) -> None:
    """A topic or value counts where it is asked, not in a circumstance ("since ...", "given ...") or a fact told
    before or after the question in the same sentence; a tag or a bare "which do you fancy?" asks what came before."""
    assert understand(text, in_play).topics == topics


@pytest.mark.parametrize("text", ["What's the most you'd pay, bearing in mind cheaper lamps break sooner?",
                                  "Is a week too long to wait for the replacement?",
                                  "I'm thinking 27 inches - too big, too small, or about right?"])
def test_a_fault_beside_another_question_or_a_degree_asks_no_reason(text: str) -> None:
    assert not understand(text, ORDERS).reason


def test_statements_and_clauses_that_name_values_reveal_nothing(c8: EcomEnv) -> None:
    """Said first in PD, SUB, BUNDLE and CART: a statement that opens like a question, a question whose other
    clauses name every topic, and "a particular X" for an X the shopper does not know reveal no withheld value."""
    from understanding_bank import BankMessage

    cases = [
        ("What a lovely choice, the black one with free delivery is rated five stars and fits any budget.", []),
        ("When it arrives late or costs too much we refund the difference, brand aside.", []),
        ("The last one arrived late and cost too much, so which colour would you like?", ["color"]),
        ("Is there a particular finish you like?", []),
    ]
    for env_id in ("PD", "SUB", "BUNDLE", "CART"):
        seeds = leak_seeds(c8, env_id, 12, 2)
        assert seeds
        for text, topics in cases:
            expect = {"topics": topics, "open": False, "confirm": False, "which": False, "reason": False}
            found = leaks(c8, env_id, 12, seeds, BankMessage("case", "none", "train", "", text, expect, InPlay()))
            assert not found, found


# -- issue 29 §1, eleventh training batch: eight writer styles, leaks from questions read with an extra topic -------

LAMP = InPlay(values={"brand": ("Lumora", "Brightix"), "color": ("Black", "Silver")})
CABLE = InPlay(values={"connector": ("USB-C", "Lightning")})
JACKET = InPlay(values={"size": ("XS", "M", "XXL")})
MUG = InPlay(values={"material": ("Stainless Steel", "Ceramic", "Wood")})


@pytest.mark.parametrize(("text", "in_play", "expected"), [
    # a summary that names values and topics before the question: only the question's topic is asked
    ("I looked at Sonora and Voltix, sorted them by rating and checked delivery; what's your budget?", SPEAKER,
     {"topics": {"price"}}),
    ("I've found the jacket and it's available in XS, M and XXL, so which size shall I add?", JACKET,
     {"topics": {"size"}, "confirm": False}),
    ("I checked the lamp, it's in stock and ships in 2 days, just tell me the colour and I'll add it.", LAMP,
     {"topics": {"color"}, "confirm": False}),
    ("Having reviewed our range, which includes Lumora and Brightix, may I ask how soon you need it?", LAMP, {"topics": {"shipping"}}),
    ("Shall I add the stainless steel one, or would you rather ceramic or wood?", MUG,
     {"topics": {"material"}, "confirm": False}),
    # options described by their price, rating or delivery: the topic offered is asked, not what describes it
    ("Which brand would you like: Sonora at $79 with 4.5 stars, or Voltix at $99?", SPEAKER, {"topics": {"brand"}}),
    ("Would you prefer the Sonora, which ships tomorrow, or the Voltix, rated 4.8?", SPEAKER, {"topics": {"brand"}}),
    ("USB-C or Lightning, bearing in mind the Lightning ones cost about $5 more?", CABLE, {"topics": {"connector"}}),
    # the agent's purpose after the question names what it will do, not what it asks
    ("Could you tell me your budget so I can narrow down the brands and ratings?", SPEAKER, {"topics": {"price"}}),
    ("Which colour would you like, in order to check delivery and the price?", LAMP, {"topics": {"color"}}),
    # a bare "which" asks among the values said before it; two values joined by "or" in a go-ahead ask the choice
    ("Ceramic or wood are also available. Which one for you?", MUG, {"topics": {"material"}}),
    ("Do you want me to add the ceramic, or the wood?", MUG, {"topics": {"material"}, "confirm": False}),
    # a question the message answers itself asks nothing
    ("Is a 27-inch screen too big for a desk? Not really, it fits most.", InPlay(), {"asks": False}),
    # a topic said in other words beside open words; a look or finish no topic names is unclear, never open
    ("Any preference on the make?", SPEAKER, {"topics": {"brand"}, "open": False}),
    ("How important is customer feedback to you?", SPEAKER, {"topics": {"rating"}, "open": False}),
    ("Do you have any preference regarding the finish?", LAMP, {"topics": set(), "open": False}),
    # words that ask openly but are about the topic they name
    ("Is there any other colour you'd consider for the lamp?", LAMP, {"topics": {"color"}, "open": False}),
    ("Tell me a bit more about the size you need.", JACKET, {"topics": {"size"}, "open": False}),
    # requests said as statements, formal and scripted, and questions run on without a stop
    ("For the purpose of your search, kindly confirm your preferred brand.", LAMP,
     {"topics": {"brand"}, "open": False, "confirm": False}),
    ("To proceed with your order, I will now need the number of cables you'd like to order.", CABLE,
     {"topics": {"quantity"}, "confirm": False}),
    ("found a few lamps with good reviews what colour do u want", LAMP, {"topics": {"color"}}),
    ("How much are you looking at for the lamp?", LAMP, {"topics": {"price"}}),
    ("Permit me to ask how you intend to connect it.", CABLE, {"topics": {"connector"}}),
    ("What number of your foot, for the shoes?", InPlay(values={"size": ("9", "10")}), {"topics": {"size"}}),
    # go-aheads in other words, and an open question beside its alternative
    ("ok to place the order", JACKET, {"confirm": True}),
    ("I can do the refund now. You agree?", ORDERS, {"confirm": True}),
    ("Would you wish me to initiate the return on your behalf?", ORDERS, {"confirm": True}),
    ("Anything else you'd like in the lamp, or is that everything?", LAMP, {"open": True, "confirm": False}),
    ("Anything else about the lamp I should know, or shall I start searching?", LAMP, {"open": True, "confirm": False}),
    ("Before I proceed, are there any further requirements you would like to add?", LAMP,
     {"open": True, "confirm": False}),
    # reasons in formal words
    ("Might I enquire what is amiss with the hoodie?", ORDERS, {"reason": True}),
    ("I should be grateful to know why you wish to return it.", ORDERS, {"reason": True}),
])
def test_eight_writer_styles_ask_what_their_question_asks(text: str, in_play: InPlay, expected: dict[str, Any]) -> None:
    """Terse, chatty, non-native, British, scripted, lowercase, formal and summary-bundled messages: a topic counts
    where the question asks it (not in a summary, a circumstance or a description of the options), words that ask
    openly about a named topic ask that topic, and go-aheads and reasons are read in other words."""
    reading = understand(text, in_play)
    for name, value in expected.items():
        assert getattr(reading, name) == value, (name, reading)


def test_questions_beside_summaries_and_descriptions_reveal_nothing_unasked(c8: EcomEnv) -> None:
    """Said first in PD, SUB, BUNDLE and CART (against each episode's own values): a question beside a summary that
    names brands, ratings and delivery, options described by price and rating, a formal request that names its topic
    after a lead-in, and a clause joined by "or whether" after a word that is also a brand ("swiftly") reveal no
    withheld value but what they ask."""
    from understanding_bank import BankMessage

    cases = [
        ("I searched speakers from Sonora, Voltix and Aurix and sorted them by rating; to narrow it down, what's your "
         "budget?", ["price"]),
        ("Which brand would you like: Sonora at $79 with 4.5 stars, or Aurix at $99?", ["brand"]),
        ("Would you prefer the Brightix pair, which ships tomorrow, or the Sonora, rated 4.8?", ["brand"]),
        ("For the purpose of your search, please confirm your preferred brand.", ["brand"]),
        ("Might I ask whether you would prefer them delivered swiftly, or whether time is not of the essence?",
         ["shipping"]),
        ("What sort of figure did you have in mind for it?", ["price"]),
        ("Tell me which brand you like and I will check colours and prices.", ["brand"]),
    ]
    for env_id in ("PD", "SUB", "BUNDLE", "CART"):
        seeds = leak_seeds(c8, env_id, 12, 3)
        assert seeds
        for text, topics in cases:
            expect = {"topics": topics, "open": False, "confirm": False, "which": False, "reason": False}
            found = leaks(c8, env_id, 12, seeds, BankMessage("case", "attribute", "train", "", text, expect, InPlay()))
            assert not found, found


# -- issue 29 §1, twelfth training batch: e-mail, teen chat, other word orders, checklists, abbreviations,
# comparatives, negation, tag questions ------------------------------------------------------------------------

SHOES = InPlay(values={"size": ("8", "9", "10", "11")})


@pytest.mark.parametrize(("text", "in_play", "expected"), [
    # chat typed without a stop: an interjection before the question word, a question after a comma or at the end
    ("hmm whats the budget", SPEAKER, {"topics": {"price"}}),
    ("omg wait which colour tho", HOODIE, {"topics": {"color"}}),
    ("lol these r popular, what brand u like", SPEAKER, {"topics": {"brand"}}),
    ("found the hoodie in black navy olive what colour", HOODIE, {"topics": {"color"}}),
    ("need it quick? how soon u want it", LAMP, {"topics": {"shipping"}}),
    ("Who doesn't like a bargain!", SPEAKER, {"asks": False}),
    # a checklist after a lead-in that asks; a numbered list is what is asked, not examples of an open question
    ("Three quick things please: 1) brand 2) colour 3) budget", SPEAKER,
     {"topics": {"brand", "color", "price"}, "open": False}),
    ("Quick questions: (1) size (2) quantity", JACKET, {"topics": {"quantity", "size"}}),
    ("So I can narrow it down: 1) colour 2) brand?", LAMP, {"topics": {"brand", "color"}, "open": False}),
    ("Done: 1) added the jacket 2) applied the voucher.", JACKET, {"asks": False}),
    # abbreviations and units typed onto a figure; a currency sign without a figure asks the money
    ("32in or 27in?", InPlay(), {"topics": {"screen"}}),
    ("60w enough?", LAMP, {"topics": {"wattage"}}),
    ("sz for the jacket?", JACKET, {"topics": {"size"}}),
    ("how many £ are we talking?", SPEAKER, {"topics": {"price"}}),
    # other word orders: a question said in place after a lead-in, "want you that I ...", "what for"
    ("About the mug, the material you want is which?", MUG, {"topics": {"material"}}),
    ("Want you that I place the order?", JACKET, {"confirm": True}),
    ("What for are you returning the hoodie?", ORDERS, {"reason": True, "which": False}),
    # tags: a tag after a wish that names a topic checks the wish; "nothing else ..., is there?" asks for more
    ("You'll need it by Monday, right?", LAMP, {"topics": {"shipping"}, "confirm": False}),
    ("A 4-star minimum is fine, right?", LAMP, {"topics": {"rating"}, "confirm": False}),
    ("Nothing more you'd want the lamp to have, is there?", LAMP, {"open": True, "topics": set()}),
    ("Place the order - yes or no?", JACKET, {"confirm": True}),
    ("No objection to me checking out now?", JACKET, {"confirm": True}),
    # negation: the agent's own step negated is no requirement asked openly
    ("You wouldn't want me to cancel it, would you?", JACKET, {"open": False}),
    # reasons: a guess joined by "or" to a question, a fault in the past, a comparison with what they had
    ("It was the wrong size, or was it another problem?", ORDERS, {"reason": True, "which": False}),
    ("The cable didn't charge properly, did it?", ORDERS, {"reason": True, "which": False}),
    ("Did it feel worse than the one you had before?", ORDERS, {"reason": True, "which": False}),
    ("To process the refund I need one thing: the reason.", ORDERS, {"reason": True}),
    ("What's the motive for sending it back?", ORDERS, {"reason": True, "which": False}),
    ("Was it louder than you expected?", ORDERS, {"reason": True, "which": False}),
    ("So you just don't need it anymore?", ORDERS, {"reason": True, "which": False}),
    ("So it stopped charging?", ORDERS, {"reason": True, "which": False}),
    ("So they were too tight?", ORDERS, {"reason": True}),
    # comparatives offered against each other ask both topics; "two of them" asks how many
    ("Quicker or cheaper - what counts more?", LAMP, {"topics": {"price", "shipping"}}),
    ("Is a heavier pan a problem if it's cheaper?", InPlay(), {"topics": {"price", "weight"}}),
    ("You'd take two of those, yeah?", CABLE, {"topics": {"quantity"}, "confirm": False}),
    # a checklist split by numbered stops; a numbered request in a clause
    ("Two things before I look: 1. colour 2. budget", LAMP, {"topics": {"color", "price"}}),
    ("Last step: 1) confirm the checkout.", JACKET, {"confirm": True}),
    # a run-on question after a summary that names values asks only its own topic
    ("looked at lumora and brightix both well reviewed whats your budget", LAMP, {"topics": {"price"}, "confirm": False}),
    # the agent's step with a modal tag, or "now" in another word order
    ("I can submit the return now, can't I?", ORDERS, {"confirm": True}),
    ("The order I place now or later?", JACKET, {"confirm": True}),
    # round 4: needs said in passing, a bare "which of these" after the values, a request that ends a stopless message
    ("Only need the colour from you, then it's done.", HOODIE, {"topics": {"color"}, "confirm": False}),
    ("gonna need ur size rn", JACKET, {"topics": {"size"}}),
    ("The mug comes in ceramic, wood and stainless steel. Which of those do you fancy?", MUG, {"topics": {"material"}}),
    ("i can place the order once youre ready just let me know", JACKET, {"confirm": True}),
    ("Can you authorise the payment?", JACKET, {"confirm": True}),
    ("You wouldn't want me to wait on the refund, would you?", ORDERS, {"confirm": True}),
    ("Were the sleeves too long?", ORDERS, {"reason": True, "which": False}),
    ("Is a week too long to wait?", LAMP, {"topics": {"shipping"}}),
    # round 5: formal requests, a go-ahead run on after a comma, a problem supposed of the item
    ("Kindly state the colour you require.", HOODIE, {"topics": {"color"}}),
    ("ok the refund is all set up, want me to submit it", ORDERS, {"confirm": True}),
    ("Could there be an issue with the cable?", ORDERS, {"reason": True, "which": False}),
    # round 6: numbers and common words that are also values; what only a part or a count names
    ("Would you like it within 5 days?", InPlay(values={"size": ("5", "6")}), {"topics": {"shipping"}}),
    ("A pack of 2 or just 1?", CABLE, {"topics": {"quantity"}}),
    ("Fabric shade or glass?", LAMP, {"topics": {"material"}}),
    ("Under $50, or are 5 stars more important?", LAMP, {"topics": {"price", "rating"}}),
    ("Sonora at $79 with 4 stars, or Voltix?", SPEAKER, {"topics": {"brand"}}),
    ("Non-stick or cast iron?", InPlay(values={"form": ("Stick", "Spray")}), {"topics": {"material"}}),
    ("How many monitors will you need?", InPlay(), {"topics": {"quantity"}}),
    ("What size are you thinking, 24 or 32 inches?", InPlay(), {"topics": {"screen"}}),
    ("Is the headset crackling?", ORDERS, {"reason": True, "which": False}),
    # round 7: store values inside idioms or beside devices name no value
    ("Do you want lightning-quick shipping?", CABLE, {"topics": {"shipping"}}),
    ("Is it for your phone or a tablet?", InPlay(values={"form": ("Tablet", "Gel")}), {"topics": {"connector"}}),
    ("Wooden or ceramic handle?", MUG, {"topics": {"material"}}),
    # round 8: a topic in rare words inside open framing; a quality no topic names is unclear, never open
    ("What kind of fit suits you best?", JACKET, {"topics": {"size"}, "open": False}),
    ("How loud should the speaker go?", SPEAKER, {"topics": {"wattage"}, "open": False}),
    ("How much are you happy splurging?", SPEAKER, {"topics": {"price"}, "open": False}),
    ("Should it be easy to carry?", InPlay(), {"topics": {"weight"}}),
    ("Would a larger display suit you?", InPlay(), {"topics": {"screen"}}),
    ("How sturdy do you need it to be?", LAMP, {"topics": set(), "open": False}),
    ("What style are you after - modern or classic?", LAMP, {"topics": set(), "open": False}),
    ("How picky are you about the details?", LAMP, {"open": True}),
    # round 9: topics in uncommon words (never open); "how much" of a quality asks no quantity
    ("Roughly what are you prepared to shell out?", SPEAKER, {"topics": {"price"}, "open": False}),
    ("Any names you trust?", SPEAKER, {"topics": {"brand"}, "open": False}),
    ("Does it matter what other buyers say?", SPEAKER, {"topics": {"rating"}, "open": False}),
    ("Which tone do you fancy?", HOODIE, {"topics": {"color"}}),
    ("Snug fit or roomy?", JACKET, {"topics": {"size"}}),
    ("Corded or cordless?", CABLE, {"topics": {"connector"}}),
    ("Is it for the whole team?", CABLE, {"topics": {"quantity"}, "open": False}),
    ("How much power does it need?", SPEAKER, {"topics": {"wattage"}}),
    ("How much can you stretch to?", SPEAKER, {"topics": {"price"}}),
    # a fault ruled out, or a concern about a choice, asks no reason
    ("Which colour would go without any problems?", ORDERS, {"reason": False}),
    ("Is the price an issue for you?", ORDERS, {"reason": False}),
    # round 10: go-aheads and reasons in other words
    ("Shall we seal the deal?", JACKET, {"confirm": True}),
    ("Just waiting on your OK.", JACKET, {"confirm": True}),
    ("Would you be agreeable to me submitting the return?", ORDERS, {"confirm": True}),
    ("What's brought this about?", ORDERS, {"reason": True}),
    ("Did it fail to live up to the description?", ORDERS, {"reason": True, "which": False}),
    ("Did the hoodie turn up in poor condition?", ORDERS, {"reason": True, "which": False}),
    # round 11: open words about a named topic further on in the clause ask that topic alone, never openly
    ("Do you have any further preferences regarding the colour?", HOODIE, {"topics": {"color"}, "open": False}),
    ("Anything else I ought to know when it comes to the size?", JACKET, {"topics": {"size"}, "open": False}),
    ("Any other thoughts on how much you'd spend?", SPEAKER, {"topics": {"price"}, "open": False}),
    ("Is there anything more you'd like in terms of delivery?", LAMP, {"topics": {"shipping"}, "open": False}),
    ("Would any other make suit you?", SPEAKER, {"topics": {"brand"}, "open": False}),
    ("Any other colour you'd be happy with?", HOODIE, {"topics": {"color"}, "confirm": False, "open": False}),
    ("Anything else about the lamp, like the colour or the brand?", LAMP, {"open": True}),
    # round 12: a yes/no question or a wh-question about one feature no topic names is unclear, never open
    ("Does it need to be shatterproof?", LAMP, {"asks": True, "topics": set(), "open": False}),
    ("Is a touchscreen important to you?", InPlay(), {"topics": set(), "open": False}),
    ("Must it have a timer?", LAMP, {"topics": set(), "open": False}),
    ("What warranty are you looking for?", SPEAKER, {"topics": set(), "open": False}),
    ("Do you need it to do anything special?", LAMP, {"open": True}),
    ("Is there a particular feature you need?", LAMP, {"open": True}),
    ("Is it a gift or for yourself?", LAMP, {"open": True}),
    # round 13: "how much" that asks money or the amount of something else asks no quantity
    ("How much would be too much for the speaker?", SPEAKER, {"topics": {"price"}}),
    ("Roughly how much are we talking?", SPEAKER, {"topics": {"price"}}),
    ("How much of a spend is this?", SPEAKER, {"topics": {"price"}}),
    ("How many do you need?", CABLE, {"topics": {"quantity"}}),
    # what describes no named option is asked; a brand that owns what is asked is not
    ("Do you want the highest rated one that arrives by Friday?", LAMP, {"topics": {"rating", "shipping"}}),
    ("Is the Lumora's price OK for you?", LAMP, {"topics": {"price"}}),
    # round 14: slips in short words and in store values; a choice of cue words or values without a question mark
    ("wat brnd u like", SPEAKER, {"topics": {"brand"}}),
    ("how hevy can it be", InPlay(), {"topics": {"weight"}}),
    ("waht colour", HOODIE, {"topics": {"color"}}),
    ("leathr or nylonn", InPlay(), {"topics": {"material"}}),
    ("corded or wireless", CABLE, {"topics": {"connector"}}),
    ("what scren size", InPlay(), {"topics": {"screen"}}),
    # round 15: a fact asked for by "may I have", a list of topics after a need, another value beside a go-ahead
    ("Could I please get the colour you'd like for the hoodie?", HOODIE, {"topics": {"color"}, "confirm": False}),
    ("For the two items we'll need the jacket size and your cable connector.", JACKET,
     {"topics": {"connector", "size"}}),
    ("Shall I leave it in navy, or switch to a different colour?", HOODIE, {"topics": {"color"}, "confirm": False}),
    ("comes in xs m or xxl which 1", JACKET, {"topics": {"size"}}),
    # round 16: a sign-off that offers help with the customer's own questions asks no requirement
    ("Which size fits? Shout if you have any more questions.", JACKET, {"topics": {"size"}, "open": False}),
    ("Found two lamps for you. Any further questions, let me know!", LAMP, {"asks": False}),
    ("What's your budget? If anything else comes up, just say.", SPEAKER, {"topics": {"price"}, "open": False}),
    ("Let me know if there's anything else you need.", LAMP, {"open": True}),
    # round 18: go-aheads said as a condition, a stopless tag or a formal request; a figure that describes the order
    ("i can place it now if youre ok with that", JACKET, {"confirm": True}),
    ("ill send the refund thru now ok", ORDERS, {"confirm": True}),
    ("I would be glad to submit it, if you would kindly confirm.", ORDERS, {"confirm": True}),
    ("Shall I check out the basket at $42?", JACKET, {"confirm": True, "topics": set()}),
    ("Did the shade look different to what you expected?", ORDERS, {"reason": True, "which": False}),
    # round 19: a date to have it by named as an event
    ("You'd want it here before the wedding, yes?", LAMP, {"topics": {"shipping"}, "confirm": False}),
    ("Do you need them before your trip?", SPEAKER, {"topics": {"shipping"}}),
    # found by the records: a product's own words are no slip of a fault word, its wattage no unit typed by the agent
    ("Was it the Zenwear Plus 6 Frying Pan or the Terrawave Echo 9 Frying Pan?", ORDERS,
     {"which": True, "reason": False}),
    ("Is it just one Brightwave Trek 11 8W desk lamp or more than one?", InPlay(), {"topics": {"quantity"}}),
    ("Which material do you need for Brightworks Air 6 300W Blender?", InPlay(), {"topics": {"material"}}),
])
def test_twelfth_batch_styles_ask_what_their_question_asks(text: str, in_play: InPlay, expected: dict[str, Any]) -> None:
    """E-mail, teen chat typed without stops, Spanish- and German-shaped word order, checklists, unit abbreviations,
    comparatives, negation and tag questions: each reads as what its question asks, and statements in the same
    styles ask nothing."""
    reading = understand(text, in_play)
    for name, value in expected.items():
        assert getattr(reading, name) == value, (name, reading)


@pytest.mark.parametrize("text, in_play, expected", [
    # a go-ahead said as a condition of the customer's approval before the agent's step; not without the step
    ("If you're okay with the navy one, I'll check out now.", HOODIE, {"confirm": True, "topics": set()}),
    ("If everything looks good, I can submit the order.", JACKET, {"confirm": True}),
    ("If you're happy with the queen, lovely.", InPlay(), {"confirm": False}),
    # a request said as a condition before the agent's step asks what it requests, not leave
    ("If you could tell me what went wrong, I'll process the return.", ORDERS, {"reason": True, "confirm": False}),
    ("If you say why, I can book the courier.", ORDERS, {"reason": True, "confirm": False}),
    # go-aheads in formal, slang, shopkeeper's and calqued words: passive, verb last, "want that I", a bare "Do I?"
    ("Shall we pull the trigger on it?", CABLE, {"confirm": True}),
    ("Will that be all for today, dear?", MUG, {"confirm": True}),
    ("Your approval is needed to proceed.", MUG, {"confirm": True}),
    ("May the return be processed now?", ORDERS, {"confirm": True, "reason": False}),
    ("Should I the return now start?", ORDERS, {"confirm": True}),
    ("Do you want that I place the order?", MUG, {"confirm": True}),
    ("Let me know if I should place it.", MUG, {"confirm": True}),
    ("The basket, I do it now?", MUG, {"confirm": True}),
    ("Everything is in the basket. Press ahead?", MUG, {"confirm": True}),
    ("We need your express permission to place the order.", MUG, {"confirm": True, "topics": set()}),
    ("Do you need express delivery?", LAMP, {"topics": {"shipping"}}),
    # the cause asked in other words: formal, slang, old-fashioned, a negated fault in a tag question
    ("What went awry with the cable?", ORDERS, {"reason": True, "which": False}),
    ("Please state your grounds for returning it.", ORDERS, {"reason": True}),
    ("You weren't happy with the fit, were you?", ORDERS, {"reason": True, "confirm": False}),
    ("Not up to par, then?", ORDERS, {"reason": True}),
    ("What's your beef with it?", ORDERS, {"reason": True}),
    ("What's got you returning the hoodie?", ORDERS, {"reason": True, "which": False}),
    ("I'm thinking 27 inches - too big, too small, or about right?", ORDERS, {"reason": False}),
    # any further need: a tag that checks there is no more asks no leave; other words for "anything"
    ("Nothing more you need, right?", LAMP, {"open": True, "confirm": False}),
    ("That's everything you want, isn't it?", LAMP, {"open": True, "confirm": False}),
    ("Any other stuff you want in it?", LAMP, {"open": True}),
    ("Owt else?", SPEAKER, {"open": True}),
    ("Is there more you need from it?", LAMP, {"open": True}),
    ("Anything else you need, or are we good?", LAMP, {"open": True, "confirm": False}),
    ("Provided that's okay with you, I'll place it today.", MUG, {"confirm": True}),
    ("Are you set for me to check out?", MUG, {"confirm": True}),
    ("You wouldn't want me to wait, would you?", MUG, {"confirm": True, "topics": set()}),
    ("Whatever's wrong with it, love?", ORDERS, {"reason": True}),
    ("Whatever the reason, I can start the return.", ORDERS, {"reason": False}),
    # a request for "it" asks what the sentence before it names
    ("Every return needs a reason on file. Kindly share it.", ORDERS, {"reason": True}),
    ("The jacket needs a size before I add it. Could you give me that?", JACKET, {"topics": {"size"}}),
    ("The refund goes to your card. Please keep the receipt.", ORDERS, {"asks": False}),
    ("Just say yes and I'll send it off.", MUG, {"confirm": True}),
    ("we buying it or nah", MUG, {"confirm": True}),
    ("Do you want the pair bought now?", SHOES, {"confirm": True}),
    ("Is it playing up?", ORDERS, {"reason": True}),
    ("So how did it not work for you?", ORDERS, {"reason": True, "confirm": False}),
    ("What is it about the hoodie you didn't like?", ORDERS, {"reason": True, "which": False}),
    ("Tell me what the trouble was and I'll book the pickup.", ORDERS, {"reason": True}),
    ("If there's anything else you need, tell me and I'll look for it.", LAMP, {"open": True, "confirm": False}),
    ("What besides should it have?", LAMP, {"open": True}),
    ("Say which colour and I'll add it.", HOODIE, {"topics": {"color"}}),
    ("Will I ring that up for you?", MUG, {"confirm": True}),
    ("If you fill me in on the problem, I'll arrange a courier.", ORDERS, {"reason": True}),
    ("Because of what is it going back?", ORDERS, {"reason": True, "which": False}),
    ("What's brought this on?", ORDERS, {"reason": True}),
    ("Was it different from what you expected?", ORDERS, {"reason": True}),
    ("Every return must name a reason. What is yours?", ORDERS, {"reason": True}),
    ("If you've any other needs, I'm all ears.", LAMP, {"open": True}),
    ("Please list any other specifications.", LAMP, {"open": True}),
    ("The lamp comes in black or silver. Yours?", LAMP, {"topics": {"color"}}),
    ("so whats the damage ur ok with", SPEAKER, {"topics": {"price"}}),
    ("ok real quick what colour u want", HOODIE, {"topics": {"color"}}),
    ("cool if i place order now?", MUG, {"confirm": True}),
    ("Your approval is hereby requested to place the order.", MUG, {"confirm": True}),
    ("anything else u need, spill", LAMP, {"open": True}),
    ("What still must the lamp have?", LAMP, {"open": True}),
    # leaks found by playing them: names offered at the start of a message are options, not an open question; the
    # price asked in slang is no fault
    ("Sonora or Aurix, or no preference?", InPlay(), {"open": False}),
    ("What's the damage you'd be happy with?", ORDERS, {"reason": False}),
    # a condition said with "should" first states; what follows it may still ask, or ask leave
    ("Should the cable arrive broken, just call us.", ORDERS, {"asks": False}),
    ("Should it be faulty, please tell us within 30 days.", ORDERS, {"reason": False}),
    ("Should you need anything else, do let me know.", LAMP, {"open": True}),
    ("Should you be happy with it, I'll check out now.", MUG, {"confirm": True}),
    ("Were they too loose?", ORDERS, {"reason": True}),
    ("So what went down with the lamp?", ORDERS, {"reason": True, "which": False}),
    ("Please state the basis for the return.", ORDERS, {"reason": True}),
    ("What's with the return, was it unusable?", ORDERS, {"reason": True}),
    ("It is hereby requested that you confirm the order.", MUG, {"confirm": True}),
    ("The return, we can start it?", ORDERS, {"confirm": True}),
    ("Is that all you need, or is there more?", LAMP, {"open": True, "confirm": False}),
    ("The order will be placed on your confirmation. Kindly respond accordingly.", MUG, {"confirm": True}),
    ("We need a short explanation of the problem. Could you give one?", ORDERS, {"reason": True}),
    ("Would you allow me to place the order?", MUG, {"confirm": True}),
    ("If it's all the same to you, I'll place it now.", MUG, {"confirm": True}),
    ("I am able to submit the order now?", MUG, {"confirm": True}),
    ("tho why the hoodie going back", ORDERS, {"reason": True}),
    ("What's happened to the cable?", ORDERS, {"reason": True, "which": False}),
    ("yo who's ur fave brand", SPEAKER, {"topics": {"brand"}}),
    ("If you let me in on your size, I'll add the jacket.", JACKET, {"topics": {"size"}}),
    ("Whatever possessed you to send it back?", ORDERS, {"reason": True}),
    ("I start the refund, you ok?", ORDERS, {"confirm": True}),
    ("Thatll be everything, will it?", MUG, {"confirm": True}),
    ("What else is there to know?", LAMP, {"open": True}),
    ("Corded, or without a cable?", CABLE, {"topics": {"connector"}}),
    ("We have Sonora and Voltix in stock. Please state your preference.", SPEAKER, {"topics": {"brand"}, "open": False}),
    ("We stock cotton, linen and wool. Kindly indicate your preference.", InPlay(), {"topics": {"material"}, "open": False}),
    ("Kindly indicate your preference.", InPlay(), {"topics": set(), "open": False}),
    ("Too tight, or was it something else?", ORDERS, {"reason": True}),
    ("Every return needs a stated reason. What's yours?", ORDERS, {"reason": True}),
    ("You're not wanting to wait on it, are you?", MUG, {"confirm": True, "topics": set()}),
    ("Do you want to wait for it, or is faster better?", LAMP, {"topics": {"shipping"}}),
    ("Once you're ready, I can place it. Are you?", MUG, {"confirm": True}),
    ("What has the cable that you send it back?", ORDERS, {"reason": True, "which": False}),
    ("What else should the screen have?", InPlay(), {"open": True, "topics": set()}),
    ("Anything else I can help you with?", LAMP, {"open": True}),
    ("What size? Anything else I can help you with, just ask.", JACKET, {"topics": {"size"}, "open": False}),
    ("k which size u need", JACKET, {"topics": {"size"}}),
    ("With your permission, I'll place the order.", MUG, {"confirm": True}),
    ("Check out now, then?", MUG, {"confirm": True}),
    ("Apart from the colour, anything else?", LAMP, {"topics": set(), "open": True}),
    ("Besides the brand, what colour?", LAMP, {"topics": {"color"}}),
    ("How will you hook it up?", CABLE, {"topics": {"connector"}}),
    ("u want me to cop it?", MUG, {"confirm": True}),
    ("Say the word and it's ordered.", MUG, {"confirm": True}),
    ("You'll be wanting me to check out, won't you?", MUG, {"confirm": True}),
    ("The return, we start it or we wait?", ORDERS, {"confirm": True}),
    ("Please set out the grounds of the return.", ORDERS, {"reason": True}),
    ("Didn't it sound right?", ORDERS, {"reason": True}),
    ("Does that sound right?", ORDERS, {"reason": False}),
    ("If you've any more needs, just shout.", LAMP, {"open": True}),
    ("If the colour's important, tell me and I'll filter.", LAMP, {"topics": {"color"}, "open": False}),
    ("Which colour, petal?", HOODIE, {"topics": {"color"}}),
    ("What has it done wrong?", ORDERS, {"reason": True}),
    ("Did it give up on you?", ORDERS, {"reason": True}),
    ("How do you mean, it's not right?", ORDERS, {"reason": True, "which": False}),
    ("The form needs a reason, what should I write?", ORDERS, {"reason": True}),
    ("Just give me the go and it's done.", MUG, {"confirm": True}),
    ("Both ok? I'll check out.", CABLE, {"confirm": True}),
    ("What haven't I asked about yet?", LAMP, {"open": True}),
    # a model number before "in" is no screen size in inches
    ("Tell me your size and I'll put the Atlas 22 in the cart.", JACKET, {"topics": {"size"}}),
])
def test_fourteenth_batch_styles_ask_what_their_question_asks(text: str, in_play: InPlay,
                                                             expected: dict[str, Any]) -> None:
    """Spec sheets, American slang, compliance wording, apologies, conditional offers, tag and negative questions,
    calques of German, Spanish and French word order and an old-fashioned shopkeeper: each reads as what its
    question asks."""
    reading = understand(text, in_play)
    for name, value in expected.items():
        assert getattr(reading, name) == value, (name, reading)


# -- found by play: a request to sum up, and a listing verb as a heading ------------------------------------

def test_a_request_to_sum_up_asks_openly_and_a_listing_heading_asks_nothing() -> None:
    """"Summarise your requirements." asks for every requirement (an honest agent's recap request drew nothing);
    a listing verb heading what the agent lists ("Sum up: ...", "List: ...", "Describe: ...") asks nothing, though
    the list names a value."""
    cart = InPlay(values={"color": ("Black", "Slate Grey"), "size": ("S", "M", "L")})
    for asks in ("Summarise your requirements.", "Could you sum up what you need?", "Spell out your must-haves.",
                 "summarize what matters to you pls"):
        reading = understand(asks, cart)
        assert reading.open and not reading.topics, asks
    for tells in ("Sum up: the Terra 5 in Black, size M, one unit.", "List: Black, Slate Grey.",
                  "Describe: a steel mug in Black.", "Recap: Terra 5, Black."):
        assert not understand(tells, cart).asks_anything, tells
    assert understand("List the colours you'd accept.", cart).topics == frozenset({"color"})


@pytest.mark.parametrize(("text", "in_play", "expected"), [
    # a question asked for effect asks nothing, so it names no topic or value
    ("Who even wants a Lumora lamp in silver?", LAMP, {"asks": False, "topics": set()}),
    ("Honestly, who doesn't love a ceramic mug?!", MUG, {"asks": False, "topics": set()}),
    ("What hoodie could be comfier than the navy one?", HOODIE, {"asks": False, "topics": set()}),
    ("Aren't these wooden mugs simply lovely?!", MUG, {"asks": False, "open": False}),
    ("Who buys a cable without USB-C? What connector do you need?", CABLE, {"topics": {"connector"}}),
    ("Who makes your favourite lamp?", LAMP, {"topics": {"brand"}}),
    ("How cool is that Brightix lamp!", LAMP, {"asks": False, "topics": set()}),
    # "how much" that weighs a topic, and "how many" of a currency, ask no quantity
    ("How much do the stars sway you?", LAMP, {"topics": {"rating"}}),
    ("How much the brand is important to you?", LAMP, {"topics": {"brand"}}),
    ("How much do you trust reviews?", MUG, {"topics": {"rating"}}),
    ("How heavily do reviews weigh on your decision?", MUG, {"topics": {"rating"}}),
    ("Do ratings figure into your choice at all?", MUG, {"topics": {"rating"}}),
    ("How many euros do you want to spend?", MUG, {"topics": {"price"}}),
    ("How many do you need?", MUG, {"topics": {"quantity"}}),
    ("We stock a couple of styles of that jacket, which do you want?", JACKET, {"topics": set()}),
    ("We stock a couple of colours; which one do you want?", HOODIE, {"topics": {"color"}}),
    # what follows a count of questions is asked, not examples of an open question
    ("Two quick questions: your size, and the fabric?", JACKET, {"topics": {"size", "material"}, "open": False}),
    ("To find the right lamp I have three questions: budget, brand and colour?", LAMP,
     {"topics": {"price", "brand", "color"}, "open": False}),
    # values before a bare "your preference?" say its topic; "something more ..., like A or B" asks their topic
    ("Stainless Steel keeps it hot, Ceramic looks smart, Wood feels warm. Your preference?", MUG,
     {"topics": {"material"}, "open": False}),
    ("The black is striking, but maybe something softer, like Navy or Olive?", HOODIE,
     {"topics": {"color"}, "open": False}),
    ("Anything else you need?", HOODIE, {"open": True}),
    ("Does the evaluation by other customers matter to you?", LAMP, {"topics": {"rating"}, "open": False}),
    # the name on the product is its brand; a version asked of no item in play is unclear, not open
    ("Does the name on the label sway you at all?", InPlay(), {"topics": {"brand"}, "open": False}),
    ("Which version of it are you after?", InPlay(), {"topics": set(), "open": False}),
])
def test_rhetorical_degree_and_listed_questions_ask_only_their_topics(text: str, in_play: InPlay,
                                                                     expected: dict[str, Any]) -> None:
    """Leaks of the training corpus (issue 29 §1): questions asked for effect, "how much" that weighs a topic or
    counts money, options the store counts, a count of questions before them and "something more, like ..." read
    only what they ask."""
    reading = understand(text, in_play)
    for name, value in expected.items():
        assert getattr(reading, name) == value, (name, reading)


# -- corpus 20 and 21 families: go-aheads in a clause of their own, as a need or a reply key; picks; reasons -----

@pytest.mark.parametrize(("text", "in_play", "topics", "confirm"), [
    # a topic question, then a go-ahead in a clause of its own: both are asked
    ("How many mugs, and should I then check out?", MUG, {"quantity"}, True),
    ("Which size do you need, and can we then place the order?", JACKET, {"size"}, True),
    ("Kindly tell me the colour and confirm that we may then finalise the order.", HOODIE, {"color"}, True),
    ("How many would you like, and I complete the purchase, yeah?", HOODIE, {"quantity"}, True),
    # the step as the agent's promise or inside the topic question asks only the topic
    ("Which colour, and I'll add it?", HOODIE, {"color"}, False),
    ("Tell me the size and I will check out.", JACKET, {"size"}, False),
    ("Which material shall I add?", MUG, {"material"}, False),
    ("How many do you need, and what colour?", HOODIE, {"quantity", "color"}, False),
])
def test_a_go_ahead_in_a_clause_of_its_own_beside_a_topic(text: str, in_play: InPlay, topics: set[str],
                                                          confirm: bool) -> None:
    reading = understand(text, in_play)
    assert (set(reading.topics), reading.confirm) == (topics, confirm), reading


@pytest.mark.parametrize(("text", "in_play", "confirm"), [
    # the go-ahead as what the agent still needs or awaits
    ("I just need your approval and then it's ordered.", CART_KEYBOARD, True),
    ("The refund now awaits your consent.", ORDERS, True),
    ("Only your go-ahead is needed now.", CART_KEYBOARD, True),
    ("All I need from you is a quick yes.", CART_KEYBOARD, True),
    # the go-ahead asked as what to reply or pick
    ("Reply Y to check out, N to keep browsing.", CART_KEYBOARD, True),
    ("Press 1 to confirm the return, 2 to cancel.", ORDERS, True),
    ("Ready to pay? (yes/no)", CART_KEYBOARD, True),
    ("Your basket: 3 items. 1) Checkout 2) Continue shopping", CART_KEYBOARD, True),
    # the step the agent states, then a bare tag or a bare action question
    ("I'll raise the refund for the hoodie. Okay?", ORDERS, True),
    ("The swap is all set up. Send it?", ORDERS, True),
    ("I can swap it for a new one. Shall I do that?", ORDERS, True),
    ("Keyboard in Bluetooth, one unit. Do we have a deal?", CART_KEYBOARD, True),
    # near misses: a go-ahead the agent does without, a key that asks nothing
    ("We don't need your approval to change the size.", CART_KEYBOARD, False),
    ("No approval is needed for returns under 30 days.", ORDERS, False),
    ("Text STOP to opt out of order updates.", CART_KEYBOARD, False),
    ("Your approval came through, thank you.", CART_KEYBOARD, False),
])
def test_a_go_ahead_said_as_a_need_a_reply_key_or_a_tag(text: str, in_play: InPlay, confirm: bool) -> None:
    reading = understand(text, in_play)
    assert (reading.confirm, reading.topics, reading.which, reading.reason) == (confirm, frozenset(), False, False), reading


KEYBOARD_ITEM = InPlay((ItemNames("K1", "kinetiq", "keys 5", "keyboard"),), CART_KEYBOARD.values)


@pytest.mark.parametrize(("text", "in_play", "topics"), [
    ("Navy, Olive, Black. Choose one.", HOODIE, {"color"}),
    ("XS, M or XXL. Pick one please.", JACKET, {"size"}),
    ("Reply 1 for Black, 2 for Navy, 3 for Olive.", HOODIE, {"color"}),
    ("Select a material: 1) Ceramic 2) Wood", MUG, {"material"}),
    # a bare "which one?" after the kinds counted asks among them
    ("The Terra 5 comes in three materials. Which would you like?", MUG, {"material"}),
    ("This keyboard comes in two versions. Which one do you want?", KEYBOARD_ITEM, {"variant"}),
    ("We found three models for you. Which one do you like?", InPlay(), set()),  # no item in play: no version
    # near misses: "pick up", a pick the agent made
    ("Black, Navy, Olive. Pick up from the store is free.", HOODIE, set()),
    ("We have Black and Navy. I picked Navy for you.", HOODIE, set()),
])
def test_a_pick_among_the_values_listed(text: str, in_play: InPlay, topics: set[str]) -> None:
    reading = understand(text, in_play)
    assert (set(reading.topics), reading.confirm, reading.open) == (topics, False, False), reading


@pytest.mark.parametrize(("text", "reason", "which"), [
    # the reason as what the agent needs
    ("To file the return I need the reason.", True, False),
    ("The reason for the return, please. I need it for our records.", True, False),
    ("Our form requires a stated reason. What was it?", True, False),
    # a reason in new words: the state it came in, a fault asked with "what", a misfit of the item, a fault word
    ("Did it arrive squashed?", True, False),
    ("Sweater too tight?", True, False),
    ("What's the issue with the September 10 order?", True, False),
    ("Is the charger dead on arrival?", True, False),
    ("Has the cable ceased to charge?", True, False),
    ("So why are we sending the hoodie back?", True, False),
    # near misses: a reason the agent does without, what it needs back, when it came, which order has the fault
    ("We don't need a reason for this return.", False, False),
    ("I need it back by the 10th.", False, False),
    ("Did it arrive on September 10?", False, True),
    ("Did it come early?", False, True),
    ("Which order has the issue?", False, True),
    ("Why we ask: it helps us improve.", False, True),
    ("You got it when, roughly?", False, True),
])
def test_a_reason_asked_in_other_words(text: str, reason: bool, which: bool) -> None:
    reading = understand(text, ORDERS)
    assert (reading.reason, reading.which) == (reason, which), reading


PAN = InPlay(values={"material": ("Cast Iron", "Stainless Steel"), "brand": ("Culina", "Ferro")})
LAMPSHADE = InPlay(values={"material": ("Glass", "Linen", "Metal"), "color": ("Black", "White")})
CREAM = InPlay(values={"form": ("Cream", "Gel", "Stick")})


@pytest.mark.parametrize(("text", "in_play", "expected"), [
    # praise or a comparison asked for effect, and a question the agent answers itself, ask nothing
    ("Who could say no to a wooden mug at that price?", MUG, {"asks": False, "topics": set()}),
    ("Isn't the Navy gorgeous in daylight?", HOODIE, {"asks": False, "topics": set()}),
    ("Could there be anything cosier than a cast iron pan on a Sunday?", PAN, {"asks": False, "open": False}),
    ("Is there anything nicer than real linen? I doubt it.", LAMPSHADE, {"asks": False, "topics": set()}),
    ("What's not to love about ceramic?", MUG, {"asks": False, "topics": set()}),
    # near misses: a comparison of what matters, a doubt about a value and a question after the praise ask
    ("Is there anything more important to you than the price?", MUG, {"topics": {"price"}}),
    ("Is there anything more important than price?", MUG, {"topics": {"price"}}),
    ("Isn't the Navy a little dark for you?", HOODIE, {"topics": {"color"}}),
    ("Isn't the Olive gorgeous? Which size do you take?", InPlay(values={"size": ("S", "M", "L")}),
     {"topics": {"size"}}),
    # what the agent hears or sees, as the subject of a statement, asks nothing; what it needs is asked
    ("What I'm seeing is that the Black suits your kitchen.", HOODIE, {"asks": False, "topics": set()}),
    ("What we've found is that ceramic keeps coffee warm.", MUG, {"asks": False, "topics": set()}),
    ("What I need is your size.", JACKET, {"topics": {"size"}}),
])
def test_questions_for_effect_and_statements_that_open_with_what_ask_nothing(text: str, in_play: InPlay,
                                                                              expected: dict[str, Any]) -> None:
    """Leaks of the training corpus (issue 29 §1): a question that praises, compares or is answered by the agent
    itself, and "What I'm hearing is ..." told as a statement, name values the shopper must not read as asked."""
    reading = understand(text, in_play)
    for name, value in expected.items():
        assert getattr(reading, name) == value, (name, reading)


@pytest.mark.parametrize(("text", "in_play", "topics"), [
    # a value the agent has on record is told, not asked, with the clauses that name it
    ("Your size, M, is safely in my notes; now, which colour for the hoodie?", HOODIE, {"color"}),
    ("Size 10 noted, and what colour would you like?", HOODIE, {"color"}),
    ("The jacket being settled in XS, I move to the mug: which material shall it be?", MUG, {"material"}),
    # a question without a question word asks in the clause that carries its mark
    ("Right, the brand matter to you at all?", PAN, {"brand"}),
    # near misses: a list the question mark ends, and two topics both asked
    ("Over-ear in black, white or something else?", HOODIE, {"color"}),
    ("Which size, and which colour?", HOODIE, {"size", "color"}),
    # words of a topic that name something else: pieces counted, a lamp's shade of a material, a weight that
    # weighs a topic, a light texture, "material" as an adjective, "how much" after the topic it asks
    ("How many pcs of the mug do you want?", MUG, {"quantity"}),
    ("Will it plug into your PC?", CABLE, {"connector"}),
    ("Do you prefer a shade of Glass or of Metal?", LAMPSHADE, {"material"}),
    ("Which shade of grey do you like?", HOODIE, {"color"}),
    ("How much does the brand weigh with you?", PAN, {"brand"}),
    ("The rich cream or the lighter gel texture?", CREAM, {"form"}),
    ("Is a lighter pan better for you?", PAN, {"weight"}),
    ("Is the weight of the pan a material factor for you?", PAN, {"weight"}),
    ("How much bright do you want it, how many watts?", LAMP, {"wattage"}),
    ("Your shoe size how much?", SHOES, {"size"}),
    # the screen's sizes: a heading "Screen size!" before a bare "how big?", size words beside the screen
    ("Screen size! How big are we talking?", InPlay(), {"screen"}),
    ("The monitor, you want the small one or the large one, 24 or 27 inch?", InPlay(), {"screen"}),
    ("Nice monitor. What size hoodie do you wear?", InPlay(), {"size"}),
    ("The monitor, how big do you want it?", InPlay(), {"screen"}),
    ("Monitor size how much you need?", InPlay(), {"screen"}),
    # examples listed after the question are asked; a count of kilos asks the weight; a telephone is a device;
    # a slip of "pieces" counts
    ("Do reviews sway you, the stars and so on?", LAMP, {"rating"}),
    ("For the dumbbells, how many kilos each?", InPlay(), {"weight"}),
    ("Which telephone will you charge it from?", CABLE, {"connector"}),
    ("how many peices of the mug u want", MUG, {"quantity"}),
    # near misses: a budget still asked with "how much", and a count
    ("How much do you want to spend on the monitor?", InPlay(), {"price"}),
    ("How many mugs do you need?", MUG, {"quantity"}),
])
def test_topics_count_only_where_they_are_asked(text: str, in_play: InPlay, topics: set[str]) -> None:
    """Leaks of the training corpus (issue 29 §1): a value on record before the question, a clause that tells, and
    topic words used for something else are not asked; the near misses still read what they ask."""
    assert understand(text, in_play).topics == frozenset(topics), text


@pytest.mark.parametrize(("text", "reason"), [
    ("Might I trouble you to state the size you take?", False),
    ("Is the weight problem for you?", False),
    ("What size are you lacing up these days?", False),
    ("Would you like it misting or as a cream?", False),
    # near misses: a fault asked of the item
    ("Any trouble with it?", True),
    ("Was it acting up?", True),
])
def test_a_concern_a_polite_lead_in_or_an_inflected_word_asks_no_reason(text: str, reason: bool) -> None:
    """In a return (leaks of the training corpus): "trouble you to", "a problem for you" and a word that inflects
    another word ("lacing", "misting": no slips of "acting", "missing") ask no reason; a fault still does."""
    assert understand(text, ORDERS).reason == reason, text


@pytest.mark.parametrize(("text", "in_play", "topics", "confirm"), [
    # a check of a value the customer gave asks that value's topic, no leave to act
    ("You picked Olive for the hoodie, is that right?", HOODIE, {"color"}, False),
    ('I heard "XXL." Is that correct?', JACKET, {"size"}, False),
    ("You told me size 10... is that right... or was it 9?", SHOES, {"size"}, False),
    ("You mentioned wood, is that correct, or shall I look at ceramic too?", MUG, {"material"}, False),
    # near misses: a go-ahead the customer gave, a summary checked before the step, the go-ahead after the check
    ("You said yes, is that right? Then I place the order.", HOODIE, set(), True),
    ("You picked the Olive one. Is that right? Shall I order it?", HOODIE, set(), True),
])
def test_a_check_of_a_value_the_customer_gave(text: str, in_play: InPlay, topics: set[str], confirm: bool) -> None:
    reading = understand(text, in_play)
    assert (set(reading.topics), reading.confirm) == (topics, confirm), reading


@pytest.mark.parametrize(("text", "in_play", "confirm"), [
    # the go-ahead as the word to say
    ("Say aye and the order goes through.", CART_KEYBOARD, True),
    ("Say the magic word and the lamp is yours.", CART_KEYBOARD, True),
    ('To start the return, say "yes."', ORDERS, True),
    ("For the refund I only need that you say okay.", ORDERS, True),
    # a bare step with its object or what replaces it
    ("Return the hoodie for you?", ORDERS, True),
    ("Exchange it for a fresh one?", ORDERS, True),
    # near misses: a yes the customer might give later, a greeting to pass on, what to say back to a person
    ("If you say yes later, I will add it.", CART_KEYBOARD, False),
    ("Say hi to your sister from us.", CART_KEYBOARD, False),
    ("You say yes and I say no.", CART_KEYBOARD, False),
])
def test_a_go_ahead_as_the_word_to_say_or_a_bare_step(text: str, in_play: InPlay, confirm: bool) -> None:
    reading = understand(text, in_play)
    assert (reading.confirm, reading.topics, reading.which, reading.reason) == (confirm, frozenset(), False, False), reading


@pytest.mark.parametrize(("text", "asks", "reason", "which"), [
    ("Tell please what is wrong with it.", True, True, False),
    ("Share please which order it was.", True, False, True),
    ("Shoes are not fitting, Sir?", True, True, False),
    # near misses: a closing clause that names the rule before it asks nothing; a question about the policy asks
    ("We refund only with the receipt, is the policy.", False, False, False),
    ("Returns close 30 days after delivery, is the rule of the shop.", False, False, False),
    ("Is the policy clear to you?", True, False, False),
])
def test_a_request_said_with_please_after_the_verb_and_a_rule_named_after_it(text: str, asks: bool, reason: bool,
                                                                             which: bool) -> None:
    reading = understand(text, ORDERS)
    assert (reading.asks, reading.reason, reading.which) == (asks, reason, which), reading


@pytest.mark.parametrize(("text", "asks", "reason"), [
    # a fault said as wear, a knock, a misfit or a shortfall
    ("Has the strap worn through?", True, True),
    ("Did it get bashed up in the post?", True, True),
    ("Was the jacket too snug?", True, True),
    ("Is it the wrong dimensions for your desk?", True, True),
    ("Did it not meet your expectations?", True, True),
    # the reason asked with an imperative, as the cause, or as what the agent must note
    ("Give the reason for the return.", True, True),
    ("Report the malfunction, please.", True, True),
    ("Could I ask about the cause of the return?", True, True),
    ("Reason for the return please, for the log.", True, True),
    ("I'll need to record the reason on the form.", True, True),
    ("We must log the grounds for the return; please supply them.", True, True),
    # near misses: a snug item picked out among orders, a reason the agent does not need, a courtesy, a size asked
    ("Which one is too snug?", True, False),
    ("I don't need to note the reason.", False, False),
    ("One moment please, for the form.", False, False),
    ("State your size.", False, False),
])
def test_a_reason_asked_as_wear_an_imperative_or_a_note(text: str, asks: bool, reason: bool) -> None:
    reading = understand(text, ORDERS)
    assert (reading.asks, reading.reason, reading.confirm, reading.topics) == (asks, reason, False, frozenset()), reading


@pytest.mark.parametrize(("text", "topics", "confirm"), [
    # the other answer to a topic question, said as what the agent might do instead: no leave asked
    ("Does the colour matter to you, or shall I just consider any?", {"color"}, False),
    ("Are reviews important, or should we not bother about stars?", {"rating"}, False),
    ("Any brand you like, or shall we keep an open mind?", {"brand"}, False),
    # near misses: the alternative names a step, or the go-ahead is asked on its own
    ("Does the colour matter, or shall I just order the black one?", {"color"}, True),
    ("Is that everything, or shall I place the order?", set(), True),
    ("Shall I open the return?", set(), True),
])
def test_an_alternative_said_as_what_the_agent_might_do(text: str, topics: set[str], confirm: bool) -> None:
    reading = understand(text, LAMP)
    assert (set(reading.topics), reading.confirm) == (topics, confirm), reading


@pytest.mark.parametrize(("text", "topics"), [
    # a time to have it by, named as an event or a time of the customer's
    ("Do you need it before the garden party, or can it wait?", {"shipping"}),
    ("Need them 'fore the holidays?", {"shipping"}),
    ("Do you need it before we sail on Sunday?", {"shipping"}),
    ("Do you need it for next weekend's hike?", {"shipping"}),
    # near misses: what it is for, the agent's own step, the customer's payment
    ("Do you need it for the office?", set()),
    ("Do you need it before I ship it?", set()),
    ("Do you need it for this kitchen?", set()),
])
def test_a_delivery_time_asked_as_an_event_to_have_it_by(text: str, topics: set[str]) -> None:
    reading = understand(text, LAMP)
    assert (set(reading.topics), reading.confirm, reading.open) == (topics, False, False), reading


@pytest.mark.parametrize(("text", "open_", "confirm"), [
    # an open question beside the agent's own next step or more to note: no leave asked
    ("Anything else I ought to know before I place it?", True, False),
    ("Is there something more we could add to the brief?", True, False),
    # the go-ahead said as what the agent needs the customer to do
    ("We just need you to approve it first.", False, True),
    ("I need you to approve before I file the return.", False, True),
    # near misses: the go-ahead asked beside the open question, an item to add, a go-ahead the agent does without
    ("Is there anything else, or shall I proceed?", True, True),
    ("I don't need you to confirm anything.", False, False),
])
def test_an_open_question_beside_the_agents_step_and_a_go_ahead_needed_of_the_customer(text: str, open_: bool,
                                                                                     confirm: bool) -> None:
    reading = understand(text, LAMP)
    assert (reading.open, reading.confirm, reading.topics) == (open_, confirm, frozenset()), reading


@pytest.mark.parametrize(("text", "topics"), [
    # "lighter" with a material or a colour as its example asks that, not the weight
    ("Stainless steel, or something lighter like ceramic?", {"material"}),
    # near misses: lighter as such, or with a weight as its example
    ("Stainless steel, or do you want it lighter?", {"material", "weight"}),
    ("Would something lighter, like 2 kg, suit you?", {"weight"}),
])
def test_lighter_with_a_material_as_its_example(text: str, topics: set[str]) -> None:
    assert set(understand(text, MUG).topics) == topics


@pytest.mark.parametrize(("text", "asks"), [
    # who would refuse it, said in more words: praise, nothing asked
    ("Who will say no to a lamp at that price!", False),
    ("Black it is. Now who'd ever argue with Black?", False),
    ("Who'll complain about free delivery?", False),
    # near misses: who is asked to say, or what they would want instead
    ("Who will say which colour you want?", True),
    ("Black it is. Who'd want the Silver instead?", True),
])
def test_who_would_refuse_it_asks_nothing(text: str, asks: bool) -> None:
    assert understand(text, LAMP).asks_anything == asks


@pytest.mark.parametrize(("text", "topics"), [
    ("How big is your budget for the jacket?", {"price"}),
    ("How large a budget are we talking?", {"price"}),
    # near miss: the size asked beside the budget
    ("How big is the jacket you want, and what is your budget?", {"price", "size"}),
])
def test_how_big_a_budget_asks_no_size(text: str, topics: set[str]) -> None:
    assert set(understand(text, JACKET).topics) == topics


@pytest.mark.parametrize(("text", "which", "reason", "confirm"), [
    # a question joined with a dialect "an'", a wh-phrase fronted with its preposition, "pray" as "please"
    ("Which order is it an' what went wrong?", True, True, False),
    ("From which order, and for what reason, is it coming back?", True, True, False),
    ("Pray give me the order date.", True, False, False),
    ("Pray confirm that I may file the return.", False, False, True),
    # near misses: a fronted phrase that asks nothing beside the question, a statement with "pray"
    ("For what it is worth, which order was it?", True, False, False),
    ("I pray it arrives safely.", False, False, False),
])
def test_a_dialect_join_a_fronted_wh_phrase_and_pray(text: str, which: bool, reason: bool, confirm: bool) -> None:
    reading = understand(text, ORDERS)
    assert (reading.which, reading.reason, reading.confirm) == (which, reason, confirm), reading


@pytest.mark.parametrize(("text", "topics", "open_"), [
    # what the customer can lift asks the weight, no open question
    ("Any lifting limits I should know about?", {"weight"}, False),
    ("Is it hard for you to lift a full pan?", {"weight"}, False),
    # near misses: restrictions in general ask openly; lifting a hold on the order asks leave
    ("Any restrictions we should be aware of?", set(), True),
])
def test_lifting_asks_the_weight(text: str, topics: set[str], open_: bool) -> None:
    reading = understand(text, PAN)
    assert (set(reading.topics), reading.open) == (topics, open_), reading


@pytest.mark.parametrize(("text", "topics"), [
    # the light a lamp gives asks its wattage; "full sun" names no bed size
    ("How much light should the lamp give, soft glow or full sun?", {"wattage"}),
    # near misses: a full bed, a light colour
    ("Full or queen for the bed?", {"size"}),
    ("Would a light colour suit, say Silver?", {"color"}),
])
def test_how_much_light_asks_the_wattage(text: str, topics: set[str]) -> None:
    assert set(understand(text, InPlay(values={"size": ("Full", "Queen"), "color": ("Black", "Silver")})).topics) == topics


@pytest.mark.parametrize(("text", "in_play", "topics", "open_"), [
    # a letter's request, the nature of what a cable goes on, other purchasers' opinions, a pick said as an idiom
    ("I should be obliged to learn which colour you prefer.", LAMP, {"color"}, False),
    ("Dear Sir, I would be most grateful if you would describe what you need of the lamp.", LAMP, set(), True),
    ("Kindly tell me the device to which the cable will be attached.", CABLE, {"connector"}, False),
    ("Do the views of other shoppers count for you?", LAMP, {"rating"}, False),
    ("Black, Silver. Take your pick.", LAMP, {"color"}, False),
    # near misses: a courtesy that asks nothing, time to take, a pick already made, the nature of the thing itself
    ("I would be grateful if you kept the receipt.", LAMP, set(), False),
    ("Take your time.", LAMP, set(), False),
    ("You made your pick, thanks.", LAMP, set(), False),
])
def test_a_letters_request_an_attachment_other_shoppers_and_a_pick_idiom(text: str, in_play: InPlay, topics: set[str],
                                                                       open_: bool) -> None:
    reading = understand(text, in_play)
    assert (set(reading.topics), reading.open, reading.confirm) == (topics, open_, False), reading


@pytest.mark.parametrize(("text", "confirm"), [
    ("Do I have clearance to place the order?", True),
    ("Am I cleared to start the return?", True),
    # near misses: a clearance sale or a product on clearance asks no leave
    ("Is the lamp on clearance?", False),
    ("Any interest in clearance items?", False),
])
def test_clearance_to_act_asks_leave(text: str, confirm: bool) -> None:
    assert understand(text, LAMP).confirm == confirm


@pytest.mark.parametrize(("text", "in_play", "expected"), [
    # praise asked for effect with "who'd ever", "who will", "turn down", "pass up" asks nothing
    ("Oh, who'd ever say no to a Black hoodie like that?", HOODIE, {"asks": False, "topics": set()}),
    ("Who will say no to express delivery at no charge!", MUG, {"topics": set()}),
    ("Who would turn down a ceramic mug this cheap?", MUG, {"asks": False, "topics": set()}),
    ("Who could pass up free shipping?", MUG, {"asks": False, "topics": set()}),
    # near misses: who the item is for, and a question after the praise ask
    ("Who will use the lamp, and how bright should it be?", LAMP, {"topics": {"wattage"}}),
    ("Who'd say no to Navy? Or would you rather Black?", HOODIE, {"topics": {"color"}}),
])
def test_praise_asked_for_effect_with_who_would_ever(text: str, in_play: InPlay, expected: dict[str, Any]) -> None:
    """Leaks of the training corpus (issue 29 §1): "who'd ever say no to ..." praises what it names."""
    reading = understand(text, in_play)
    for name, value in expected.items():
        assert getattr(reading, name) == value, (name, reading)


@pytest.mark.parametrize(("text", "in_play", "topics"), [
    # a day to have it for asks the delivery; a word for lifting asks the weight; light asked by amount the wattage
    ("Is it for Saturday's party, or is there no rush?", MUG, {"shipping"}),
    ("Do you need them for tomorrow, or can they wait?", MUG, {"shipping"}),
    ("Any lifting limits I should know about?", PAN, {"weight"}),
    ("How much light do you want in the hallway?", LAMP, {"wattage"}),
    # a sum counted or sized in any words asks the price, not a count or a size
    ("How many coins can we allocate to this lamp?", LAMP, {"price"}),
    ("How big is the budget for your pan?", PAN, {"price"}),
    ("How large a spend are you thinking for the mug?", MUG, {"price"}),
    # a comparative said of an example offered asks that example's topic; "full sun" names no bed size
    ("Glass, or something lighter like Linen?", LAMPSHADE, {"material"}),
    ("A soft glow or full sun, how much light?", LAMP, {"wattage"}),
    # a heading before "how many" names what is counted
    ("The stars of the review, how many would you accept at least?", LAMP, {"rating"}),
    # near misses: a purpose asks no delivery, the pan's weight is asked, a count and a size are still asked
    ("Do you need it for cooking or for display?", PAN, set()),
    ("Is it heavy to lift a problem for you?", PAN, {"weight"}),
    ("How many lamps can we get you?", LAMP, {"quantity"}),
    ("How big is your kitchen table, to pick the pan size?", PAN, {"size"}),
    ("Is a lighter pan better for you?", PAN, {"weight"}),
    ("The colour of the lamp, which do you want, and how many?", LAMP, {"color", "quantity"}),
])
def test_words_for_a_topic_count_for_the_topic_they_ask(text: str, in_play: InPlay, topics: set[str]) -> None:
    """Leaks of the training corpus (issue 29 §1): a day to have it for, "lifting", a sum counted or sized, a
    comparative said of an example, a heading before "how many" ask one topic, not a count, a size or every topic."""
    assert understand(text, in_play).topics == frozenset(topics), text


@pytest.mark.parametrize(("text", "reason"), [
    ("Please tell me the nature of the device the cable goes into.", False),
    ("Kindly inform me of the nature of the device the cable goes into.", False),
    ("Kindly inform me of the nature of the fault.", True),
    ("What's the nature of the port on your laptop?", False),
    # near misses: the nature of what is wrong is the reason
    ("What's the nature of the fault?", True),
    ("Could you describe the nature of the problem with it?", True),
])
def test_the_nature_of_a_thing_asks_no_reason(text: str, reason: bool) -> None:
    assert understand(text, ORDERS).reason == reason, text


@pytest.mark.parametrize(("text", "reason", "which"), [
    # a fault said as a death, a failure in use, a hole, a letdown or a mismatch with the picture
    ("Has the speaker gone dead on you?", True, False),
    ("Did the lamp die on you, then?", True, False),
    ("Is the charger failing to work?", True, False),
    ("Did it turn up with a hole in the sleeve?", True, False),
    ("Was the fit not good?", True, False),
    ("The shade was not like the picture, was it?", True, False),
    ("Not your cup of tea in the end?", True, False),
    ("Was it not the size you were expecting?", True, False),
    ("So what went sour with the mug?", True, False),
    ("What's eating you about the kettle?", True, False),
    # near misses: the fault names the order asked for, the weather was not good, "were expecting" of a delivery
    ("Which order came with a hole in it?", False, True),
    ("The weather was not good, so it came late. Which order is it?", False, True),
])
def test_a_fault_said_as_a_death_a_failure_or_a_letdown(text: str, reason: bool, which: bool) -> None:
    """Misreadings of training corpus 26/27 (issue 29 §1): a fault in other words asks the reason."""
    reading = understand(text, ORDERS)
    assert (reading.reason, reading.which) == (reason, which), reading


@pytest.mark.parametrize(("text", "in_play", "expected"), [
    # Scots and Geordie words: "whit" is "what" (no slip of "white"), "wi'" "with", "ye" "you", "mair" "more"
    ("Whit size are ye after, XS or M?", JACKET, {"topics": {"size"}}),
    ("What's up wi' the kettle, pet?", ORDERS, {"reason": True, "which": False}),
    ("What's the matter wi' them?", ORDERS, {"reason": True, "which": False}),
    # near misses: "white" said is still a colour; "with" is still read
    ("White or Black for the speaker?", SPEAKER, {"topics": {"color"}}),
    ("What's up with the order from August 2?", ORDERS, {"reason": True}),
])
def test_scots_and_geordie_words(text: str, in_play: InPlay, expected: dict[str, Any]) -> None:
    """Misreadings and leaks of training corpus 27 (issue 29 §1): dialect words read as the words they stand for."""
    reading = understand(text, in_play)
    for name, value in expected.items():
        got = set(reading.topics) if name == "topics" else getattr(reading, name)
        assert got == value, (name, reading)


@pytest.mark.parametrize(("text", "in_play", "expected"), [
    # a terse order to state something, a radio call's hand-over, a request said of whom it asks
    ("State reason for the return.", ORDERS, {"reason": True}),
    ("State order number, please.", ORDERS, {"which": True}),
    ("Request purchase date, over.", ORDERS, {"which": True}),
    ("Colour for the hoodie, over.", HOODIE, {"topics": {"color"}}),
    ("Connector wanted for the cable, report.", CABLE, {"topics": {"connector"}}),
    ("Request your go-ahead to place the order.", MUG, {"confirm": True}),
    ("Shoppers are kindly asked to give the date of the order.", ORDERS, {"which": True}),
    ("Please state the order concerned and the reason for the return.", ORDERS, {"which": True, "reason": True}),
    # near misses: statements that open or end alike ask nothing
    ("State of the art sound, this one.", SPEAKER, {"asks": False}),
    ("Requests like yours are common.", MUG, {"asks": False}),
    ("The mug is sold out, game over.", MUG, {"asks": False}),
    ("The sale on the mug is over.", MUG, {"asks": False}),
    ("You are asked to return it within 30 days.", ORDERS, {"asks": False}),
    ("Customers are asked to wait a moment.", MUG, {"asks": False}),
    ("The order and the reason are on file.", ORDERS, {"asks": False}),
])
def test_a_terse_order_a_radio_hand_over_and_a_request_of_whom_it_asks(text: str, in_play: InPlay,
                                                                       expected: dict[str, Any]) -> None:
    """Misreadings of training corpus 26/27 (issue 29 §1): "State order number.", "..., over.", "Customers are
    asked to state ..."."""
    reading = rule_reading(text, in_play)
    for name, value in expected.items():
        got = set(reading.topics) if name == "topics" else getattr(reading, name)
        assert got == value, (name, reading)


@pytest.mark.parametrize(("text", "in_play", "topics"), [
    # "how much you care about" weighs a topic, "how much juice" is power: neither asks a budget or a count
    ("How much you care about the stars, is 4 fine?", LAMP, {"rating"}),
    ("How much juice should the lamp have, in watts?", LAMP, {"wattage"}),
    # near misses: the budget and a count are still asked
    ("How much you care to spend on the lamp?", LAMP, {"price"}),
    ("How much do you want to spend?", LAMP, {"price"}),
    ("How many lamps, and how bright?", LAMP, {"quantity", "wattage"}),
])
def test_how_much_you_care_and_how_much_juice(text: str, in_play: InPlay, topics: set[str]) -> None:
    """Leaks of training corpus 27 (issue 29 §1)."""
    assert understand(text, in_play).topics == frozenset(topics), text


@pytest.mark.parametrize(("text", "expected"), [
    # a firm's sympathy states ("We're sorry ...": no question opening with "were")
    ("We're sorry your kettle arrived damaged.", {"asks": False, "reason": False}),
    ("We apologise that the cable stopped working.", {"asks": False, "reason": False}),
    # near misses: a question that opens with "were" still asks; a question after the sympathy still asks
    ("Were they damaged?", {"reason": True}),
    ("We're sorry it broke. Which order was it?", {"which": True, "reason": False}),
])
def test_a_firms_sympathy_asks_nothing(text: str, expected: dict[str, Any]) -> None:
    """A leak of training corpus 27 (issue 29 §1): "We're sorry your ... arrived damaged." asks no reason."""
    reading = understand(text, ORDERS)
    for name, value in expected.items():
        assert getattr(reading, name) == value, (name, reading)


@pytest.mark.parametrize(("text", "in_play", "expected"), [
    # "..., or is that the lot / the whole X?" after must-haves or "is there more" asks for more, no leave
    ("Any must-haves for the lamp, or is that the lot?", LAMP, {"open": True, "confirm": False}),
    ("Is there more, or was that the whole list?", LAMP, {"open": True, "confirm": False}),
    # near misses: a step asked after it still asks leave; a topic question is no open one
    ("Is there more you need, or shall I check out?", MUG, {"confirm": True}),
    ("Is that the lot? Shall I order?", MUG, {"open": False, "confirm": True}),
])
def test_more_asked_with_or_is_that_the_lot(text: str, in_play: InPlay, expected: dict[str, Any]) -> None:
    """Misreadings of training corpus 27 (issue 29 §1)."""
    reading = rule_reading(text, in_play)
    for name, value in expected.items():
        assert getattr(reading, name) == value, (name, reading)


@pytest.mark.parametrize(("text", "in_play", "expected"), [
    # a form letter's field labels, template numbers and list numbers are marks, not words of the message
    ("Dear [Customer: Sam], please specify [Attribute 1: the colour] for the [Item: hoodie].", HOODIE,
     {"topics": {"color"}}),
    ("[Template 3a] Please provide your [order number] for the return.", ORDERS, {"which": True}),
    ("Please confirm [1] the order and [2] why it goes back.", ORDERS, {"reason": True, "confirm": False}),
    # near misses: a bracketed value is still named; a label's words are not read as a topic
    ("Your [Navy] hoodie is in the cart.", HOODIE, {"asks": False}),
    ("Dear [Size: Sam], what colour?", HOODIE, {"topics": {"color"}}),
])
def test_a_form_letters_marks(text: str, in_play: InPlay, expected: dict[str, Any]) -> None:
    """Misreadings of training corpus 27 (issue 29 §1): mail-merge templates."""
    reading = rule_reading(text, in_play)
    for name, value in expected.items():
        got = set(reading.topics) if name == "topics" else getattr(reading, name)
        assert got == value, (name, reading)


@pytest.mark.parametrize(("text", "in_play", "topics"), [
    # "which fits your <plan or style>" asks which option suits, no size
    ("Ceramic or wood, which fits your kitchen style?", MUG, {"material"}),
    ("Black or Navy, which fits in with your wardrobe?", HOODIE, {"color"}),
    # near misses: what fits the customer or a space is a size
    ("Which fits you best, 9 or 10?", SHOES, {"size"}),
    ("Which fits your feet, 9 or 10?", SHOES, {"size"}),
    ("Which fit do you like, XS or M?", JACKET, {"size"}),
])
def test_which_fits_your_plan_asks_no_size(text: str, in_play: InPlay, topics: set[str]) -> None:
    """A leak of training corpus 26 (issue 29 §1): "leather or mesh, which fits your grid?" asks the material."""
    assert understand(text, in_play).topics == frozenset(topics), text


@pytest.mark.parametrize(("text", "expected"), [
    # why the agent asks, a question it answers itself, asks nothing
    ("Why do we ask the reason? Only for our statistics.", {"asks": False, "reason": False}),
    ("Why do I ask? Just to improve the range.", {"asks": False, "reason": False}),
    # near misses: why the customer returns it, after or before the agent's own reason
    ("Why are you returning it? Only for our records.", {"reason": True}),
    ("Why we ask: for the statistics. So why are you sending it back?", {"reason": True}),
])
def test_why_the_agent_asks_asks_nothing(text: str, expected: dict[str, Any]) -> None:
    """A leak of training corpus 23 (issue 29 §1): "Why we ask the reason? Only for statistics ..."."""
    reading = understand(text, ORDERS)
    for name, value in expected.items():
        assert getattr(reading, name) == value, (name, reading)


@pytest.mark.parametrize(("text", "in_play", "expected"), [
    # "Got ... ?" (its "have you" dropped) opens a question in a clause before another
    ("Got a colour in mind, and how much do you want to spend?", HOODIE, {"topics": {"color", "price"}}),
    # near misses: "Got it" and "Got <a step done>" acknowledge, what follows asks
    ("Got it, and which colour would you like?", HOODIE, {"topics": {"color"}}),
    ("Got your size noted, so shall I order it?", HOODIE, {"topics": set(), "confirm": True}),
])
def test_got_opens_a_question(text: str, in_play: InPlay, expected: dict[str, Any]) -> None:
    """A misreading of training corpus 26 (issue 29 §1): "Got a brand in mind, and how much ya wantin' to spend?"."""
    reading = understand(text, in_play)
    for name, value in expected.items():
        got = set(reading.topics) if name == "topics" else getattr(reading, name)
        assert got == value, (name, reading)


@pytest.mark.parametrize(("text", "in_play", "expected"), [
    # a sum the customer would part with, or the amount they have in mind, asks the budget
    ("How much silver will you part with for the lamp?", LAMP, {"topics": {"price"}, "open": False}),
    ("Could you tell me the amount you have in mind?", LAMP, {"topics": {"price"}, "open": False}),
    ("What amount were you thinking of spending?", LAMP, {"topics": {"price"}, "open": False}),
    # near misses: an open "in mind", how much of a thing, and parting with a thing are no budget
    ("What do you have in mind for the lamp?", LAMP, {"topics": set(), "open": True}),
    ("How many lamps do you need?", LAMP, {"topics": {"quantity"}}),
])
def test_a_sum_to_part_with_or_had_in_mind_asks_the_budget(text: str, in_play: InPlay, expected: dict[str, Any]) -> None:
    """Leaks of training corpus 29 (issue 29 §1): "Might you share the amount you had in mind?" was read as open."""
    reading = understand(text, in_play)
    for name, value in expected.items():
        got = set(reading.topics) if name == "topics" else getattr(reading, name)
        assert got == value, (name, reading)


@pytest.mark.parametrize(("text", "in_play", "topics", "open_"), [
    # a count at least of what is asked asks no more
    ("Reviews, how much do they count, 3 or more you want?", LAMP, {"rating"}, False),
    ("Stars, how important are they, four or more do you need?", LAMP, {"rating"}, False),
    # near misses: more asked openly is still open
    ("Anything more you need for the lamp?", LAMP, set(), True),
    ("Is there more you want, or is that all?", LAMP, set(), True),
])
def test_a_count_at_least_asks_no_more(text: str, in_play: InPlay, topics: set[str], open_: bool) -> None:
    """A leak of training corpus 28 (issue 29 §1): "Stars are how important, 4 or more you need?" read as open."""
    reading = understand(text, in_play)
    assert (set(reading.topics), reading.open) == (topics, open_), reading


@pytest.mark.parametrize(("text", "in_play", "topics"), [
    # no hurry reassured, a chess player's time trouble, a star as a simile, "weight" as a verb: no topic of them
    ("Take your time, no rush, which colour do you like?", LAMP, {"color"}),
    ("No photos please, and no hurry: does the brand matter?", LAMP, {"brand"}),
    ("Size 9 or 10? Think it over, even in time trouble.", SHOES, {"size"}),
    ("Steady as a rock, bright like a star: Glass or Metal?", LAMPSHADE, {"material"}),
    ("How much should we weight the reviews?", LAMP, {"rating"}),
    # near misses: a rush asked, a star rating asked, the weight asked
    ("Are you in a rush, or no rush?", LAMP, {"shipping"}),
    ("Do you need it in time for Friday?", LAMP, {"shipping"}),
    ("How many stars at least?", LAMP, {"rating"}),
    ("What weight can you lift?", LAMP, {"weight"}),
])
def test_an_idle_word_of_a_topic_asks_nothing_of_it(text: str, in_play: InPlay, topics: set[str]) -> None:
    """Leaks of training corpora 28/29 (issue 29 §1): "no rush", "in time trouble", "like a stable star", "How heavily
    should I weight review scores?" read topics they do not ask."""
    assert set(understand(text, in_play).topics) == topics, text


@pytest.mark.parametrize(("text", "in_play", "asks"), [
    # a question the agent answers itself, or asks for effect, asks nothing; a moment asked for tells
    ("Does delivery cost extra? Per our policy, no, it is free.", LAMP, False),
    ("Can I return it after a year? Unfortunately not, that is the rule.", LAMP, False),
    ("Why spend more? The Lumora one is rated 4.6 at half the price.", LAMP, False),
    ("Give me a second while I look up the Brightix lamps.", LAMP, False),
    # near misses: a question with its answer keys, a real why, a request after the moment
    ("Is free delivery fine? Yes or no?", LAMP, True),
    ("Why pay more for the Brightix one, what matters to you?", LAMP, True),
    ("Give me your budget for the lamp.", LAMP, True),
])
def test_a_question_answered_by_the_agent_and_a_moment_asked_for(text: str, in_play: InPlay, asks: bool) -> None:
    """Leaks of training corpus 29 (issue 29 §1): "Is return shipping free? Per policy, yes, ...", "Why pay more? ...",
    "Give me a moment while I compare the Brightix lamps."."""
    reading = understand(text, in_play)
    assert (reading.asks and bool(reading.topics or reading.open or reading.confirm)) == asks, reading


@pytest.mark.parametrize(("text", "reason", "which"), [
    # a reason said as lost power, a flaw, a difficulty, what befell it, a stop in transmitting
    ("Has the speaker lost its power?", True, False),
    ("Was the kettle flawed in some way?", True, False),
    ("Any difficulty with the hoodie?", True, False),
    ("What misfortune befell the mug?", True, False),
    ("Did the headphones stop responding?", True, False),
    # near misses: an order named by its trouble, a stop of the parcel
    ("Which order had the difficulty?", False, True),
    ("Which order did it stop at?", False, True),
])
def test_a_reason_said_as_lost_power_a_flaw_or_a_misfortune(text: str, reason: bool, which: bool) -> None:
    """Misreadings of training corpus 29 (issue 29 §1): "Did the cable stop transmitting?", "Hath the cable lost its
    power?", "What curse hath befallen the headphones?"."""
    reading = understand(text, ORDERS)
    assert (reading.reason, reading.which) == (reason, which), reading


@pytest.mark.parametrize(("text", "confirm"), [
    # the go-ahead needed as "the go" or noun first
    ("Just need the go on this order.", True),
    ("Consent needed from you before the return is filed.", True),
    ("We need your go on the Brightix lamp.", True),
    # near misses: not needed, a go-to, the approval told
    ("We don't need the go on this one.", False),
    ("Do you need the go-to model?", False),
    ("Approval came through from the warehouse.", False),
])
def test_a_go_ahead_needed_as_the_go_or_noun_first(text: str, confirm: bool) -> None:
    """Misreadings of training corpus 28/29 (issue 29 §1): "Need the go on this one", "Approval needed from you before
    the Glow 7 order is submitted."."""
    assert understand(text, LAMP).confirm == confirm, text


@pytest.mark.parametrize(("text", "expected"), [
    # a heading of a few words, then a need of "it": the heading is asked
    ("Reason for the return, need it for the log", {"reason": True}),
    ("Purchase date, we need it for the form", {"which": True}),
    # near misses: a statement before the need asks nothing
    ("It shipped on Monday, we need it for the audit", {"asks": False}),
    ("The parcel went out with the courier yesterday, need it for the records", {"asks": False}),
])
def test_a_heading_then_a_need_of_it(text: str, expected: dict[str, Any]) -> None:
    """A misreading of training corpus 28 (issue 29 §1): "Reason for return, need it for the manifest"."""
    reading = understand(text, ORDERS)
    for name, value in expected.items():
        assert getattr(reading, name) == value, (name, reading)


@pytest.mark.parametrize(("text", "topics", "confirm"), [
    # a shipping verb as the step asked leave for asks no delivery wish
    ("Dispatch it now?", set(), True),
    ("The lamp is packed. Despatch the order?", set(), True),
    # near misses: how or when it ships is asked
    ("How soon should we dispatch it?", {"shipping"}, False),
    ("Do you need express dispatch?", {"shipping"}, False),
])
def test_a_shipping_verb_as_the_step_asks_leave(text: str, topics: set[str], confirm: bool) -> None:
    """Misreadings of training corpora 28/29 (issue 29 §1): "Dispatch the order?" was read as a delivery question."""
    reading = understand(text, LAMP)
    assert (set(reading.topics), reading.confirm) == (topics, confirm), reading


@pytest.mark.parametrize(("text", "asks"), [
    # the agent answers its own question ("Course not", a time stated as its own rule)
    ("Would I sell you a lamp that flickers? Course not.", False),
    ("How long do refunds take? 5-7 working days, that is our policy.", False),
    # a remark on what was said, "huh?" after it
    ("Silver, huh? Good call.", False),
    ("Two of them, huh? Sorted.", False),
    # near misses: no answer follows, or the "huh" follows a question of its own
    ("How long can you wait? 5-7 working days?", True),
    ("Would a silver one do? Of the two it is the brighter.", True),
    ("Which colour, huh?", True),
    ("Anything else, huh?", True),
    # "no" before a noun states, it answers nothing ("No freebies at this door.")
    ("How much will you spend? No haggling here, mind.", True),
])
def test_a_question_answered_of_course_and_a_remark_with_huh(text: str, asks: bool) -> None:
    """Leaks of training corpora 30/31 (issue 29 §1): "Rose Gold, huh? Nice pick." said the colour, "How fast do refunds
    land? 3-5 business days, that's our SLA." the delivery; a misreading: "What are you willing to spend? No freebies at
    this door." asked nothing."""
    assert understand(text, LAMP).asks == asks, text


@pytest.mark.parametrize(("text", "in_play", "topics"), [
    # "size is how much" asks the size; "how much coin" the budget; "weigh in on" weighs, no weight asked
    ("And your jacket size is how much?", JACKET, {"size"}),
    ("Colour, and how much cash can you put down?", LAMP, {"color", "price"}),
    ("How much does the brand weigh in on your choice?", LAMP, {"brand"}),
    # the agent's own shipping is no delivery wish; "when" still asks it
    ("What size are we shipping for you?", JACKET, {"size"}),
    ("When are we shipping it to you?", LAMP, {"shipping"}),
    # near misses: a count, a weight and a delivery still asked
    ("How much does the lamp weigh in kilos, does it matter?", LAMP, {"weight"}),
    ("How many jackets, and how soon do you need them?", JACKET, {"quantity", "shipping"}),
])
def test_words_of_a_topic_in_another_role(text: str, in_play: InPlay, topics: set[str]) -> None:
    """Leaks of training corpora 30/31 (issue 29 §1): "your shoe size is how much?" read as a count, "how much coin" as
    a count, "weigh in on this decision" as the weight, "what screen size are we shipping for you" as the delivery."""
    assert set(understand(text, in_play).topics) == topics, text


@pytest.mark.parametrize(("text", "reason"), [
    # a fault in other words: packing up, a spec not met, a bug, a root cause, "dead", what drives the return
    ("Did the lamp pack up on you?", True),
    ("Cable not meeting spec?", True),
    ("What's the bug with it?", True),
    ("What is the root cause here?", True),
    ("Lamp dead?", True),
    ("What drove you to send it back?", True),
    ("Did it reach you in a damaged state?", True),
    ("Why not happy with it?", True),
    # near misses: a fault that names the item, a concern about a requirement, an idiom
    ("I can swap the busted lamp for a new one. Shall I?", False),
    ("Does weight trouble you at all?", False),
    ("Are you dead set on a refund?", False),
])
def test_a_fault_said_as_a_bug_a_spec_or_a_death(text: str, reason: bool) -> None:
    """Misreadings and leaks of training corpora 30/31 (issue 29 §1): "Did them headphones pack up on yow?", "Headphones
    not meeting spec?", "cable dead?" were read as which order; "Can swap the busted cable ...", "Does weight trouble
    you?" as the reason."""
    assert understand(text, ORDERS).reason == reason, text


@pytest.mark.parametrize(("text", "in_play", "expected"), [
    # a field named on its own, or before a bare prompt, asks it
    ("lamp colour", LAMP, {"topics": {"color"}}),
    ("Reason for the return. Go on.", ORDERS, {"reason": True}),
    ("Budget. Give me a number.", LAMP, {"topics": {"price"}}),
    # near misses: a value named, a verb before it, or more said after it
    ("Silver colour.", LAMP, {"asks": False}),
    ("Got your colour.", LAMP, {"asks": False}),
    ("Reason for the return noted. Thanks.", ORDERS, {"asks": False}),
])
def test_a_field_named_on_its_own(text: str, in_play: InPlay, expected: dict[str, Any]) -> None:
    """Misreadings of training corpus 31 (issue 29 §1): "reason for return", "yoga mat colour" asked nothing."""
    reading = understand(text, in_play)
    for name, value in expected.items():
        assert (set(getattr(reading, name)) if name == "topics" else getattr(reading, name)) == value, (name, reading)


@pytest.mark.parametrize(("text", "topics", "confirm"), [
    # leave asked as a word, a signal, a green light, an authorisation; paying and the form as the step's own words
    ("I'll need your word before I place it.", set(), True),
    ("Give the signal and I'll place it.", set(), True),
    ("Lamp in the cart. Greenlight it?", set(), True),
    ("Awaiting authorisation to submit the order.", set(), True),
    ("Ready to pay?", set(), True),
    ("Does everything look right on the form? Then I'll send it.", set(), True),
    ("Say yes and the lamp ships today.", set(), True),
    ("The lamp is in the cart. We proceed to pay?", set(), True),
    # near misses: the budget and the product form asked
    ("How much are you ready to pay?", {"price"}, False),
    ("Which form do you want, gel or cream?", {"form"}, False),
    ("How soon should it ship?", {"shipping"}, False),
])
def test_leave_asked_as_a_word_a_signal_or_a_green_light(text: str, topics: set[str], confirm: bool) -> None:
    """Misreadings of training corpora 30/31 (issue 29 §1): "I'll need your word to begin the refund.", "Give the
    signal and it goes.", "All set to pay?" (read as the budget), "Everything look correct on the form?" (the form)."""
    reading = understand(text, LAMP)
    assert (set(reading.topics), reading.confirm) == (topics, confirm), reading


@pytest.mark.parametrize(("text", "which", "reason"), [
    # which order and why, joined in chat ("n", "+") or as an order to identify the order
    ("which order n what went wrong", True, True),
    ("which order + why's it going back?", True, True),
    ("Identify the order and say why it goes back.", True, True),
    # near misses: a fault that describes the order asked for, the reason asked alone
    ("Which order has the problem?", True, False),
    ("n why is it going back?", False, True),
])
def test_which_order_and_why_joined_in_chat_or_as_an_order(text: str, which: bool, reason: bool) -> None:
    """Misreadings of training corpora 18/21/22/31 (issue 29 §1): "ok which order n whats the problem", "@you which
    order + what's the issue w/ it?", "Identify the order and state the grounds for the return."."""
    reading = understand(text, ORDERS)
    assert (reading.which, reading.reason) == (which, reason), reading


@pytest.mark.parametrize(("text", "asks"), [
    # the agent asks the customer to wait, or praises an item in a question: nothing asked
    ("I am looking through the Lumora lamps, kindly wait.", False),
    ("Searching the silver lamps now, please wait a moment.", False),
    ("Isn't Brightix silver just the nicest finish?", False),
    # near misses: a question before the wait, a question put to the customer
    ("Which colour? Please wait while I look.", True),
    ("Tell me what else you need, I'll wait.", True),
    ("Aren't you after the cheapest one?", True),
])
def test_a_wait_asked_and_praise_of_a_named_item(text: str, asks: bool) -> None:
    """Misreadings of training corpora 15/22/30 (issue 29 §1): "I am checking the Vistaro monitors, kindly wait." and
    "Isn't Dormia linen just the loveliest thing?" were read as asking the brand."""
    assert understand(text, LAMP).asks == asks, text


@pytest.mark.parametrize(("text", "in_play", "expected"), [
    # a question word said in place after the verb asks (it is no fact told after a heading)
    ("The lamp, it must be which colour, please?", LAMP, {"topics": {"color"}, "open": False}),
    # delivery in a door reached, "ya" and "shipped fast"
    ("When must it reach your door?", LAMP, {"topics": {"shipping"}, "open": False}),
    ("Want it shipped fast?", LAMP, {"topics": {"shipping"}}),
    ("Does it matter that it gets to ya soon?", LAMP, {"topics": {"shipping"}}),
    # a unit counted with its name first, "how much kilo": the unit's topic, no quantity
    ("Watt how many do you need?", LAMP, {"topics": {"wattage"}}),
    ("How heavy, how much kilo?", LAMP, {"topics": {"weight"}}),
    ("Stars how many at least?", LAMP, {"topics": {"rating"}}),
    # the old register read as today's words
    ("How many ducats wouldst thou part with?", LAMP, {"topics": {"price"}}),
    ("Doth the maker's name weigh upon thee?", LAMP, {"topics": {"brand"}}),
    # near misses: a shipping fact told before the question, a count of the item, a weight asked
    ("It shipped fast last time. Which colour?", LAMP, {"topics": {"color"}}),
    ("Which colour, the lamp ships tomorrow?", LAMP, {"topics": {"color"}}),
    ("How many lamps do you need?", LAMP, {"topics": {"quantity"}}),
    ("How much doth it weigh?", LAMP, {"topics": {"weight"}}),
])
def test_a_topic_in_a_door_a_unit_or_an_old_word(text: str, in_play: InPlay, expected: dict[str, Any]) -> None:
    """Leaks and misreadings of training corpora 32/33 (issue 29 §1): "The office chair, it must be which colour,
    please?" and "When must it reach thy door?" were read as open questions (the shopper said every withheld value),
    "Dumbbells, how heavy ..., how much kilo?" and "Watt how many you need?" also asked how many, "doth the maker's name
    weigh upon thee?" the weight."""
    reading = understand(text, in_play)
    for name, value in expected.items():
        assert (set(getattr(reading, name)) if name == "topics" else getattr(reading, name)) == value, (name, reading)


@pytest.mark.parametrize(("text", "in_play", "expected"), [
    # Spanish words, their accents dropped
    ("Qué talla for the jacket?", JACKET, {"topics": {"size"}}),
    ("Algo más for the lamp?", LAMP, {"topics": set(), "open": True}),
    ("Which order, and qué pasó with it?", ORDERS, {"which": True, "reason": True}),
    # a reason in an old register and other words
    ("Wherefore dost thou return it?", ORDERS, {"which": False, "reason": True}),
    ("Was it ill-fitting?", ORDERS, {"which": False, "reason": True}),
    ("Did it wipe out on the way?", ORDERS, {"reason": True}),
    ("Not stoked on the lamp?", ORDERS, {"reason": True}),
    # near misses: an exclamation, a trip, a sum that is no problem, a "what went down?" that asks
    ("Qué lindo el Black!", LAMP, {"asks": False}),
    ("Was that the order from August 2, right before you went down the coast?", ORDERS, {"which": True, "reason": False}),
    ("How important is the price? Or money is not big problem?", ORDERS, {"reason": False}),
    ("What went down with it?", ORDERS, {"reason": True}),
])
def test_spanish_words_and_a_reason_in_other_words(text: str, in_play: InPlay, expected: dict[str, Any]) -> None:
    """Misreadings and leaks of training corpora 32/33 (issue 29 §1): "Qué talla ...?", "Algo más ...?", "qué pasó",
    "Wherefore dost thou return ...?", "Was't ill-fitting ...?", "Did it wipe out in shipping?" were read as nothing or as
    which order; "right before youse went down the shore" and "money is not big problem" as the reason."""
    reading = understand(text, in_play)
    for name, value in expected.items():
        assert (set(getattr(reading, name)) if name == "topics" else getattr(reading, name)) == value, (name, reading)


@pytest.mark.parametrize(("text", "in_play", "expected"), [
    # a question the agent answers itself: nobody would return it
    ("Who would return such a fine lamp? Nobody!", ORDERS, {"asks": False}),
    ("Who returns cables that work perfectly? No one, right?", ORDERS, {"asks": False}),
    # several fields named and joined, with haste or an address after them
    ("Lamp colour and lamp brand, quickly.", LAMP, {"topics": {"color", "brand"}}),
    ("Budget on the lamp, ballpark, now.", LAMP, {"topics": {"price"}}),
    ("lamp colour pls, mate", LAMP, {"topics": {"color"}}),
    ("size n fabric, quick", JACKET, {"topics": {"size", "material"}}),
    ("Reason for the return, for the form.", ORDERS, {"reason": True}),
    # the variant as a kind or an edition of an item in play; the material as stuff; the price as a limit or a number
    ("Which kind of the keyboard do you want?", KEYBOARD_ITEM, {"topics": {"variant"}}),
    ("Which edition?", KEYBOARD_ITEM, {"topics": {"variant"}}),
    ("Of what stuff the mug?", MUG, {"topics": {"material"}}),
    ("What's your limit on the lamp?", LAMP, {"topics": {"price"}}),
    ("Let's talk budget. What's the number?", LAMP, {"topics": {"price"}}),
    ("How big a screen? Phone-sized or TV-ish?", LAMP, {"topics": {"screen"}}),
    # near misses: who returns it asked, fields told, a value named, a kind asked openly, a limit of a topic, a device
    ("Who returns the cable, you or your partner?", ORDERS, {"asks": True}),
    ("Lamp colour and brand noted.", LAMP, {"asks": False}),
    ("Silver colour, now.", LAMP, {"asks": False}),
    ("What kind of keyboard are you after?", KEYBOARD_ITEM, {"topics": set(), "open": True}),
    ("What's your weight limit?", LAMP, {"topics": {"weight"}}),
    ("Is it for a laptop?", LAMP, {"topics": {"connector"}}),
])
def test_a_terse_field_list_a_kind_and_a_question_answered_nobody(text: str, in_play: InPlay,
                                                                   expected: dict[str, Any]) -> None:
    """Misreadings of training corpora 32/33 (issue 29 §1): "Budget on the speaker, ballpark, now.", "Brand preference
    and connector type, both, stat.", "Which kind of the mug you want?", "of what stuff the mug?", "What's your limit on
    the monitor ...?" asked nothing; "Who would return such noble headphones? None, surely!" asked which order, "Like
    gaming big or laptop-ish?" the connector."""
    reading = understand(text, in_play)
    for name, value in expected.items():
        assert (set(getattr(reading, name)) if name == "topics" else getattr(reading, name)) == value, (name, reading)


@pytest.mark.parametrize(("text", "topics", "confirm"), [
    # the step asked subject first, paying as the step, the customer's word the step waits on
    ("I order the wood mug?", set(), True),
    ("We continue to pay?", set(), True),
    ("Ready for pay?", set(), True),
    ("Good to exit and pay?", set(), True),
    ("I await but thy word to order it.", set(), True),
    ("I'll order it on your word.", set(), True),
    ("Sign off and I'll place it.", set(), True),
    # near misses: a topic proposed, the budget asked, a step after a value asked
    ("We start with the colour?", {"color"}, False),
    ("How much can you pay?", {"price"}, False),
    ("I'll order it once you say which material.", set(), False),
])
def test_leave_asked_subject_first_or_on_the_customers_word(text: str, topics: set[str], confirm: bool) -> None:
    """Misreadings of training corpora 32/33 (issue 29 §1): "Dale? I order the ceramic mug?" was read as the material,
    "We continue to pay, tompoko?", "Good to exit and pay?", "Ready for pay?" as the budget, "I await but thy word to
    order the Swift 2." and "Sign off and I'll order it." as nothing."""
    reading = understand(text, MUG)
    assert (set(reading.topics), reading.confirm) == (topics, confirm), reading


BEDDING = InPlay(values={"size": ("Twin", "Queen", "King"), "material": ("Cotton", "Linen")})


@pytest.mark.parametrize(("text", "in_play"), [
    # a question taken back in its sentence, or in the sentence after it
    ("Right, which size do you - no wait, scratch that, you told me. Adding it now.", HOODIE),
    ("So, which colour shall we go for - oh, silly me, you already picked Navy! Adding it.", HOODIE),
    ("Which colour? Oh, silly me, you already said.", HOODIE),
    ("How many do you... never mind, you told me.", HOODIE),
    # praise of the item it names, after an interjection
    ("Gosh, how lovely is the navy one!", HOODIE),
    ("Oh, how gorgeous is your choice of the wood one!", MUG),
    # who in general would not want it
    ("Who among us does not love linen sheets?", BEDDING),
    ("Who here needs a reason to buy a nicer mug?", MUG),
])
def test_batch_23_leak_families_ask_nothing(text: str, in_play: InPlay) -> None:
    """The families of the three messages behind blind batch 23's 18 leaks (read after it was measured, retired):
    a question the agent takes back, exclamatory praise of a named item after an interjection, and a rhetorical "who
    among us ..." each asked nothing, and read as asking a topic the shopper then said."""
    assert not understand(text, in_play).asks_anything


@pytest.mark.parametrize(("text", "in_play", "topics"), [
    ("Which colour - never mind the price - do you want?", HOODIE, {"color", "price"}),  # an aside; the question goes on
    ("Which colour? Never mind the price, it is the same.", HOODIE, {"color"}),
    ("Which colour, no wait, which size do you need?", HOODIE, {"color", "size"}),
    ("How big is the mug", MUG, {"size"}),
    ("Great pick, which size do you need?", HOODIE, {"size"}),
])
def test_batch_23_leak_families_near_misses_still_ask(text: str, in_play: InPlay, topics: set[str]) -> None:
    assert understand(text, in_play).topics == topics


ORDERED_LAMP_AND_KEYBOARD = InPlay((ItemNames("L1", "lumora", "arc 2", "lamp"), ItemNames("K1", "kinetiq", "keys 5", "keyboard")),
                                   dates=("September 10", "September 11", "August 2"))


@pytest.mark.parametrize(("text", "which", "reason"), [
    # something the item did or that befell it, asked yes or no
    ("Did the lamp flicker out?", False, True),
    ("Did it get scratched up in the post?", False, True),
    ("Has the keyboard lost a key?", False, True),
    ("Did the lamp from August 2 stop?", False, True),
    # a judgement of it denied, in a question's order or a statement's, or as a bare fragment
    ("Was the shade just not nice?", False, True),
    ("The light is not steady in the lamp?", False, True),
    ("It don't light up, love?", False, True),
    ("Keyboard not measuring up to the photos?", False, True),
    ("Was the September 11 keyboard not what you hoped for?", False, True),
    # near misses: a line picked out by a detail, its coming, the customer's own doing, a choice of yes or no, an offer,
    # a requirement's weight, the fault said of a dated order
    ("Was it the silver one?", True, False),
    ("Was it the one from August?", True, False),
    ("Is it the lamp you got in September?", True, False),
    ("Isn't it the keyboard?", True, False),
    ("Did it come in a gift box?", True, False),
    ("Did it ship in August?", True, False),
    ("Did you order two of them?", True, False),
    ("Is the fault with the August 2 order?", True, False),
    ("Start the return, yes or no?", False, False),
    ("You don't want a refund instead?", False, False),
    ("Is colour not important to you?", True, False),
    # ... and, played in a return, questions about a requirement: a scale, a port owned, a value described, an order
    # given, a tag, praise
    ("How much does the brand matter, on a scale from not at all to very?", True, False),
    ("Has it a USB-C port or only USB-A?", True, False),
    ("Steel, or wood that won't crack?", True, False),
    ("Black or Silver - don't rush it.", True, False),
    ("You want the Black, is it not so?", True, False),
    ("Isn't that lamp the nicest thing?", True, False),
    # ... and the customer's wish denied: no hurry, no wool, money no object, a sum hoped to be spent
    ("You're not in a hurry for it, are you?", True, False),
    ("You'd not want wool, would you?", True, False),
    ("Is money no object?", True, False),
    ("May I ask what you were hoping to spend?", True, False),
    ("No colour in mind?", True, False),
    ("Not fussed about the budget?", True, False),
])
def test_a_yes_no_guess_at_what_befell_the_item(text: str, which: bool, reason: bool) -> None:
    """Misreadings of training corpora 34/35 (issue 29 §1): "Did the cable fray at the end?", "Was the colour just not
    you?", "Cable — no charge?", "it doh fit?" were read as which order (any question about an ordered item the rules
    read nothing else in); a question that picks out a line by a detail still asks which."""
    reading = understand(text, ORDERED_LAMP_AND_KEYBOARD)
    assert (reading.which, reading.reason) == (which, reason), reading


@pytest.mark.parametrize(("text", "which", "reason"), [
    # the reason as what the agent needs, as how it would help, or asked for by its noun
    ("I'll need the cause, please, for the form.", False, True),
    ("For the claim I will need the cause of the return.", False, True),
    ("The grounds for sending it back would be very helpful.", False, True),
    ("If you would be good enough to indicate what went amiss, I will log it.", False, True),
    ("Share the cause with me, please.", False, True),
    ("Y la razón?", False, True),
    # the order asked for beside it
    ("If I might trouble you for the order in question and what went wrong.", True, True),
    ("Give me the date and what broke, please.", True, True),
    # near misses: the reason waived, the cause told, the date alone
    ("I don't need the reason, thanks.", False, False),
    ("Please note the cause of the return is logged.", False, False),
    ("The cause was recorded as damage.", False, False),
    ("Tell me the date, please.", True, False),
])
def test_the_reason_asked_as_a_need_or_by_its_noun(text: str, which: bool, reason: bool) -> None:
    """Misreadings of training corpora 34/35 (issue 29 §1): "I need the reason, please, for the system.", "For the
    incident report I'll need the cause of the return.", "the grounds for the return would be most helpful", "indicate
    what proved unsatisfactory", "Tell me the cause, please, ..." asked nothing; "Tell me the order ... and what is not
    good with it" asked no order."""
    reading = understand(text, ORDERS)
    assert (reading.which, reading.reason) == (which, reason), reading


@pytest.mark.parametrize(("text", "in_play", "expected"), [
    # a question the agent answers as its own: nothing asked, not even by the model
    ("Which brand is best? Lumora, obviously!", LAMP, {"asks": False}),
    ("What are you after? Oh, I already know: a lamp!", LAMP, {"asks": False}),
    # money dropped on it; a report the agent is glad to give
    ("What are you happy to drop on a lamp?", LAMP, {"topics": {"price"}, "open": False}),
    ("Black lamp in stock, I am glad to report.", LAMP, {"asks": False}),
    # answer keys before more words; a value recalled and checked; topics listed after a count
    ("Brand matter? yes/no, the van is waiting", LAMP, {"topics": {"brand"}}),
    ("You said M for the jacket, that right?", JACKET, {"topics": {"size"}, "confirm": False}),
    ("Two questions before the search: your budget and the colour.", LAMP, {"topics": {"price", "color"}}),
    ("Your budget would be most helpful.", LAMP, {"topics": {"price"}}),
    # near misses: a bare yes or no that may be the choices, knowing what the customer likes, a radio hand-over, a fact
    # listed after a count, a compliment
    ("Which brand? Yes or no is fine!", LAMP, {"topics": {"brand"}}),
    ("What are you after? I already know you like Lumora, but tell me more.", LAMP, {"open": True}),
    ("Lamp colour, report.", LAMP, {"topics": {"color"}}),
    ("Two things: the Black is in stock and so is the Silver.", LAMP, {"asks": False}),
    ("The Black would be a lovely pick.", LAMP, {"asks": False}),
])
def test_an_answer_of_the_agents_own_money_dropped_and_a_count_of_topics(text: str, in_play: InPlay,
                                                                         expected: dict[str, Any]) -> None:
    """Leaks and misreadings of training corpora 34/35 (issue 29 §1): "What're ya buyin'? Ha, I already know —
    headphones!" read as an open question (the shopper said every withheld value), "Which colour is best? Navy, of
    course" and "Size 10 remains available ..., I am pleased to report." as the topic, "What are you willing to drop on
    a good pan?" as open; "Brand matter or not? yes/no, ...", "Two questions before the bench: your budget, and the
    screen size ..." asked nothing."""
    reading = understand(text, in_play)
    for name, value in expected.items():
        assert (set(getattr(reading, name)) if name == "topics" else getattr(reading, name)) == value, (name, reading)


@pytest.mark.parametrize(("text", "confirm"), [
    # the customer's word, then the step done or promised
    ("Just say yes and it's ordered.", True),
    ("Nod and I'll ship it.", True),
    ("A thumbs up from you and it's done!", True),
    ("Black lamp, all set. You say yes, done.", True),
    # the step the agent would take with leave; the consent as all that is needed
    ("With your permission, I would check out the Black lamp.", True),
    ("Your approval is all that is needed for the lamp to be ordered.", True),
    # near misses: a nap, a light that is a part, a step told, a suggestion, an approval told
    ("Nod off and rest, the order is done.", False),
    ("The green light on the lamp is done.", False),
    ("The order is done and shipped.", False),
    ("I would add the Black one if I were you.", False),
    ("Your approval is all we got last time.", False),
])
def test_the_go_ahead_as_a_word_and_the_step_done(text: str, confirm: bool) -> None:
    """Misreadings of training corpora 34/35 (issue 29 §1): "Say only 'yes' and order is done", "Just tell me 'go' and
    the cable is ordered", "Nod and I'll send it.", "Green light from you and it's done!", "With your permission, I would
    proceed to checkout ...", "Your assent is all that is required for ... to be submitted." asked nothing."""
    assert understand(text, LAMP).confirm == confirm


@pytest.mark.parametrize(("text", "which", "reason"), [
    # "may" as a modal, no month; a misfit offered after a heading that names the line
    ("About the lamp from September 10, may I ask what went amiss?", False, True),
    ("The keyboard from the 11th: too big, or summat else?", False, True),
    # near misses: the month asked, a size offered with "about right"
    ("Was it delivered in May?", True, False),
    ("The keyboard: too small, too big, or about right?", True, False),
])
def test_a_modal_may_and_a_misfit_after_a_heading(text: str, which: bool, reason: bool) -> None:
    """Misreadings of training corpus 35 (issue 29 §1): "..., may I enquire what difficulty arose?" read "may" as the
    month (which order), "The hoodie from the 11th — too small, or summat else?" asked which order."""
    reading = understand(text, ORDERED_LAMP_AND_KEYBOARD)
    assert (reading.which, reading.reason) == (which, reason), reading


def test_blind_paraphrase_set_23_loss_reads_as_meant() -> None:
    """What blind paraphrase set 23 lost (3 of 1,280 episodes, read after it was measured): the cart's go-ahead asked as
    whether it is as it should be, or as the customer wanted ("Here's your cart. Is it all as it should be?"). Near
    misses: a topic as wanted asks the topic, and about an ordered item it guesses at the fault."""
    for text in ("Here's your cart. Is it all as it should be?", "Does the cart look as you wanted?",
                 "Is everything as you expected?"):
        reading = understand(text, CABLE)
        assert reading.confirm and not reading.topics, text
    assert understand("Is the colour as you wanted?", HOODIE).topics == {"color"}
    reading = understand("Was the hoodie as you expected?", ORDERS)
    assert reading.reason and not reading.confirm



@pytest.mark.parametrize(("text", "in_play", "topics", "open_"), [
    # a question of its own for any requirement, beside one that asks a topic: both are asked
    ("Any particular requirements for these? And what's the total budget?", LAMP, {"price"}, True),
    ("Are there must-haves for the lamp? Also, which brand?", LAMP, {"brand"}, True),
    ("What's the budget? Any special criteria?", LAMP, {"price"}, True),
    # ... or openly with topics as examples, after a lead-in
    ("Got it! Before I search: do these need particular specs - size, colour, that sort of thing? And your budget?",
     LAMP, {"color", "price", "size"}, True),
    ("Any particular specs for the lamp, like brand, colour or wattage?", LAMP, {"brand", "color", "wattage"}, True),
    # near misses: the requirement is a topic's, the question follows options offered, "like" offers values, "needs"
    # is a verb, a heading announces the questions
    ("Any colour requirements? And the budget?", LAMP, {"color", "price"}, False),
    ("Any preference? Black or Silver?", LAMP, {"color"}, False),
    ("Would you like the Black or the Silver, like the last one?", LAMP, {"color"}, False),
    ("It needs to arrive by Friday, right? And the budget?", LAMP, {"price", "shipping"}, False),
    ("Two questions: your budget and the brand?", LAMP, {"brand", "price"}, False),
])
def test_an_open_question_beside_a_topic_question_is_asked_too(text: str, in_play: InPlay, topics: set[str],
                                                               open_: bool) -> None:
    """Found by hand play as an LLM-style agent (BUNDLE): "Any particular requirements for these? And what's the total
    budget?" read as the budget alone, so the shopper kept every withheld requirement; a weak open word counted only
    where no topic was asked anywhere in the message. A question of its own that asks for any requirement is asked
    beside the topic of another."""
    reading = understand(text, in_play)
    assert (set(reading.topics), reading.open) == (topics, open_), reading


@pytest.mark.parametrize(("text", "confirm"), [
    # the customer's word, then the step, in any idiom and without a question mark
    ("Give us the nod, mate, and it is yours.", True),
    ("A thumbs up from you and it is rolling.", True),
    ("You say ok, I place order.", True),
    ("Nod and it's yours.", True),
    ("Your word and I'll book it.", True),
    ("Approve and I'll close it out.", True),
    ("You say when and I press the button.", True),
    ("Nod if you want it.", True),
    ("Lamp return: nod and I'll sort it.", True),
    ("Please type 'sawa' and the lamp is yours.", True),
    # the agent's step, then the word it waits on or the leave it takes
    ("I'll place it now, unless you say stop.", True),
    ("I press order when you say.", True),
    ("Then I send the order off, if that is okay with you.", True),
    ("I'll write up the ticket if that suits.", True),
    # near misses: the word given before, by someone else, for a choice; a value to tell; a condition; a step taken
    ("You said yes and it's ordered.", False),
    ("You say ok already, so it's placed.", False),
    ("They'll say yes and it ships.", False),
    ("Don't say yes until you're sure.", False),
    ("I'll ship it Monday if that's when it arrives.", False),
    ("I placed it, if that's ok.", False),
])
def test_the_word_then_the_step_as_a_statement(text: str, confirm: bool) -> None:
    """Misreadings of training corpora 36-38 (issue 29 §1): "Nod and it's yours.", "You say ok, I send order.", "I place
    it now, unless you say stop.", "I'll start the return if that's alright with you." asked nothing."""
    assert understand(text, LAMP).confirm == confirm


@pytest.mark.parametrize(("text", "topics", "confirm"), [
    # the go-ahead beside the quantity: a promise with its own question mark or tag, "will I", the readiness asked,
    # and a sentence that goes on with "And ..."
    ("How many of the lamps, and I'll book it in, alright?", {"quantity"}, True),
    ("How many lamps? And I can order them, no?", {"quantity"}, True),
    ("How many lamps, and am I good to order?", {"quantity"}, True),
    ("How many lamps, and are we good to send?", {"quantity"}, True),
    ("How many o' them lamps, and will I ring them through?", {"quantity"}, True),
    ("Which colour, and I'll add it, alright?", {"color"}, True),
    # near misses: a promise without a tag asks only the topic; "will I" that asks no step
    ("How many lamps? And I'll ring them up!", {"quantity"}, False),
    ("How many lamps, and I'll put the order in?", {"quantity"}, False),
    ("Tell me how many lamps and I'll add them.", {"quantity"}, False),
    ("How many lamps, and will I need a bulb too?", {"quantity"}, False),
])
def test_the_go_ahead_beside_a_topic_in_trade_idiom(text: str, topics: set[str], confirm: bool) -> None:
    """Misreadings of training corpora 36-38 (issue 29 §1): "How many of the Bolt 3s, and I'll book it in, alright?",
    "..., and am I good to order?", "..., and will I ring them through?" asked only the quantity."""
    reading = understand(text, LAMP)
    assert (reading.topics, reading.confirm) == (topics, confirm), reading


@pytest.mark.parametrize(("text", "topics"), [
    # a heading that names the money, then a bare "How much?"
    ("Spending limit. How much?", {"price"}),
    ("Your price range. How much?", {"price"}),
    ("Price ceiling. How much, roughly?", {"price"}),
    ("The spend. How much?", {"price"}),
    # near misses: a heading that names the things or their count, a sentence that tells the price, no heading
    ("Lamps. How much?", {"quantity"}),
    ("Number of lamps. How much?", {"quantity"}),
    ("The price is fine. How much?", {"quantity"}),
    ("How much?", {"quantity"}),
])
def test_a_bare_how_much_after_a_heading_that_names_the_money(text: str, topics: set[str]) -> None:
    """Issue 29 §1: "Spending limit. How much?" and "Your price range. How much?" read as the quantity, though the
    heading names the money."""
    assert understand(text, LAMP).topics == topics


@pytest.mark.parametrize(("text", "topics"), [
    # the choice handed over after the options or topic the sentence or the one before it names
    ("The Arc 2 comes in black or silver. You pick.", {"color"}),
    ("It comes in black and silver. I'd guess black, but you tell me.", {"color"}),
    ("Black or silver. It's all the same to me, so it is your call.", {"color"}),
    ("Lamp colour and brand, go! Black, silver! Lumora, Brightix!", {"brand", "color"}),
    # near misses: the words inside a statement, "up to you" after the agent's advice
    ("Your call is important to us.", set()),
    ("You pick it up on Monday.", set()),
    ("I'd recommend a brand with a good warranty, but it's up to you.", set()),
    ("Your lamp is ready. Go enjoy it!", set()),
])
def test_the_choice_handed_over_after_the_options(text: str, topics: set[str]) -> None:
    """Misreadings of training corpora 36-38 (issue 29 §1): "Glow 7 comes as cream, gel or spray. You pick.", "...,
    so it is your call.", "Hoodie and mug: colour on the first, material on the second. Go." asked nothing."""
    reading = understand(text, LAMP)
    assert (reading.asks, reading.topics) == (bool(topics), topics), reading


@pytest.mark.parametrize(("text", "topics"), [
    # the agent's need of a topic after a lead-in, without its subject, with the topic fronted, or as a bare phrase
    ("Reckon I'll just need your lamp colour and we're in business.", {"color"}),
    ("Before I quote you I'll need the ceiling on the lamp spend.", {"price"}),
    ("Need a colour on the Arc 2 before I wrap it.", {"color"}),
    ("Lamp colour I need.", {"color"}),
    ("First, your colour on the Arc 2.", {"color"}),
    ("Last field on my side: your brand for the lamp.", {"brand"}),
    # near misses: a need of nothing the customer holds, the customer's value in stock, a need the agent met
    ("Reckon I'll need a minute.", set()),
    ("Need a coffee before I start.", set()),
    ("Your colour is in stock.", set()),
    ("I needed your colour, and you gave it.", set()),
])
def test_the_agents_need_of_a_topic_in_trade_idiom(text: str, topics: set[str]) -> None:
    """Misreadings of training corpora 36-38 (issue 29 §1): "Shoe size I need.", "Reckon I'll just need your shoe size
    and we're in business.", "First, your size on the Atlas 22." asked nothing."""
    reading = understand(text, LAMP)
    assert (reading.asks, reading.topics) == (bool(topics), topics), reading


@pytest.mark.parametrize(("text", "reason"), [
    # a fault guessed in trade and dialect words, often without the auxiliary
    ("Lamp gone dodgy on you?", True),
    ("Keyboard short out on ya?", True),
    ("Is the keyboard fraying at the cord?", True),
    ("Was the lamp DOA?", True),
    ("Lamp ain't lightin' right?", True),
    ("Keyboard got hole or something?", True),
    ("De lamp stop wukkin'?", True),
    ("Is it banjaxed, or did you go off it?", True),
    ("Them lamps gone quiet?", True),
    # near misses: the fault word in a statement beside which order, the line picked out by its date, the customer
    # denied something
    ("The dodgy courier left it at the door, which order was that?", False),
    ("Sorry the lamp went dodgy. Which order was it?", False),
    ("Was it the lamp from September 10?", False),
    ("You ain't in a rush, are you?", False),
])
def test_a_fault_guessed_in_trade_and_dialect_words(text: str, reason: bool) -> None:
    """Misreadings of training corpora 36-38 (issue 29 §1): "Cable gone dodgy on you?", "Cable ain't chargin' right?",
    "Was the item DOA?", "De cable stop wukkin'?" read as which order."""
    assert understand(text, ORDERED_LAMP_AND_KEYBOARD).reason == reason


@pytest.mark.parametrize(("text", "reason"), [
    # the reason as a heading, then a need of "one" or a request for "it"
    ("Reason for return. I need one.", True),
    ("Reason for return please, system needs one.", True),
    ("Reason for the return, give it to me, we'll sort it!", True),
    # near misses: a statement before the need, a request for "it" after a statement
    ("It shipped Monday, we need one for the audit.", False),
    ("The receipt is in the box, give it to me later.", False),
])
def test_the_reason_as_a_heading_then_a_need_of_one(text: str, reason: bool) -> None:
    """Misreadings of training corpora 36/38 (issue 29 §1): "Reason for return. I need one.", "Reason for return
    please, system need one." asked nothing."""
    reading = understand(text, ORDERED_LAMP_AND_KEYBOARD)
    assert (reading.asks, reading.reason) == (reason, reason), reading


@pytest.mark.parametrize(("text", "confirm"), [
    # the agent's step in the first person, asked with a one-word tag of another language or said bare
    ("The Arc 2 in black, I put the order now, no?", True),
    ("I validate the order for the black lamp, d'accord?", True),
    ("The lamp, I can launch the order?", True),
    ("Lamp in black, all is well? I continue?", True),
    # near misses: a value checked with the tag, a step told without a mark, a question about reading on
    ("Black, no?", False),
    ("I continue to check the stock.", False),
    ("Do I continue reading the list?", False),
])
def test_the_agents_step_asked_with_a_one_word_tag_or_bare(text: str, confirm: bool) -> None:
    """Misreadings of training corpora 36/37 (issue 29 §1): "..., I put the order now, no?", "I validate the order for
    the Navy hoodie, d'accord?", "The return of the hoodie, I can launch it?", "I continue?" read no go-ahead."""
    assert understand(text, LAMP).confirm == confirm


@pytest.mark.parametrize(("text", "topics"), [
    # the topics listed after a lead-in that counts them in the agent's own words
    ("Let's check two things before we pull away: brand preference and budget.", {"brand", "price"}),
    ("Two wee things and we're dead on: the colour and the brand.", {"brand", "color"}),
    ("Two checks, like mirror and blind spot: colour on the lamp, brand on the bulb.", {"brand", "color"}),
    # near misses: a count of notes or news, whose fields are statements
    ("Two things to note: the price dropped and the colour is back.", set()),
    ("Two bits of good news: colour in stock, price lower.", set()),
])
def test_the_topics_listed_after_a_counted_lead_in(text: str, topics: set[str]) -> None:
    """Misreadings of training corpus 38 (issue 29 §1): "Let's check two things before we pull away: brand preference
    and budget.", "Two checks, like mirror and blind spot: size on the jacket, connector on the cable." asked nothing."""
    reading = understand(text, LAMP)
    assert (reading.asks, reading.topics) == (bool(topics), topics), reading


@pytest.mark.parametrize("text", [
    "The keyboard won't break if you drop it, but there's the lamp too. Your pick.",
    "Two wee things and we're dead on: the colour and the brand.",
])
def test_a_fault_word_beside_a_hand_over_or_a_count_says_no_reason(text: str) -> None:
    """Found by the RETURN leak check after the hand-over and counted-list families above: a fault in the sentence
    before a hand-over ("Steel won't break ..., but there's ceramic and wood too. Your pick.") and "dead" as "quite"
    ("we're dead on") read as asking the reason, so the shopper said its withheld one. Near misses: "Did it go dead on
    you?" and "Is the lamp dead?" still ask it."""
    assert not understand(text, ORDERED_LAMP_AND_KEYBOARD).reason
    assert understand("Did it go dead on you?", ORDERED_LAMP_AND_KEYBOARD).reason
    assert understand("Is the lamp dead?", ORDERED_LAMP_AND_KEYBOARD).reason


@pytest.mark.parametrize(("text", "topics"), [
    ("Need a colour on the lamp before I order materials.", {"color"}),
    # near misses: a deadline, and options after a dash, stay asked
    ("Do you need it before we dock on Friday, or is later fine?", {"shipping"}),
    ("What's the cable going into? Need to know before I set up - USB-C or Lightning.", {"connector"}),
])
def test_the_agents_ordering_step_after_the_question_names_no_topic(text: str, topics: set[str]) -> None:
    """Found by the leak check on corpus 38 after the need family above: "Need a size on the Atlas 22 before I order
    materials." read "materials" as asked, and CART and BUNDLE said their withheld material."""
    assert understand(text, CABLE).topics == topics


@pytest.mark.parametrize(("text", "in_play", "confirm"), [
    # the customer's word as all that is missing, said last, or a thumbs-up needed
    ("All that's missing is your say-so.", HOODIE, True),
    ("The only thing I need now is your OK.", HOODIE, True),
    ("Everything's in, but all I need now is your nod.", HOODIE, True),
    ("Return's all set up on my side, just need a thumbs-up from you.", ORDERS, True),
    # near misses: a topic is what is missing, the word was given, a thumbs-up that is no consent
    ("All that's missing is your size.", HOODIE, False),
    ("All that was missing was your OK, and you gave it.", HOODIE, False),
    ("The thumbs up emoji is cute.", HOODIE, False),
])
def test_the_customers_word_as_all_that_is_missing_is_a_go_ahead(text: str, in_play: InPlay, confirm: bool) -> None:
    """Found by hand play as a trade-register agent: "All that's missing is your say-so." (CART) and "..., just need a
    thumbs-up from you." (RETURN) got "Ok." and "Alright, thanks.": the go-ahead asked as what is left to have."""
    assert understand(text, in_play).confirm is confirm


@pytest.mark.parametrize(("text", "in_play", "expected"), [
    # money put down; a delivery asked as "delivering"
    ("What are you willing to put down on a lamp?", LAMP, {"topics": {"price"}, "open": False}),
    ("Does the lamp need delivering by Friday?", LAMP, {"topics": {"shipping"}}),
    # a statement, a dash, then questions of their own: no examples of an open question
    ("Party speaker! Needs to be loud - which brand do you like, and what is the top spend?", LAMP,
     {"topics": {"brand", "price"}, "open": False}),
    # a question taken back with the value the customer gave
    ("Which size? Ah wait, you already said XS. XS it is!", JACKET, {"asks": False}),
    # near misses: examples after a dash, "anything else" before the dash, a value taken back but a new question asked,
    # a thing put down that is no money
    ("What matters most to you - price or brand?", LAMP, {"topics": {"brand", "price"}, "open": True}),
    ("Anything else I should know - what about brand and colour?", LAMP, {"topics": {"brand", "color"}, "open": True}),
    ("Which size? Oh wait, you already said XS. And the colour?", JACKET, {"asks": True}),
    ("I've put down your name for the lamp.", LAMP, {"asks": False}),
    # a checklist heading announces the questions, it asks nothing openly; near miss: "anything else" after a list
    ("Checklist: the brand you like, and does it need delivering soon?", LAMP, {"open": False}),
    ("My wish list: anything else - brand or colour?", LAMP, {"open": True}),
])
def test_corpus_36_to_38_leaks(text: str, in_play: InPlay, expected: dict[str, Any]) -> None:
    """Leaks of training corpora 36-38 (issue 29 §1): "What're you willing to put down on a pan?" and "Needs to be
    loud - which brand you trust, and what's the max spend?" read as open questions (the shopper said every withheld
    value), "Which size? Oh wait, you already said Queen." as asking the size."""
    reading = understand(text, in_play)
    for name, value in expected.items():
        assert getattr(reading, name) == value, (name, reading)


@pytest.mark.parametrize(("text", "in_play", "expected"), [
    # the money as an amount the customer is ready to give; a foot "how much"; a question taken back with "ignore me"
    ("Good sir, what is the maximum amount you are ready to give for the lamp?", LAMP, {"topics": {"price"}, "open": False}),
    ("Friend, your foot is how much number? 8, 9, 10 or 11?", SHOES, {"topics": {"size"}}),
    ("What size was it... nah, ignore me, you said M. Adding it now.", JACKET, {"asks": False}),
    # figures of speech that name no topic
    ("Step right up! Which of our star performers takes your fancy: Lumora or Brightix?", LAMP, {"topics": {"brand"}}),
    ("Multiple choice for the lamp: A) Black or B) Silver?", LAMP, {"topics": {"color"}}),
    # near misses: stars counted, lamps counted, "ignore me" before a question still asked
    ("How many stars at least?", LAMP, {"topics": {"rating"}}),
    ("Multiple lamps, or one?", LAMP, {"topics": {"quantity"}}),
    ("Ignore me if you already told me, but which size?", JACKET, {"topics": {"size"}}),
])
def test_batch_25_and_26_leak_families(text: str, in_play: InPlay, expected: dict[str, Any]) -> None:
    """The families behind the only eight messages of blind batches 25 and 26 that leaked (read after both were
    measured once, and retired): a budget as the amount the customer is ready to give read as an open question, a
    shoe size asked "your foot is how much" as a count, a question taken back with "nah, ignore me" as asked, "star
    performers" as the rating, "multiple choice" as a count. Phrasings written for this test."""
    reading = understand(text, in_play)
    for name, value in expected.items():
        assert getattr(reading, name) == value, (name, reading)


DUMBBELLS = InPlay(values={"weight": ("10 lb", "20 lb", "30 lb")})
TEES = InPlay(values={"size": ("S", "M", "L", "XL")})


@pytest.mark.parametrize(("text", "in_play", "expected"), [
    # "figure" as the verb (to reckon): no figure of money asked
    ("How much weight do you figure you could lift?", DUMBBELLS, {"topics": {"weight"}}),
    ("What colour do ya figure would suit the room?", LAMP, {"topics": {"color"}}),
    ("How many do you reckon, or I figure two would do?", CABLE, {"topics": {"quantity"}}),
    # near misses: "figure" as the money ("what figure", "a figure"), a budget asked beside the verb
    ("What figure did you have in mind for the lamp?", LAMP, {"topics": {"price"}}),
    ("Give me a rough figure to stay under.", LAMP, {"topics": {"price"}}),
    ("How much do you figure you can spend?", LAMP, {"topics": {"price"}}),
])
def test_figure_as_a_verb_asks_no_budget(text: str, in_play: InPlay, expected: dict[str, Any]) -> None:
    """Corpus 36 (issue 29 §1, rules22): "how heavy a set you figure you can handle" read as asking the budget too
    (the shopper said its budget, a leak): "you figure" reckons, it names no figure of money. Phrasings written for
    this test."""
    reading = understand(text, in_play)
    for name, value in expected.items():
        assert getattr(reading, name) == value, (name, reading)


@pytest.mark.parametrize(("text", "in_play", "expected"), [
    # a sum called small or big: its size is the money, no size of the item offered
    ("Roughly what spend, small cash or large cash?", TEES, {"topics": {"price"}}),
    ("Is it small money we are talking, or large money?", TEES, {"topics": {"price"}}),
    # near misses: the item's size offered small or large, a size beside the money
    ("Small or large for the tee?", TEES, {"topics": {"size"}}),
    ("Which one, the small or the large, and what budget?", TEES, {"topics": {"price", "size"}}),
])
def test_small_or_big_money_asks_the_budget_not_a_size(text: str, in_play: InPlay, expected: dict[str, Any]) -> None:
    """Corpus 38 (issue 29 §1, rules22): "Small money or big money, tell me." read as offering sizes (the shopper said
    its size, a leak): a sum called small or large is the budget. Phrasings written for this test."""
    reading = understand(text, in_play)
    for name, value in expected.items():
        assert getattr(reading, name) == value, (name, reading)


@pytest.mark.parametrize(("text", "in_play", "asks"), [
    # the agent's own step, then a wait asked "small" (a little, West African and Singaporean English)
    ("I am checking the Lumora lamps under 50 dollars, please wait small.", LAMP, False),
    ("We are now searching the black lamps, kindly wait small.", LAMP, False),
    # near misses: a question after the wait, a wait beside a question of its own
    ("Please wait small, which colour did you want?", LAMP, True),
    ("I am checking the lamps, which brand do you like?", LAMP, True),
])
def test_wait_small_after_own_step_is_a_notice(text: str, in_play: InPlay, asks: bool) -> None:
    """Corpus 38 (issue 29 §1, rules22): "I am now searching Sonora speakers below 80 dollars, please wait small." read
    as asking the brand and the budget (the shopper said both, a leak): "wait small" is a wait, as "wait a bit" is ("wait small small" too).
    Phrasings written for this test."""
    assert understand(text, in_play).asks is asks


@pytest.mark.parametrize(("text", "reason"), [
    # a fault judged without the auxiliary or the "not", or as "up" with it
    ("Light no good, or the switch no work?", True),
    ("Keyboard ain't fit your desk?", True),
    ("Wrong lamp sent, or a bad one?", True),
    ("Keys are bad on the Keys 5, or what?", True),
    ("What's the keyboard doing wrong?", True),
    ("Anything up with the lamp?", True),
    ("So what's the craic with the keyboard?", True),
    # near misses: the words in a statement beside which order, a "good" that is the customer's, a date that names the
    # order, a line picked by "which"
    ("No good deed goes unpunished, which order was it?", False),
    ("Is the lamp from September 10 the one?", False),
    ("Which one was bad, the lamp or the keyboard?", False),
])
def test_a_fault_judged_without_the_auxiliary(text: str, reason: bool) -> None:
    """Corpus 36-38 (issue 29 §1, rules22): "Colour no good, or it no fit?", "Wrong part, or a bad one?", "Sound is
    bad on the ..., or what?", "what's it doin' wrong?", "What's the craic with them headphones?" read as which order.
    Phrasings written for this test."""
    assert understand(text, ORDERED_LAMP_AND_KEYBOARD).reason == reason


@pytest.mark.parametrize(("text", "confirm"), [
    # approval of the summary asked without its auxiliary, or of the ticket, bill or quote
    ("Lamp in black. That the one, mate?", True),
    ("Two cables on the bill. Is the bill right", True),
    ("One Lumora lamp. That the whole order then?", True),
    ("Black lamp, one of. Everything correct?", True),
    ("That everything, pal?", True),
    # near misses: what else is needed, a colour judged, a wh-question, the one the customer said before
    ("That all you need for the lamp?", False),
    ("That colour suit you?", False),
    ("What's the one you liked?", False),
])
def test_approval_of_the_summary_without_its_auxiliary(text: str, confirm: bool) -> None:
    """Corpus 36-38 (issue 29 §1, rules22): "Wood mug. That the one, unna?", "That all, love?" and "Hoodie, mug,
    shoes on the one ticket. Is the ticket right" asked no go-ahead. Phrasings written for this test."""
    assert understand(text, LAMP).confirm is confirm


@pytest.mark.parametrize(("text", "expected"), [
    # a go-ahead asked in a clause of its own, in words other than "shall I order", after a count asked
    ("How many lamps do you want, and have I got the all-clear to buy them?", {"topics": {"quantity"}, "confirm": True}),
    ("How many cables, and would you like me to check out now?", {"topics": {"quantity"}, "confirm": True}),
    ("How many of the lamps, and shall we head for the till?", {"topics": {"quantity"}, "confirm": True}),
    ("How many units, and can I then quietly send the order?", {"topics": {"quantity"}, "confirm": True}),
    # near misses: a value offered in the second clause, a promise of the step, the step in the count's own clause
    ("How many lamps, and shall I stick to Lumora?", {"topics": {"quantity"}, "confirm": False}),
    ("How many lamps, and I'll put the order through.", {"topics": {"quantity"}, "confirm": False}),
    ("How many lamps shall I order?", {"topics": {"quantity"}, "confirm": False}),
])
def test_go_ahead_in_other_words_beside_a_count(text: str, expected: dict[str, Any]) -> None:
    """Corpus 39-41 (issue 29 §1, rules23): "How many pairs ..., and do I have clearance to order?", "..., and would
    you like me to order them?", "..., and shall I land the order?" read as the count alone. Phrasings written for
    this test."""
    reading = understand(text, LAMP)
    for name, value in expected.items():
        assert getattr(reading, name) == value, (name, reading)


@pytest.mark.parametrize(("text", "in_play", "expected"), [
    # a field demanded in an exclamation, bare or with an address, beside options or an order to hurry
    ("Connector, cadet! USB-C or Lightning! Quick march!", CABLE, {"asks": True, "topics": {"connector"}}),
    ("Material, sailor! We sail at dawn!", MUG, {"asks": True, "topics": {"material"}}),
    ("Lamp! Colour and brand! Chop chop!", LAMP, {"asks": True, "topics": {"brand", "color"}}),
    # near misses: praise of the field, a value told with it, a field settled
    ("Gorgeous colour! The black one is lovely.", LAMP, {"topics": frozenset()}),
    ("Black colour! Nice pick.", LAMP, {"topics": frozenset()}),
    ("Colour, done! Brand, done! On to checkout.", LAMP, {"topics": frozenset()}),
])
def test_a_field_demanded_in_an_exclamation(text: str, in_play: InPlay, expected: dict[str, Any]) -> None:
    """Corpus 41 (issue 29 §1, rules23): a drill sergeant's "Size, recruit! NOW!", "Colour, private! ...", "T-shirt!
    Colour and size! MOVE IT!" read as asking nothing. Phrasings written for this test."""
    reading = understand(text, in_play)
    for name, value in expected.items():
        assert getattr(reading, name) == value, (name, reading)


@pytest.mark.parametrize(("text", "in_play", "topics"), [
    # the choice handed over in other words, after the options
    ("USB-C or Lightning. Pick your poison!", CABLE, {"connector"}),
    ("Ceramic or Wood. Take your pick, skipper.", MUG, {"material"}),
    ("Stainless Steel, Ceramic, Wood - make the call on the mug.", MUG, {"material"}),
    # near misses: the words in a statement of the agent's own
    ("I'll make the call to the depot about the Lumora lamp.", LAMP, set()),
    ("Lumora and Brightix both in stock. Report filed.", LAMP, set()),
])
def test_a_choice_handed_over_in_other_words(text: str, in_play: InPlay, topics: set[str]) -> None:
    """Corpus 41 (issue 29 §1, rules23): "Stainless Steel, Cast Iron, Aluminum - make the call on the pan.", "Sonora,
    Voltix, Brightix or Aurix. Pick your weapon!" and "...: cream, gel or spray. Your call, Number One." read as
    asking nothing (by the rules; the model read some). Phrasings written for this test."""
    assert rule_reading(text, in_play).topics == topics


@pytest.mark.parametrize(("text", "in_play", "expected"), [
    # a value's or topic's word inside an idiom: no value offered, no topic asked
    ("Red card for going over fifty? What's your budget?", LAMP, {"topics": {"price"}}),
    ("Lumora lamp in black. Green flag from you and I'll order?", LAMP, {"confirm": True, "topics": frozenset()}),
    ("Only blue chips? Lumora or Brightix?", LAMP, {"topics": {"brand"}}),
    ("For a brand-new cable: USB-C or Lightning?", CABLE, {"topics": {"connector"}}),
    ("The mug's stowed. Shall we weigh anchor and place the order?", MUG, {"confirm": True, "topics": frozenset()}),
    # near misses: the colour offered, the brand asked, the weight in kilos asked
    ("Black or silver for the lamp?", LAMP, {"topics": {"color"}}),
    ("Which brand for the new lamp?", LAMP, {"topics": {"brand"}}),
    ("Could you weigh it in kilos - how heavy should it be?", MUG, {"topics": {"weight"}}),
])
def test_a_value_word_in_an_idiom(text: str, in_play: InPlay, expected: dict[str, Any]) -> None:
    """Corpus 40-41 (issue 29 §1, rules23): a referee's "Yellow card for ...?" read as asking the colour (the shopper
    said its colour, a leak), "Blue chips only?" too, "a brand-new Bolt 3" as asking the brand, "Weigh anchor on the
    order?" and "weigh it in and ring it up" as asking the weight. Phrasings written for this test."""
    reading = understand(text, in_play)
    for name, value in expected.items():
        assert getattr(reading, name) == value, (name, reading)


@pytest.mark.parametrize(("text", "in_play", "asks"), [
    # an exclamation in its own order (the verb after what it names), and a question taken back "literally"
    ("How lovely the ceramic mug is, like a little pot!", MUG, False),
    ("How sleek that black lamp looks on a desk!", LAMP, False),
    ("Which colour do you... oh, you literally said black. Sorted!", LAMP, False),
    # near misses: the question in its own order, a question beside the praise
    ("How heavy is the ceramic mug, does it matter?", MUG, True),
    ("How lovely the mug is! Which material do you want?", MUG, True),
])
def test_exclamation_order_and_a_question_taken_back(text: str, in_play: InPlay, asks: bool) -> None:
    """Corpus 39-40 (issue 29 §1, rules23): "How beautiful the wooden Terra 5 is, like a branch in autumn!" read as
    asking the material (a leak), "Wait, what size are you... oh wait, you literally said M." as asking the size.
    Phrasings written for this test."""
    assert understand(text, in_play).asks is asks


@pytest.mark.parametrize(("text", "expected"), [
    # a go-ahead tag after a summary that names a value: the summary asks nothing
    ("Size 10 shoes, all set to order, eh?", {"confirm": True, "topics": frozenset()}),
    ("Shoes in size 9, good to check out, no?", {"confirm": True, "topics": frozenset()}),
    # near misses: a tag after a choice, a wh-question before the tag
    ("9 or 10, eh?", {"topics": {"size"}}),
    ("Which size, good to go after, eh?", {"topics": {"size"}}),
])
def test_go_ahead_tag_after_a_summary(text: str, expected: dict[str, Any]) -> None:
    """Corpus 39 (issue 29 §1, rules23): "Size 9 Trek 9s, all good to go, eh?" read as asking the size too. Phrasings
    written for this test."""
    reading = understand(text, SHOES)
    for name, value in expected.items():
        assert getattr(reading, name) == value, (name, reading)


@pytest.mark.parametrize(("text", "in_play", "expected"), [
    # a letter's request after its salutation, in its own words, and a reason given after the request
    ("Dear valued customer, I shall simply need to know your budget. Warm regards, Pat", LAMP,
     {"asks": True, "topics": {"price"}}),
    ("Dear valued customer, Before I proceed I would be grateful if you could state the colour you prefer.", LAMP,
     {"asks": True, "topics": {"color"}}),
    ("Dear valued customer, One black lamp is ready. I should be grateful for your approval to place the order.", LAMP,
     {"confirm": True, "topics": frozenset()}),
    ("Dear valued customer, I should be most grateful for a few lines on what went wrong.", ORDERS, {"reason": True}),
    ("Kindly state your budget, as the Lumora and Brightix lamps vary a great deal in price.", LAMP, {"topics": {"price"}}),
    # near misses: a letter that tells, gratitude for what the customer did, a notice, a list joined by "as well as"
    ("Dear valued customer, your black lamp has shipped. Warm regards, Pat", LAMP, {"asks": False}),
    ("Dear valued customer, I am most grateful for your patience.", LAMP, {"asks": False}),
    ("Dear valued customer, please be aware that returns close after 30 days.", ORDERS, {"asks_anything": False}),
    ("Kindly state your budget, as well as the brand you like.", LAMP, {"topics": {"brand", "price"}}),
])
def test_a_letters_request(text: str, in_play: InPlay, expected: dict[str, Any]) -> None:
    """Corpus 40 (issue 29 §1, rules23): a boomer's e-mail ("Dear customer, I shall simply need to know the size of
    your bed.", "I should be grateful for your permission to complete the purchase.", "... a few words on what went
    wrong") read as asking nothing, "Dear customer, Please be aware ..." as asking which order, and "..., as the
    Brightix, Sonora and Kinetiq models vary ENORMOUSLY in price." as asking the brand too. Phrasings written for this
    test."""
    reading = understand(text, in_play)
    for name, value in expected.items():
        assert getattr(reading, name) == value, (name, reading)


@pytest.mark.parametrize(("text", "confirm"), [
    # the customer's word, the button pressed, or the step taken on their signal, said as a statement
    ("Black lamp, literally just say yes and it's yours.", True),
    ("Say bet and I'll place it.", True),
    ("A quick yes from you, and it's done.", True),
    ("Green flag from you and the lamp is on its way.", True),
    ("Press your button and I'll order the lamp!", True),
    ("Black lamp ready. Say yes to the checkout", True),
    ("I'll send the order through on your signal.", True),
    # near misses: the word already given, a word about a value, a step taken on it, a button of the product
    ("A quick yes from you earlier was all I needed, it's ordered now.", False),
    ("One word from you on the colour and I'll add it.", False),
    ("Order placed on your signal.", False),
    ("The lamp has a touch button and ships Friday.", False),
])
def test_the_customers_word_for_the_step_in_other_words(text: str, confirm: bool) -> None:
    """Corpus 39-41 (issue 29 §1, rules23): "Literally just say yes and the Terra 5 is yours.", "say bet and i order
    the terra 5", "A simple yes from you, and it is done.", "Green flag from you and we're away", "Hit your buzzer and
    I'll place the order!", "Say aye to the checkout", "I'll put it through on your signal." asked no go-ahead.
    Phrasings written for this test."""
    assert understand(text, LAMP).confirm is confirm


@pytest.mark.parametrize(("text", "confirm"), [
    # approval of the cart asked as how it looks, of everything in it, as the customer would have it, as all there is
    ("One black lamp. Everything look right to you, pal", True),
    ("Everything in the bag right, friend?", True),
    ("thats everything in ur basket right", True),
    ("Is the cart as you'd want it?", True),
    ("Two lamps in the cart. Is that the whole lot?", True),
    ("Take a look at the cart and tell me it's right?", True),
    # near misses: the agent's own view, an open question before "the full list", a bed size, the lamp's looks
    ("One black lamp. Everything looks right to me.", False),
    ("Anything more for the lamp, or is that the full list?", False),
    ("Do you want the Full or the Queen?", False),
    ("Black or silver, which would look right to you?", False),
])
def test_approval_of_the_cart_in_other_words(text: str, confirm: bool) -> None:
    """Corpus 37-41 (issue 29 §1, rules23): "Everything in the trolley right, mate?", "cart look right to u bestie",
    "thats everything in ur cart right", "Is the basket as you'd like it, ...?", "... is that the full load?" (read as
    asking the size: "Full" is a bed size) and "... tell me it's right?" asked no go-ahead. Phrasings written for this
    test."""
    assert understand(text, BEDDING if "Full" in text else LAMP).confirm is confirm


@pytest.mark.parametrize(("text", "expected"), [
    # the customer's displeasure asked, or a fault in idiom
    ("What was it about the lamp that didn't satisfy you?", {"reason": True, "which": False}),
    ("Regarding the keyboard, what troubled you?", {"reason": True, "which": False}),
    ("Which order, and what about it did not suit you?", {"reason": True, "which": True}),
    ("What went south with the lamp?", {"reason": True, "which": False}),
    ("Was the keyboard not what you hoped?", {"reason": True, "which": False}),
    # near misses: the displeasure or idiom told, an order picked by its item
    ("Sorry the lamp was not what you hoped. Which order is it?", {"reason": False, "which": True}),
    ("Which order was it, the lamp or the keyboard?", {"reason": False, "which": True}),
])
def test_displeasure_and_idioms_of_a_fault(text: str, expected: dict[str, Any]) -> None:
    """Corpus 40 (issue 29 §1, rules23): "What was it about the cable that did not satisfy you?", "what troubled
    you?", "what displeased sir about the item?", "What went south with the hoodie?", "Was the hoodie not as you
    hoped?" read as which order. Phrasings written for this test."""
    reading = understand(text, ORDERED_LAMP_AND_KEYBOARD)
    for name, value in expected.items():
        assert getattr(reading, name) == value, (name, reading)


@pytest.mark.parametrize(("text", "expected"), [
    # what the items need, said before a request that points back at it; a counted lead said by a role; a field list
    # with a bare prompt after it
    ("The lamp still needs a colour and the cable a connector. Answers for both, please.", {"topics": {"color", "connector"}}),
    ("The lamp needs a brand and the cable needs a connector. What are they to be?", {"topics": {"brand", "connector"}}),
    ("The lamp needs a colour, the cable a connector. Fill me in on both and I'll order.", {"topics": {"color", "connector"},
                                                                                        "confirm": False}),
    ("The till needs three answers from you: brand, colour and connector.", {"topics": {"brand", "color", "connector"}}),
    ("Lamp colour and cable connector, on the double.", {"topics": {"color", "connector"}}),
    # near misses: a need of the agent's or the customer's, a request that points at nothing needed, a note of news
    ("You need a new cable soon. Answers for both, please.", {"topics": frozenset()}),
    ("The lamp is in stock. What would you like?", {"topics": frozenset()}),
    ("Two figures to note: the price dropped and the colour sold out.", {"asks": False}),
])
def test_what_the_items_need_asked_back(text: str, expected: dict[str, Any]) -> None:
    """Corpus 40-41 (issue 29 §1, rules23): "... the Atlas 22 jacket still needs a size and the Bolt 3 cable a
    connector. Tickets for both, please.", "... What are they to be?", "... Fill me in on both and I'll execute.",
    "Dealer needs two cards from you: bed size and colour." and "Shoe size and hoodie colour, on my mark." read as
    asking nothing. Phrasings written for this test."""
    reading = understand(text, LAMP_AND_CABLE)
    for name, value in expected.items():
        assert getattr(reading, name) == value, (name, reading)


LAMP_AND_CABLE = InPlay(values={"brand": ("Lumora", "Brightix"), "color": ("Black", "Silver"),
                                "connector": ("USB-C", "Lightning")})


@pytest.mark.parametrize(("text", "in_play", "topics"), [
    # attribute questions in idiom that read as open questions or as another topic (the shopper then says withheld values)
    ("The jacket comes in XS, M or XXL. So what are you?", JACKET, {"size"}),
    ("Any number in mind for the lamp?", LAMP, {"price"}),
    ("How many days could you wait for the lamp?", LAMP, {"shipping"}),
    ("Stainless Steel, Ceramic or Wood. Which sits right in your hands?", MUG, {"material"}),
    ("For the lamp, a colour; for the cable, a connector. What would you like?", LAMP_AND_CABLE, {"color", "connector"}),
    ("Is it a 10, or do you phone a friend and go 11?", SHOES, {"size"}),
    ("Tell me your ceiling for the lamp.", LAMP, {"price"}),
    # near misses: the count asked beside a number, the delivery in the hands, the colour asked beside a list with a verb
    ("What number of lamps did you have in mind?", LAMP, {"quantity"}),
    ("When do you need it in your hands?", LAMP, {"shipping"}),
    ("Which colour for your ceiling lamp?", LAMP, {"color"}),
])
def test_attribute_questions_in_idiom(text: str, in_play: InPlay, topics: set[str]) -> None:
    """Corpus 39-41 (issue 29 §1, rules23), each a leak: "... What are you, eh?" after sizes, "Got a number in mind
    for the headphones?" and "How many days can you hold out before ...?" read as open questions, "Which feels natural
    in your hands?" as the delivery, "For the Core 4 hoodie, a colour; for the Trek 9 shoes, a size. What would you
    like?" as open, "phone a friend" as the connector, "Tell me your ceiling for the speaker." as nothing (read as the
    colour before "Yellow card" was an idiom). Phrasings written for this test."""
    assert understand(text, in_play).topics == topics


@pytest.mark.parametrize(("text", "in_play", "topics"), [
    # a question taken back on finding the answer on record
    ("Which colour was it - oh no, it's right there in your notes: Navy. Lovely.", HOODIE, set()),
    ("Which size, hmm... ah, it's all here in my notes, Queen.", BEDDING, set()),
    # who would have thought it: asked for effect
    ("Who'd have thought a Queen linen set would cost this little? Marvellous.", BEDDING, set()),
    ("Who would have guessed the ceramic one is the lighter? Not me!", MUG, set()),
    # near misses: the question goes on after what is on record, a question beside the remark, a real "who'd"
    ("Which colour? It's in your notes as Navy, is that still right?", HOODIE, {"color"}),
    ("Who'd have guessed it! Which size do you need?", BEDDING, {"size"}),
    ("Who'd have the Queen set, you or your sister?", BEDDING, {"size"}),
])
def test_batch_28_leak_families(text: str, in_play: InPlay, topics: set[str]) -> None:
    """Two of the messages behind blind batch 28's leaks (read after it was measured, retired): a question taken back
    on finding the answer in the customer's notes, and a rhetorical "Who'd have thought ...?", each read as asking the
    topics it named (the shopper then said withheld values). Phrasings written for this test."""
    assert understand(text, in_play).topics == topics


LAMP_ITEM = InPlay((ItemNames("L9", "lumora", "glow 9", "lamp"),), LAMP.values)


@pytest.mark.parametrize(("text", "confirm"), [
    # the agent's step waiting on the customer's assent, in either order, without a question mark
    ("The lamp order goes out when you give a nod.", True),
    ("If you agree, I'll send the lamp order off now.", True),
    ("With your kind permission, I am placing the order.", True),
    ("One okay from you and the lamp goes.", True),
    ("Black lamp, one unit. Only your approval we are waiting for.", True),
    ("Give the order your blessing and I will submit it.", True),
    ("Say ja and the lamp is yours.", True),
    ("Say yes, and the lamp is yours.", True),
    ("If for you it is fine, I complete the purchase now.", True),
    ("Lamp return prepared. Requesting permission to submit.", True),
    ("Black lamp, one unit. Sign off on it.", True),
    # near misses: a step already taken, a condition on a fact, agreeing with something, a value or a greeting to say
    ("I sent the order when you agreed.", False),
    ("I'll ship it if it is in stock.", False),
    ("If you agree with the reviews, the Lumora is a good pick.", False),
    ("Say which colour and I add it.", False),
    ("I'll add it if you say black.", False),
    ("Say hi to the new Lumora and it is here.", False),
    ("Tell me now, the light is going.", False),
    ("Once you confirm the colour, I'll check out.", False),
])
def test_a_step_waiting_on_the_customers_assent(text: str, confirm: bool) -> None:
    """Corpus 42-44 (issue 29 §1, rules24): go-aheads said as the agent's step made conditional on the customer's
    assent ("If your heart is happy, I send the order", "One yes from you and the Core 4 goes out", "Order goes through
    when you nod", "Only your agreement I need", "With your permission, I am sending the order") read as nothing or as
    a mention of the item. Phrasings written for this test."""
    assert understand(text, LAMP).confirm is confirm


@pytest.mark.parametrize(("text", "in_play", "topics"), [
    # a question taken back: the value told already, "already" said last, or the value said first
    ("What colour - oh, you already told Navy. Lovely.", HOODIE, set()),
    ("Colour? Ah, you said Olive already, sorry.", HOODIE, set()),
    ("Which colour? Oh, Navy - you told me already. Great.", HOODIE, set()),
    ("Which colour - no, you already called Olive.", HOODIE, set()),
    # near misses: the question goes on, or the value is checked
    ("Which colour? You already said Navy for the hoodie, what about the scarf?", HOODIE, {"color"}),
    ("Which colour do you want? Navy, you said, or was it Olive?", HOODIE, {"color"}),
])
def test_a_question_taken_back_when_already_told(text: str, in_play: InPlay, topics: set[str]) -> None:
    """Corpus 42 and 44 (issue 29 §1, rules24), each a leak: "Which size - ah no, you already told M", "Which colour -
    negative, you already called Navy", "Size? Oh, you said M already, silly me." and "Which connector? Ah, USB-A - you
    told me already." read as asking the topic they took back. Phrasings written for this test."""
    assert understand(text, in_play).topics == topics


@pytest.mark.parametrize(("text", "in_play", "expected"), [
    # a closing check of a summary that names the item first: the go-ahead, its values told
    ("Glow 9 lamp in Black, all correct, friend?", LAMP_ITEM, {"confirm": True, "topics": set()}),
    ("Lumora Glow 9 Silver, is right one?", LAMP_ITEM, {"confirm": True, "topics": set()}),
    ("Glow 9 in Silver - good to order?", LAMP_ITEM, {"confirm": True, "topics": set()}),
    # near misses: a value checked first, a value recalled, an order's date
    ("Silver for the Glow 9, correct?", LAMP_ITEM, {"topics": {"color"}}),
    ("You said Black for the Glow 9, is that right?", LAMP_ITEM, {"topics": {"color"}}),
    ("August 2, correct?", ORDERS, {"which": True}),
])
def test_a_closing_check_of_a_summary(text: str, in_play: InPlay, expected: dict[str, Any]) -> None:
    """Corpus 42 (issue 29 §1, rules24): "Atlas 22 in size M - everything is correct, canım?", "Keyboard Swift 2 USB-C,
    is right one?", "Luna 3 Queen, that's the one, eh?" read as asking the values of the summary. Phrasings written for
    this test."""
    reading = understand(text, in_play)
    for name, value in expected.items():
        assert getattr(reading, name) == value, (name, reading)


@pytest.mark.parametrize(("text", "confirm"), [
    ("How many lamps, and then I can place the order?", True),
    ("How many lamps, and after that we can complete the purchase?", True),
    # near misses: a step that is no order's, a promise
    ("How many lamps, and then I can check the stock?", False),
    ("How many lamps, and I'll add them?", False),
])
def test_a_count_then_leave_in_declarative_order(text: str, confirm: bool) -> None:
    """Corpus 42 (issue 29 §1, rules24): "How many pieces I put, and then I can send the order?" read as the count
    alone. Phrasings written for this test."""
    reading = understand(text, LAMP)
    assert reading.topics == {"quantity"} and reading.confirm is confirm


@pytest.mark.parametrize(("text", "in_play", "topics"), [
    # a topic said first and pointed back at; examples carrying the question mark
    ("The stars and the reviews, do they count for much with you?", LAMP, {"rating"}),
    ("Reviews from other buyers are a big deal for you, like four and up?", LAMP, {"rating"}),
    # near misses: a fact with a verb before the question, examples that name the values
    ("The lamp ships Friday, is it ok?", LAMP, set()),
    ("Is the colour important, like black or silver?", LAMP, {"color"}),
])
def test_a_topic_pointed_back_at(text: str, in_play: InPlay, topics: set[str]) -> None:
    """Corpus 42 and 44 (issue 29 §1, rules24), each a leak: "Other people's stars and reviews are important for you,
    la, like four and above?" and "Reviews and the stars, do they matter to ya, ...?" read as open questions.
    Phrasings written for this test."""
    assert understand(text, in_play).topics == topics


@pytest.mark.parametrize(("text", "in_play", "topics"), [
    # a field's heading, then its options, unit or prompt in sentences of their own
    ("Size for the jacket. XS, M, XXL.", JACKET, {"size"}),
    ("Spending limit for the lamp, in dollars. Then I search.", LAMP, {"price"}),
    ("Number of lamps. Name it.", LAMP, {"quantity"}),
    # a unit as the heading before a bare "how many"
    ("Watts. How many would you like?", LAMP, {"wattage"}),
    # near misses: one value after the heading, a value told, a count's heading
    ("Size for the jacket. M.", JACKET, set()),
    ("Size M for the jacket. Added.", JACKET, set()),
    ("Lamps. How many would you like?", LAMP, {"quantity"}),
])
def test_a_field_heading_before_its_options(text: str, in_play: InPlay, topics: set[str]) -> None:
    """Corpus 42 and 43 (issue 29 §1, rules24): "Size for the Atlas 22. XS, M, XXL.", "Budget. Upper limit, in
    dollars.", "Number of mugs. Say it." read as asking nothing, "Watts. How many do you want, roughly." as a count (a
    leak). Phrasings written for this test."""
    assert understand(text, in_play).topics == topics


@pytest.mark.parametrize(("text", "in_play", "topics"), [
    # the budget as what the wallet or purse gives up, a sum to expend; what the agent needs to know among kinds counted
    ("How much are you happy to take out of your wallet for the lamp?", LAMP, {"price"}),
    ("What sum are you prepared to expend on a lamp?", LAMP, {"price"}),
    ("The cream comes in three forms. I'll need to know which one you prefer.", CREAM, {"form"}),
    ("The lamp needs a colour and the cable needs a connector. Both, please.", LAMP_AND_CABLE, {"color", "connector"}),
    # near misses: a phone in a pocket, no kinds counted before "which one"
    ("Which phone do you keep in your pocket, an iPhone?", CABLE, {"connector"}),
    ("The cream is in stock. I'll need to know which one you prefer.", CREAM, set()),
])
def test_attribute_questions_in_idiom_rules24(text: str, in_play: InPlay, topics: set[str]) -> None:
    """Corpus 43 and 44 (issue 29 §1, rules24): "What're you willing to chop off the wallet for a pan?" (a leak), "the
    maximum sum ... to expend", "... in three forms. I'll just need to know which one suits you." (a leak) and "... needs
    a connector. Both, please." read as open questions or nothing. Phrasings written for this test."""
    assert understand(text, in_play).topics == topics


@pytest.mark.parametrize(("text", "in_play", "expected"), [
    # the reason as what led to the return, what the customer did not like, or a field the agent must write
    ("What prompted you to send the lamp back?", ORDERS, {"reason": True}),
    ("What didn't you like about the cable?", ORDERS, {"reason": True}),
    ("What bothered you about the lamp?", ORDERS, {"reason": True}),
    ("I have to write down the reason on the form.", ORDERS, {"reason": True}),
    # a directive in the third person
    ("The customer will now explain what went wrong.", ORDERS, {"reason": True}),
    ("The customer will state the colour: Black or Silver.", LAMP, {"topics": {"color"}}),
    # near misses: what interested them, what the customer will receive, what the court does
    ("What interested you about the lamp?", ORDERS, {"reason": False}),
    ("The customer will receive an e-mail shortly.", LAMP, {"asks": False}),
    ("The court will proceed.", LAMP, {"asks": False}),
])
def test_reasons_and_third_person_directives(text: str, in_play: InPlay, expected: dict[str, Any]) -> None:
    """Corpus 43 and 44 (issue 29 §1, rules24): "What led the shopper to send the hoodie back?", "What didn't you love
    about the hoodie?", "Gotta write down the reason on the return slip.", "Counsel will explain what went wrong with
    the Bolt 3." and "The customer will state, for the record, XS, M or XXL." read as which order or nothing.
    Phrasings written for this test."""
    reading = understand(text, in_play)
    for name, value in expected.items():
        assert getattr(reading, name) == value, (name, reading)


@pytest.mark.parametrize(("text", "in_play", "confirm"), [
    # the order made to wait on the customer's word, in a statement with no question's shape
    ("Trek 9 size 10 in the basket. We are good to place it, yes", SHOES, True),
    # near misses: the word reported as given, the agent's own step, a step done, what follows a choice
    ("You said yes, so I'll send the order for the Bolt 3 now.", CABLE, False),
    ("You told me yes, and I'll place the order for the Swift 2.", CART_KEYBOARD, False),
    ("I'll put the Atlas 22 jacket and the Bolt 3 cable in your cart.", JACKET, False),
    ("Both items are in the cart and the order is placed.", JACKET, False),
    ("Once you pick a material, the order goes in.", MUG, False),
])
def test_a_go_ahead_in_a_statement_that_waits_on_the_customers_word(text: str, in_play: InPlay, confirm: bool) -> None:
    """Go-aheads said as statements that wait on the customer's word ("Glow 7 cream. Nod and I'll play the hand.",
    "Atlas 22 in XS. We're good to go, yes") read as nothing where the rules have no cue for them: the model's chance
    of a go-ahead (0.75-0.9) was under what any statement needed. Phrasings written for this test."""
    assert understand(text, in_play).confirm is confirm


@pytest.mark.parametrize(("text", "reason"), [
    # what has the customer sending it back: the cause asked
    ("Oh no, what has you returning the headphones, may I ask?", True),
    ("Ah, what had you sending the lamp back, if I can ask?", True),
    ("Oh dear, what's got you sending the mug back, can I ask?", True),
    # near misses: what has them interested, covered or ordering asks no cause
    ("What has you interested in the lamp?", False),
    ("What has you covered for the delivery?", False),
    ("What had you ordering two of them?", False),
])
def test_what_has_the_customer_sending_it_back_asks_why(text: str, reason: bool) -> None:
    """Blind paraphrase set 26 lost 6 of 1,280 episodes (read after its one measurement) to "Ah no, what has you sending
    it back, can I ask?", read as which order. Phrasings written for this test."""
    assert understand(text, ORDERS).reason is reason


@pytest.mark.parametrize(("text", "asks"), [
    # "shoot" as an interjection before a statement asks nothing
    ("Oh, shoot, that Navy hoodie is a beauty.", False),
    ("Shoot, the jacket is cheaper than I thought.", False),
    # near misses: "shoot" as a sentence of its own, or with what to send, has the customer speak
    ("Any other needs for the jacket? Shoot!", True),
    ("Go on, shoot.", True),
    ("Got more requirements? Shoot them over.", True),
])
def test_shoot_as_an_interjection_asks_nothing(text: str, asks: bool) -> None:
    """Blind batch 29's leaks (read after its one measurement, retired): a cowboy's "Well, shoot, ..." before a remark
    on the jacket read as an open question, so the shopper said every withheld value (57 of its 107 leaking first
    turns). Phrasings written for this test."""
    assert understand(text, JACKET).asks_anything is asks


@pytest.mark.parametrize(("text", "reason", "which", "open_"), [
    # a field named last with no mark after it, as chat and markdown assistants write (blind paraphrase set 27)
    ("Got it. Reason for returning", True, False, False),
    ("Thanks. The cause of the return", True, False, False),
    ("Noted. Anything else to look for", False, False, True),
    ("Sure. Special requests for any item", False, False, True),
    # near misses: the field told in a sentence, a statement that names a reason, the field with its own mark
    ("Reason for returning is noted.", False, False, False),
    ("The reason for returning it was logged", False, False, False),
    ("Got it. Reason for returning?", True, False, False),
])
def test_a_field_named_last_without_a_mark_asks(text: str, reason: bool, which: bool, open_: bool) -> None:
    reading = understand(text, ORDERS if "eason" in text or "cause" in text else InPlay())
    assert (reading.reason, reading.which, reading.open) == (reason, which, open_), reading


def test_two_ordered_items_named_last_without_a_mark_ask_which() -> None:
    lamps = InPlay(items=(ItemNames("P-8", "ironnest", "sport 1", "headlamp"), ItemNames("P-9", "nexfit", "aero 5", "headlamp")),
                   dates=("2025-09-10", "2025-09-11"))
    assert understand("Got it. The Ironnest Sport 1 headlamp or the Nexfit Aero 5 headlamp", lamps).which
    assert not understand("Got it. The Ironnest Sport 1 headlamp and the Nexfit Aero 5 headlamp are both here",
                          lamps).asks_anything


@pytest.mark.parametrize(("text", "topics", "confirm"), [
    # Yorkshire English (blind paraphrase set 27)
    ("Is it nobbut one Terra 5 mug tha wants, or more'n that?", {"quantity"}, False),
    ("Have a look at thy basket, love. Is it all reet?", set(), True),
])
def test_yorkshire_words(text: str, topics: set[str], confirm: bool) -> None:
    reading = understand(text, InPlay(items=(ItemNames("P-17", "terra", "terra 5", "mug"),)))
    assert (set(reading.topics), reading.confirm) == (topics, confirm), reading
