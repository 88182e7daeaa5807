"""Every registered environment, checked the same way: parametrised over the registry.

For each env: the oracle earns full task marks over d = 0..15 (the one oracle check of the
suite; per-env files keep only env-specific tests), agents that do nothing score
r_total <= 0, the same (env, d, seed) gives an identical record, and every tool schema (answer
included) is a valid JSON schema. Case ids name env, d and seed, so a failure says where.
``ECOMRLVE_ORACLE_SEEDS`` widens the oracle sweep (default: 3 seeds per d).

Also the registry itself: its validation, its "Did you mean" hint, and what derives from it.
"""

from __future__ import annotations

import json
import os

import jsonschema
import pytest
from exploits import oracle_failure, play, play_oracle
from typer.testing import CliRunner

from ecomrlve.actions import AgentAction, ToolCall
from ecomrlve.agents import heuristic_agent, reference_agent
from ecomrlve.cli import app
from ecomrlve.difficulty import AXES
from ecomrlve.envs import env_collections, environment_axes, get_environment, resolve_env_ids
from ecomrlve.envs.journey.family import intent_families
from ecomrlve.envs.journey.heuristic import classify_request
from ecomrlve.episode import EcomEnv
from ecomrlve.errors import UnknownNameError
from ecomrlve.registry import RUNTIME_AXES, EnvSpec, JourneyRole, env_spec, env_specs, load, register, unregister
from ecomrlve.user import acts as A
from ecomrlve.user.realiser import COMMON_TEMPLATES, templates_for

SPECS = env_specs()
ENV_IDS = [spec.id for spec in SPECS]
ORACLE_SEEDS = range(int(os.environ.get("ECOMRLVE_ORACLE_SEEDS", "3")))
ORACLE_CASES = [(env_id, d, seed) for env_id in ENV_IDS for d in range(16) for seed in ORACLE_SEEDS]
PROBE_CASES = [(env_id, d, seed) for env_id in ENV_IDS for d in (0, 7, 15) for seed in (0, 1)]


def case_id(case: tuple[str, int, int]) -> str:
    env_id, d, seed = case
    return f"{env_id}-d{d}-seed{seed}"


@pytest.fixture(scope="module")
def env(catalog, search) -> EcomEnv:
    return EcomEnv("C8", catalog=catalog, search=search)


# -- per environment ----------------------------------------------------------------------------

@pytest.mark.parametrize("case", ORACLE_CASES, ids=case_id)
def test_oracle_earns_full_task_marks(env, case) -> None:
    """r_task = 1, is_correct, ended by the answer, no hallucinated id, no unfilled template slot."""
    env_id, d, seed = case
    failure = oracle_failure(play_oracle(env, difficulty=d, seed=seed, env_id=env_id))
    assert failure is None, failure


class Silent:
    """Does nothing: says something polite every turn, never calls a tool, never answers."""

    def act(self, observation) -> AgentAction:
        return AgentAction(message="Let me think about that.")


class AnswerAtOnce:
    """Ends at once: answers on the first turn with nothing filled in, then stays silent."""

    def __init__(self) -> None:
        self.answered = False

    def act(self, observation) -> AgentAction:
        if self.answered:
            return AgentAction(message="Done.")
        self.answered = True
        return AgentAction(tool_calls=(ToolCall(id="a0", name="answer", arguments={}),))


@pytest.mark.parametrize("agent", [Silent, AnswerAtOnce])
@pytest.mark.parametrize("case", PROBE_CASES, ids=case_id)
def test_doing_nothing_earns_nothing(env, case, agent) -> None:
    env_id, d, seed = case
    reward = play(env, lambda e: agent(), difficulty=d, seed=seed, env_id=env_id).reward
    assert reward["r_total"] <= 0.0 and not reward["is_correct"], reward


