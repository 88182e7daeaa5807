"""The LLM shopper: grounded or replaced, leak-free, replayable, cached; and the held-out phrasings.

Most tests go over real HTTP to the stand-in server of ``chat_server`` (the real ``openai``
client end to end); the 2,000-episode leak scan sends the same requests to the same stand-in
in process, for speed.
"""

from __future__ import annotations

import dataclasses
import json
import re
import socket
from pathlib import Path
from typing import Any

import pytest
from chat_server import MODEL, SHOPPER_MODES, ChatServer, ShopperPolicy
from typer.testing import CliRunner

from ecomrlve.agents.llm import LLMConfig, SamplingParams
from ecomrlve.catalog import default_catalog, load_catalog
from ecomrlve.catalog.schema import CATEGORICAL_ATTRIBUTES
from ecomrlve.cli import app
from ecomrlve.episode import EcomEnv
from ecomrlve.errors import UserInputError
from ecomrlve.registry import env_specs
from ecomrlve.runner import Curriculum, Plan, RunLoop, agent_factory, make_agent, play, replay
from ecomrlve.session import EpisodeRecord
from ecomrlve.shopper import LLMShopper, shopper_summary
from ecomrlve.shopper.grounding import grounding_for
from ecomrlve.shopper.options import ShopperOptions
from ecomrlve.shopper.persona import PERSONAS
from ecomrlve.user import realiser as realiser_module
from ecomrlve.user.realiser import PHRASINGS, TemplateShopper, phrasing_options

ENV_IDS = tuple(spec.id for spec in env_specs())
SAMPLE_D = (0, 5, 10, 15)
pytest.importorskip("openai")


def shopper_for(server: ChatServer, *, timeout: float = 5.0, **kwargs: Any) -> LLMShopper:
    config = LLMConfig(MODEL, server.base_url, sampling=SamplingParams(temperature=0.7, seed=0), timeout=timeout,
                       max_retries=0)
    return LLMShopper(config, **kwargs)


def unseen_values() -> list[str]:
    """What a leaking model injects when it knows no goal: a real product id, an order id, a brand, a colour."""
    catalog = default_catalog()
    return [catalog.product_id(7), "O7K2M9Q4X", catalog.brands[3], CATEGORICAL_ATTRIBUTES["color"][2]]


def user_texts(record: EpisodeRecord) -> list[str]:
    return [m["content"] for m in record.messages if m["role"] == "user"]


# -- grounding ------------------------------------------------------------------------------------

def test_grounding_accepts_a_faithful_paraphrase_and_names_what_is_wrong_otherwise() -> None:
    catalog = default_catalog()
    history = [{"role": "assistant", "content": "Which color would you like? We have it for $45."}]
    check = grounding_for("I need the Brightix Nova 21 charger in Black.", ["the Brightix Nova 21 charger", "Black"],
                          history)
    assert check.failures("hey, the brightix nova 21 charger in black please - $45 is fine", catalog) == []
    assert check.failures("hey, the brightix nova 21 charger please", catalog) == ["missing_value"]
    assert "new_number" in check.failures("the Brightix Nova 21 charger in Black, 2 of them", catalog)
    assert "new_attribute_value" in check.failures("the Brightix Nova 21 charger in Black, in cotton", catalog)
    assert "unseen_order_id" in check.failures("the Brightix Nova 21 charger in Black, order O7K2M9Q4X", catalog)
    leaked_id = catalog.product_id(3)
    assert "unseen_product_id" in check.failures(f"the Brightix Nova 21 charger in Black ({leaked_id})", catalog)
    assert "new_brand" in check.failures(f"the Brightix Nova 21 charger in Black, or {catalog.brands[5]}", catalog)
    assert check.failures("", catalog) == ["empty"]
    assert "not_english" in check.failures("zxq vbn qwrt plk mnb Brightix Nova 21 charger Black", catalog)
    assert "role_label" in check.failures("Customer: the Brightix Nova 21 charger in Black", catalog)
    assert "prompt_echo" in check.failures("DRAFT: the Brightix Nova 21 charger in Black", catalog)
    assert "prompt_echo" in check.failures("Dear [Customer Name], the Brightix Nova 21 charger in Black", catalog)
    titled = grounding_for("I need the Brightix charger [2-pack] for my draft table.", ["Brightix charger [2-pack]"], [])
    assert titled.failures("i need the brightix charger [2-pack] for my draft table", catalog) == []
    assert "too_long" in check.failures("the Brightix Nova 21 charger in Black. " + "so " * 400, catalog)
    two = grounding_for("I need 2 of the lamp.", ["2", "the lamp"], [])
    assert two.failures("i need two of the lamp", catalog) == []


