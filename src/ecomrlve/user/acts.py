"""Dialogue acts: *what* the simulated user says, decided by the dialogue manager.

Every act is a frozen dataclass deriving from :class:`DialogueAct`. Each environment family
declares its own acts beside its dialogue (``envs/<family>/acts.py``); the acts here are the
ones every shopper may say. A realiser turns acts into text. Acts carry only the values the user
is allowed to say at that moment, so a realiser (template or LLM) can never leak the rest of the
hidden goal.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class DialogueAct:
    """Base of every dialogue act; an environment's ``ActTemplates`` say which acts it phrases."""


@dataclass(frozen=True)
class Confirm(DialogueAct):
    pass


@dataclass(frozen=True)
class Acknowledge(DialogueAct):
    pass


@dataclass(frozen=True)
class GiveUp(DialogueAct):
    pass
