"""Difficulty: the twelve axes as functions of one integer, and the adaptive scheduler."""

from ecomrlve.difficulty.axes import AXES, Axis, Difficulty, parse_overrides

__all__ = ["AXES", "Axis", "Difficulty", "parse_overrides"]
