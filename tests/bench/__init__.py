"""Benchmarks against real `prickle serve` processes; not tests (pytest ignores this folder).

Run: `python -m tests.bench --backend sqlite|postgres|both` from the project root.
"""
