"""CART end to end: oracle solvability, exploit resistance, the shopper's behaviour, the specified CART targets."""

from __future__ import annotations

import json
import math
import random
import re

import pytest
from exploits import EXPLOITS, Transcript, oracle_runs, play

from ecomrlve.actions import AgentAction, ToolCall
from ecomrlve.envs.cart.heuristic import CartHeuristic
from ecomrlve.envs.cart.phrasings import ATTRIBUTE_WORDS
from ecomrlve.episode import EcomEnv
from ecomrlve.protocol import expand_result, tool_results

ALL_D = list(range(16))
ORACLE_SEEDS = range(200)
EXPLOIT_D = [0, 3, 6, 9, 12, 15]
EXPLOIT_SEEDS = range(40)
TABLE_EPISODES = 1000


def _sigmoid(x: float) -> float:
    return 1 / (1 + math.exp(-x))


def p_missing(d: int) -> float:
    return 0.8 * _sigmoid((d - 3) / 1.5)


# -- cached sweeps (each is paid once per process, shared by several tests) -------------------------

_EXPLOIT_RUNS: dict[str, list[tuple[int, int, Transcript]]] = {}
_GOALS: dict[int, list] = {}


def exploit_runs(make_env, name: str) -> list[tuple[int, int, Transcript]]:
    if name not in _EXPLOIT_RUNS:
        env = make_env()
        factory = EXPLOITS[name]
        _EXPLOIT_RUNS[name] = [
            (d, seed, play(env, lambda e, s=seed: factory(e, s), difficulty=d, seed=seed))
            for d in EXPLOIT_D for seed in EXPLOIT_SEEDS
        ]
    return _EXPLOIT_RUNS[name]


def generated_goals(make_env, d: int) -> list:
    if d not in _GOALS:
        env = make_env()
        goals = []
        for seed in range(TABLE_EPISODES):
            env.reset(env_id="CART", difficulty=d, seed=seed)
            goals.append(env.audit().problem.goal)
        _GOALS[d] = goals
    return _GOALS[d]


def find_episode(env: EcomEnv, d: int, predicate, limit: int = 500):
    """Reset ``env`` at the first seed whose goal satisfies ``predicate``; returns (obs, goal)."""
    for seed in range(limit):
        observation = env.reset(env_id="CART", difficulty=d, seed=seed)
        if predicate(env.audit().problem.goal):
            return observation, env.audit().problem.goal
    raise AssertionError(f"no seed < {limit} at d={d} has the wanted goal")


def user_reply(observation) -> str:
    parts = [m["content"] for m in observation.messages if m["role"] == "user"]
    parts += [r["user_reply"] for name, r in tool_results(observation) if name == "ask_user"]
    return " ".join(parts)


def say(text: str) -> AgentAction:
    return AgentAction(message=text)


def call(name: str, **arguments) -> AgentAction:
    return AgentAction(tool_calls=(ToolCall(id="t0", name=name, arguments=arguments),))


def tool_result(observation, index: int = 0) -> dict:
    tools = [m for m in observation.messages if m["role"] == "tool"]
    return expand_result(json.loads(tools[index]["content"]))


# -- exploits --------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", list(EXPLOITS), ids=list(EXPLOITS))
def test_exploit_policies_earn_nothing(make_env, name: str) -> None:
    """Every exploit policy averages r_total <= 0.1 over 40 seeds x d in {0,3,...,15}, and never is_correct."""
    runs = exploit_runs(make_env, name)
    assert len(runs) == len(EXPLOIT_D) * len(EXPLOIT_SEEDS)
    totals = [t.reward["r_total"] for _, _, t in runs]
    mean = sum(totals) / len(totals)
    assert mean <= 0.1, f"{name}: mean r_total {mean:.3f}"
    for d in EXPLOIT_D:
        per_d = [t.reward["r_total"] for dd, _, t in runs if dd == d]
        assert sum(per_d) / len(per_d) <= 0.1, f"{name} d={d}: mean r_total {sum(per_d) / len(per_d):.3f}"
    lucky = [(d, s) for d, s, t in runs if t.reward["is_correct"]]
    # add_everything may stumble on the one target at low d; the id exploits never may
    if name != "add_everything":
        assert not lucky, f"{name} was judged correct on (d, seed) {lucky[:5]}"


@pytest.mark.parametrize("name", ["random_ids", "guessed_ids", "lookup_unseen"])
def test_id_exploits_are_hallucinations(make_env, name: str) -> None:
    """Ids never surfaced by a discovery tool (invented, guessed, or looked up directly by id) give r_hall = -1.

    Looking an id up directly (catalog_get_product(id)) does not surface it, or a guessed id could be
    laundered through a lookup.
    """
    for d, seed, transcript in exploit_runs(make_env, name):
        reward = transcript.reward
        assert reward["r_hall"] == -1.0, f"{name} d={d} seed={seed}: r_hall {reward['r_hall']}"
        assert reward["hallucinated_ids"], f"{name} d={d} seed={seed}"


@pytest.mark.parametrize("name", ["never_answer", "ask_forever"])
def test_stalling_exploits_end_unanswered(make_env, name: str) -> None:
    """Policies that never answer end by turn budget or the user giving up, with r_task = -1."""
    for d, seed, transcript in exploit_runs(make_env, name):
        reward = transcript.reward
        assert reward["termination"] in ("turn_budget", "user_gave_up"), (d, seed, reward["termination"])
        assert reward["r_task"] == -1.0, (d, seed)
        assert not reward["is_correct"]


# -- the hidden goal stays hidden --------------------------------------------------------------------

class _Browser:
    """Talks without asking anything and searches, never touching the cart: nothing should be revealed."""

    def __init__(self) -> None:
        self.turn = 0

    def act(self, observation):
        self.turn += 1
        if self.turn == 1:
            opening = observation.messages[-1]["content"]
            return AgentAction(message="Sure, let me look into that.",
                               tool_calls=(ToolCall(id="s", name="catalog_search", arguments={"query": opening}),))
        return say("Working on it.")


def _word(value: str) -> re.Pattern:
    return re.compile(r"(?<![A-Za-z0-9])" + re.escape(value) + r"(?![A-Za-z0-9])")


def _quantity_patterns(q: int) -> list[re.Pattern]:
    return [re.compile(p) for p in (rf"\b{q} of ", rf"\b{q}x ", rf"\(x{q}\)", rf"\b{q} units of ")]


