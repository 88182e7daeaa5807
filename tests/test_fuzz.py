"""Fuzz acceptance: 10,000 hostile turns over every environment and every input path.

Nothing may escape ``step``; every invalid turn ends the episode with -1 and a short reason;
turns that must be invalid are; every record serialises and replays identically.
``benchmarks/bench_fuzz.py`` runs the same at 100,000+ turns.
"""

from __future__ import annotations

import pytest
from fuzz_turns import PATHS, fuzz

from ecomrlve.envs import env_collections

TURNS = 10_000


@pytest.mark.slow
def test_ten_thousand_hostile_turns(catalog, search) -> None:
    stats = fuzz(TURNS, seed=0, catalog=catalog, search=search)
    assert stats.failures == [], "\n\n".join(stats.failures)
    assert stats.turns == TURNS
    assert set(stats.by_path) == set(PATHS) and min(stats.by_path.values()) > TURNS // 10
    assert stats.invalid_turns > 0 and stats.terminations["invalid_output"] == stats.invalid_turns
    assert {"turn_budget", "answered"} <= set(stats.terminations)  # long episodes too, not only early -1s
    assert stats.episodes >= len(env_collections()["C8"]) * 50
