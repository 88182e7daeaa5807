"""The learned intent model (issue 29 §1): what it reads, where the shopper uses it, and that it is what the
training script makes of the training messages."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from types import MappingProxyType

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from understanding_bank import BLIND_BATCHES, load_bank, training_messages

from ecomrlve.user import intent_model
from ecomrlve.user.dialogue import ItemNames
from ecomrlve.user.understanding import (
    _SURE,
    _SURE_ASKS_TOPIC,
    NOTHING_IN_PLAY,
    TOPICS,
    InPlay,
    Reading,
    rule_reading,
    understand,
)

MUG = InPlay(items=(ItemNames("P-17", "terra", "terra 5", "mug"),),
             values=MappingProxyType({"color": ("Black", "Slate Grey"), "material": ("Stainless Steel", "Ceramic")}))
ORDERS = InPlay(dates=("2025-09-10", "2025-09-11"))


def _model_reads(monkeypatch: pytest.MonkeyPatch, rest: float, chances: dict[str, float]) -> None:
    """Make the model read ``chances`` of any message, and ``rest`` of every other act."""
    read = dict.fromkeys(intent_model.ACTS, rest) | chances
    monkeypatch.setattr(intent_model, "probabilities", lambda text, in_play: read)


def test_values_names_prices_and_numbers_are_masked() -> None:
    """The model learns how a question is asked, not which product or value it names."""
    assert intent_model.masked_words("Terra 5 in Black or Slate Grey, for $12.99? Or 2 of them?", MUG) == [
        "zitem", "znum", "in", "zcolor", "or", "zcolor", "for", "zprice", "or", "znum", "of", "them"]
    assert intent_model.masked_words("What's it made of?", InPlay()) == ["whats", "it", "made", "of"]


#: Messages made of words the reading reacts to, in any order (random text alone rarely asks anything).
_CUE_SALADS = st.lists(st.sampled_from(["which", "order", "why", "colour", "size", "anything", "else", "shall", "I",
                                        "place", "it", "Black", "Terra", "5", "mug", "September", "10", "?", ",", ".",
                                        "how", "many", "brand", "return", "is", "the", "one", "from", "or", "please"]),
                       max_size=14).map(" ".join)


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.text(max_size=300), _CUE_SALADS), st.sampled_from([NOTHING_IN_PLAY, MUG, ORDERS]))
@example("?\r", NOTHING_IN_PLAY)  # a sentence of breaks alone once had no clause to read
def test_any_text_is_read_without_error(text: str, in_play: InPlay) -> None:
    """Whatever an agent writes, the whole reading (rules and model) answers: no topic outside what the shopper can
    answer, which order and why only about orders, items only among those in play."""
    reading = understand(text, in_play)
    assert reading.asks or not reading.asks_anything
    assert reading.topics <= set(TOPICS)
    assert not (reading.which or reading.reason) or in_play.dates or in_play.items
    assert all(0 <= i < len(in_play.items) for i in reading.items)


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=300))
def test_any_text_gets_a_chance_of_each_act(text: str) -> None:
    index = intent_model.features(text, MUG)
    assert index.size >= 1 and np.all(np.diff(index) > 0) and 0 <= index.min() and index.max() < intent_model.DIMENSION
    chance = intent_model.probabilities(text, MUG)
    assert list(chance) == list(intent_model.ACTS) and all(0.0 < p < 1.0 for p in chance.values())


def test_features_are_the_same_in_another_process() -> None:
    """Hashed with crc32, not ``hash()``: another process (another hash seed) reads a message the same way."""
    text = "aight the Terra 5's all set in Black, wanna lock it in? 2 of them for $12"
    code = ("from types import MappingProxyType; from ecomrlve.user import intent_model; "
            "from ecomrlve.user.dialogue import ItemNames; from ecomrlve.user.understanding import InPlay; "
            "mug = InPlay(items=(ItemNames('P-17', 'terra', 'terra 5', 'mug'),), values=MappingProxyType("
            "{'color': ('Black', 'Slate Grey'), 'material': ('Stainless Steel', 'Ceramic')})); "
            f"print(intent_model.features({text!r}, mug).tolist(), intent_model.probabilities({text!r}, mug))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={"PYTHONHASHSEED": "12345", "PATH": ""}, cwd=Path(__file__).parent).stdout
    assert out.strip() == f"{intent_model.features(text, MUG).tolist()} {intent_model.probabilities(text, MUG)}"


def test_fit_learns_the_acts_of_its_examples() -> None:
    """Trained on a handful of labelled messages, the model reads each of them back (the fit is a real fit)."""
    examples = [("Shall I place the order?", MUG, (True, False, False, True, False, False)),
                ("Anything else you need?", MUG, (True, False, True, False, False, False)),
                ("What battery life are you after?", MUG, (True, True, False, False, False, False)),
                ("Which order do you mean, the 10th or the 11th?", ORDERS, (True, False, False, False, True, False)),
                ("Why are you sending it back?", ORDERS, (True, False, False, False, False, True)),
                ("I've added it to your cart.", MUG, (False, False, False, False, False, False))]
    model = intent_model.fit(intent_model.ACTS, examples, steps=300)
    for text, in_play, acts in examples:
        chance = model.probabilities(text, in_play)
        assert tuple(chance[act] > 0.5 for act in intent_model.ACTS) == acts, text


def test_the_model_reads_acts_only_where_the_rules_read_no_ask() -> None:
    """Over every bank message: a reading the rules make is kept but for its which-order part (which order, or the
    go-ahead, why or an open question in its place); where they read no ask, the model adds an act the shopper can answer, or has the rules read the
    message as a question for its topics (never in an orders context), so that every topic is one the rules find in
    the message's words (a topic says its withheld value)."""
    acts = topics = 0
    for name in ("bank.jsonl", *BLIND_BATCHES):
        for m in load_bank(name):
            rules, reading = rule_reading(m.text, m.in_play), understand(m.text, m.in_play)
            assert reading.items == rules.items
            if rules.asks_anything:
                assert reading == rules or rules.which and replace(reading, which=True, confirm=rules.confirm,
                                                                   reason=rules.reason, open=rules.open) == rules
            elif reading.topics:
                topics += 1
                assert not m.in_play.dates and reading == Reading(True, reading.topics, items=rules.items,
                                                                  stock_out=rules.stock_out)
                chance = intent_model.probabilities(m.text, m.in_play)
                assert chance["asks"] > _SURE_ASKS_TOPIC and chance["attribute"] > _SURE
            elif reading != rules:
                acts += 1
                assert reading.asks and reading.asks_anything
                assert not (reading.which or reading.reason) or m.in_play.dates  # only about the customer's orders
    assert acts > 0 and topics > 0