@pytest.mark.parametrize("case", [(e, d, 11) for e in ENV_IDS for d in (3, 14)], ids=case_id)
def test_same_key_gives_an_identical_record(catalog, search, case) -> None:
    """Two separate EcomEnv objects, the same (env, d, seed, secret): byte-identical records (oracle and silent)."""
    env_id, d, seed = case
    for make_agent in (lambda e: e.audit().oracle(), lambda e: Silent()):
        records = []
        for _ in range(2):
            fresh = EcomEnv(env_id, catalog=catalog, search=search, secret="same-key-test")
            play(fresh, make_agent, difficulty=d, seed=seed, env_id=env_id)
            records.append(fresh.record.to_json())
        assert records[0] == records[1]


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_tool_schemas_are_valid_json_schemas(env, env_id: str) -> None:
    family = get_environment(env_id)
    for d in (0, 15):
        tools = env.reset(env_id=env_id, difficulty=d, seed=0).tools
        assert tools is not None
        names = [tool["function"]["name"] for tool in tools]
        assert names == [*family.tool_names, "answer"]
        for tool in tools:
            assert tool["type"] == "function" and tool["function"]["description"], tool
            parameters = tool["function"]["parameters"]
            jsonschema.Draft202012Validator.check_schema(parameters)
            assert parameters["type"] == "object"
        answer = next(t for t in tools if t["function"]["name"] == "answer")["function"]["parameters"]
        assert set(answer["properties"]) == set(family.answer_arguments.model_fields)


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_spec_parts_load(env_id: str) -> None:
    """Entry point, heuristic and templates of every spec resolve; the spec dumps to JSON."""
    spec = env_spec(env_id)
    assert get_environment(env_id).env_id == env_id
    assert callable(heuristic_agent(env_id).act)
    assert json.loads(json.dumps(spec.to_json()))["id"] == env_id


# -- the registry ---------------------------------------------------------------------------------

def test_builtins_are_registered_in_collection_order() -> None:
    assert ENV_IDS == ["CART", "SUB", "PD", "RETURN", "STATUS", "POLICY", "BUNDLE", "JOURNEY"]
    assert env_collections()["C8"] == tuple(ENV_IDS)
    assert [f.env_id for f in intent_families()] == ["PD", "SUB", "CART", "RETURN", "STATUS", "POLICY", "BUNDLE"]


@pytest.mark.parametrize("bad, error", [
    (EnvSpec(id="CART", entry_point="ecomrlve.envs.cart.family:CartFamily"), "already registered"),
    (EnvSpec(id="cart2", entry_point="ecomrlve.envs.cart.family:CartFamily"), "upper case"),
    (EnvSpec(id="NEW", entry_point="ecomrlve.envs.cart.family.CartFamily"), "module:attribute"),
    (EnvSpec(id="NEW", entry_point="a:B", heuristic="nope"), "module:attribute"),
    (EnvSpec(id="NEW", entry_point="a:B", axes=("p_nosie",)), "Did you mean 'p_noise'"),
    (EnvSpec(id="NEW", entry_point="a:B", collection="C3"), "unknown collection"),
])
def test_register_rejects_bad_specs(bad: EnvSpec, error: str) -> None:
    before = env_specs()
    with pytest.raises((ValueError, KeyError), match=error):
        register(bad)
    assert env_specs() == before


def test_register_takes_only_specs() -> None:
    with pytest.raises(TypeError, match="EnvSpec"):
        register({"id": "NEW", "entry_point": "a:B"})  # type: ignore[arg-type]


def test_unknown_ids_get_a_hint() -> None:
    with pytest.raises(KeyError, match="Did you mean 'RETURN'"):
        env_spec("RETRUN")
    with pytest.raises(KeyError, match="Did you mean 'STATUS'"):
        resolve_env_ids("CART,STATSU")
    with pytest.raises(KeyError, match="Did you mean 'POLICY'"):
        heuristic_agent("POLIC")


def test_an_environment_without_a_reference_agent_says_so_in_one_line() -> None:
    register(EnvSpec(id="NO_REFERENCE", entry_point="ecomrlve.envs.cart.family:CartFamily"))
    try:
        with pytest.raises(UnknownNameError, match="NO_REFERENCE has no reference agent") as raised:
            reference_agent("NO_REFERENCE")
        assert "\n" not in str(raised.value)
    finally:
        unregister("NO_REFERENCE")
    with pytest.raises(ValueError, match="reference 'not an entry point' must be a 'module:attribute' string"):
        register(EnvSpec(id="BAD_REFERENCE", entry_point="ecomrlve.envs.cart.family:CartFamily",
                         reference="not an entry point"))


def test_a_class_that_is_not_the_task_family_is_rejected_on_first_use() -> None:
    register(EnvSpec(id="WRONG_CLASS", entry_point="ecomrlve.envs.cart.heuristic:CartHeuristic"))
    register(EnvSpec(id="WRONG_ID", entry_point="ecomrlve.envs.cart.family:CartFamily"))
    try:
        for env_id in ("WRONG_CLASS", "WRONG_ID"):
            with pytest.raises(TypeError, match=f"not a TaskFamily subclass with env_id = '{env_id}'"):
                get_environment(env_id)
    finally:
        unregister("WRONG_CLASS")
        unregister("WRONG_ID")
    assert tuple(env_collections()["C8"]) == tuple(ENV_IDS)