@pytest.mark.parametrize("d", [3, 6, 9, 12, 15], ids=lambda d: f"d{d}")
def test_withheld_values_never_leak(make_env, d: int) -> None:
    """A withheld variant value or quantity never appears in anything the user says unless asked."""
    env = make_env()
    checked = stated = 0
    for seed in range(60):
        transcript = play(env, lambda e: _Browser(), difficulty=d, seed=seed)
        goal = env.audit().problem.goal
        assert set(transcript.observations[0].model_dump()) == {"messages", "tools", "done", "reward", "info"}
        texts = transcript.user_messages()
        phrases = " ".join(p for it in goal.items for p in (it.phrase, it.full_phrase))
        withheld = set(map(tuple, goal.withheld))
        for i, item in enumerate(goal.items):
            stated_elsewhere = [other for j, other in enumerate(goal.items) if j != i]
            if item.variant_value is not None and (i, "variant") not in withheld:
                # positive control: the matcher finds stated values (exactness is tested separately)
                stated += bool(_word(item.variant_value).search(texts[0]))
            if (i, "variant") in withheld:
                assert not any(item.variant_id in text for text in texts), (d, seed)
                value = item.variant_value
                if _word(value).search(phrases) or any(o.variant_value == value for o in stated_elsewhere):
                    continue
                checked += 1
                for text in texts:
                    assert not _word(value).search(text), f"d={d} seed={seed}: withheld {value!r} leaked in {text!r}"
            if (i, "quantity") in withheld:
                if any(o.quantity == item.quantity for o in stated_elsewhere):
                    continue
                checked += 1
                for text in texts:
                    for pattern in _quantity_patterns(item.quantity):
                        assert not pattern.search(text), f"d={d} seed={seed}: withheld quantity leaked in {text!r}"
    assert checked >= 20, f"only {checked} withheld constraints were checkable at d={d}"
    assert stated >= 1


@pytest.mark.parametrize("d", [6, 12], ids=lambda d: f"d{d}")
def test_a_withheld_quantity_says_more_than_one_without_the_count(make_env, d: int) -> None:
    """Found by hand play (audit 19): a withheld quantity above 1 was said "the Pixeltek Flex 7 headlamp", which in
    plain English is one, so an honest agent added one and failed. Such an item is said as more than one without
    the count ("several units of the X", "the X (more than one)"), through noise; an item wanted once or with its
    count said is not."""
    env = make_env()
    several = 0
    for seed in range(80):
        opening = env.reset(env_id="CART", difficulty=d, seed=seed).messages[-1]["content"]
        goal = env.audit().problem.goal
        for i, item in enumerate(goal.items):
            withheld_count = item.quantity > 1 and (i, "quantity") in set(map(tuple, goal.withheld))
            said = any(form.format(p=item.phrase) in opening for form in (
                "several units of {p}", "a few units of {p}", "{p} (more than one)", "{p} (several of them)"))
            assert said == withheld_count, (seed, item.phrase, item.quantity, opening)
            several += withheld_count
    assert several >= 5


@pytest.mark.parametrize("d", [3, 6, 9, 12, 15], ids=lambda d: f"d{d}")
def test_stated_values_survive_noise(make_env, d: int) -> None:
    """Every variant value and quantity stated in the opening appears verbatim, despite typo noise."""
    env = make_env()
    problems = []
    for seed in range(150):
        obs = env.reset(env_id="CART", difficulty=d, seed=seed)
        opening = obs.messages[-1]["content"]
        goal = env.audit().problem.goal
        withheld = set(map(tuple, goal.withheld))
        for i, item in enumerate(goal.items):
            if item.variant_value is not None and (i, "variant") not in withheld:
                if not _word(item.variant_value).search(opening):
                    problems.append((seed, item.variant_value, opening))
            if item.quantity > 1 and (i, "quantity") not in withheld:
                if not re.search(rf"(?<![0-9]){item.quantity}(?![0-9])", opening):
                    problems.append((seed, item.quantity, opening))
    assert not problems, f"d={d}: {len(problems)} stated values were altered, e.g. {problems[:3]}"


@pytest.mark.parametrize("values", [("Blue", "Bluetooth"), ("Bluetooth", "Blue"), ("S", "XS"), ("USB-C", "USB-A")],
                         ids=["prefix", "prefix_reversed", "suffix", "disjoint"])
def test_noise_never_alters_protected_values(values) -> None:
    """add_noise leaves every protected value intact, also when one value is a prefix/suffix of another."""
    from ecomrlve.user.noise import add_noise

    text = f"I want the leash in {values[0]} and the keyboard in {values[1]}, please, thanks a lot"
    for seed in range(200):
        out = add_noise(text, 0.125, random.Random(seed), values)
        for value in values:
            assert _word(value).search(out), f"seed {seed}: {value!r} altered in {out!r}"


def test_goal_variant_id_absent_from_user_text(make_env) -> None:
    """No user message (opening included) ever contains a variant id: the shopper names values, not ids."""
    pattern = re.compile(r"\bV[0-9A-Z]{7}\b")
    runs = [t for d in (6, 12, 15) for t in oracle_runs(make_env(), "CART", d, ORACLE_SEEDS)]
    for transcript in runs:
        for text in transcript.user_messages():
            assert not pattern.search(text), text


@pytest.mark.slow
def test_no_unfilled_template_slots(make_env) -> None:
    """Opening and every user message over >= 2,000 oracle and exploit episodes have no {, }, None or nan."""
    transcripts = [t for d in ALL_D for t in oracle_runs(make_env(), "CART", d, ORACLE_SEEDS)]
    transcripts += [t for name in EXPLOITS for _, _, t in exploit_runs(make_env, name)]
    assert len(transcripts) >= 2000
    bad = re.compile(r"[{}]|\bNone\b|\bnan\b|\bNaN\b")
    n_messages = 0
    for transcript in transcripts:
        texts = transcript.user_messages()
        assert texts and texts[0].strip()
        for text in texts:
            n_messages += 1
            assert text.strip(), "empty user message"
            assert not bad.search(text), f"unfilled slot in user message {text!r}"
    assert n_messages > len(transcripts)


# -- business errors keep the episode going ------------------------------------------------------------

