"""Transcript checks: the simulated shopper reads like a person on real-schema and synthetic catalogs.

Over oracle episodes of every environment at low, middle and top difficulty: no shopper message
longer than MAX_MESSAGE_CHARS, no sentence twice in one message, no unfilled template slot, no
listing title pasted whole, and (without noise, which may turn "and" into "an") articles that
agree with their noun: "an" before a vowel sound, "a pair of" before shoes and headphones.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from ecomrlve.catalog.loaders import load_products
from ecomrlve.catalog.product_type import indefinite
from ecomrlve.catalog.search import SearchEngine
from ecomrlve.envs import env_collections
from ecomrlve.envs.capabilities import capabilities
from ecomrlve.episode import EcomEnv
from ecomrlve.runner import play
from ecomrlve.user.noise import TYPOS_PER_UNIT_NOISE, add_noise
from ecomrlve.user.realiser import sentences

DATA = Path(__file__).parent / "data" / "real"
CATALOGS = ("synthetic", "no_attributes", "brand_only", "tiny", "accessories")
MAX_MESSAGE_CHARS = 900
D_LEVELS = (0, 7, 15)
SEEDS = range(2)
_SLOT = re.compile(r"[{}]|\bNone\b")
_A_VOWEL = re.compile(r"\ba [aeio]\w*", re.IGNORECASE)
_AN_CONSONANT = re.compile(r"\ban [bcdfgjkmnpqrstvwxyz]\w*", re.IGNORECASE)
_PLURAL_AFTER_A = re.compile(r"\b(?:a|an|a similar) (?:[a-z-]+ )?(?:shoes|headphones|earbuds|sneakers|jeans)\b", re.IGNORECASE)


@pytest.fixture(scope="module")
def catalogs(catalog, search) -> dict[str, tuple]:
    out = {"synthetic": (catalog, search)}
    for name in CATALOGS[1:]:
        real, _ = load_products(DATA / f"{name}.jsonl")
        out[name] = (real, SearchEngine(real))
    return out


def _shopper_messages(catalog, search, overrides=None):
    for env_id in env_collections()["C8"]:
        if capabilities(catalog).refusal(env_id) is not None:
            continue
        env = EcomEnv(env_id, catalog=catalog, search=search, overrides=overrides)
        for d in D_LEVELS:
            for seed in SEEDS:
                record = play(env, "oracle", env_id=env_id, difficulty=d, seed=seed)
                for message in record.messages:
                    if message["role"] == "user" and message.get("content"):
                        yield env_id, d, seed, message["content"]


@pytest.mark.parametrize("name", CATALOGS)
def test_messages_are_short_unrepeated_and_filled(catalogs, name) -> None:
    catalog, search = catalogs[name]
    problems, count = [], 0
    for env_id, d, seed, text in _shopper_messages(catalog, search):
        count += 1
        said = [s.lower() for s in sentences(text)]
        if len(text) > MAX_MESSAGE_CHARS:
            problems.append(("too long", env_id, d, seed, len(text)))
        if len(said) != len(set(said)):
            problems.append(("repeated sentence", env_id, d, seed, text))
        if _SLOT.search(text):
            problems.append(("unfilled slot", env_id, d, seed, text))
    assert count > 60  # enough messages checked: every env (but refused ones) at 3 levels x 2 seeds
    assert not problems, f"{name}: {len(problems)} problems, e.g. {problems[:3]}"


@pytest.mark.parametrize("name", CATALOGS)
def test_articles_agree(catalogs, name) -> None:
    catalog, search = catalogs[name]
    problems = []
    for env_id, d, seed, text in _shopper_messages(catalog, search, overrides={"p_noise": 0.0}):
        for pattern in (_A_VOWEL, _AN_CONSONANT, _PLURAL_AFTER_A):
            for match in pattern.finditer(text):
                if not re.match(r"an? (?:us|uni|one|eu|hour|honest)", match.group(0), re.IGNORECASE):
                    problems.append((env_id, d, seed, match.group(0), text))
    assert not problems, f"{name}: {len(problems)} article errors, e.g. {problems[:3]}"


def test_no_listing_title_is_pasted_into_speech(catalogs) -> None:
    """On the accessory fixture (titles of 90-130 characters) the shopper never says a whole title."""
    catalog, search = catalogs["accessories"]
    titles = {catalog.title(r) for r in range(len(catalog))}
    pasted = [(e, d, s) for e, d, s, text in _shopper_messages(catalog, search) if any(t in text for t in titles)]
    assert not pasted, pasted[:3]


@pytest.mark.parametrize(("noun", "expected"), [
    ("keyboard", "a keyboard"), ("earbud case", "an earbud case"), ("running shoes", "a pair of running shoes"),
    ("headphones", "a pair of headphones"), ("USB cable", "a usb cable"), ("hour glass", "an hour glass"),
    ("keycaps", "some keycaps"), ("glass", "a glass"), ("HDMI cable", "an hdmi cable"),
])
def test_indefinite_articles(noun, expected) -> None:
    assert indefinite(noun) == expected


def test_similar_pairs_and_singulars() -> None:
    assert indefinite("headphones", "similar") == "a similar pair of headphones"
    assert indefinite("over-ear headphones", "similar") == "a similar pair of over-ear headphones"
    assert indefinite("office chair", "similar") == "a similar office chair"


@pytest.mark.parametrize("p", [0.01, 0.06, 0.125])
def test_noise_rate_is_per_message(p) -> None:
    """A long message gets about 24·p typos, never a typo in more than a quarter of its words."""
    import random

    text = " ".join(["find the wireless keyboard and backlit keys for my office desk"] * 4)
    words = text.split()
    changed = []
    for seed in range(200):
        out = add_noise(text, p, random.Random(seed)).split()
        changed.append(sum(a != b for a, b in zip(words, out)) if len(out) == len(words) else None)
    counts = [c for c in changed if c is not None]
    assert max(counts) <= len(words) // 4
    mean = sum(counts) / len(counts)
    assert mean <= TYPOS_PER_UNIT_NOISE * p + 1.5, mean
    assert mean >= 0.5 * TYPOS_PER_UNIT_NOISE * p, mean
