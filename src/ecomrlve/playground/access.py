"""Who may reach the playground: loopback by default, a token for anything else (no FastAPI here:
the CLI checks the rule before the ``playground`` extra is imported).

Binding to an address other than loopback exposes episodes (and, in the run viewer, recorded
goals) to the network, so it needs a token unless the operator says ``--insecure``. With a
token set, every request must carry it: ``Authorization: Bearer TOKEN``, the ``ecomrlve_token``
cookie, or ``?token=TOKEN`` on a page (which sets the cookie so the browser's later requests
carry it).
"""

from __future__ import annotations

import hmac
import ipaddress

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


def token_matches(given: str | None, token: str) -> bool:
    """Constant-time comparison, so response times do not reveal how much of a guess was right."""
    return given is not None and hmac.compare_digest(given.encode(), token.encode())
