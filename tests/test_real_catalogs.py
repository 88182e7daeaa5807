"""Every environment on real-schema catalogs: the oracle solves it or the env refuses; what the envs adapt.

The fixtures (tests/data/real/*.jsonl) are Amazon Reviews 2023 metadata files with invented values,
written by scripts/make_real_fixtures.py: one category without attributes, six categories with only
a brand, a 200-product catalog, and categories mixing main products with their accessories.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from ecomrlve.actions import AgentAction, ToolCall
from ecomrlve.catalog.loaders import load_products
from ecomrlve.catalog.product_type import category_types, is_main_type, product_type, same_type
from ecomrlve.catalog.search import SearchEngine
from ecomrlve.envs import env_collections
from ecomrlve.envs.capabilities import CatalogUnsupportedError, capabilities
from ecomrlve.envs.recommend.requirements import category_view
from ecomrlve.episode import EcomEnv
from ecomrlve.runner import play

DATA = Path(__file__).parent / "data" / "real"
FIXTURES = ("no_attributes", "brand_only", "tiny", "accessories")
ENVS = env_collections()["C8"]
SAMPLE_D = (0, 5, 10, 15)


@pytest.fixture(scope="module")
def real() -> dict[str, tuple]:
    """Each fixture's catalog and one search engine over it."""
    out = {}
    for name in FIXTURES:
        catalog, _ = load_products(DATA / f"{name}.jsonl")
        out[name] = (catalog, SearchEngine(catalog))
    return out