HOODIE_ORDERS = InPlay(items=(ItemNames("P-1", "kinwear", "core 4", "hoodie"),), dates=("2025-09-10", "2025-09-11"))


@pytest.mark.parametrize(("text", "which", "confirm", "reason", "open_"), [
    # any question about an order's item reads as "which line?" to the rules; the model tells a go-ahead
    ("Happy to swap the hoodie for another one. Want me to?", False, True, False, False),
    # a guess at the fault the model is sure of reads as the reason, not which line
    ("Did the hoodie arrive with a tear?", False, False, True, False),
    ("Did the hoodie come with a rip in it?", False, False, True, False),
    # where it is less sure, no reason the rules do not read: the shopper withholds it
    # (not "Hoodie not measuring up to the photos?": the rules read a judgement of the item denied as the reason)
    ("Hoodie a letdown next to the photos?", True, False, False, False),
    # an open question about the replacement that names the item
    ("Is there anything else the replacement hoodie must have?", False, False, False, True),
    ("What else should the new hoodie have?", False, False, False, True),
    # and keeps the which-order questions, those that name the item and "else" too
    ("Which hoodie do you mean?", True, False, False, False),
    ("Is it the hoodie from September 10?", True, False, False, False),
    ("Which hoodie is it? And what's the trouble?", True, False, True, False),
    ("Did you order anything else with the hoodie?", True, False, False, False),
    ("Any other hoodie on that order?", True, False, False, False),
])
def test_the_model_weighs_a_which_order_reading(text: str, which: bool, confirm: bool, reason: bool,
                                                open_: bool) -> None:
    """Phrasings written for this test (in no training file): the rules read each as a which-order question."""
    reading = understand(text, HOODIE_ORDERS)
    assert (reading.which, reading.confirm, reading.reason, reading.open) == (which, confirm, reason, open_)
    assert rule_reading(text, HOODIE_ORDERS).which