def test_business_errors_continue_episode(env, catalog) -> None:
    """Unknown product, out-of-stock product and unknown cart line return error results; the episode goes on."""
    env.reset(env_id="CART", difficulty=6, seed=3)
    obs = env.step(call("cart_add", product_id="P00000000", quantity=1))
    assert not obs.done
    result = tool_result(obs)
    assert result["error"] == "unknown_product" and result["message"]

    row = next(r for r in range(len(catalog)) if catalog.stock[r] == 0
               and catalog.product_id(r) not in {it.product_id for it in env.audit().problem.goal.items})
    product_id = catalog.product_id(row)
    obs = env.step(call("catalog_get_product", product_id=product_id))
    variants = tool_result(obs).get("variants", [])
    arguments = {"product_id": product_id, "quantity": 1}
    if variants:
        arguments["variant_id"] = variants[0]["variant_id"]
    obs = env.step(call("cart_add", **arguments))
    assert not obs.done
    assert tool_result(obs)["error"] == "out_of_stock"

    obs = env.step(call("cart_set_quantity", line_id="LNOLINE", quantity=0))
    assert not obs.done
    assert tool_result(obs)["error"] == "unknown_line"
    obs = env.step(call("cart_set_quantity", line_id="LNOLINE", quantity=2))
    assert not obs.done
    assert tool_result(obs)["error"] == "unknown_line"
    obs = env.step(call("user_get_visit_history"))
    assert env.session.public_state().cart["lines"] == []
    assert not obs.done and obs.info["turn"] == 6


def _added(env, d: int = 0, seed: int = 0, quantity: int = 2) -> tuple[dict, dict]:
    """A CART episode with one product in the cart: (its card, the cart_add result)."""
    obs = env.reset(env_id="CART", difficulty=d, seed=seed)
    item = env.audit().problem.goal.items[0]
    obs = env.step(call("catalog_search", query=item.full_phrase[4:], filters={"brand": item.brand, "category": item.category}))
    card = next(c for c in tool_result(obs)["results"] if c["product_id"] == item.product_id)
    arguments = {"product_id": card["product_id"], "quantity": quantity}
    if card.get("variants"):
        arguments["variant_id"] = card["variants"][0]["variant_id"]
    return card, tool_result(env.step(call("cart_add", **arguments)))


def test_cart_tools_merged_and_every_one_returns_the_whole_cart(env) -> None:
    """CART offers no cart_remove (cart_set_quantity 0 removes a line) and no cart_view: cart_add and
    cart_set_quantity each return every line of the cart, as their descriptions say."""
    observation = env.reset(env_id="CART", difficulty=0, seed=0)
    tools = {t["function"]["name"]: t["function"] for t in observation.tools or []}
    assert "cart_remove" not in tools and "cart_view" not in tools
    for name in ("cart_add", "cart_set_quantity"):
        assert "returns the whole cart" in tools[name]["description"]
    assert "0 removes the line" in tools["cart_set_quantity"]["description"]
    card, added = _added(env)
    [line] = added["lines"]
    assert (line["product_id"], line["quantity"]) == (card["product_id"], 2)
    assert set(added) == {"lines"} and "status" not in added  # no echo, no prices on CART (its cards show none)


def test_cart_set_quantity_zero_removes_the_line(env) -> None:
    card, added = _added(env, seed=1, quantity=1)
    [line] = added["lines"]
    obs = env.step(call("cart_set_quantity", line_id=line["line_id"], quantity=card["stock"]))
    assert [entry["quantity"] for entry in tool_result(obs)["lines"]] == [card["stock"]]
    obs = env.step(call("cart_set_quantity", line_id=line["line_id"], quantity=0))
    assert tool_result(obs)["lines"] == [] and env.session.public_state().cart["lines"] == []
    obs = env.step(call("cart_set_quantity", line_id=line["line_id"], quantity=0))
    assert tool_result(obs)["error"] == "unknown_line" and not obs.done  # removed: the line is gone


def test_a_cart_line_names_its_product_and_variant_without_repeating_the_card(env) -> None:
    """A line holds the product id, quantity and the variant's id and value side by side (no nested object);
    its title is on the card already; the session's state (for people watching) keeps titles and prices."""
    for seed in range(40):
        card, added = _added(env, seed=seed, quantity=1)
        if card.get("variants"):
            break
    [line] = added["lines"]
    variant = card["variants"][0]
    assert line == {"line_id": line["line_id"], "product_id": card["product_id"], "quantity": 1, **variant}
    [watched] = env.session.public_state().cart["lines"]
    assert watched["title"].startswith(card["title"]) and watched["unit_price"] > 0


def test_the_removed_cart_tools_are_unknown_and_end_the_episode(env) -> None:
    for name in ("cart_remove", "cart_view"):
        env.reset(env_id="CART", difficulty=0, seed=0)
        obs = env.step(call(name, **({"line_id": "L000000"} if name == "cart_remove" else {})))
        assert obs.done and obs.reward == -1.0 and obs.info["termination"] == "invalid_output", name


# -- the simulated shopper ---------------------------------------------------------------------------------

def _withheld_variant(goal) -> int | None:
    return next((i for i, kind in goal.withheld if kind == "variant"), None)


def _question(item) -> str:
    return f"Which {ATTRIBUTE_WORDS[item.variant_attribute]} do you need for {item.full_phrase}?"


@pytest.mark.parametrize("channel", ["message", "ask_user"])
def test_withheld_variant_revealed_once_as_user_caused(make_env, channel: str) -> None:
    """Asking about a withheld variant reveals it and is user-caused once; asking again is not free."""
    env = make_env(overrides={"p_noise": 0.0, "p_oos": 0.0})
    _, goal = find_episode(env, 6, lambda g: _withheld_variant(g) is not None)
    item = goal.items[_withheld_variant(goal)]
    ask = say(_question(item)) if channel == "message" else call("ask_user", question=_question(item))
    obs = env.step(ask)
    reply = user_reply(obs)
    assert item.variant_value in reply
    assert obs.info["user_caused_turns"] == 1 and obs.info["turn"] == 1
    obs = env.step(ask)
    reply = user_reply(obs)
    assert item.variant_value in reply
    assert "already told" in reply or "As I said" in reply, reply
    assert obs.info["user_caused_turns"] == 1 and obs.info["turn"] == 2


def test_each_question_of_a_message_is_read_about_its_own_item(make_env) -> None:
    """Found by playing as an assistant: "The <first item> in which colour? And what size is <second item>?"
    asked only about the first item, its strong name taking every topic of the message. Each question now
    names its own item, so both withheld values are said, each once."""
    env = make_env(overrides={"p_noise": 0.0, "p_oos": 0.0})
    _, goal = find_episode(env, 9, lambda g: len({i for i, kind in g.withheld if kind == "variant"}) >= 2)
    first, second = (goal.items[i] for i in sorted({i for i, kind in goal.withheld if kind == "variant"})[:2])
    obs = env.step(say(f"I found {first.full_phrase}. {_question(first)} "
                       f"And what {ATTRIBUTE_WORDS[second.variant_attribute]} should the {second.noun} be?"))
    reply = user_reply(obs)
    assert first.variant_value in reply and second.variant_value in reply, reply
    assert obs.info["user_caused_turns"] == 1


