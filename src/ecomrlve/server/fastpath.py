"""The hot path of a WebSocket session: reset and step answered without openenv's generic message handling.

openenv's ``/ws`` loop turns every message into pydantic models and back (the envelope, the action, the
observation, its dump, the response model, its JSON), several ASGI wrappers deep. :class:`SessionGuard
<ecomrlve.server.app.SessionGuard>` offers each received JSON object to :meth:`Connection.answer` first: a
well-formed reset or step of the session's own environment is played on it straight from the parsed JSON,
and the reply is byte for byte the frame openenv would send. A step whose action
:class:`~ecomrlve.server.models.EcomAction` refuses (a wrong field, a wrong type) gets openenv's
``VALIDATION_ERROR`` frame with a message that names the field and what an action takes (openenv's own
says only "Invalid message", which is all its clients show). Anything else (state, close, mcp, a malformed
envelope, a session attached by id) is left to openenv's loop, so those error frames and closes stay
exactly openenv's.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from openenv.core.env_server.http_server import HTTPEnvServer
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import WSErrorCode, WSErrorResponse
from pydantic import ValidationError
from pydantic_core import to_json

from ecomrlve.protocol import Observation
from ecomrlve.server.environment import EcomServerEnvironment
from ecomrlve.server.models import EcomAction

#: the keys of a reset or step message, of a reset's arguments and of a step's action
#: (:class:`~ecomrlve.server.models.EcomAction`); others go to openenv's loop, which words their errors
ENVELOPE, RESET, ACTION = (frozenset({"type", "data"}), frozenset({"seed", "episode_id", "env_id", "difficulty"}),
                           frozenset({"turn", "oracle", "metadata"}))
#: what a step's action takes, for the error that names a wrong field (the fields of ``ACTION``)
ACTION_FIELDS = ("turn (one agent turn in any wire format: text, an OpenAI assistant message or "
                 "{message, tool_calls}), oracle (true or false), metadata (an object)")
#: the WebSocket path of openenv's session loop (``/mcp`` speaks JSON-RPC and stays generic)
SESSION_PATH = "/ws"


@dataclass
class Connection:
    """One WebSocket's session, bound when openenv's loop creates it (:meth:`EcomSessions._create_session`)."""

    sessions: EcomSessions
    session_id: str | None = None
    env: EcomServerEnvironment | None = None

    async def answer(self, message: dict[str, Any]) -> str | None:
        """The reply frame to a reset or step message (parsed JSON), or None: openenv's loop answers it (and
        any error)."""
        if self.env is None or self.session_id is None:
            return None
        if not message.keys() <= ENVELOPE:
            return None
        kind = message.get("type")
        data = message.get("data", {}) if kind == "reset" else message.get("data")
        if not isinstance(data, dict):
            return None
        if kind == "step" and not _plain_action(data):
            return invalid_action_frame(data)  # None: EcomAction takes it after all (openenv's loop plays it)
        if not (kind == "reset" and data.keys() <= RESET or kind == "step"):
            return None
        try:  # as openenv's loop: its session bookkeeping, then the frame, any failure an error frame
            if kind == "reset":
                observation = await self.env.begin_async(**data)
            else:
                observation = await self.env.play_async(data.get("turn"), oracle=data.get("oracle", False))
            self.sessions._update_session_activity(self.session_id, increment_step=kind == "step")
            return observation_frame(observation)
        except ValidationError as exc:
            return WSErrorResponse(data={"message": "Invalid message", "code": WSErrorCode.VALIDATION_ERROR,
                                         "errors": exc.errors()}).model_dump_json()
        except Exception as exc:  # noqa: BLE001 - openenv answers any failure of the environment with this frame
            return WSErrorResponse(data={"message": str(exc),
                                         "code": WSErrorCode.EXECUTION_ERROR}).model_dump_json()


class EcomSessions(HTTPEnvServer):
    """openenv's session server, binding each ``/ws`` session to its :class:`Connection` for the fast path."""

    _connection: ContextVar[Connection | None] = ContextVar("ecomrlve_connection", default=None)

    @contextmanager
    def connection(self) -> Iterator[Connection]:
        """The fast path of one WebSocket: the session openenv's loop creates inside this block is bound to it."""
        connection = Connection(self)
        token = self._connection.set(connection)
        try:
            yield connection
        finally:
            self._connection.reset(token)

    async def _create_session(self) -> tuple[str, Environment]:
        session_id, env = await super()._create_session()
        connection = self._connection.get()
        if connection is not None and isinstance(env, EcomServerEnvironment):
            connection.session_id, connection.env = session_id, env
        return session_id, env


def invalid_action_frame(data: dict[str, Any]) -> str | None:
    """openenv's ``VALIDATION_ERROR`` frame for a step's action that :class:`EcomAction` refuses (the same
    ``errors``), its message naming each wrong field and what an action takes; None when the action is valid."""
    try:
        EcomAction.model_validate(data)
    except ValidationError as exc:
        problems = []
        for error in exc.errors(include_url=False):
            field = ".".join(str(part) for part in error["loc"])
            if error["type"] == "extra_forbidden":
                problems.append(f"unknown field {field!r}")
            else:
                problems.append(f"{f'field {field!r}' if field else 'the action'}: {error['msg']}")
        message = f"Invalid step action: {'; '.join(problems)}. An action takes {ACTION_FIELDS}."
        return WSErrorResponse(data={"message": message, "code": WSErrorCode.VALIDATION_ERROR,
                                     "errors": exc.errors()}).model_dump_json()
    return None


def observation_frame(observation: Observation) -> str:
    """``WSObservationResponse(data=serialize_observation(EcomObservation(...))).model_dump_json()``, built directly."""
    wire = {"metadata": {}, "messages": observation.messages, "tools": observation.tools, "info": observation.info}
    data = {"observation": wire, "reward": observation.reward, "done": observation.done}
    return to_json({"type": "observation", "data": data}).decode()


def _plain_action(data: dict[str, Any]) -> bool:
    """Whether :class:`~ecomrlve.server.models.EcomAction` takes ``data`` as it is (any parsed JSON is a JsonValue)."""
    return data.keys() <= ACTION and type(data.get("oracle", False)) is bool and isinstance(data.get("metadata", {}), dict)