@pytest.mark.parametrize(("which", "reason", "open_", "read"), [
    (0.1, 0.85, 0.9, "reason"), (0.1, 0.5, 0.75, "open"), (0.1, 0.5, 0.65, "which"), (0.2, 0.1, 0.95, "which")])
def test_the_which_order_thresholds(monkeypatch: pytest.MonkeyPatch, which: float, reason: float, open_: float,
                                    read: str) -> None:
    """Where the model is sure it is no which-order question (below 0.2): a fault guess above 0.8 reads as the
    reason, else an open question above 0.7 as open."""
    _model_reads(monkeypatch, 0.0, {"asks": 0.99, "which": which, "reason": reason, "open": open_})
    reading = understand("Anything more on the hoodie?", HOODIE_ORDERS)
    assert rule_reading("Anything more on the hoodie?", HOODIE_ORDERS).which
    assert {"which": reading.which, "reason": reading.reason, "open": reading.open} == {
        act: act == read for act in ("which", "reason", "open")}


@pytest.mark.parametrize(("text", "in_play", "topics"), [
    # a question about a requirement in a shape the rules take for no question: the rules read its topic
    ("Black or Slate Grey. Tell me which.", MUG, {"color"}),
    # beside a question that asks no topic, a value told is not asked; values offered are
    ("Black is noted as your colour. What ceiling should I keep to?", MUG, set()),
    ("Black it is for colour. How high can I go?", MUG, set()),
    ("Black, Slate Grey... what's calling to you?", MUG, {"color"}),  # (a message's "grey" is spelled "gray")
    # statements that name values stay statements
    ("Ceramic it is. Lovely choice!", MUG, set()),
    ("Black and Slate Grey are both in stock.", MUG, set()),
    ("Stainless Steel, Ceramic. Both ship tomorrow.", MUG, set()),
])
def test_the_model_has_the_rules_read_a_requirement_question_they_missed(text: str, in_play: InPlay,
                                                                          topics: set[str]) -> None:
    """Phrasings written for this test (in no training file); the rules alone read no ask in any of them."""
    assert not rule_reading(text, in_play).asks_anything
    assert understand(text, in_play).topics == topics


@pytest.mark.parametrize(("text", "open_"), [
    # a request in a shape the rules take for a statement, which the model is sure asks
    ("Be so good as to list any other requirements for the hoodie.", True),
    ("Let any other requirements be known to me.", True),
    # statements
    ("I'll check the other sizes now.", False),
    ("Your colour and size are on file now.", False),
])
def test_the_model_reads_an_act_in_a_statement_it_is_sure_asks(text: str, open_: bool) -> None:
    """Phrasings written for this test (in no training file); the rules read each as a statement."""
    assert not (rules := rule_reading(text, NOTHING_IN_PLAY)).asks and not rules.asks_anything
    reading = understand(text, NOTHING_IN_PLAY)
    assert (reading.open, reading.asks_anything) == (open_, open_)


@pytest.mark.parametrize(("asks", "open_", "read"), [(0.95, 0.75, True), (0.85, 0.95, True), (0.85, 0.8, False),
                                                     (0.95, 0.65, False)])
def test_the_statement_thresholds(monkeypatch: pytest.MonkeyPatch, asks: float, open_: float, read: bool) -> None:
    """In a statement the model reads an act above 0.9, or above 0.7 where it is sure the message asks (above 0.9)."""
    _model_reads(monkeypatch, 0.0, {"asks": asks, "open": open_})
    text = "Your other wishes will be heard."
    assert not rule_reading(text, NOTHING_IN_PLAY).asks
    assert understand(text, NOTHING_IN_PLAY).open is read