def _same_attribute_pair(goal) -> tuple | None:
    """Two items with withheld variants of one attribute (the first, the second), if the goal has them."""
    withheld = [goal.items[i] for i in sorted({i for i, kind in goal.withheld if kind == "variant"})]
    return next(((a, b) for a in withheld for b in withheld if a is not b and a.variant_attribute == b.variant_attribute),
                None)


def _counted_and_told(goal) -> tuple | None:
    """An item whose quantity is withheld, and another whose variant is withheld and whose quantity was told."""
    counted = [goal.items[i] for i, kind in goal.withheld if kind == "quantity"]
    told = [goal.items[i] for i, kind in goal.withheld if kind == "variant" and (i, "quantity") not in goal.withheld]
    return next(((a, b) for a in counted for b in told if a is not b), None)


def _options(env, item) -> str:
    values = [v.value for v in env.audit().world.variants(item.row)]
    return ", ".join(values[:-1]) + " or " + values[-1]


def test_a_question_goes_on_with_the_topic_or_items_of_the_one_before(make_env) -> None:
    """Found by hand play (audit 19): "Which colour for the A? And for the B?" answered only the A (the second
    question names no topic), and "Colour for the A? Black, Red or Orange. Colour for the B? ..." said each value
    twice ("I already told you" of a value said for the first time). A question naming items and no topic asks the
    topic of the one before; one naming no item, with that one's topics, asks about its items; each item's value is
    said once. Near misses: "And for the B?" alone asks nothing, and a question naming no item after one about another
    topic still asks every item."""
    env = make_env(overrides={"p_noise": 0.0, "p_oos": 0.0})
    _, goal = find_episode(env, 12, lambda g: _same_attribute_pair(g) is not None)
    first, second = _same_attribute_pair(goal)
    word = ATTRIBUTE_WORDS[first.variant_attribute]
    reply = user_reply(env.step(say(f"Which {word} for {first.full_phrase}? And for {second.full_phrase}?")))
    assert first.variant_value in reply and second.variant_value in reply, reply
    seed = env.audit().seed
    env.reset(env_id="CART", difficulty=12, seed=seed)
    reply = user_reply(env.step(say(f"{word.capitalize()} for {first.full_phrase}? {_options(env, first)}. "
                                    f"{word.capitalize()} for {second.full_phrase}? {_options(env, second)}.")))
    assert first.variant_value in reply and second.variant_value in reply, reply
    assert reply.count(first.phrase) == reply.count(second.phrase) == 1, reply
    assert "already" not in reply and "As I said" not in reply, reply
    env.reset(env_id="CART", difficulty=12, seed=seed)
    reply = user_reply(env.step(say(f"And for {second.full_phrase}?")))
    assert second.variant_value not in reply, reply
    env.reset(env_id="CART", difficulty=12, seed=seed)
    reply = user_reply(env.step(say(f"How many of {first.full_phrase} would you like? Which {word} do you want?")))
    assert first.variant_value in reply and second.variant_value in reply, reply


def test_one_sentence_about_two_items_answers_each(make_env) -> None:
    """Found by hand play (audit 19, finding 3): "Which colour for the <notebook> (Black, Purple or Orange), and which
    colour for the Brightwave Pulse 15 desk lamp (White, Silver or Navy)?" answered the notebook only: the lamp, named
    by brand and type beside the notebook's model words, was not read as named. And "How many of the A, and which
    colour for the B?" asked each topic of both items, saying "I already told you" of a quantity never asked."""
    env = make_env(overrides={"p_noise": 0.0, "p_oos": 0.0})
    _, goal = find_episode(env, 12, lambda g: _same_attribute_pair(g) is not None)
    first, second = _same_attribute_pair(goal)
    word = ATTRIBUTE_WORDS[first.variant_attribute]
    obs = env.step(say(f"Which {word} for {first.full_phrase} ({_options(env, first)}), and which {word} for the "
                       f"{second.brand} {second.noun} ({_options(env, second)})?"))
    reply = user_reply(obs)
    assert first.variant_value in reply and second.variant_value in reply, reply

    _, goal = find_episode(env, 12, lambda g: _counted_and_told(g) is not None)
    counted, told = _counted_and_told(goal)
    obs = env.step(say(f"How many of {counted.full_phrase} would you like, and which "
                       f"{ATTRIBUTE_WORDS[told.variant_attribute]} for {told.full_phrase}?"))
    reply = user_reply(obs)
    assert told.variant_value in reply and str(counted.quantity) in reply, reply
    assert "already" not in reply.lower() and "as i said" not in reply.lower(), reply


def test_options_offered_then_which_one_should_i_add_asks_the_option_beside_other_questions(make_env) -> None:
    """Found in a blind paraphrase set (JOURNEY d12): "Just one A, or do you need more? There are a few options for
    the B: X, Y or Z. Which one should I add?" read "Which one should I add?" alone, as leave to add, and the shopper
    listed every missing item instead of choosing. The question goes with the options before it; near miss: a plain
    "Shall I add them?" after the list still asks leave."""
    env = make_env(overrides={"p_noise": 0.0, "p_oos": 0.0})

    _, goal = find_episode(env, 12, lambda g: _counted_and_told(g) is not None)
    counted, told = _counted_and_told(goal)
    options = f"There are a few options for {told.full_phrase}: {_options(env, told)}."
    reply = user_reply(env.step(say(f"Just one {counted.full_phrase[4:]}, or do you need more? {options} "
                                    "Which one should I add?")))
    assert told.variant_value in reply and "missing" not in reply, reply
    env.reset(env_id="CART", difficulty=12, seed=env.audit().seed)
    reply = user_reply(env.step(say(f"{options} Shall I add them all?")))
    assert "missing" in reply, reply
    env.reset(env_id="CART", difficulty=12, seed=env.audit().seed)
    reply = user_reply(env.step(say("All set on my end. Would you mind confirming the cart is accurate?")))
    assert "missing" in reply, reply  # a go-ahead in two sentences, none of them options, is still asked


def test_values_offered_in_one_sentence_are_asked_of_in_the_next(make_env) -> None:
    """Found by hand play (audit 19): "The A comes in Black, Red or Orange. Which would you like?" got "Sorry, I'm not
    sure what you mean": read sentence by sentence, the first tells and the second names no topic. The message's own
    reading (the offered values' topic, the named item) is the question then. Near miss: the offer alone asks nothing."""
    env = make_env(overrides={"p_noise": 0.0, "p_oos": 0.0})
    _, goal = find_episode(env, 9, lambda g: _same_attribute_pair(g) is not None)
    first, second = _same_attribute_pair(goal)
    obs = env.step(say(f"The {first.full_phrase.removeprefix('the ')} comes in {_options(env, first)}. "
                       "Which would you like?"))
    reply = user_reply(obs)
    assert first.variant_value in reply and second.phrase not in reply, reply
    assert obs.info["user_caused_turns"] == 1
    env.reset(env_id="CART", difficulty=9, seed=env.audit().seed)
    reply = user_reply(env.step(say(f"The {first.full_phrase.removeprefix('the ')} comes in {_options(env, first)}.")))
    assert first.variant_value not in reply, reply


