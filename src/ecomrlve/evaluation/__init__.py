"""Evaluating an agent: k trials per task, pass^k, confidence intervals, reports, comparisons.

``ecomrlve eval`` and ``ecomrlve compare`` are thin wrappers over this package:
:class:`Evaluation` plays and records (resumable), :mod:`.stats` computes, :mod:`.report`
writes ``summary.json``/``report.md``/``report.html``, :mod:`.compare` sets two runs side by side.
"""

from __future__ import annotations

from ecomrlve.evaluation.run import EvalConfigMismatch, EvalSpec, Evaluation, read_records
from ecomrlve.evaluation.stats import mean_ci, pass_hat_k, summarise, wilson_interval

__all__ = ["EvalConfigMismatch", "EvalSpec", "Evaluation", "mean_ci", "pass_hat_k", "read_records",
           "summarise", "wilson_interval"]
