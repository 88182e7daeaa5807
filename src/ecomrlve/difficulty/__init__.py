"""Difficulty: the twelve axes as functions of one integer, and the adaptive scheduler."""

from ecomrlve.difficulty.axes import AXES, MAX_DIFFICULTY, Axis, Difficulty, every_axis, find_axis, parse_overrides

__all__ = ["AXES", "MAX_DIFFICULTY", "Axis", "Difficulty", "every_axis", "find_axis", "parse_overrides"]
