"""Adapters that let other frameworks drive the environments: Gymnasium, Ray (and trainers, servers).

Each module imports its framework at the top and lives in an optional extra
(``ecomrlve[gym]``, ``ecomrlve[ray]``); importing this package imports none of them.
"""