def test_grounding_reads_names_in_any_script(tmp_path) -> None:
    """A name in another script is no sign of another language when the draft holds it (a short
    message naming it was refused as not English), and a catalog brand with such letters is one
    word, so naming an unseen one is caught (it was cut into "l" and "we")."""
    path = tmp_path / "meta.jsonl"
    path.write_text("".join(json.dumps({"parent_asin": asin, "title": title, "categories": ["Headphones"], "price": 9,
                                        "store": brand}, ensure_ascii=False) + "\n"
                            for asin, title, brand in (("B01", "Crème 5 Headphones", "Crème"),
                                                       ("B02", "Löwe 7 Headphones", "Löwe"))), encoding="utf-8")
    catalog = load_catalog(str(path))
    check = grounding_for("I need the Crème Édition 5 headphones.", ["the Crème Édition 5 headphones"], [])
    assert check.failures("the Crème Édition 5 headphones, please", catalog) == []
    assert "new_brand" in check.failures("the Crème Édition 5 headphones, or the Löwe ones", catalog)


# -- every failure mode falls back, every episode stays solvable -------------------------------------

@pytest.mark.parametrize("mode", SHOPPER_MODES)
@pytest.mark.slow
def test_every_mode_over_http_is_used_or_caught_and_the_oracle_still_solves_every_env(mode: str) -> None:
    server = ChatServer(ShopperPolicy(mode, leaks=unseen_values(), delay=1.0))
    try:
        timing_out = mode == "timeout"
        shopper = shopper_for(server, timeout=0.2 if timing_out else 5.0)
        env = EcomEnv(ENV_IDS, realiser=shopper, secret="modes")
        records = [play(env, "oracle", env_id=env_id, difficulty=d, seed=11)
                   for env_id in ENV_IDS for d in ((0,) if timing_out else SAMPLE_D)]
    finally:
        server.close()
    assert all(r.reward is not None and r.reward.r_task == 1.0 for r in records), \
        [(r.env_id, r.difficulty, r.reward) for r in records if r.reward and r.reward.r_task != 1.0]
    rows = shopper_summary(records)
    assert set(rows) == set(ENV_IDS)
    total = {k: sum(row[k] for row in rows.values()) for k in ("messages", "llm", "fallbacks", "rejected")}
    if mode == "faithful":
        assert total["fallbacks"] == 0 and total["rejected"] == 0 and total["llm"] > 0
        assert any("hey - " in text or "i want" in text for r in records for text in user_texts(r))
    elif mode == "omit":  # an act without values to copy loses nothing: only those may pass
        assert total["fallbacks"] > 0
        assert {reason for row in rows.values() for reason in row["reasons"]} == {"missing_value"}
    elif mode == "leak":  # passes only where the "leaked" value was already in the conversation
        assert total["fallbacks"] > 0 and total["rejected"] >= 2 * total["fallbacks"]
        for record in records:
            assert record.shopper is not None
            for text, source in zip(record.shopper["texts"], record.shopper["sources"]):
                if source in ("llm", "retry"):
                    value = re.search(r"it has to be (.+)\.$", text)
                    others = [m["content"] or "" for m in record.messages[1:] if m.get("content") != text]
                    assert value and any(value.group(1).lower() in m.lower() for m in others), text
    else:
        assert total["llm"] == 0 and total["fallbacks"] > 0 and total["rejected"] == 2 * total["fallbacks"]
        expected = {"error": "endpoint_error", "timeout": "endpoint_error", "empty": "empty", "garbage": "not_english"}
        assert expected[mode] in {reason for row in rows.values() for reason in row["reasons"]}
    for record in records:  # the counts reach the agent's info and the record
        assert record.shopper is not None and len(record.shopper["texts"]) == len(record.shopper["sources"])