@pytest.mark.parametrize(("text", "asks", "confirm", "read"), [
    # a go-ahead in a statement: above 0.75 where the model is sure it asks (above 0.8) ...
    ("Grant me leave to place the order.", 0.85, 0.8, True),
    ("Grant me leave to place the order.", 0.85, 0.7, False),
    ("Grant me leave to place the order.", 0.75, 0.85, False),
    ("Grant me leave to place the order.", 0.75, 0.95, True),
    # ... or where it waits on the customer's word; not where it reports the word as given
    ("Ready to send the order at your word.", 0.65, 0.8, True),
    ("Ready to send the order at your word.", 0.65, 0.7, False),
    ("You gave the nod, so I place the order.", 0.85, 0.85, False),
])
def test_the_go_ahead_thresholds_of_a_statement(monkeypatch: pytest.MonkeyPatch, text: str, asks: float,
                                                confirm: float, read: bool) -> None:
    _model_reads(monkeypatch, 0.0, {"asks": asks, "confirm": confirm})
    assert not rule_reading(text, NOTHING_IN_PLAY).asks
    assert understand(text, NOTHING_IN_PLAY).confirm is read


@pytest.mark.parametrize(("text", "topics"), [
    # a statement that tells each topic's one value asks none of them, however sure the model is
    ("Noted so far: colour Black, material Ceramic, budget under 20 dollars.", set()),
    ("On the ticket: Slate Grey, Ceramic, $18 max.", set()),
    # near misses: the topics named without a value are asked
    ("Colour and material! Sound off!", {"color", "material"}),
    ("Budget and colour, recruit!", {"color", "price"}),
])
def test_a_statement_asks_no_topic_it_tells_a_value_of(monkeypatch: pytest.MonkeyPatch, text: str,
                                                       topics: set[str]) -> None:
    """Found when a retrained model read a held-out record of the customer's choices (a statement) as asking the three
    topics it told at asks 0.93, attribute 0.99; the shopper would have said their values again, or withheld ones.
    Phrasings written for this test."""
    _model_reads(monkeypatch, 0.0, {"asks": 0.97, "attribute": 0.99})
    # (the near misses, fields demanded in an exclamation, are read by the rules since rules23; the statements are not)
    assert rule_reading(text, MUG).asks is bool(topics)
    assert understand(text, MUG).topics == topics


@pytest.mark.parametrize(("text", "read"), [
    # the agent tells the step it takes now: no leave asked, however sure the model is
    ("I'll go ahead and process the return now.", False),
    ("Right, submitting your return now.", False),
    ("Everything is in. We'll proceed to checkout straight away.", False),
    # ... or tells that it has all its step needs (found when a retrained model read a training statement at 0.904)
    ("Great, that's all I need to place your order.", False),
    ("I've got everything I need to book the return now.", False),
    # near misses: the step waits on the customer's word, or the customer is told to give it
    ("I'll go ahead and process the return once you nod.", True),
    ("I'll send the order off if that's your wish.", True),
    ("I'll place it now, with your blessing.", True),
    ("That's all I need to place the order, once you say yes.", True),
])
def test_a_step_the_agent_tells_is_no_go_ahead(monkeypatch: pytest.MonkeyPatch, text: str, read: bool) -> None:
    """Found by the blind guard after corpora 36-38 (weighted to go-aheads without a question mark) were added:
    retrained, the model read a held-out statement of the agent's next step as asking the go-ahead (confirm 0.96).
    The model is not asked about a statement that only tells a step taken now (phrasings written for this test). (A
    near miss may be read by the rules themselves: since rules24 they read a step waiting on the customer's assent,
    "..., with your blessing.")"""
    _model_reads(monkeypatch, 0.0, {"asks": 0.95, "confirm": 0.97})
    assert read or not rule_reading(text, NOTHING_IN_PLAY).asks
    assert understand(text, NOTHING_IN_PLAY).confirm is read


@pytest.mark.parametrize(("confirm", "reason", "reads_reason"), [(0.67, 0.43, False), (0.5, 0.45, False),
                                                                 (0.5, 0.9, True), (0.1, 0.45, True)])
def test_beside_a_go_ahead_the_model_reads_a_reason_only_where_surer(monkeypatch: pytest.MonkeyPatch, confirm: float,
                                                                     reason: float, reads_reason: bool) -> None:
    """Found behind a leak of blind batch 25 (read after it was measured): "Want me to crack on with the return on
    them headphones, babe?" read as the go-ahead (0.67) and the reason (0.43), so the shopper said why. Beside a
    go-ahead it reads, the model reads a reason only where it is surer of the reason."""
    _model_reads(monkeypatch, 0.0, {"asks": 0.98, "confirm": confirm, "reason": reason})
    text = "Want me to crack on with the return on them boots?"
    assert not rule_reading(text, ORDERS).asks_anything
    assert understand(text, ORDERS).reason is reads_reason


