"""Clients of ``ecomrlve serve``: :class:`EcomEnvClient` (openenv's ``EnvClient``) and the run path's adapters.

A trainer drives episodes with the client directly::

    from ecomrlve.server import EcomAction, EcomEnvClient

    with EcomEnvClient("http://127.0.0.1:8000", token=None).sync() as env:
        result = env.reset(env_id="CART", difficulty="adaptive", seed=7)   # or difficulty=3
        messages, tools = result.observation.messages, result.observation.tools
        while not result.done:
            result = env.step(EcomAction(turn=model_output_text))      # any wire format, as produced
        record = episode_record(env.state())                            # replayable record, after done

``async with EcomEnvClient(url) as env: await env.reset(...)`` is the same without ``.sync()``.
One client is one WebSocket session (one episode at a time); open one client per concurrent
episode. :class:`RemoteEnv`, :class:`ServerScheduler` and :class:`ServerOracle` let the one run path
(:mod:`ecomrlve.runner`) play any built-in agent against a server (``ecomrlve run|eval --server``).
"""

from __future__ import annotations

import random
from typing import Any

import httpx
from openenv.core.client_types import StepResult
from openenv.core.env_client import EnvClient

from ecomrlve.actions import AgentAction, wire_form
from ecomrlve.difficulty.scheduler import DifficultyWindow
from ecomrlve.envs import TaskFamily, get_environment
from ecomrlve.errors import UserInputError
from ecomrlve.protocol import Observation
from ecomrlve.server.models import EcomAction, EcomObservation, EcomState
from ecomrlve.session import EpisodeRecord


class EcomEnvClient(EnvClient[EcomAction, EcomObservation, EcomState]):
    """One WebSocket session on an ecomrlve server; ``token`` is sent as ``Authorization: Bearer``.

    ``reset(env_id=..., difficulty=<int or "adaptive">, seed=...)`` starts an episode, ``step(EcomAction(turn=...))``
    plays one agent turn, ``state()`` gives the goal-free state (and the record once done). Server errors
    (capacity, idle timeout, oversize message, bad token, step after done) raise ``RuntimeError`` whose
    message names the error code.
    """

    def __init__(self, base_url: str, *, token: str | None = None, **kwargs: Any) -> None:
        headers = dict(kwargs.pop("headers", None) or {})
        if token is not None:
            headers["Authorization"] = f"Bearer {token}"
        super().__init__(base_url, headers=headers or None, **kwargs)
        self.token = token

    def _step_payload(self, action: EcomAction) -> dict[str, Any]:
        return action.model_dump(exclude_defaults=True) | {"turn": action.turn}

    def _parse_result(self, payload: dict[str, Any]) -> StepResult[EcomObservation]:
        observation = EcomObservation(**payload.get("observation", {}), done=payload.get("done", False),
                                      reward=payload.get("reward"))
        return StepResult(observation=observation, reward=payload.get("reward"), done=payload.get("done", False))

    def _parse_state(self, payload: dict[str, Any]) -> EcomState:
        return EcomState(**payload)


def episode_record(state: EcomState) -> EpisodeRecord:
    """The finished episode's record from the session state (it exists only once the episode is done)."""
    if state.record is None:
        raise RuntimeError("the episode is not over: the record (with the hidden goal) exists only after done")
    return EpisodeRecord.model_validate(state.record)


def to_observation(result: StepResult[EcomObservation]) -> Observation:
    """The server's observation as the in-process runtime gives it (what built-in agents read)."""
    obs = result.observation
    return Observation(messages=obs.messages, tools=obs.tools, done=result.done,
                       reward=float(result.reward or 0.0), info=obs.info)


def server_windows(url: str, token: str | None = None, *, timeout: float = 10.0) -> dict[str, Any]:
    """``GET /scheduler``: the server's curriculum (config, windows per env, open sessions)."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    try:
        response = httpx.get(f"{http_url(url)}/scheduler", headers=headers, timeout=timeout)
    except httpx.HTTPError as exc:
        raise UserInputError(f"cannot reach the server at {url}: {exc}") from None
    if response.status_code != 200:
        raise UserInputError(f"{url}/scheduler answered {response.status_code}: {response.text[:200]}")
    payload: dict[str, Any] = response.json()
    return payload


def http_url(url: str) -> str:
    """``ws://host:port/`` or ``http://host:port/`` -> ``http://host:port``."""
    url = url.rstrip("/")
    for ws, http in (("ws://", "http://"), ("wss://", "https://")):
        if url.startswith(ws):
            return http + url[len(ws):]
    return url


class OracleTurn(dict[str, Any]):
    """Stands for "the server's oracle plays this turn" (see :class:`ServerOracle`)."""


class ServerOracle:
    """The oracle agent over a server: each turn is played by the server's oracle (``--allow-oracle``),
    which alone can read the hidden goal; the client never sees it."""

    def act(self, observation: Observation) -> OracleTurn:
        return OracleTurn()


class RemoteEnv:
    """What :class:`ecomrlve.runner.RunLoop` plays on, over one server session (sync, one episode at a time)."""

    def __init__(self, url: str, token: str | None = None, **client_options: Any) -> None:
        self._client = EcomEnvClient(url, token=token, **client_options).sync()
        self._env_id: str | None = None

    def reset(self, *, env_id: str | None = None, difficulty: int | str = "adaptive",
              seed: int | None = None) -> Observation:
        result = self._client.reset(env_id=env_id, difficulty=difficulty, seed=seed)
        self._env_id = env_id or self._client.state().env_id  # a drawn env: ask the session which
        return to_observation(result)

    def step(self, action: AgentAction | str | dict[str, Any]) -> Observation:
        if isinstance(action, OracleTurn):
            return to_observation(self._client.step(EcomAction(oracle=True)))
        return to_observation(self._client.step(EcomAction(turn=wire_form(action))))  # what in-process records

    @property
    def record(self) -> EpisodeRecord:
        return episode_record(self._client.state())

    @property
    def environment(self) -> TaskFamily:
        """The current episode's environment (its heuristic and schemas; no episode state)."""
        if self._env_id is None:
            raise RuntimeError("call reset() first")
        return get_environment(self._env_id)

    def oracle(self) -> ServerOracle:
        return ServerOracle()

    def close(self) -> None:
        self._client.close()


class ServerScheduler:
    """The server's curriculum seen from a client: draws from its windows; the server counts outcomes.

    The server updates its scheduler once per finished episode itself, so ``update`` here does nothing
    (counting again would count twice).
    """

    def __init__(self, url: str, token: str | None = None) -> None:
        self.url, self.token = url, token

    def state_dict(self) -> dict[str, Any]:
        payload = server_windows(self.url, self.token)
        return {"version": 1, "config": payload["config"], "windows": payload["windows"]}

    def windows(self) -> dict[str, DifficultyWindow]:
        return {env_id: DifficultyWindow(**window)
                for env_id, window in server_windows(self.url, self.token)["windows"].items()}

    def window(self, env_id: str) -> DifficultyWindow:
        windows = server_windows(self.url, self.token)["windows"]
        if env_id not in windows:
            raise UserInputError(f"the server at {self.url} does not serve {env_id!r} (it serves "
                                 f"{', '.join(windows)})")
        return DifficultyWindow(**windows[env_id])

    def sample(self, env_id: str, rng: random.Random) -> int:
        window = self.window(env_id)
        return rng.randint(window.low, window.high)

    def update(self, env_id: str, difficulty: int, is_correct: bool) -> bool:
        return False