def test_fallback_counts_are_in_the_agents_info() -> None:
    server = ChatServer(ShopperPolicy("garbage"))
    try:
        env = EcomEnv("CART", realiser=shopper_for(server), secret="info")
        observation = env.reset(env_id="CART", difficulty=3, seed=2)
    finally:
        server.close()
    assert observation.info["shopper"] == {"messages": 1, "llm": 0, "fallbacks": 1, "rejected": 2}


# -- replay and cache ----------------------------------------------------------------------------

def _faithful_records(server: ChatServer, **kwargs: Any) -> list[EpisodeRecord]:
    env = EcomEnv(ENV_IDS, realiser=shopper_for(server, **kwargs), secret="replay")
    return [play(env, agent, env_id=env_id, difficulty=d, seed=5)
            for env_id in ENV_IDS for d in (2, 12) for agent in ("oracle", "heuristic")]


def test_llm_episodes_replay_byte_identical_with_no_server(tmp_path: Path) -> None:
    server = ChatServer(ShopperPolicy("faithful"))
    try:
        records = _faithful_records(server)
    finally:
        server.close()
    assert all(r.shopper and r.shopper["model"] == MODEL for r in records)
    fresh = EcomEnv(ENV_IDS, secret="not-the-records")
    for record in records:
        assert replay(fresh, record).to_json() == record.to_json()
    runs = tmp_path / "llm.jsonl"
    runs.write_text("".join(r.to_json() + "\n" for r in records))
    result = CliRunner().invoke(app, ["replay", str(runs)])
    assert result.exit_code == 0 and f"all {len(records)} episodes reproduced exactly" in result.output


def test_the_cache_reproduces_the_same_texts_without_calls(tmp_path: Path) -> None:
    server = ChatServer(ShopperPolicy("faithful"))
    try:
        first = _faithful_records(server, cache_dir=tmp_path / "cache")
        calls = len(server.requests)
        server.policy = ShopperPolicy("error")  # any call now would change the texts (fallbacks)
        again = _faithful_records(server, cache_dir=tmp_path / "cache")
        assert len(server.requests) == calls > 0
    finally:
        server.close()
    assert [r.messages for r in again] == [r.messages for r in first]
    assert all(set(r.shopper["sources"]) <= {"cache", "template"} for r in again)


def test_concurrent_episodes_produce_the_same_records_as_one_at_a_time() -> None:
    server = ChatServer(ShopperPolicy("faithful"))
    try:
        def records(concurrency: int) -> dict[str, str]:
            shopper = shopper_for(server, concurrency=concurrency)
            out: dict[str, str] = {}
            loop = RunLoop(lambda: EcomEnv(ENV_IDS, realiser=shopper, secret="loop"), Curriculum(),
                           agent_factory("heuristic"))
            import asyncio
            asyncio.run(loop.run(((task, 0) for task in Plan(ENV_IDS, (4,), 2, seed=1)),
                                 lambda task, trial, record, agent: out.__setitem__(task.slot, record.to_json()),
                                 concurrency=concurrency))
            shopper.close()
            return out
        assert records(4) == records(1)
    finally:
        server.close()


# -- the endpoint and the CLI ----------------------------------------------------------------------

def _closed_port_url() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def test_an_endpoint_that_is_down_is_one_error_at_start() -> None:
    with pytest.raises(UserInputError, match="--user-base-url"):
        ShopperOptions("m", _closed_port_url(), max_retries=0).build()
    result = CliRunner().invoke(app, ["run", "--env", "CART", "--episodes", "1", "--user-model", "m",
                                      "--user-base-url", _closed_port_url()])
    assert result.exit_code == 2 and len(result.stderr.splitlines()) == 1, result.output
    assert result.stderr.startswith("error: --user-base-url"), result.stderr
    result = CliRunner().invoke(app, ["run", "--env", "CART", "--episodes", "1", "--phrasing", "test"])
    assert result.exit_code == 2 and "--phrasing" in result.stderr


