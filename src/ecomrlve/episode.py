"""``EcomEnv``: reset/step over any set of environments, one :class:`EpisodeSession` at a time.

The episode itself (tools, budgets, surfacing, reward, record) is :mod:`ecomrlve.session`; this
module picks which episode to play and keeps one search engine per catalog. Difficulty comes
from the caller: the adaptive scheduler lives in the run loop (:mod:`ecomrlve.runner`), which
reports each outcome once per finished episode.

``(env_id, difficulty, seed, secret)`` determines an episode completely: the per-deployment
``secret`` is mixed into every random stream, so an agent that learns (or guesses) env,
difficulty and seed still cannot regenerate the hidden goal with the open-source package.
"""

from __future__ import annotations

import os
from typing import Any

from ecomrlve.actions import AgentAction, short_text
from ecomrlve.catalog import load_catalog
from ecomrlve.catalog.derived import derived
from ecomrlve.catalog.schema import Catalog, build_lookups
from ecomrlve.catalog.search import SearchEngine
from ecomrlve.catalog.synthetic import default_catalog
from ecomrlve.difficulty import Difficulty
from ecomrlve.envs import TaskFamily, get_environment, resolve_env_ids
from ecomrlve.envs.base import prepare_catalog
from ecomrlve.envs.capabilities import require_support
from ecomrlve.errors import UserInputError
from ecomrlve.protocol import DEFAULT_VERBOSITY, VERBOSITIES, Agent, Observation, Verbosity
from ecomrlve.rewards import RewardWeights
from ecomrlve.rng import derive_rng
from ecomrlve.session import EpisodeAudit, EpisodeRecord, EpisodeSession, resolve_secret
from ecomrlve.user.realiser import Realiser, RealiserFactory


class EcomEnv:
    """Reset/step over a set of environments: ``reset`` then ``step`` until ``done``.

    Args:
        env_ids: an environment id ("CART"), a collection ("C1") or a list; ``reset`` picks
            uniformly among them unless told which.
        catalog: the product catalog, or a catalog spec as the CLI takes it ("synthetic:N", a
            catalog directory, a product file; default: the embedded synthetic catalog). An
            environment the catalog cannot support raises ``CatalogUnsupportedError`` here.
        search: a search engine over ``catalog`` (default: lexical BM25, shared per catalog).
        overrides: fixed values for difficulty axes, e.g. ``{"p_noise": 0.0}``.
        weights: reward weights.
        realiser: how the user phrases things: a realiser or a per-episode factory (default: the
            train-set templates with noise at ``p_noise``).
        denied_categories: category names the store must never sell (safety rule).
        seed: seeds the choice of env and episode seed when ``reset`` is not told.
        verbosity: how tool results are written: ``compact`` (default: product cards as tables, short
            titles) or ``full`` (every card field spelled out, for debugging); the same facts either way,
            so the episode (shopper, verifier, reward) is the same.
        secret: the deployment secret mixed into every episode's random streams (see
            :func:`resolve_secret`): default ``$ECOMRLVE_SECRET``, else the installation's secret,
            created on first use in the user's config directory, so one machine plays the same
            episode for the same seed while an agent with only the package cannot rebuild it. Pass
            one explicitly (or set the variable) to reproduce episodes on other machines.
    """

    def __init__(self, env_ids: str | list[str] | tuple[str, ...] = "C1", *,
                 catalog: Catalog | str | os.PathLike[str] | None = None,
                 search: SearchEngine | None = None, overrides: dict[str, Any] | None = None,
                 weights: RewardWeights = RewardWeights(), realiser: Realiser | RealiserFactory | None = None,
                 denied_categories: tuple[str, ...] = (), seed: int = 0, secret: str | None = None,
                 verbosity: Verbosity = DEFAULT_VERBOSITY) -> None:
        self.env_ids = resolve_env_ids(env_ids)
        if verbosity not in VERBOSITIES:
            raise UserInputError(f"verbosity must be one of {', '.join(VERBOSITIES)}, got {verbosity!r}")
        self.verbosity = verbosity
        self.secret = resolve_secret(secret)
        self.catalog = (load_catalog(os.fspath(catalog)) if isinstance(catalog, (str, os.PathLike))
                        else catalog if catalog is not None else default_catalog())
        require_support(self.catalog, self.env_ids)
        build_lookups(self.catalog)
        # per-catalog structures now, not on a category's first episode
        prepare_catalog(self.catalog, [get_environment(env_id) for env_id in self.env_ids])
        self.search = search if search is not None else shared_search_engine(self.catalog)
        self.overrides = dict(overrides or {})
        self.weights = weights
        self.realiser = realiser
        self._denied = frozenset(i for i, c in enumerate(self.catalog.categories)
                                 if c.name in denied_categories or c.path[0] in denied_categories)
        self._rng = derive_rng("ecomenv", seed)
        self._session: EpisodeSession | None = None

    def reset(self, *, env_id: str | None = None, difficulty: int = 0, seed: int | None = None) -> Observation:
        """Start a new episode; an unspecified env or seed is drawn from this object's seeded stream."""
        _check_reset_arguments(self.env_ids, env_id, seed)
        env_id = env_id or self._rng.choice(self.env_ids)
        if seed is None:
            seed = self._rng.getrandbits(31)
        self._session = EpisodeSession(
            get_environment(env_id), Difficulty.at(difficulty, self.overrides), seed, catalog=self.catalog,
            search=self.search, weights=self.weights, realiser=self.realiser, denied_categories=self._denied,
            secret=self.secret, verbosity=self.verbosity)
        return self._session.first_observation

    def step(self, action: AgentAction | str | dict[str, Any]) -> Observation:
        """Apply one agent turn (any of the three wire formats) and return what follows."""
        return self.session.step(action)

    @property
    def session(self) -> EpisodeSession:
        """The current episode, with its turn primitives (``begin_turn``, ``call_tool``, ``end_turn``, ``finish``)."""
        if self._session is None:
            raise RuntimeError("call reset() first")
        return self._session

    @property
    def record(self) -> EpisodeRecord:
        """The finished episode's record; raises while the episode is running (it holds the hidden goal)."""
        return self.session.record()

    def audit(self) -> EpisodeAudit:
        """The current episode's hidden problem and world, for oracles, evaluation code and tests only."""
        return self.session.audit()

    def oracle(self) -> Agent:
        """The current episode's scripted solver (it reads the hidden goal): for evaluation code, never a policy."""
        return self.session.audit().oracle()

    @property
    def environment(self) -> TaskFamily:
        """The environment (generator, verifier, oracle) of the current episode."""
        return self.session.family

    @property
    def done(self) -> bool:
        return self._session is not None and self._session.done


def _check_reset_arguments(env_ids: tuple[str, ...], env_id: object, seed: object) -> None:
    """Fail loudly on arguments that would otherwise be coerced or silently replaced by a draw."""
    if env_id is not None and (not isinstance(env_id, str) or env_id not in env_ids):
        raise ValueError(f"env_id must be one of this env's ids ({', '.join(env_ids)}) or None to draw one, "
                         f"got {short_text(repr(env_id), 60)}")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**63):
        raise ValueError(f"seed must be an integer in [0, 2**63) or None, got {short_text(repr(seed), 60)}")


def shared_search_engine(catalog: Catalog) -> SearchEngine:
    """One search engine (and index) per catalog object, kept in the catalog's derived data.

    A module-level cache would keep every catalog ever used alive; kept by the catalog, the
    engine is freed together with it.
    """
    return SEARCH_ENGINE.of(catalog)


SEARCH_ENGINE = derived("search_engine", SearchEngine)