def test_fixtures_are_what_the_script_writes(tmp_path) -> None:
    """The committed fixtures are reproducible byte for byte from the script."""
    spec = importlib.util.spec_from_file_location("make_real_fixtures",
                                                  Path(__file__).parents[1] / "scripts" / "make_real_fixtures.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.main(tmp_path)
    for name in FIXTURES:
        assert (tmp_path / f"{name}.jsonl").read_bytes() == (DATA / f"{name}.jsonl").read_bytes(), name


@pytest.mark.parametrize("fixture", FIXTURES)
def test_every_env_solved_by_its_oracle_or_refused(real, fixture) -> None:
    """On each fixture the oracle scores r_task = 1 at every sampled d, or the env says why it cannot run."""
    catalog, search = real[fixture]
    failures = []
    for env_id in ENVS:
        reason = capabilities(catalog).refusal(env_id)
        if reason is not None:
            assert "\n" not in reason and reason.strip(), (env_id, reason)
            continue
        env = EcomEnv(env_id, catalog=catalog, search=search)
        for d in SAMPLE_D:
            for seed in range(2):
                record = play(env, "oracle", env_id=env_id, difficulty=d, seed=seed)
                if record.reward.r_task != 1.0:
                    failures.append((env_id, d, seed, record.reward.r_task))
    assert not failures, f"{fixture}: {failures}"


def test_bundle_refuses_a_catalog_without_project_categories(real) -> None:
    catalog, _ = real["no_attributes"]
    assert capabilities(catalog).refusal("BUNDLE").startswith("BUNDLE cannot run on this catalog")
    assert capabilities(real["tiny"][0]).refusal("BUNDLE") is None


def test_cart_synthesises_variants_and_shares_categories(real) -> None:
    """One category, no attributes: CART still asks for variants (synthesised) and for 5 items, and says so."""
    catalog, search = real["no_attributes"]
    env = EcomEnv("CART", catalog=catalog, search=search, overrides={"p_variant": 1.0, "cart_items": 3})
    record = play(env, "oracle", env_id="CART", difficulty=8, seed=4)
    goal = env.audit().problem.goal
    assert all(item.variant_value is not None for item in goal.items)
    assert record.axes["adapted"]["cart_items"].startswith("the catalog has 1 categories for 3 items")
    assert record.reward.r_task == 1.0


def test_cart_without_variants_never_names_a_missing_attribute(real) -> None:
    """p_variant = 0: the shopper answers "which one?" without a variant attribute (no KeyError)."""
    catalog, search = real["brand_only"]
    env = EcomEnv("CART", catalog=catalog, search=search, overrides={"p_variant": 0.0, "p_noise": 0.0})
    env.reset(env_id="CART", difficulty=3, seed=1)
    observation = env.step(AgentAction(message="Which variant do you want?", tool_calls=()))
    reply = observation.messages[-1]["content"]
    assert "None" not in reply and "{" not in reply, reply


def test_return_without_final_sale_is_ineligible_by_window_and_says_so(real) -> None:
    """No final-sale category: high-d RETURN episodes that wanted a final-sale item record the adaptation."""
    catalog, search = real["brand_only"]
    env = EcomEnv("RETURN", catalog=catalog, search=search)
    adapted = []
    for seed in range(40):
        record = play(env, "oracle", env_id="RETURN", difficulty=10, seed=seed)
        assert record.reward.r_task == 1.0, seed
        if "adapted" in record.axes:
            adapted.append(record)
            assert env.audit().problem.goal.verdict_code != "final_sale"
            assert not env.audit().problem.goal.eligible
    assert adapted, "no episode wanted a final-sale item in 40 seeds"


def test_bundle_records_a_smaller_bundle(real) -> None:
    catalog, search = real["tiny"]
    env = EcomEnv("BUNDLE", catalog=catalog, search=search)
    record = play(env, "oracle", env_id="BUNDLE", difficulty=15, seed=0)
    assert len(env.audit().problem.goal.categories) < env.audit().problem.difficulty.bundle_categories
    assert "bundle_categories" in record.axes["adapted"]


# -- accessories never satisfy a main-product request ---------------------------------------------

def _answer(env: EcomEnv, **arguments) -> float:
    observation = env.step(AgentAction(message=None, tool_calls=(ToolCall(id="a", name="answer", arguments=arguments),)))
    assert observation.done
    return env.record.reward.r_task


def _accessory_of(catalog, category: int) -> int:
    info = category_types(catalog, category)
    return next(int(r) for r in info.rows if not same_type(info.type_of(int(r)), info.main) and catalog.stock[r] > 0)


def test_accessory_fixture_types(real) -> None:
    """Each mixed category's main type is the main product, and its accessories are typed apart."""
    catalog, _ = real["accessories"]
    mains = {c.name: category_types(catalog, i).main for i, c in enumerate(catalog.categories)}
    assert mains == {"Smartwatches": "smartwatch", "Running Shoes": "running shoes",
                     "Over-Ear Headphones": "over-ear headphones", "Keyboards": "keyboard"}
    types = {category_types(catalog, i).type_of(int(r)): catalog.title(int(r))
             for i in range(len(catalog.categories)) for r in catalog.category_rows[i]}
    assert {"strap", "charger", "screen protector", "sticker", "insole", "ear hook", "case", "keycap",
            "wrist rest"} <= set(types), types


@pytest.mark.parametrize("env_id", ["PD", "SUB"])
def test_ranked_goals_and_valid_sets_hold_only_the_requested_type(real, env_id) -> None:
    catalog, search = real["accessories"]
    env = EcomEnv(env_id, catalog=catalog, search=search)
    for d in (0, 4, 8, 12, 15):
        for seed in range(4):
            env.reset(env_id=env_id, difficulty=d, seed=seed)
            goal = env.audit().problem.goal
            view = category_view(catalog, goal.category, main_type_only=True)
            assert goal.noun == category_types(catalog, goal.category).main
            assert all(is_main_type(catalog, int(r)) for r in view.rows)
            assert all(is_main_type(catalog, catalog.index_of(i)) for i in goal.ideal_ids)
            target = goal.target_row if env_id == "PD" else goal.original_row
            assert is_main_type(catalog, target)
            accessory = catalog.product_id(_accessory_of(catalog, goal.category))
            assert _answer(env, product_ids=[accessory]) < 0, (d, seed)


def test_bundle_slots_never_accept_an_accessory(real) -> None:
    """Swapping one reference product for an accessory of its category uncovers that slot."""
    catalog, search = real["accessories"]
    env = EcomEnv("BUNDLE", catalog=catalog, search=search)
    checked = 0
    for seed in range(12):
        env.reset(env_id="BUNDLE", difficulty=0, seed=seed)
        goal = env.audit().problem.goal
        rows = [catalog.index_of(i) for i in goal.reference_ids]
        assert all(is_main_type(catalog, r) for r in rows)
        assert goal.nouns == [category_types(catalog, c).main for c in goal.categories]
        swapped = [catalog.product_id(_accessory_of(catalog, goal.categories[0]))] + goal.reference_ids[1:]
        assert _answer(env, product_ids=swapped) < 1.0, seed
        env.reset(env_id="BUNDLE", difficulty=0, seed=seed)
        assert _answer(env, product_ids=goal.reference_ids) == 1.0, seed
        checked += 1
    assert checked == 12


def test_cart_names_each_item_by_its_own_type(real) -> None:
    """CART may ask for a strap, but calls it a strap; a sold-out item's alternative is of the same type."""
    catalog, search = real["accessories"]
    env = EcomEnv("CART", catalog=catalog, search=search)
    alternatives = 0
    for d in (0, 6, 12, 15):
        for seed in range(6):
            env.reset(env_id="CART", difficulty=d, seed=seed)
            for item in env.audit().problem.goal.items:
                assert item.noun == product_type(catalog, item.row)
                if item.alternative is not None:
                    alternatives += 1
                    assert same_type(product_type(catalog, item.alternative.row), item.noun)
    assert alternatives > 0


def test_an_unsupported_env_is_refused_at_start(real) -> None:
    catalog, search = real["no_attributes"]
    with pytest.raises(CatalogUnsupportedError, match=r"BUNDLE cannot run on this catalog: no BUNDLE project") as caught:
        EcomEnv("BUNDLE", catalog=catalog, search=search)
    assert "\n" not in str(caught.value)


def test_adapted_episodes_replay_from_their_record(tmp_path) -> None:
    """`run --out` then `replay` on a real file: records carrying axes.adapted replay byte for byte."""
    from typer.testing import CliRunner

    from ecomrlve.cli import app

    out = tmp_path / "runs.jsonl"
    runner = CliRunner()
    result = runner.invoke(app, ["run", "--env", "CART,RETURN", "--agent", "oracle", "--difficulty", "8-10",
                                 "--episodes", "3", "--catalog", str(DATA / "no_attributes.jsonl"), "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert any('"adapted"' in line for line in out.read_text().splitlines())
    replayed = runner.invoke(app, ["replay", str(out)])
    assert replayed.exit_code == 0, replayed.output


@pytest.mark.parametrize("d, seed", [(5, 1), (6, 10)])
def test_journey_replacing_an_intent_never_needs_a_policy_drawn_too_late(real, d, seed) -> None:
    """On a catalog where a request cannot be hosted, JOURNEY replaces it, possibly with a POLICY request:
    the store policy is drawn before the first order (a late draw crashed at these keys)."""
    catalog, search = real["no_attributes"]
    env = EcomEnv("JOURNEY", catalog=catalog, search=search, secret="fixture-sweep")
    record = play(env, "oracle", env_id="JOURNEY", difficulty=d, seed=seed)
    assert record.reward.r_task == 1.0 and record.reward.is_correct