def test_run_and_eval_with_the_llm_shopper(tmp_path: Path) -> None:
    server = ChatServer(ShopperPolicy("faithful"))
    try:
        out = tmp_path / "run.jsonl"
        summary = tmp_path / "summary.json"
        result = CliRunner().invoke(app, ["run", "--env", "CART,PD", "--episodes", "2", "--agent", "oracle",
                                          "--user-model", MODEL, "--user-base-url", server.base_url,
                                          "--out", str(out), "--summary-json", str(summary), "--secret", "cli"])
        assert result.exit_code == 0, result.output
        assert "LLM shopper" in result.output
        assert set(json.loads(summary.read_text())["shopper"]) == {"CART", "PD"}
        evaluation = tmp_path / "eval"
        result = CliRunner().invoke(app, ["eval", "--out", str(evaluation), "--env", "STATUS", "--tasks", "2",
                                          "--difficulty", "1", "--agent", "oracle", "--user-model", MODEL,
                                          "--user-base-url", server.base_url, "--concurrency", "2"])
        assert result.exit_code == 0, result.output
        stored = json.loads((evaluation / "summary.json").read_text())
        assert stored["config"]["shopper"]["phrasing"] == "eval" and stored["shopper"]["STATUS"]["llm"] > 0
    finally:
        server.close()
    for path in (out, evaluation / "episodes.jsonl"):  # both replay with the server gone
        result = CliRunner().invoke(app, ["replay", str(path)])
        assert result.exit_code == 0 and "reproduced exactly" in result.output


# -- leak scan ---------------------------------------------------------------------------------------

def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, (list, tuple)):
        return [s for v in value for s in _strings(v)]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return [s for f in dataclasses.fields(value) for s in _strings(getattr(value, f.name))]
    return []


def _said(user: Any) -> str:
    """Everything the dialogue manager let this shopper (and a journey's intent shoppers) say."""
    from ecomrlve.envs.journey import acts as A
    parts = [s for act in user.acts if not isinstance(act, (A.OpenJourney, A.NextIntent, A.InterruptIntent,
                                                             A.ResumeIntent)) for s in _strings(act)]
    parts += [_said(problem.user) for problem in getattr(user, "problems", ())]
    return "\n".join(parts).lower()


def _word(value: str) -> re.Pattern[str]:
    return re.compile(r"(?<![a-z0-9])" + re.escape(value.lower()) + r"(?![a-z0-9])")


@pytest.mark.slow
def test_leak_scan_no_withheld_value_reaches_the_agent_over_2000_episodes() -> None:
    """The stand-in leaks the episode's hidden goal values; none that the shopper withheld gets through."""
    policy = ShopperPolicy("leak")
    shopper = LLMShopper(LLMConfig(MODEL, "http://in-process.invalid/v1", sampling=SamplingParams(seed=0)),
                         transport=policy.text)
    env = EcomEnv(ENV_IDS, realiser=shopper, secret="leak-scan")
    extras = unseen_values()
    episodes = rejected = checked = 0
    for index in range(250):
        for env_id in ENV_IDS:
            policy.leaks = extras  # the opening is phrased before the goal can be read
            observation = env.reset(env_id=env_id, difficulty=index % 16, seed=index)
            audit = env.audit()
            goal = [s for s in _strings(audit.problem.goal.model_dump(mode="json")) if len(s) >= 3]
            policy.leaks = goal + extras
            agent = make_agent("heuristic" if index % 8 == 0 else "oracle", env, index)  # oracles: short episodes
            while not observation.done:
                observation = env.step(agent.act(observation))
            record = env.record
            seen = "\n".join(m["content"] or "" for m in record.messages if m["role"] != "user").lower()
            said = _said(audit.problem.user)
            withheld = [v for v in dict.fromkeys(goal + extras) if not _word(v).search(said) and not _word(v).search(seen)]
            shopper_text = "\n".join(user_texts(record)).lower()
            leaked = [v for v in withheld if _word(v).search(shopper_text)]
            assert not leaked, (env_id, index, leaked)
            checked += len(withheld)
            rejected += sum(len(f) for f in record.shopper["failures"])
            episodes += 1
    assert episodes >= 2000 and checked > 2000 and rejected > 2000