def test_a_question_before_the_options_it_offers_asks_among_them_for_each_item(make_env) -> None:
    """Found in blind paraphrase set 22 (JOURNEY d15): "What would you like for the A? We have X, Y or Z. What would
    you like for the B? We have ..." got "Sorry, I'm not sure what you mean": each question read alone asks openly, and
    the options after it were read as a statement. Each question goes with the options it offers after it: each item's
    own value, no repeat. Near miss: the question alone, with no options offered, gives no value."""
    env = make_env(overrides={"p_noise": 0.0, "p_oos": 0.0})
    _, goal = find_episode(env, 12, lambda g: _same_attribute_pair(g) is not None)
    first, second = _same_attribute_pair(goal)
    # (after a question that reads a topic on its own, each sentence is read apart)
    reply = user_reply(env.step(say(f"How many of {first.full_phrase} would you like? "
                                    f"What would you like for {first.full_phrase}? We have {_options(env, first)}. "
                                    f"What would you like for {second.full_phrase}? We have {_options(env, second)}.")))
    assert first.variant_value in reply and second.variant_value in reply, reply
    assert "already" not in reply and "As I said" not in reply and "not sure" not in reply, reply
    env.reset(env_id="CART", difficulty=12, seed=env.audit().seed)
    reply = user_reply(env.step(say(f"What would you like for {first.full_phrase}? We have {_options(env, first)}.")))
    assert first.variant_value in reply and second.phrase not in reply, reply


def test_how_much_after_the_budget_asks_the_money_not_a_count(make_env) -> None:
    """Found by the leak check (a training message): "Budget, please. How much?" reads as the budget, but read
    sentence by sentence its bare "How much?" asked every withheld quantity. Where the whole message asks the money
    and no count, no sentence of it asks a count. Near misses: a count asked in so many words beside the budget, and a
    bare "How much?" alone, still get the quantity."""
    env = make_env(overrides={"p_noise": 0.0, "p_oos": 0.0})
    _, goal = find_episode(env, 12, lambda g: _counted_and_told(g) is not None)
    counted, _ = _counted_and_told(goal)
    seed = env.audit().seed
    for message in ("Budget, please. How much?", "What's your budget? How much?", "Budget? How much, roughly?"):
        env.reset(env_id="CART", difficulty=12, seed=seed)
        obs = env.step(say(message))
        assert str(counted.quantity) not in user_reply(obs), (message, user_reply(obs))
        assert obs.info["user_caused_turns"] == 0, message
    for message in (f"What's your budget? And how many of {counted.full_phrase}?", "How much?"):
        env.reset(env_id="CART", difficulty=12, seed=seed)
        reply = user_reply(env.step(say(message)))
        assert counted.phrase in reply and str(counted.quantity) in reply, (message, reply)


def test_a_stock_out_notice_replaces_only_the_items_it_names(make_env) -> None:
    """Found by hand play: "Which colour for the A? ... Also, the B is out of stock." made the shopper replace A as well
    (both were planned stock-outs), though nobody had said A was sold out: every sold-out item the message named
    anywhere was read as told. Only the stock-out sentences' items are. Near miss: a notice naming both replaces both."""
    env = make_env(overrides={"p_noise": 0.0})

    def sold_out_pair(goal) -> bool:
        return sum(bool(it.stock_out and it.alternative) for it in goal.items) >= 2

    _, goal = find_episode(env, 12, sold_out_pair)
    first, second = [it for it in goal.items if it.stock_out and it.alternative][:2]
    reply = user_reply(env.step(say(f"How many of {first.full_phrase} would you like? Also, sorry, "
                                    f"{second.full_phrase} is out of stock.")))
    assert second.alternative.full_phrase in reply and first.alternative.full_phrase not in reply, reply
    env.reset(env_id="CART", difficulty=12, seed=env.audit().seed)
    reply = user_reply(env.step(say(f"Sorry, {first.full_phrase} and {second.full_phrase} are out of stock.")))
    assert first.alternative.full_phrase in reply and second.alternative.full_phrase in reply, reply


def test_a_value_list_after_a_question_answers_only_its_item_and_is_no_repeat(make_env) -> None:
    """Found by hand play (audit 19): "Material for the knife set? Stainless Steel, Ceramic or Wood." got "Ceramic
    please. I already told you, ... Ceramic" and the blender's material too (Stainless Steel is a blender value):
    the list was read as a question about every item with a material. It goes on with the knife set's question now.
    Near miss: a question naming no item on its own still asks every item with that attribute."""
    env = make_env(overrides={"p_noise": 0.0, "p_oos": 0.0})
    _, goal = find_episode(env, 9, lambda g: _same_attribute_pair(g) is not None)
    first, second = _same_attribute_pair(goal)
    word = ATTRIBUTE_WORDS[first.variant_attribute]
    obs = env.step(say(f"{word.capitalize()} for {first.full_phrase}? {_options(env, first)}."))
    reply = user_reply(obs)
    assert reply.count(first.variant_value) == 1 and second.phrase not in reply, reply
    assert "already" not in reply and "As I said" not in reply, reply
    assert obs.info["user_caused_turns"] == 1
    env.reset(env_id="CART", difficulty=9, seed=env.audit().seed)
    reply = user_reply(env.step(say(f"Which {word} would you like?")))
    assert first.variant_value in reply and second.variant_value in reply, reply


def test_a_stock_out_s_alternative_was_never_told_its_variant(make_env) -> None:
    """Found by hand play (audit 19): asked the variant of the alternative that replaced a sold-out item, the
    shopper said "I already told you, the <alternative> in Medium", though Medium had been said only of the sold-out
    product. "Already told" is said only of a value said of that same item before: the first answer is new (and costs
    no patience); asked again, it is a repeat."""
    env = make_env(overrides={"p_noise": 0.0})

    def stated_variant_out(goal) -> bool:
        withheld = set(map(tuple, goal.withheld))
        return any(it.stock_out and it.alternative and it.variant_value and (i, "variant") not in withheld
                   for i, it in enumerate(goal.items))

    _, goal = find_episode(env, 10, stated_variant_out)
    withheld = set(map(tuple, goal.withheld))
    item = next(it for i, it in enumerate(goal.items)
                if it.stock_out and it.alternative and it.variant_value and (i, "variant") not in withheld)
    alternative = item.alternative
    env.step(call("catalog_get_product", product_id=item.product_id))
    assert alternative.full_phrase in user_reply(env.step(say(f"Sorry, {item.full_phrase} is out of stock.")))
    user = env.audit().problem.user
    patience = user.patience
    question = say(f"Which {ATTRIBUTE_WORDS[alternative.variant_attribute]} for {alternative.full_phrase}?")
    reply = user_reply(env.step(question))
    assert alternative.variant_value in reply and "already" not in reply and "As I said" not in reply, reply
    assert user.patience == patience
    reply = user_reply(env.step(question))
    assert alternative.variant_value in reply and ("already told" in reply or "As I said" in reply), reply
    assert user.patience == patience - 1


