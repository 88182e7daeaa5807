"""Catalog identity: ids found in text by the catalog's own id set, whatever the id scheme."""

from __future__ import annotations

import dataclasses
import random
import re
import uuid

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ecomrlve.actions import AgentAction, ToolCall
from ecomrlve.catalog import generate_synthetic_catalog
from ecomrlve.catalog.product_type import spoken_name
from ecomrlve.catalog.schema import Catalog
from ecomrlve.episode import EcomEnv
from ecomrlve.user.realiser import TemplateRealiser

SYNTHETIC = generate_synthetic_catalog(600, 11)


def with_ids(catalog: Catalog, ids: list[str]) -> Catalog:
    """The same products under another id scheme."""
    return dataclasses.replace(catalog, ids=np.array([i.encode() for i in ids]), name=f"{catalog.name}-{ids[0]}")


def _asins(n: int) -> list[str]:
    rng = random.Random(1)
    return [f"B0{rng.getrandbits(40):08X}"[:10] for _ in range(n)]


def _uuids(n: int) -> list[str]:
    rng = random.Random(2)
    return [str(uuid.UUID(int=rng.getrandbits(128), version=4)) for _ in range(n)]


SCHEMES = {
    "asin": with_ids(SYNTHETIC, _asins(len(SYNTHETIC))),
    "numeric": with_ids(SYNTHETIC, [str(i + 1) for i in range(len(SYNTHETIC))]),  # short ids: need a cue
    "uuid": with_ids(SYNTHETIC, _uuids(len(SYNTHETIC))),
}
#: How an agent names a product of each scheme in a sentence.
NAMED = {"asin": "{id}", "numeric": "item #{id}", "uuid": "{id}"}


_OLD_PATTERN = re.compile(r"\bP[0-9A-Z]{8}\b")  # the synthetic-only pattern ids_in_text replaces


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(
    st.sampled_from([SYNTHETIC.product_id(r) for r in range(0, 600, 7)]),
    st.sampled_from(["P00000000", "PZZZZZZZZ", "x", "_", "é", "(", ")", ".", ",", " ", "-", "ID", "the", "12"]),
    st.text(alphabet="PABC0123 .,-_", max_size=6),
), max_size=12))
def test_synthetic_ids_are_found_exactly_as_before(parts):
    """On the synthetic catalog the accessor finds what the old regex found (known ids, first mentions)."""
    text = "".join(parts)
    old = [row for row in (SYNTHETIC.index_of(t) for t in dict.fromkeys(_OLD_PATTERN.findall(text))) if row is not None]
    assert SYNTHETIC.ids_in_text(text) == old


@settings(max_examples=100, deadline=None)
@given(scheme=st.sampled_from(["synthetic", *sorted(SCHEMES)]), picks=st.lists(st.integers(0, 10**6), max_size=10),
       misses=st.lists(st.text(alphabet="PB0-9AZ", min_size=1, max_size=12), max_size=6))
def test_ids_are_looked_up_alike_one_at_a_time_and_at_once(scheme, picks, misses):
    """A few ids are looked up one at a time, more at once: either way each id the catalog has, and its row."""
    catalog = SYNTHETIC if scheme == "synthetic" else SCHEMES[scheme]
    rows_by_id = {catalog.product_id(row): row for row in range(len(catalog))}
    ids = list(dict.fromkeys([catalog.product_id(pick % len(catalog)) for pick in picks] + misses))
    expected = {i: rows_by_id[i] for i in ids if i in rows_by_id}
    lengths = catalog._id_tokens[1]  # what ids_in_text looks up: tokens of an id's length
    assert catalog._rows_of_ids([i for i in ids if len(i) in lengths]) == {i: r for i, r in expected.items()
                                                                          if len(i) in lengths}
    assert [catalog.index_of(i) for i in ids] == [rows_by_id.get(i) for i in ids]


