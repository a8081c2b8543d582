"""The service's side of the API's fast paths: the compiled page of tasks, in a read
transaction. Taken only while the API's fast paths are (app/api/fast). And where the app
is assembled (by the app), the storage's fast paths installed (`install`)."""

from __future__ import annotations

from app.storage import fast as storage_fast


def install() -> None:
    """Every store built from now on takes the storage's fast paths (app/storage/fast), as
    `PRICKLE_FAST_PATHS` and the compat check allow."""
    storage_fast.install()