def test_no_topic_is_read_for_the_model_about_the_customers_orders() -> None:
    """With orders in play a question is about an order line: the topic path stays shut."""
    orders_and_mug = InPlay(items=MUG.items, values=MUG.values, dates=ORDERS.dates)
    assert not understand("Black or Slate Grey. Tell me which.", orders_and_mug).topics


@pytest.mark.parametrize("name", BLIND_BATCHES)
def test_on_unseen_writers_the_model_adds_and_misreads_no_statement(name: str) -> None:
    """On each held-out batch (never trained on) the model reads no statement as asking, and the shopper with it
    understands at least what the rules alone did."""
    batch = load_bank(name)
    with_model = sum(m.understood(understand(m.text, m.in_play)) for m in batch)
    rules_alone = sum(m.understood(rule_reading(m.text, m.in_play)) for m in batch)
    assert with_model >= rules_alone
    misread = [m.id for m in batch if m.group == "none" and understand(m.text, m.in_play).asks_anything
               and not rule_reading(m.text, m.in_play).asks_anything]
    assert not misread, misread


@pytest.mark.slow
def test_the_shipped_weights_are_what_the_script_trains() -> None:
    """``scripts/train_intent_model.py`` on today's training messages gives the shipped weights (so they were
    trained on no held-out message, and a change to the messages or features without retraining fails here)."""
    messages = training_messages()
    assert not {m.half for m in messages} - {"train"}
    acts = intent_model.ACTS
    trained, shipped = intent_model.fit(acts, [(m.text, m.in_play, m.labels(acts)) for m in messages]), intent_model.shipped()
    assert trained.columns == shipped.columns == acts
    for name in ("hidden", "hidden_bias", "output", "output_bias"):
        assert np.allclose(getattr(trained, name), getattr(shipped, name), atol=1e-4), name


HEADPHONE_ORDERS = InPlay(items=(ItemNames("P-8", "brightix", "nova 21", "headphones"),),
                          dates=("2025-09-10", "2025-09-11"))


@pytest.mark.parametrize(("text", "which", "confirm", "reason"), [
    # the agent telling that it looks something up: its own step, no which-order question, however sure the model is
    ("I'll look up which order the headphones came from.", False, False, False),
    ("Let me check which of your orders had them.", False, False, False),
    # an ordered item named and nothing else is which line, not a go-ahead
    ("The Nova 21 ones?", True, False, False),
    ("That Brightix pair?", True, False, False),
    # how it came packed picks out a line, no fault guessed
    ("Did it come in a padded box?", True, False, False),
    ("Were the headphones shipped in a gift bag?", True, False, False),
    # near misses: a look-up asked of the customer, a name with a go-ahead of its own, a fault in how it came
    ("Look up which order had them and tell me, please.", True, False, False),
    ("The Nova 21 ones, shall I return them?", False, True, False),
    ("Did they come with a crack in the band?", False, False, True),
])
def test_a_retrained_model_reads_no_look_up_name_or_packing_as_an_act(monkeypatch: pytest.MonkeyPatch, text: str,
                                                                     which: bool, confirm: bool, reason: bool) -> None:
    """The model retrained with corpus 45-50 moved three training or test messages across its thresholds: "I'll look
    up which order that was." (a statement, which 0.916) read as which order, "The Brightix pair?" (confirm 0.44) as a
    go-ahead and "Did it come in a gift box?" (reason 0.83) as a fault guess. Here the model is made surer still of
    each act; phrasings written for this test."""
    sure = {"I'll": "which", "Let": "which", "Look": "which", "Did": "reason", "Were": "reason"}.get(text.split()[0], "confirm")
    _model_reads(monkeypatch, 0.01, {"asks": 0.97, sure: 0.95})
    reading = understand(text, HEADPHONE_ORDERS)
    assert (reading.which, reading.confirm, reading.reason) == (which, confirm, reason), reading


