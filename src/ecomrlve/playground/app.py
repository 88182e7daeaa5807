"""The playground's pages and JSON API as one FastAPI router, mountable on any app.

``create_playground_app`` builds a standalone app (``ecomrlve playground``); ``mount_playground``
adds the same router to an existing one (``ecomrlve serve``) under a prefix. Pages are rendered
on the server with Jinja2; one small script (``static/playground.js``) drives the episode page.
Every asset ships in the package: no CDN, works offline.

Bad requests get 4xx (unknown handle 404, finished episode 409, bad settings 400/422); a
malformed agent turn is not a bad request: it ends the episode at -1, as for any agent; an empty one
(no message, no tool call: a "Send" pressed by mistake) is refused with 400 and plays nothing.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from importlib import resources
from pathlib import Path
from typing import Any

from fastapi import APIRouter, Depends, FastAPI, HTTPException, Request
from fastapi.responses import HTMLResponse, Response
from jinja2 import Environment, PackageLoader, select_autoescape
from pydantic import BaseModel, ConfigDict, Field

from ecomrlve.catalog.schema import Catalog
from ecomrlve.envs.explain import explain_lines
from ecomrlve.errors import UserInputError
from ecomrlve.playground.access import TOKEN_COOKIE, token_matches
from ecomrlve.playground.episodes import (
    MAX_DIFFICULTY,
    MAX_SEED,
    EmptyTurn,
    EpisodeNotFound,
    EpisodeStore,
    HintUnavailable,
    PlayEpisode,
)
from ecomrlve.playground.runs import (
    FACETS,
    MAX_RUNS_BYTES,
    SORTS,
    RunsFile,
    RunsFileError,
    facet_values,
    parse_runs,
    select,
    success_grid,
    transcript,
)
from ecomrlve.playground.store import IdleStore
from ecomrlve.registry import env_specs
from ecomrlve.session import secret_fingerprint

STATIC_TYPES = {".js": "text/javascript", ".css": "text/css", ".svg": "image/svg+xml"}
#: the content types a runs upload may have: not one a cross-origin page can send without a CORS preflight
RUNS_TYPES = frozenset({"application/x-ndjson", "application/jsonl", "application/json"})
#: uploaded runs files held at once: per visitor (its oldest go first) and in all (the biggest holder's go first)
VISITOR_RUNS_BYTES, RUNS_MEMORY_BYTES = 2 * MAX_RUNS_BYTES, 8 * MAX_RUNS_BYTES
#: the largest JSON body a reset or step may send; the session itself ends a turn over 32,000 characters
#: at -1 (``too_long``), this only keeps a huge body from being read into memory at all
MAX_BODY_BYTES = 2**20
_PAGE_ROWS = 200  # rows the run list shows at once


class ResetRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    env_id: str = Field(max_length=64)
    difficulty: int = Field(ge=0, le=MAX_DIFFICULTY)
    seed: int | None = Field(default=None, ge=0, le=MAX_SEED)
    catalog: str | None = Field(default=None, max_length=200)


class StepRequest(BaseModel):
    """One agent turn in any wire format: a string (Hermes/JSON text) or an object (OpenAI message, JSON action)."""
    model_config = ConfigDict(extra="forbid")
    action: str | dict[str, Any]


class Playground:
    """The state behind the router: live episodes, loaded runs files, the templates."""

    def __init__(self, catalogs: Mapping[str, Catalog], *, token: str | None = None, secret: str | None = None,
                 runs: Sequence[RunsFile] = (), idle_seconds: float = 1800.0, max_episodes: int = 256,
                 hints: bool = True) -> None:
        self.token, self.hints = token, hints
        self.episodes = EpisodeStore(catalogs, secret=secret, idle_seconds=idle_seconds, max_episodes=max_episodes)
        self.runs: IdleStore[RunsFile] = IdleStore(idle_seconds=idle_seconds, max_entries=32,
                                                   max_cost=RUNS_MEMORY_BYTES, owner_cost=VISITOR_RUNS_BYTES)
        self.preloaded = {f"file{i}": runs_file for i, runs_file in enumerate(runs)}  # given at start: never expire
        self.templates = Environment(loader=PackageLoader("ecomrlve.playground", "templates"),
                                     autoescape=select_autoescape(), trim_blocks=True, lstrip_blocks=True)
        self.templates.filters["pretty"] = lambda value: json.dumps(value, indent=2, ensure_ascii=False)
        self.templates.filters["num"] = _number
        self.templates.filters["fingerprint"] = secret_fingerprint

    def runs_file(self, key: str) -> RunsFile:
        found = self.preloaded.get(key) or self.runs.get(key)
        if found is None:
            raise HTTPException(404, "no such runs file here (uploads expire when idle); open it again")
        return found

    def page(self, request: Request, base: str, template: str, **context: Any) -> HTMLResponse:
        """A rendered page whose links start at ``base`` (where the router is reachable)."""
        response = HTMLResponse(self.templates.get_template(template).render(prefix=base, **context))
        if self.token is not None and request.query_params.get("token"):
            # TokenGuard let the request in: keep the token in a cookie for the page's own requests
            response.set_cookie(TOKEN_COOKIE, self.token, httponly=True, samesite="strict", path=base or "/")
        return response


def _number(value: Any) -> str:
    """Values for people, as the page's script shows them: at most three decimals, JSON words."""
    if value is None:
        return "–"
    if isinstance(value, float) and math.isfinite(value):
        return f"{value:.3f}".rstrip("0").rstrip(".") or "0"
    return value if isinstance(value, str) else json.dumps(value)


