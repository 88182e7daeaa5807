"""The prompts every agent and integration receives: written once, here.

:func:`system_prompt` is the system message of every episode (store role, the simulated date,
the task, and the rules the verifier and the runtime enforce). :func:`tools_prompt` is the
Hermes/Qwen tool block for models served without native tool calling: the tools go into the
system message and the model answers with ``<tool_call>`` blocks, which the runtime parses with
:func:`ecomrlve.actions.parse_action`. Baselines read the tool budget back with
:func:`stated_tool_budget`.
"""

from __future__ import annotations

import datetime as dt
import functools
import json
import re
from typing import Any

STORE_NAME = "Amazebay"

#: the rule on talking to the customer; a runtime where only tool calls reach them (TRL) puts its own in its place
TALK_RULE = "Your text goes to the customer, who replies; ask_user asks them while you call other tools."
#: said only where a tool cannot be undone (:attr:`ecomrlve.tools.Tool.irreversible`)
CONFIRM_RULE = ("Before an irreversible action (a return, a cancellation, a purchase), get the customer's "
                "confirmation when they or the task ask for it.")
# (that answer ends the task is said by every answer tool's description, not here)
_RULES = (
    "Use only ids from tool results or the customer.",
    TALK_RULE,
    CONFIRM_RULE,
    "Arguments outside a tool's schema end the task.",
    "Every turn counts; call at most {b_tool} per turn.",
)


_TOOL_BUDGET = re.compile(r"at most (\d+) tools? per turn")


def stated_tool_budget(prompt: str) -> int | None:
    """The per-turn tool budget a :func:`system_prompt` states (the last rule), None if ``prompt`` states none."""
    found = _TOOL_BUDGET.search(prompt)
    return int(found.group(1)) if found else None


@functools.cache
def _rules(b_tool: int, irreversible: bool) -> str:
    """The rules block for a tool budget, with the confirmation rule or not (one of a few; every reset needs one)."""
    calls = "1 tool" if b_tool == 1 else f"{b_tool} tools"
    return "\n".join(f"- {rule.format(b_tool=calls)}" for rule in _RULES if irreversible or rule != CONFIRM_RULE)


@functools.lru_cache(maxsize=1024)
def _spoken_date(today: dt.date) -> str:
    """"Monday, March 3, 2025": episodes fall on a few hundred dates, each spelled once."""
    return today.strftime("%A, %B %d, %Y").replace(" 0", " ")


def system_prompt(*, today: dt.date | None, task_instructions: str, b_tool: int, irreversible: bool = True) -> str:
    """``today``: the simulated date (None: not said, where nothing the agent does depends on it);
    ``irreversible``: whether a tool offered cannot be undone (then :data:`CONFIRM_RULE` is said)."""
    date = f" Today is {_spoken_date(today)}." if today is not None else ""
    return (f"You are {STORE_NAME}'s shopping assistant.{date}\n\n"
            f"Your task: {task_instructions}\n\nRules:\n{_rules(b_tool, irreversible)}")


def tools_prompt(tools: list[dict[str, Any]]) -> str:
    """The tool block appended to the system message in text mode (the Hermes/Qwen convention)."""
    signatures = "\n".join(json.dumps(tool, ensure_ascii=False) for tool in tools)
    return (
        "# Tools\n\nYou may call one or more functions to assist with the user query.\n\n"
        "You are provided with function signatures within <tools></tools> XML tags:\n"
        f"<tools>\n{signatures}\n</tools>\n\n"
        "For each function call, return a json object with function name and arguments within "
        "<tool_call></tool_call> XML tags:\n"
        '<tool_call>\n{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call>\n\n'
        "Text outside <tool_call> blocks is sent to the customer."
    )


def tool_responses_prompt(contents: list[str]) -> str:
    """Tool results as one text message, for models that see tools only through the prompt."""
    return "\n".join(f"<tool_response>\n{content}\n</tool_response>" for content in contents)