def test_a_question_about_every_item_annoys_only_when_it_brings_nothing_new(make_env) -> None:
    """Found by hand play as an LLM-style agent: "Any preference on colour or size where there's a choice?" (no item
    named) got the withheld values and "I already told you, the puzzle in Orange", and cost patience for the puzzle an
    honest agent never singled out. A question about every item annoys only when all it gets is repeats; near misses:
    the same question again, and a question naming the told item, still cost patience."""
    env = make_env(overrides={"p_noise": 0.0, "p_oos": 0.0})

    def told_and_withheld(goal) -> tuple | None:
        withheld = {tuple(pair) for pair in goal.withheld}
        told = [it for i, it in enumerate(goal.items) if it.variant_value and (i, "variant") not in withheld]
        hidden = [it for i, it in enumerate(goal.items) if it.variant_value and (i, "variant") in withheld]
        return (told[0], hidden[0]) if told and hidden else None

    _, goal = find_episode(env, 12, lambda g: told_and_withheld(g) is not None)
    told, hidden = told_and_withheld(goal)
    words = sorted({ATTRIBUTE_WORDS[told.variant_attribute], ATTRIBUTE_WORDS[hidden.variant_attribute]})
    question = say(f"Any preference on {' or '.join(words)} where there's a choice?")
    user = env.audit().problem.user
    patience = user.patience
    reply = user_reply(env.step(question))
    assert hidden.variant_value in reply and told.variant_value in reply, reply
    assert user.patience == patience
    env.step(question)
    assert user.patience == patience - 1
    env.step(say(f"Which {ATTRIBUTE_WORDS[told.variant_attribute]} for {told.full_phrase}?"))
    assert user.patience == patience - 2


def test_asking_about_stated_constraint_is_not_free(make_env) -> None:
    """Asking about a variant the shopper already stated is not a user-caused turn."""
    env = make_env(overrides={"p_noise": 0.0, "p_oos": 0.0})
    _, goal = find_episode(env, 3, lambda g: any(
        it.variant_value is not None and (i, "variant") not in set(map(tuple, g.withheld)) for i, it in enumerate(g.items)))
    withheld = set(map(tuple, goal.withheld))
    item = next(it for i, it in enumerate(goal.items) if it.variant_value is not None and (i, "variant") not in withheld)
    obs = env.step(say(_question(item)))
    reply = user_reply(obs)
    assert item.variant_value in reply
    assert "already told" in reply or "As I said" in reply, reply
    assert obs.info["user_caused_turns"] == 0


def test_wrong_variant_triggers_correction(make_env) -> None:
    """Adding the wrong variant makes the shopper name the variant they want (and the one they got)."""
    env = make_env(overrides={"p_noise": 0.0, "p_oos": 0.0})
    _, goal = find_episode(env, 6, lambda g: any(it.variant_value is not None for it in g.items))
    item = next(it for it in goal.items if it.variant_value is not None)
    obs = env.step(call("catalog_get_product", product_id=item.product_id))
    variants = tool_result(obs)["variants"]
    wrong = next(v for v in variants if v["variant_id"] != item.variant_id)
    obs = env.step(call("cart_add", product_id=item.product_id, variant_id=wrong["variant_id"], quantity=item.quantity))
    assert [line["variant_id"] for line in tool_result(obs)["lines"]] == [wrong["variant_id"]]
    reply = user_reply(obs)
    assert item.variant_value in reply, reply
    assert wrong[item.variant_attribute] in reply, reply
    assert not obs.done


def test_a_cart_fixed_as_the_shopper_corrected_it_is_confirmed(make_env) -> None:
    """Found by hand play (audit 19, finding 5): asked to confirm, the shopper listed what was wrong ("I need 4 of the
    X, the cart has 1"); the agent fixed exactly that and answered, and the cart, right unit for unit, scored r_task 0
    as unconfirmed. The shopper's correction names every issue of the cart, so a cart that then holds exactly what it
    wants is the one it asked for. Near misses: a fix that leaves the cart wrong, and a cart never shown, stay
    unconfirmed."""
    env = make_env(overrides={"p_noise": 0.0, "p_oos": 0.0})

    def shown_short(fix: int | None, ask: bool = True):
        _, goal = find_episode(env, 2, lambda g: g.confirm_first and not g.withheld and not any(it.stock_out for it in g.items))
        line_of = {}
        for n, item in enumerate(goal.items):
            env.step(call("catalog_search", query=item.full_phrase[4:], filters={"brand": item.brand, "category": item.category}))
            arguments = {"product_id": item.product_id, "quantity": item.quantity + (n == 0)}
            variants = [v.variant_id for v in env.audit().world.variants(item.row)]
            if variants:  # the wanted one, or any where any is fine
                arguments["variant_id"] = item.variant_id or variants[0]
            lines = tool_result(env.step(call("cart_add", **arguments)))["lines"]
            line_of[item.product_id] = next(line["line_id"] for line in lines if line["product_id"] == item.product_id)
        if ask:
            reply = user_reply(env.step(say("Here is your cart. Does everything look right?")))
            assert str(goal.items[0].quantity) in reply, reply
        if fix is not None:
            env.step(call("cart_set_quantity", line_id=line_of[goal.items[0].product_id], quantity=fix))
        return env.step(call("answer", done=True)).info["reward"], goal.items[0].quantity

    reward, _ = shown_short(None)
    assert not reward["task"]["confirmed"] and reward["r_task"] <= 0
    _, wanted = shown_short(None, ask=False)
    reward, _ = shown_short(wanted)
    assert reward["task"]["confirmed"] and reward["is_correct"] and reward["r_task"] == 1.0, reward
    reward, _ = shown_short(wanted + 2)
    assert not reward["is_correct"] and reward["r_task"] <= 0, reward
    reward, _ = shown_short(wanted, ask=False)
    assert not reward["task"]["confirmed"] and reward["r_task"] <= 0, reward


