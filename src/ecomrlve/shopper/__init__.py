"""The simulated shopper's phrasing beyond templates: an LLM realiser with a grounding check, replay and a cache.

See :mod:`ecomrlve.shopper.llm` for how it works and :mod:`ecomrlve.shopper.options` for the
command-line options every command that plays episodes shares (imported apart: it needs typer).
"""

from ecomrlve.shopper.llm import LLMShopper, ReplayShopper, shopper_summary

__all__ = ["LLMShopper", "ReplayShopper", "shopper_summary"]
