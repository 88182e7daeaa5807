"""Adapters from the one runtime (sessions, the run path) to outside trainers and frameworks.

Each module imports its framework lazily, so this package costs nothing without the extra.
"""