class TokenGuard:
    """A dependency: 401 unless the request carries the token (none configured: open).

    The token comes from ``Authorization: Bearer``, the ``ecomrlve_token`` cookie, or ``?token=``
    on a page (which then sets the cookie, so the browser's later requests carry it).
    """

    def __init__(self, token: str | None) -> None:
        self.token = token

    def __call__(self, request: Request) -> None:
        if self.token is None:
            return
        auth = request.headers.get("authorization", "")
        given = (auth[7:].strip() if auth.lower().startswith("bearer ")
                 else request.cookies.get(TOKEN_COOKIE) or request.query_params.get("token"))
        if not token_matches(given, self.token):
            raise HTTPException(401, "this playground needs its token: Authorization: Bearer TOKEN, or open "
                                     "a page once with ?token=TOKEN")


def visitor(request: Request) -> str:
    """Whose share a new episode or upload counts against: the client's address (behind a proxy, everyone
    is the proxy's one visitor)."""
    return request.client.host if request.client is not None else ""


def small_body(request: Request) -> None:
    """413 for a declared body over :data:`MAX_BODY_BYTES` (before it is read)."""
    length = request.headers.get("content-length", "")
    if length.isdigit() and int(length) > MAX_BODY_BYTES:
        raise HTTPException(413, f"request bodies here are at most {MAX_BODY_BYTES // 1024} KiB")


