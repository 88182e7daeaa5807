"""The wire types of the server: one agent turn in, an observation out, goal-free state.

They subclass openenv's pydantic types, so ``/schema`` publishes them and any openenv client can
speak to the server. Nothing here holds the hidden goal: the finished episode's record (goal
included, the deployment secret never) appears in :class:`EcomState` only once the episode is over.
"""

from __future__ import annotations

from typing import Any

from openenv.core.env_server.types import Action, Observation, State
from pydantic import Field, JsonValue


class EcomAction(Action):
    """One agent turn, exactly as the model produced it.

    ``turn`` is passed unchanged to the episode's parser, so any JSON value is accepted here: a
    string (text with ``<tool_call>`` blocks, or a JSON object as text), an OpenAI assistant
    message, or ``{"message", "tool_calls"}``. Malformed output ends the episode with reward -1
    (``info["invalid_reason"]`` says why); it is never a protocol error.

    ``oracle`` asks the server to play the environment's oracle for this turn instead; only a
    server started with ``--allow-oracle`` accepts it (evaluation of the oracle through the
    server; never enable it where a policy trains).
    """

    turn: JsonValue = Field(default=None, description="One agent turn in any of the three wire formats, as received.")
    oracle: bool = Field(default=False, description="Play the oracle's turn (servers started with --allow-oracle).")


class EcomObservation(Observation):
    """What the agent sees after reset or a turn (``done``/``reward`` are openenv's fields).

    ``messages`` are the new chat messages (on reset: the system prompt and the shopper's
    opening), ``tools`` the OpenAI function schemas (reset only), ``info`` the turn counters and,
    once done, the reward breakdown and termination.
    """

    messages: list[dict[str, Any]] = Field(default_factory=list)
    tools: list[dict[str, Any]] | None = None
    info: dict[str, Any] = Field(default_factory=dict)


class EcomState(State):
    """The session's goal-free state; ``record`` (the episode record as a JSON object, without the deployment
    secret) only once done.

    ``record`` is the object :meth:`EpisodeRecord.to_json <ecomrlve.session.EpisodeRecord.to_json>` writes for a
    client (any client reads it without a second ``json.loads``); :func:`ecomrlve.server.episode_record` gives it
    typed. The server's ``--records`` file keeps the full records.
    """

    env_id: str | None = None
    turn: int = 0
    turns_left: int | None = None
    done: bool = False
    termination: str | None = None
    total_reward: float | None = None
    cart: dict[str, Any] = Field(default_factory=dict)
    record: dict[str, Any] | None = Field(default=None, description="The episode record (a JSON object, hidden "
                                          "goal included, deployment secret left out); present only after done.")
