"""What the account shoppers (RETURN, STATUS, POLICY) share: their reply to "anything else?"."""

from __future__ import annotations

from dataclasses import dataclass

from ecomrlve.envs.account import acts as A
from ecomrlve.user.dialogue import SimulatedUser


@dataclass
class AccountUser(SimulatedUser):
    """An account customer says everything it wants in its opening; the rest is in the account."""

    _nothing_more_told: bool = False

    def nothing_more(self, replacement: tuple[str, tuple[tuple[str, str], ...]] | None = None) -> A.NothingMore:
        """"Anything else?": nothing beyond the opening (a RETURN replacement's requirements again); free once,
        then a repeat that costs patience."""
        if self._nothing_more_told:
            self.lose_patience()
        self._nothing_more_told = True
        return A.NothingMore(replacement)