def playground_router(playground: Playground, *, prefix: str = "") -> APIRouter:
    """Every page and API route, guarded by the playground's token (open when it is None)."""

    router = APIRouter(prefix=prefix, dependencies=[Depends(TokenGuard(playground.token))])
    store = playground.episodes

    def base(request: Request) -> str:
        """The router's URL path: its prefix under wherever the app itself is mounted."""
        return str(request.scope.get("root_path", "")) + prefix

    def page(request: Request, template: str, **context: Any) -> HTMLResponse:
        return playground.page(request, base(request), template, **context)

    def episode(handle: str) -> PlayEpisode:
        try:
            return store.get(handle)
        except EpisodeNotFound:
            raise HTTPException(404, "no such episode (it expired or was never started): reset a new one") from None

    @router.get("/", response_class=HTMLResponse)
    def play_page(request: Request) -> HTMLResponse:
        return page(request, "play.html", envs=[s.id for s in env_specs()], catalogs=list(store.catalogs),
                    max_difficulty=MAX_DIFFICULTY, hints=playground.hints,
                    secret_fingerprint=store.secret_fingerprint)

    @router.get("/api/envs")
    def list_envs() -> dict[str, Any]:
        return {"envs": [{"id": s.id, "collection": s.collection, "axes": list(s.axes)} for s in env_specs()],
                "catalogs": list(store.catalogs), "max_difficulty": MAX_DIFFICULTY}

    @router.post("/api/episodes", dependencies=[Depends(small_body)])
    def reset(request: Request, body: ResetRequest) -> dict[str, Any]:
        try:
            created = store.create(body.env_id, body.difficulty, body.seed, body.catalog, visitor=visitor(request))
        except (ValueError, UserInputError) as exc:
            raise HTTPException(400, str(exc)) from None
        with created.lock:
            return created.view()

    @router.get("/api/episodes/{handle}")
    def show(handle: str) -> dict[str, Any]:
        found = episode(handle)
        with found.lock:
            return found.view()

    @router.post("/api/episodes/{handle}/step", dependencies=[Depends(small_body)])
    def step(handle: str, body: StepRequest) -> dict[str, Any]:
        found = episode(handle)
        with found.lock:
            if found.env.done:
                raise HTTPException(409, "the episode is over: reset a new one")
            try:
                found.step(body.action)
            except EmptyTurn as exc:
                raise HTTPException(400, str(exc)) from None
            return found.view()

    @router.post("/api/episodes/{handle}/hint")
    def hint(handle: str) -> dict[str, Any]:
        if not playground.hints:
            raise HTTPException(403, "this server gives no oracle hints (serve --allow-oracle turns them on)")
        found = episode(handle)
        with found.lock:
            if found.env.done:
                raise HTTPException(409, "the episode is over: reset a new one")
            try:
                return {"action": found.hint()}
            except HintUnavailable as exc:
                raise HTTPException(409, str(exc)) from None

    @router.get("/runs", response_class=HTMLResponse)
    def runs_index(request: Request) -> HTMLResponse:
        return page(request, "runs.html", preloaded=playground.preloaded)

    @router.post("/api/runs")
    async def upload_runs(request: Request) -> dict[str, Any]:
        """A runs file as the body (``application/x-ndjson``: a simple ``text/plain`` POST, which any web page
        may send without asking, is refused), kept as bytes and an index, counted against the visitor's share."""
        kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
        if kind not in RUNS_TYPES:
            raise HTTPException(415, f"send the runs file as application/x-ndjson (got {kind or 'no type'!r})")
        chunks, size = [], 0
        async for chunk in request.stream():
            chunks.append(chunk)
            size += len(chunk)
            if size > MAX_RUNS_BYTES:
                raise HTTPException(413, f"runs files up to {MAX_RUNS_BYTES // 2**20} MiB open here")
        name = Path(request.headers.get("x-filename", "runs.jsonl")).name[:200] or "runs.jsonl"
        data = b"".join(chunks)
        chunks.clear()
        try:
            runs_file = parse_runs(data, name)
        except RunsFileError as exc:
            raise HTTPException(400, str(exc)) from None
        key = playground.runs.add(runs_file, owner=visitor(request), cost=runs_file.size)
        return {"id": key, "url": f"{base(request)}/runs/{key}", "episodes": len(runs_file.records)}

    @router.get("/runs/{key}", response_class=HTMLResponse)
    def runs_list(request: Request, key: str, sort: str = "file", offset: int = 0) -> HTMLResponse:
        runs_file = playground.runs_file(key)
        filters = {k: request.query_params.get(k, "") for k in FACETS}
        chosen = select(runs_file.records, filters, sort if sort in SORTS else "file")
        offset = max(0, min(offset, len(chosen)))
        return page(request, "run.html", key=key, runs=runs_file, filters=filters, sort=sort,
                               values=facet_values(runs_file.records), facets=FACETS, sorts=SORTS,
                               rows=chosen[offset:offset + _PAGE_ROWS], total=len(chosen), offset=offset,
                               page_rows=_PAGE_ROWS, grid=success_grid([r for _, r in chosen]))

    @router.get("/runs/{key}/{index}", response_class=HTMLResponse)
    def runs_record(request: Request, key: str, index: int) -> HTMLResponse:
        runs_file = playground.runs_file(key)
        if not 0 <= index < len(runs_file.records):
            raise HTTPException(404, f"{runs_file.name} has episodes 0-{len(runs_file.records) - 1}")
        record = runs_file.record(index)
        return page(request, "record.html", key=key, runs=runs_file, index=index, record=record,
                               messages=transcript(record), explanation=explain_lines(record))

    @router.get("/favicon.ico")
    def favicon() -> Response:
        """The icon (pages name it with a link; this answers browsers that ask the root of a standalone app)."""
        return static("favicon.svg")

    @router.get("/static/{name}")
    def static(name: str) -> Response:
        kind = STATIC_TYPES.get(Path(name).suffix)
        folder = resources.files("ecomrlve.playground") / "static"
        if kind is None or "/" in name or not (folder / name).is_file():
            raise HTTPException(404, "no such file")
        return Response((folder / name).read_bytes(), media_type=kind, headers={"cache-control": "no-cache"})

    return router


def mount_playground(app: FastAPI, catalogs: Mapping[str, Catalog], *, prefix: str = "/playground",
                     token: str | None = None, secret: str | None = None, runs: Sequence[RunsFile] = (),
                     idle_seconds: float = 1800.0, hints: bool = True) -> Playground:
    """Add the playground's pages and API to ``app`` under ``prefix`` (same token rule as the app).

    ``hints``: offer the oracle's next action. A hint is the hidden goal's solver: on a server that also
    serves agents under training or evaluation, an episode replayed here with the same key would leak it.
    """
    playground = Playground(catalogs, token=token, secret=secret, runs=runs, idle_seconds=idle_seconds, hints=hints)
    app.include_router(playground_router(playground, prefix=prefix.rstrip("/")))
    return playground


def create_playground_app(catalogs: Mapping[str, Catalog], *, token: str | None = None, secret: str | None = None,
                          runs: Sequence[RunsFile] = (), idle_seconds: float = 1800.0) -> FastAPI:
    """A standalone app serving the playground at ``/`` (``ecomrlve playground``)."""
    app = FastAPI(title="EcomRLVE-Gym playground", docs_url=None, redoc_url=None, openapi_url=None)
    app.state.playground = mount_playground(app, catalogs, prefix="", token=token, secret=secret, runs=runs,
                                            idle_seconds=idle_seconds)
    return app
