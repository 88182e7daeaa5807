"""EcomRLVE-Gym: adaptive, verifiable environments for tool-using e-commerce agents.

The package imports nothing of its own here (``import ecomrlve.episode`` and the rest load what they
need), so it sits at the bottom of the layer order; ``__version__`` is the installed distribution's.
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version


def _installed_version() -> str:
    """The installed ``ecomrlve`` distribution's version; ``0+unknown`` for a source tree that was never installed."""
    try:
        return version("ecomrlve")
    except PackageNotFoundError:
        return "0+unknown"


__version__ = _installed_version()