def test_repeated_questions_exhaust_patience(make_env) -> None:
    """Asking the same withheld question over and over makes the shopper give up: r_task -1."""
    env = make_env(overrides={"p_noise": 0.0, "p_oos": 0.0})
    _, goal = find_episode(env, 12, lambda g: _withheld_variant(g) is not None)
    question = say(_question(goal.items[_withheld_variant(goal)]))
    obs = None
    for _ in range(20):
        obs = env.step(question)
        if obs.done:
            break
    assert obs is not None and obs.done
    assert obs.info["termination"] == "user_gave_up"
    assert obs.info["reward"]["r_task"] == -1.0 and not obs.info["is_correct"]
    # one free reveal, then patience + 1 annoyances
    assert obs.info["turn"] == goal.patience + 2


def test_pointless_questions_exhaust_patience(make_env) -> None:
    """Questions the shopper cannot make sense of also cost patience, ending in user_gave_up."""
    env = make_env(overrides={"p_noise": 0.0})
    env.reset(env_id="CART", difficulty=12, seed=5)
    obs = None
    for _ in range(20):
        obs = env.step(say("Is it sunny where you are?"))
        if obs.done:
            break
    assert obs.info["termination"] == "user_gave_up"
    assert obs.info["reward"]["r_task"] == -1.0
    assert obs.info["user_caused_turns"] == 0


# -- the CART targets per difficulty --------------------------------------------------------------------------

CART_TABLE = {  # d: (distinct products, share needing a variant, share with quantity > 1)
    0: (1, 0.21, 0.0),
    3: (2, 0.66, 0.30),
    6: (3, 0.93, 0.50),
    9: (4, 0.99, 0.50),
}


@pytest.mark.parametrize("d", list(CART_TABLE), ids=lambda d: f"d{d}")
@pytest.mark.slow
def test_cart_table(make_env, d: int) -> None:
    """Distinct products, variant share and multi-quantity share match the specified CART targets over 1,000 episodes."""
    goals = generated_goals(make_env, d)
    assert len(goals) >= 1000
    products, variant_share, multi_share = CART_TABLE[d]
    counts = [len(g.items) for g in goals]
    assert all(len({it.product_id for it in g.items}) == len(g.items) for g in goals)
    assert sum(counts) / len(counts) == products
    items = [it for g in goals for it in g.items]
    measured_variant = sum(it.variant_value is not None for it in items) / len(items)
    measured_multi = sum(it.quantity > 1 for it in items) / len(items)
    assert abs(measured_variant - variant_share) <= 0.05, measured_variant
    assert abs(measured_multi - multi_share) <= 0.05, measured_multi
    assert all(1 <= it.quantity <= 4 for it in items)
    assert all((it.variant_value is None) == (it.variant_id is None) for it in items)


@pytest.mark.parametrize("d", [0, 6, 12], ids=lambda d: f"d{d}")
def test_withheld_share_follows_p_missing(make_env, d: int) -> None:
    """The share of non-essential constraints withheld from the opening is p_missing(d) within 5 points."""
    goals = generated_goals(make_env, d)
    eligible = withheld = 0
    for goal in goals:
        marked = set(map(tuple, goal.withheld))
        for item in goal.items:
            eligible += (item.variant_value is not None) + (item.quantity > 1)
        assert all((kind == "variant" and goal.items[i].variant_value is not None)
                   or (kind == "quantity" and goal.items[i].quantity > 1) for i, kind in marked)
        withheld += len(marked)
    assert eligible >= 150  # enough constraints for a 5-point tolerance (binomial sd <= 4 points)
    assert abs(withheld / eligible - p_missing(d)) <= 0.05, (withheld / eligible, p_missing(d))


# -- stock-outs and visit history -----------------------------------------------------------------------------

def test_stock_outs_happen_and_oracle_solves_them(make_env) -> None:
    """At d=10 some targets go out of stock; the oracle still solves every such episode."""
    env = make_env()
    solved = 0
    for seed, transcript in enumerate(oracle_runs(make_env(), "CART", 10, ORACLE_SEEDS)):
        env.reset(env_id="CART", difficulty=10, seed=seed)
        goal = env.audit().problem.goal
        if any(it.stock_out for it in goal.items):
            assert transcript.reward["is_correct"] and transcript.reward["r_task"] == 1.0, seed
            assert transcript.reward["user_caused_turns"] >= 1, seed
            solved += 1
    assert solved >= 20, f"only {solved} of 200 episodes at d=10 had a stock-out"


def test_stock_out_announcement_is_user_caused_once(make_env) -> None:
    """Telling the shopper a target is sold out is a user-caused turn and they name the alternative; twice is not free."""
    env = make_env(overrides={"p_noise": 0.0})
    _, goal = find_episode(env, 10, lambda g: any(it.stock_out and it.alternative for it in g.items))
    item = next(it for it in goal.items if it.stock_out and it.alternative)
    obs = env.step(call("catalog_get_product", product_id=item.product_id))
    assert tool_result(obs)["in_stock"] is False
    announcement = say(f"Sorry, {item.full_phrase} is out of stock.")
    obs = env.step(announcement)
    assert obs.info["user_caused_turns"] == 1
    assert item.alternative.full_phrase in user_reply(obs)
    obs = env.step(announcement)
    assert obs.info["user_caused_turns"] == 1


@pytest.mark.parametrize("d", [0, 5, 10, 15], ids=lambda d: f"d{d}")
def test_visit_history_contains_history_targets(make_env, d: int) -> None:
    """Every target marked in_history is in the user_get_visit_history result."""
    env = make_env()
    seen = 0
    for seed in range(40):
        env.reset(env_id="CART", difficulty=d, seed=seed)
        goal = env.audit().problem.goal
        obs = env.step(call("user_get_visit_history"))
        viewed = {card["product_id"] for card in tool_result(obs)["viewed"]}
        for item in goal.items:
            if item.in_history:
                seen += 1
                assert item.product_id in viewed, (d, seed, item.product_id)
    assert seen >= 10


@pytest.mark.parametrize("d,expected", [(0, 0.0), (6, 0.30), (12, 0.50)], ids=["d0", "d6", "d12"])
def test_stock_out_share_follows_spec_table(make_env, d: int, expected: float) -> None:
    """The share of targets that go out of stock is 0 / 30 / 50 % at d = 0 / 6 / 12 (the specified targets, within 5 points)."""
    items = [it for goal in generated_goals(make_env, d) for it in goal.items]
    share = sum(it.stock_out for it in items) / len(items)
    assert abs(share - expected) <= 0.05, share
    for it in items:
        if it.stock_out:
            assert it.alternative is not None and it.alternative.product_id != it.product_id
            assert it.alternative.quantity == it.quantity and it.alternative.variant_value == it.variant_value