# -- held-out phrasings ------------------------------------------------------------------------------

def test_train_and_eval_phrasings_and_personas_are_disjoint(monkeypatch: pytest.MonkeyPatch) -> None:
    used: set[tuple[str, ...]] = set()

    def recording(options: Any, phrasing: Any) -> Any:
        used.add(tuple(options))
        return phrasing_options(options, phrasing)
    monkeypatch.setattr(realiser_module, "phrasing_options", recording)
    openings: dict[str, list[str]] = {}
    for phrasing in PHRASINGS:
        env = EcomEnv(ENV_IDS, realiser=TemplateShopper(phrasing), secret="phrasing")
        openings[phrasing] = [play(env, "heuristic", env_id=env_id, difficulty=d, seed=3).messages[1]["content"]
                              for env_id in ENV_IDS for d in range(0, 16, 3)]
    assert len(used) >= 40  # most phrasing lists were exercised
    for options in used:
        train, held_out = phrasing_options(options, "train"), phrasing_options(options, "eval")
        assert train and held_out and not set(train) & set(held_out), options
    assert sum(a != b for a, b in zip(openings["train"], openings["eval"])) > 0.8 * len(openings["train"])
    train_personas, eval_personas = phrasing_options(PERSONAS, "train"), phrasing_options(PERSONAS, "eval")
    assert train_personas and eval_personas and not set(train_personas) & set(eval_personas)


def test_eval_phrasing_is_recorded_replays_and_keeps_the_oracle_at_one() -> None:
    env = EcomEnv(ENV_IDS, realiser=TemplateShopper("eval"), secret="eval-set")
    for env_id in ENV_IDS:
        for d in SAMPLE_D:
            record = play(env, "oracle", env_id=env_id, difficulty=d, seed=9)
            assert record.reward is not None and record.reward.r_task == 1.0
            assert record.shopper == {"realiser": "template", "phrasing": "eval"}
            assert replay(EcomEnv(ENV_IDS, secret="other"), record).to_json() == record.to_json()
    default = play(EcomEnv("CART", secret="x"), "oracle", env_id="CART", difficulty=0, seed=0)
    assert default.shopper is None and '"shopper"' not in default.to_json()


def test_the_goal_the_grounding_check_reads_is_the_episodes_goal() -> None:
    """The check's goal comes from a dry generation (the opening is phrased before the goal exists)."""
    env = EcomEnv(ENV_IDS, secret="dry")
    for env_id in ENV_IDS:
        for d in SAMPLE_D:
            env.reset(env_id=env_id, difficulty=d, seed=d + 1)
            assert env.session._hidden_goal() == env.audit().problem.goal.model_dump(mode="json")


# -- the same understanding ------------------------------------------------------------------------

def test_the_llm_shopper_reaches_the_same_acts_as_the_template_shopper() -> None:
    """What the agent asked is read once, by the shopper's understanding, before any text is phrased: for the
    bank's natural messages (train half, every group) the LLM shopper decides exactly the acts the template
    shopper decides, in every kind of dialogue (cart, recommendation, return, order status)."""
    from understanding_bank import GROUPS, load_bank

    from ecomrlve.actions import AgentAction

    train = [m for m in load_bank() if m.half == "train"]
    messages = [m for group in GROUPS for m in [m for m in train if m.group == group][::14]]
    server = ChatServer(ShopperPolicy("faithful"))
    try:
        envs = {"template": EcomEnv(ENV_IDS, secret="acts"),
                "llm": EcomEnv(ENV_IDS, realiser=shopper_for(server), secret="acts")}
        phrased_by_model = 0
        for env_id in ("CART", "PD", "RETURN", "STATUS"):
            for message in messages:
                decided = {}
                for name, env in envs.items():
                    env.reset(env_id=env_id, difficulty=12, seed=3)
                    observation = env.step(AgentAction(message=message.text))
                    decided[name] = list(env.audit().problem.user.acts)
                    if name == "llm":
                        phrased_by_model += observation.info["shopper"]["llm"]
                assert decided["llm"] == decided["template"], (env_id, message.text)
    finally:
        server.close()
    assert len(messages) >= 20 and phrased_by_model > 0
