"""One typo apart: how the reference agents read the shopper's words through noise.

The shopper's noise (``user/noise.py``) gives a word one typo: neighbours swapped, a letter dropped, doubled or
replaced. A reader that sees only observations matches its cue words within that distance, one definition for
every family's reference agent.
"""

from __future__ import annotations


def one_typo(a: str, b: str) -> bool:
    """Whether ``a`` is ``b`` with at most one typo: a letter changed, added or dropped, or two neighbours swapped."""
    if a == b:
        return True
    if len(a) == len(b):
        diff = [i for i, (x, y) in enumerate(zip(a, b)) if x != y]
        return len(diff) == 1 or (len(diff) == 2 and diff[1] == diff[0] + 1 and a[diff[0]] == b[diff[1]]
                                  and a[diff[1]] == b[diff[0]])
    short, long_ = sorted((a, b), key=len)
    return len(long_) - len(short) == 1 and any(long_[:i] + long_[i + 1:] == short for i in range(len(long_)))
