"""Who may reach the playground: loopback by default, a token for anything else.

Binding to an address other than loopback exposes episodes (and, in the run viewer, recorded
goals) to the network, so it needs a token unless the operator says ``--insecure``. With a
token set, every request must carry it: ``Authorization: Bearer TOKEN``, the ``ecomrlve_token``
cookie, or ``?token=TOKEN`` on a page (which sets the cookie so the browser's later requests
carry it).
"""

from __future__ import annotations

import hmac
import ipaddress

from fastapi import HTTPException, Request

from ecomrlve.errors import UserInputError

TOKEN_COOKIE = "ecomrlve_token"
TOKEN_ENV_VAR = "ECOMRLVE_TOKEN"


def is_loopback(host: str) -> bool:
    """``localhost`` or a loopback IP address (127.0.0.0/8, ::1)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_binding(host: str, token: str | None, insecure: bool) -> None:
    """The token rule: a non-loopback address needs a token unless ``insecure``."""
    if token is not None and not token:
        raise UserInputError("--token must not be empty")
    if not is_loopback(host) and token is None and not insecure:
        raise UserInputError(f"--host {host} is reachable from other machines: set --token (or ${TOKEN_ENV_VAR}) "
                             "so requests must carry it, or pass --insecure to serve without one")


def request_token(request: Request) -> str | None:
    """The token a request carries, from the header, the cookie or the query string (in that order)."""
    auth = request.headers.get("authorization", "")
    if auth.lower().startswith("bearer "):
        return auth[7:].strip()
    return request.cookies.get(TOKEN_COOKIE) or request.query_params.get("token")


class TokenGuard:
    """A FastAPI dependency: 401 unless the request carries the token (no token configured: open)."""

    def __init__(self, token: str | None) -> None:
        self.token = token

    def __call__(self, request: Request) -> None:
        if self.token is None:
            return
        given = request_token(request)
        if given is None or not hmac.compare_digest(given.encode(), self.token.encode()):
            raise HTTPException(401, "this playground needs its token: Authorization: Bearer TOKEN, or open "
                                     "a page once with ?token=TOKEN")