def test_request_classifier_follows_the_journey_roles() -> None:
    """A role's keywords decide the class; a new role joins the classifier, and leaves with its spec."""
    assert classify_request("Could you add the Brightix Nova to my cart?") == "CART"
    assert classify_request("hmm") == "PD"  # nothing matches: the highest tie rank
    register(EnvSpec(id="GIFT", entry_point="a:B", journey=JourneyRole(draw_order=99, keywords={"giftwrap": 50})))
    try:
        assert classify_request("Please giftwrap the cart items") == "GIFT"
    finally:
        unregister("GIFT")
    assert classify_request("Please giftwrap the cart items") == "CART"


def test_every_dialogue_act_has_templates() -> None:
    """The realiser's dispatch, built from the specs, covers every act a built-in shopper can say: every
    subclass of the base ``DialogueAct`` the built-in families declare, each phrased by exactly one family."""
    for spec in SPECS:
        load(spec.entry_point)  # imports the family's acts
    acts, stack = [], list(A.DialogueAct.__subclasses__())
    while stack:
        act_type = stack.pop()
        acts.append(act_type)
        stack.extend(act_type.__subclasses__())
    families = {"ecomrlve.user.acts", *(f"ecomrlve.envs.{f}.acts" for f in ("cart", "recommend", "account", "journey"))}
    assert families <= {act.__module__ for act in acts}  # every family's acts derive from the one base type
    for act_type in (act for act in acts if act.__module__.startswith("ecomrlve.")):  # not a test's own env
        owners = {t for t in dict.fromkeys([COMMON_TEMPLATES, *(load(s.templates) for s in SPECS if s.templates)])
                  if issubclass(act_type, t.acts)}
        assert len(owners) == 1, (act_type, owners)
    with pytest.raises(TypeError, match="no template"):
        templates_for(object())


def test_difficulty_command_shows_who_reads_each_axis() -> None:
    result = CliRunner().invoke(app, ["difficulty", "--levels", "0-1"], env={"COLUMNS": "250"})
    assert result.exit_code == 0, result.output
    readers: dict[str, str] = {}  # axis -> its "read by" cell of the first table, wrapped lines joined
    axis = ""
    for line in result.output.split("└")[0].splitlines():
        cells = [cell.strip() for cell in line.split("│")]
        if len(cells) == 5:
            axis = cells[1] or axis
            readers[axis] = f"{readers.get(axis, '')} {cells[3]}".strip()
    assert "RETURN, STATUS" in readers["order_reference"]
    assert "BUNDLE" in readers["bundle_budget"] and readers["T_max"] == "all"
    search_readers = readers["top_k"]  # catalog_search's axes: only where it is offered
    assert "CART" in search_readers and "STATUS" not in search_readers and "POLICY" not in search_readers


def test_an_environment_is_subject_to_its_tools_axes() -> None:
    """top_k and eps_rank (read by catalog_search) shape exactly the environments that offer catalog_search."""
    for spec in SPECS:
        offers_search = "catalog_search" in get_environment(spec.id).tool_names
        axes = environment_axes(spec.id)
        assert ("top_k" in axes, "eps_rank" in axes) == (offers_search, offers_search), spec.id
        assert set(RUNTIME_AXES) | set(spec.axes) <= set(axes), spec.id


def test_a_journey_is_subject_to_its_request_kinds_axes() -> None:
    """JOURNEY plays other environments' tasks, so `ecomrlve difficulty` names it among their axes' readers."""
    journey = environment_axes("JOURNEY")
    for family in intent_families():
        assert set(environment_axes(family.env_id)) <= set(journey), family.env_id
    assert {"journey_intents", "m", "cart_items", "order_reference"} <= set(journey)


def test_every_axis_is_read_by_an_environment_or_the_runtime() -> None:
    """`ecomrlve difficulty` names who reads each axis (the runtime's, the tools' and the specs' axes): none
    may show no reader."""
    readers = {axis.name: [s.id for s in SPECS if axis.name in environment_axes(s.id)] for axis in AXES}
    assert [name for name, ids in readers.items() if not ids] == []
    assert {"PD", "SUB", "BUNDLE"} <= set(readers["feedback_detail"])  # the recommendation shoppers' verdicts
