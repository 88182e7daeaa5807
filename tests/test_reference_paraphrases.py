"""The blind paraphrases of the reference agents' questions (``benchmarks/bench_reference_phrasings.py`` measures
the agents asking with them) and the way the agents are made to ask with them."""

from __future__ import annotations

import re
import string
from pathlib import Path

import pytest
from reference_paraphrases import PARAPHRASE_SETS, asking_with, draw, paraphrases, question_slots, shipped_wording

from ecomrlve.episode import EcomEnv
from ecomrlve.runner import play


def _slots(template: str) -> list[str]:
    return sorted(name for _, name, _, _ in string.Formatter().parse(template) if name is not None)


@pytest.mark.parametrize("path", PARAPHRASE_SETS, ids=lambda path: path.stem)
def test_every_question_has_eleven_paraphrases_with_its_slots(path: Path) -> None:
    shipped = shipped_wording()
    options = paraphrases(path)
    assert sorted(options) == sorted(question_slots())
    for name, texts in options.items():
        assert len(texts) == len(set(texts)) == 11 and shipped[name] not in texts
        assert all(_slots(text) == _slots(shipped[name]) for text in texts), name
        assert not any(re.search(r"[{}]", text.format(**dict.fromkeys(_slots(text), "x"))) for text in texts)


@pytest.fixture(scope="module")
def env(catalog, search) -> EcomEnv:
    return EcomEnv("C8", catalog=catalog, search=search)


EPISODES = [("CART", 8, 2), ("RETURN", 12, 1), ("PD", 5, 0), ("BUNDLE", 6, 3), ("JOURNEY", 9, 4)]


@pytest.mark.parametrize(("env_id", "d", "seed"), EPISODES)
def test_asking_in_the_shipped_words_plays_the_shipped_episode(env, env_id: str, d: int, seed: int) -> None:
    shipped = play(env, "reference", env_id=env_id, difficulty=d, seed=seed).model_dump_json()
    with asking_with(shipped_wording()):
        assert play(env, "reference", env_id=env_id, difficulty=d, seed=seed).model_dump_json() == shipped


def test_the_agents_ask_in_the_drawn_words_and_get_their_own_back(env) -> None:
    wording = draw(paraphrases(), "CART", 8, 2)
    before = shipped_wording()
    with asking_with(wording):
        record = play(env, "reference", env_id="CART", difficulty=8, seed=2)
    said = " ".join(m["content"] or "" for m in record.messages if m["role"] == "assistant")
    quantity = wording["cart.quantity_all"]
    assert quantity in said and before["cart.quantity_all"] not in said
    assert draw(paraphrases(), "CART", 8, 2) == wording and shipped_wording() == before
