"""``tools/list`` over openenv's MCP routes: the tools of a session's episode, in MCP's form.

openenv answers JSON-RPC ``tools/list`` and ``tools/call`` (a ``/ws`` message of type ``mcp``, or
``/mcp``) through an environment's ``mcp_client``. An episode's tools depend on its environment and
difficulty (SUB, PD and JOURNEY describe other limits at other levels), so :class:`EpisodeTools` lists
those of the session's current episode: the ones its reset observation carried, as ``name``,
``description`` and ``inputSchema``. A session without an episode (every ``/mcp`` session: they
cannot reset) gets an error that says where the tools are. ``tools/call`` is refused: a tool call is
part of an agent turn, sent with ``step``, where the episode's tool and turn budgets count it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

#: the JSON-RPC error messages (openenv sends them with its INTERNAL_ERROR code)
NO_EPISODE = ("no episode in this session: tools/list lists the tools of a session's episode once it is reset "
              "(play over /ws: its reset observation carries them too)")
CALLS_ARE_TURNS = ("tools/call is not served: a tool call is part of an agent turn; send it in a step "
                   "(EcomAction.turn), where the episode's tool and turn budgets count it")


class EpisodeTools:
    """The ``mcp_client`` openenv's MCP routes call: ``list_tools`` from ``episode_tools`` (the current episode's
    OpenAI function schemas, None before a reset), ``call_tool`` refused."""

    def __init__(self, episode_tools: Callable[[], list[dict[str, Any]] | None]) -> None:
        self._episode_tools = episode_tools

    def is_connected(self) -> bool:
        return True  # nothing to connect: the tools are the session's own

    async def __aenter__(self) -> EpisodeTools:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        return None

    async def list_tools(self) -> list[dict[str, Any]]:
        schemas = self._episode_tools()
        if schemas is None:
            raise LookupError(NO_EPISODE)
        return [mcp_tool(schema) for schema in schemas]

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> Any:
        raise PermissionError(CALLS_ARE_TURNS)


def mcp_tool(schema: dict[str, Any]) -> dict[str, Any]:
    """An OpenAI function schema (``{"type": "function", "function": {...}}``) as an MCP tool."""
    function = schema["function"]
    return {"name": function["name"], "description": function.get("description", ""),
            "inputSchema": function.get("parameters", {"type": "object", "properties": {}})}