@pytest.mark.parametrize("scheme", sorted(SCHEMES))
def test_each_scheme_is_found_whole_and_only_whole(scheme):
    catalog = SCHEMES[scheme]
    a, b = catalog.product_id(5), catalog.product_id(250)
    name_a, name_b = NAMED[scheme].format(id=a), NAMED[scheme].format(id=b)
    assert catalog.ids_in_text(f"Try {name_a}, or ({name_b}). Also {name_a}!") == [5, 250]
    assert catalog.ids_in_text(f'{{"product_id": "{a}"}}') == [5]
    assert catalog.ids_in_text(f"x{a}y and {a}0") == []  # inside a longer word names nothing


def test_short_numeric_ids_need_a_cue():
    catalog = SCHEMES["numeric"]
    assert catalog.ids_in_text("I need 12 of them for $25, by 2025") == []
    assert catalog.ids_in_text("product 12, 15 and #18; also ID: 19 and id=20") == [11, 14, 17, 18, 19]
    assert catalog.ids_in_text("products 12 and 15 cost 30 dollars") == [11, 14]


def test_short_title_is_the_first_clause():
    row = next(r for r in range(len(SYNTHETIC)) if "," in SYNTHETIC.title(r))
    assert SYNTHETIC.short_title(row) == SYNTHETIC.title(row).split(",")[0]
    assert "," not in SYNTHETIC.short_title(row)


class _NamingRealiser(TemplateRealiser):
    """Template realiser whose shopper also names one product (as if they had seen it elsewhere)."""

    def __init__(self, phrase: str) -> None:
        super().__init__(0.0)
        self.phrase = phrase

    def realise(self, act, rng: random.Random) -> str:
        return f"{super().realise(act, rng)} I saw {self.phrase} somewhere."


def _answer(product_id: str) -> AgentAction:
    return AgentAction(message="", tool_calls=[ToolCall(id="a", name="answer", arguments={"product_ids": [product_id]})])


@pytest.mark.parametrize("scheme", sorted(SCHEMES))
def test_ids_the_shopper_names_are_surfaced_for_r_hall(scheme):
    catalog = SCHEMES[scheme]
    target = catalog.product_id(37)
    named = EcomEnv("PD", catalog=catalog, realiser=_NamingRealiser(NAMED[scheme].format(id=target)))
    named.reset(difficulty=0, seed=3)
    assert named.step(_answer(target)).info["reward"]["r_hall"] == 0.0
    silent = EcomEnv("PD", catalog=catalog)
    silent.reset(difficulty=0, seed=3)
    assert silent.step(_answer(target)).info["reward"]["r_hall"] == -1.0


@pytest.mark.parametrize("scheme", sorted(SCHEMES))
@pytest.mark.parametrize("env_id", ["PD", "SUB"])
def test_the_shopper_reacts_to_a_named_id(scheme, env_id):
    """Naming a product by its id gets a comment on that product, not "I'm not sure what you mean"."""
    catalog = SCHEMES[scheme]
    env = EcomEnv(env_id, catalog=catalog, overrides={"p_noise": 0.0})
    env.reset(difficulty=0, seed=5)
    row = 123
    reply = env.step(AgentAction(message=f"What do you think of {NAMED[scheme].format(id=catalog.product_id(row))}?"))
    text = reply.messages[-1]["content"]
    assert spoken_name(catalog, row).text in text and "not sure what you mean" not in text


@pytest.mark.parametrize("scheme", sorted(SCHEMES))
def test_oracles_solve_on_every_id_scheme(scheme):
    from exploits import play_oracle

    for env_id in ("CART", "PD", "SUB", "BUNDLE"):
        env = EcomEnv(env_id, catalog=SCHEMES[scheme])
        for d, seed in ((0, 1), (6, 2), (12, 3)):
            reward = play_oracle(env, difficulty=d, seed=seed, env_id=env_id).reward
            assert reward["r_task"] == 1.0 and reward["r_hall"] == 0.0, (scheme, env_id, d, seed)
