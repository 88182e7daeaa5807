"""Adapters that let other frameworks drive the environments: Gymnasium, Ray, TRL.

Each module imports its framework itself and lives in an optional extra (``ecomrlve[gym]``,
``ecomrlve[ray]``, ``ecomrlve[train]``); importing this package imports none of them.
"""