@pytest.mark.parametrize(("text", "in_play", "sure", "expected"), [
    # a go-ahead reported as given, denied, or a third party's word: the statement asks no leave
    ("You okayed it, so it's going through now.", MUG, "confirm", ()),
    ("You say ship it and I still can't.", MUG, "confirm", ()),
    ("The bank will approve and it goes out.", MUG, "confirm", ()),
    ("They'd nod and it ships.", MUG, "confirm", ()),
    # a question that asks only what to do is no go-ahead
    ("Where do I begin?", MUG, "confirm", ()),
    ("How should I start?", MUG, "confirm", ()),
    # the customer's readiness waited for, a need waived: no open question
    ("Give me a shout once you're set.", MUG, "open", ()),
    ("You don't need to tell me anything else.", MUG, "open", ()),
    # a report of the agent's picks or a fact passed on tells the values it names
    ("I've shortlisted Black and Slate Grey, both in stock.", MUG, "attribute", ()),
    ("I thought you'd like to know it comes in Black and Slate Grey.", MUG, "attribute", ()),
    ("Summary of your preferences so far: Black, stainless steel, under $20.", MUG, "attribute", ()),
    # ... and so does a statement that only offers options (the question may follow in the next sentence)
    ("There are a few options for the Terra 5: Black or Slate Grey.", MUG, "attribute", ()),
    # a line picked out by its date, by what came with it or in words stays which line
    ("Was the broken one from September 10?", HEADPHONE_ORDERS, "reason", ("which",)),
    ("Did they ship with the Brightix case?", HEADPHONE_ORDERS, "reason", ("which",)),
    ("Why we ask: it keeps returns fair.", HEADPHONE_ORDERS, "reason", ("which",)),
    ("No need to explain, just tell me which item it is.", HEADPHONE_ORDERS, "reason", ("which",)),
    # a bare noun phrase about the orders asks which line, named or not among the items in play
    ("The charger?", HEADPHONE_ORDERS, "reason", ("which",)),
    ("That pair?", HEADPHONE_ORDERS, "confirm", ("which",)),
    # an open question about an ordered item names it
    ("Could you tell me a bit more about it?", HEADPHONE_ORDERS, "open", ("which",)),
    # near misses: a statement that waits on the customer's word, values offered, a fault guessed, the item named
    ("Terra 5 in Black. We're good to go, yes", MUG, "confirm", ("confirm",)),
    ("Black and Slate Grey, both in stock. Up to you.", MUG, "attribute", ("color",)),
    ("Options for the Terra 5: Black or Slate Grey, whichever suits you.", MUG, "attribute", ("color",)),
    ("Did it come with a crack in the band?", HEADPHONE_ORDERS, "reason", ("reason",)),
    ("Anything else the new Nova 21 should have?", HEADPHONE_ORDERS, "open", ("open",)),
])
def test_the_words_overrule_a_sharp_model(monkeypatch: pytest.MonkeyPatch, text: str, in_play: InPlay, sure: str,
                                          expected: tuple[str, ...]) -> None:
    """The hidden-layer model is sharper than the logistic regression before it: it read near misses of the rules'
    tests as acts at 0.6-0.98 ("Where should I start?" a go-ahead, "They'll say yes and it ships." one, "I thought
    you might like to know that the sheets come in Queen and King, in cotton or linen." as asking both topics,
    "Did it come with the headphones?" a fault guess, "There are a few options for the bottle: Orange, Teal or Black."
    as asking the colour, so the cart's next sentence, "Which one should I add?", was read alone). Where the words tell
    what the message is, they decide, however sure the model is; phrasings written for this test."""
    _model_reads(monkeypatch, 0.01, {"asks": 0.97, sure: 0.95})
    reading = understand(text, in_play)
    read = ((*sorted(reading.topics),) + tuple(act for act in ("open", "confirm", "which", "reason")
                                               if getattr(reading, act)))
    assert read == expected, reading


@pytest.mark.parametrize(("open_", "read"), [(0.52, False), (0.6, True)])
def test_an_open_question_needs_a_surer_model(monkeypatch: pytest.MonkeyPatch, open_: float, read: bool) -> None:
    """An open reading makes the shopper say every withheld value: in a question the rules read no act in, the model
    must be surer of it than of another act (the hidden-layer model read "Could there be a more restful combination?"
    after two values told at 0.52)."""
    _model_reads(monkeypatch, 0.01, {"asks": 0.9, "open": open_})
    assert understand("Queen, in White. Could there be a more restful combination? I have noted both.").open is read
