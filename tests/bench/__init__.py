"""Benchmarks against real `prickle serve` processes; not tests (pytest ignores this folder).

Run: `python -m tests.bench --backend sqlite|postgres|both` from the project root.
"""

from app.storage import fast as _storage_fast

_storage_fast.install()  # the stores built here take the fast paths, as the app's do