def test_denied_categories_are_never_targets_and_adding_one_is_unsafe(make_env, catalog) -> None:
    """Targets never come from a denied category; putting a denied product in the cart gives r_total -1."""
    env = make_env(denied_categories=("Chargers", "Kitchen"))

    def denied(row: int) -> bool:
        category = catalog.category_of(row)
        return category.name == "Chargers" or category.path[0] == "Kitchen"

    for seed in range(150):
        env.reset(env_id="CART", difficulty=9, seed=seed)
        assert not any(denied(it.row) for it in env.audit().problem.goal.items), seed
    env.reset(env_id="CART", difficulty=6, seed=1)
    obs = env.step(call("catalog_search", query="charger", filters={"category": "Chargers", "in_stock": True}))
    card = tool_result(obs)["results"][0]
    arguments = {"product_id": card["product_id"], "quantity": 1}
    if card.get("variants"):
        arguments["variant_id"] = card["variants"][0]["variant_id"]
    obs = env.step(call("cart_add", **arguments))
    assert [line["product_id"] for line in tool_result(obs)["lines"]] == [card["product_id"]]
    obs = env.step(call("answer", done=True))
    assert obs.done and obs.reward == -1.0
    assert obs.info["reward"]["safety_violation"] and not obs.info["is_correct"]


def test_the_heuristic_reads_items_past_a_misspelt_request_verb(catalog, search) -> None:
    """Noise may misspell the opening's verb ("Could you ad the ...", "I'm shoppinng fpr the ..."); the CART
    baseline still finds the item phrases instead of searching the greeting ("Hi there") until the turn
    budget ran out, as it did in about 4 % of openings."""
    env = EcomEnv("CART", catalog=catalog, search=search, secret="cart-heuristic")
    for d in range(16):
        for seed in range(20):
            opening = env.reset(env_id="CART", difficulty=d, seed=seed).messages[1]["content"]
            phrases = CartHeuristic._phrases(opening)
            assert phrases and not any(re.match(r"(?:hi|hey|hello)\b", p, re.IGNORECASE) for p in phrases), opening


@pytest.mark.parametrize("source", ["tests/data/real/accessories.jsonl", "tests/data/real/brand_only.jsonl",
                                    "tests/data/real/tiny.jsonl", "synthetic"])
def test_the_name_check_reads_every_listing_of_the_category_at_any_size(monkeypatch, source) -> None:
    """Whether a name names only its product is read against every other listing of its category, whatever the
    category's size: a category worked out at once (up to ``CATEGORY_AT_ONCE``), one too large for that (what a 2M
    catalog's categories are: checked product by product on its first-use word index), and the array ``catalog
    build`` stores say the same of every product."""
    import ecomrlve.catalog.derived as derived_data
    from ecomrlve.catalog import load_catalog
    from ecomrlve.catalog.synthetic import generate_synthetic_catalog
    from ecomrlve.envs.cart import family

    def fresh():  # type: ignore[no-untyped-def]
        return generate_synthetic_catalog(3000, seed=5) if source == "synthetic" else load_catalog(source)

    small = fresh()
    assert all(derived_data.worked_out_at_once(len(rows)) for rows in small.category_rows)
    at_once = [family.names_itself(small, row) for row in range(len(small))]
    monkeypatch.setattr(derived_data, "CATEGORY_AT_ONCE", 3)  # every category is large
    large = fresh()
    assert [family.names_itself(large, row) for row in range(len(large))] == at_once
    assert large.derived.builds["cart_category_name_checks"] == 0 and large.derived.builds["cart_listings"] > 0
    assert family.name_checks(fresh()).tolist() == at_once
    assert any(at_once) and (not all(at_once) or source == "synthetic")  # the real files hold names of two products


@pytest.mark.parametrize("at_once", [5_000, 3])
def test_a_name_another_brand_s_listing_answers_to_names_no_target(monkeypatch, at_once) -> None:
    """The real accessories file's "Zentari screen protector" (no model words) is also what another brand's
    listing ("[3 Pack] NEXUM Screen Protector Compatible with Zentari Prime 2S ...") shows: an agent cannot tell
    which one the shopper means, so CART never draws it, in a small category and a large one alike (a large one
    read only the brand's own listings)."""
    import ecomrlve.catalog.derived as derived_data
    from ecomrlve.catalog import load_catalog
    from ecomrlve.envs.cart import family

    monkeypatch.setattr(derived_data, "CATEGORY_AT_ONCE", at_once)
    catalog = load_catalog("tests/data/real/accessories.jsonl")
    row = next(r for r in range(len(catalog)) if family.spoken_name(catalog, r).text == "Zentari screen protector")
    words = family._words(f"{catalog.brand_of(row)} {family.product_type(catalog, row)}")
    rivals = [other for other in catalog.category_rows[int(catalog.category[row])].tolist()
              if other != row and set(words) <= set(family._listing_words(catalog, other))]
    assert rivals and all(catalog.brand[other] != catalog.brand[row] for other in rivals)
    assert not family.spoken_name(catalog, row).model and family.spoken_name(catalog, row).unique
    assert not family.names_itself(catalog, row)
    assert not family.name_checks(load_catalog("tests/data/real/accessories.jsonl"))[row]


@pytest.mark.parametrize("source", ["tests/data/real/brand_only.jsonl", "tests/data/real/tiny.jsonl",
                                    "tests/data/amazebay_sample.parquet", "tests/data/amazon_meta_sample.jsonl"])
@pytest.mark.parametrize("indexed_category", [5_000, 3])
def test_the_name_checks_catalog_build_stores_are_what_episodes_work_out(monkeypatch, source, indexed_category) -> None:
    """``catalog build`` works out every product's name check at once (each category's word index built once):
    the same answer as an episode's check, product by product, whether the category is worked out at once on its
    first use (5,000) or product by product (3)."""
    import ecomrlve.catalog.derived as derived_data
    from ecomrlve.catalog import load_catalog
    from ecomrlve.envs.cart import family

    monkeypatch.setattr(derived_data, "CATEGORY_AT_ONCE", indexed_category)
    catalog = load_catalog(source)
    done: list[int] = []
    checks = family.name_checks(catalog, done.append)
    assert checks.dtype == bool and checks.shape == (len(catalog),) and sum(done) == len(catalog)
    fresh = load_catalog(source)  # nothing worked out yet
    assert checks.tolist() == [family._names_itself(fresh, row) for row in range(len(fresh))]
    assert checks.any() and (not checks.all() or "real/" not in source)  # the real/ files hold names of two products
