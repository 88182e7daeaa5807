"""Shared fixtures: one small synthetic catalog and one search engine per test process.

Building the BM25 index and JIT-compiling its numba kernels takes seconds, so every test
that plays episodes shares the same ``SearchEngine`` (pass ``catalog=..., search=...``).
"""

from __future__ import annotations

import atexit
import os
import shutil
import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from ecomrlve.catalog.schema import Catalog
from ecomrlve.catalog.search import SearchEngine
from ecomrlve.catalog.synthetic import generate_synthetic_catalog
from ecomrlve.episode import EcomEnv
from ecomrlve.session import CONFIG_DIR_ENV_VAR, SECRET_ENV_VAR

# Property tests assert what holds, never how fast: on a shared machine a starved worker would otherwise fail
# Hypothesis's timing checks (a per-example deadline, "input generation too slow") with nothing wrong.
settings.register_profile("suite", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("suite")

# tests/ is not a package: make tests/exploits.py importable as ``exploits`` from any rootdir.
sys.path.insert(0, str(Path(__file__).parent))

# One deployment secret for the whole suite (and the processes it starts), so every test plays the
# same episodes on every run; tests of the unconfigured default remove it with ``monkeypatch``.
os.environ[SECRET_ENV_VAR] = "ecomrlve-test-suite"
# The installation secret (made on first use without one) goes to a directory of the suite's own, never
# to the real home; the processes tests start inherit it.
os.environ[CONFIG_DIR_ENV_VAR] = tempfile.mkdtemp(prefix="ecomrlve-test-config-")
atexit.register(shutil.rmtree, os.environ[CONFIG_DIR_ENV_VAR], True)

CATALOG_SIZE = 3000
CATALOG_SEED = 0


@pytest.fixture(scope="session")
def catalog() -> Catalog:
    """The small synthetic catalog every episode test plays on."""
    return generate_synthetic_catalog(CATALOG_SIZE, CATALOG_SEED)


@pytest.fixture(scope="session")
def search(catalog: Catalog) -> SearchEngine:
    """One search engine (BM25 index + numba JIT paid once per process)."""
    engine = SearchEngine(catalog)
    engine.search("warm up", None, "relevance", 5)  # build the index now, not inside a test
    return engine


@pytest.fixture(scope="session")
def make_env(catalog: Catalog, search: SearchEngine):
    """Factory for CART environments on the shared catalog and search engine."""

    def make(**kwargs) -> EcomEnv:
        return EcomEnv("CART", catalog=catalog, search=search, **kwargs)

    return make


@pytest.fixture
def env(make_env) -> EcomEnv:
    """A fresh CART environment (default axes)."""
    return make_env()
