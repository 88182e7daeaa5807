"""The shopper options every command that plays episodes shares (``run``, ``eval``; ``serve``, ``train``).

A command declares the parameters with the ``Annotated`` aliases below and builds the realiser
with :meth:`ShopperOptions.build`, which fails in one line (:class:`UserInputError`) if the
endpoint is down, before the first episode::

    def serve(..., user_model: UserModel = None, user_base_url: UserBaseUrl = DEFAULT_BASE_URL,
              user_api_key_env: UserApiKeyEnv = None, phrasing: PhrasingOption = "train") -> None:
        shopper = ShopperOptions(user_model, user_base_url, user_api_key_env, phrasing=phrasing).build()
        env = EcomEnv(..., realiser=shopper)
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from ecomrlve.agents.llm import EndpointError, LLMConfig, SamplingParams, api_key_from_env
from ecomrlve.errors import UserInputError
from ecomrlve.shopper.llm import LLMShopper
from ecomrlve.user.realiser import PHRASINGS, Phrasing, RealiserFactory, TemplateShopper

DEFAULT_BASE_URL = "http://localhost:8000/v1"
#: the parameter names of the options below, as commands declare them (``run|eval --server`` refuses them)
SHOPPER_PARAMETERS = ("user_model", "user_base_url", "user_api_key_env", "user_cache", "user_concurrency", "phrasing")

UserModel = Annotated[str | None, typer.Option(
    "--user-model", help="LLM shopper: the served model that phrases the shopper's messages (default: templates).")]
UserBaseUrl = Annotated[str, typer.Option("--user-base-url", help="LLM shopper: the OpenAI-compatible endpoint.")]
UserApiKeyEnv = Annotated[str | None, typer.Option(
    "--user-api-key-env", help="LLM shopper: variable holding the API key (default OPENAI_API_KEY, else none).")]
UserCache = Annotated[Path | None, typer.Option(
    "--user-cache", help="LLM shopper: cache replies here (content-addressed; a re-run makes no calls).")]
UserConcurrency = Annotated[int, typer.Option("--user-concurrency", min=1,
                                              help="LLM shopper: requests in flight at once.")]
PhrasingOption = Annotated[str, typer.Option("--phrasing", help="Template phrasings and personas: train or eval "
                                             "(disjoint halves).")]


@dataclass(frozen=True)
class ShopperOptions:
    """How the shopper phrases its messages: templates (no model) or an LLM at an endpoint."""

    model: str | None = None
    base_url: str = DEFAULT_BASE_URL
    api_key_env: str | None = None
    cache: Path | None = None
    concurrency: int = 8
    timeout: float = 60.0
    max_retries: int = 2
    temperature: float | None = 0.7
    max_tokens: int = 160
    seed: int = 0
    phrasing: str = "train"

    def _phrasing(self) -> Phrasing:
        for phrasing in PHRASINGS:
            if self.phrasing == phrasing:
                return phrasing
        raise UserInputError(f"--phrasing: choose {' or '.join(PHRASINGS)}, got {self.phrasing!r}")

    def build(self) -> RealiserFactory:
        """The realiser factory; an LLM endpoint is checked now (down: one-line UserInputError)."""
        phrasing = self._phrasing()
        if not self.model:
            return TemplateShopper(phrasing)
        config = LLMConfig(model=self.model, base_url=self.base_url,
                           api_key=api_key_from_env(self.api_key_env, "--user-api-key-env"),
                           sampling=SamplingParams(self.temperature, None, self.max_tokens, self.seed),
                           timeout=self.timeout, max_retries=self.max_retries)
        try:
            shopper = LLMShopper(config, phrasing=phrasing, concurrency=self.concurrency, cache_dir=self.cache)
            shopper.check()
        except EndpointError as exc:
            raise UserInputError(f"--user-base-url: the LLM shopper's endpoint: {exc}") from None
        return shopper

    def describe(self) -> dict[str, Any] | None:
        """What defines the shopper for a stored run config (None: the default train templates)."""
        if not self.model and self.phrasing == "train":
            return None
        out: dict[str, Any] = {"phrasing": self.phrasing}
        if self.model:
            out |= {"model": self.model, "temperature": self.temperature, "max_tokens": self.max_tokens,
                    "seed": self.seed}
        return out


def print_shopper_summary(console: Console, rows: dict[str, dict[str, Any]]) -> None:
    """The LLM shopper's per-environment counts (:func:`~ecomrlve.shopper.llm.shopper_summary`) as a table."""
    table = Table(title="LLM shopper (messages per environment)")
    for column in ("env", "messages", "by model", "fallbacks", "fallback rate", "rejected attempts"):
        table.add_column(column, justify="left" if column == "env" else "right", overflow="fold")
    for env_id, row in rows.items():
        table.add_row(env_id, str(row["messages"]), str(row["llm"]), str(row["fallbacks"]),
                      f"{row['fallback_rate']:.1%}", str(row["rejected"]))
    console.print(table)
