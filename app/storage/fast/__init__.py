"""The storage's fast paths: statements sent straight to the driver, grouped SQLite commits,
kept PostgreSQL connections, compiled pages. Each is taken only while `PRICKLE_FAST_PATHS`
is on and its compat check passes (app/compat); the plain path beside it gives the same
answers without it.

Nothing of the plain path imports them: `install()`, called where the app is assembled
(the service's `install`, from the app; the tests' fixtures), hands `Store` the way to build
them (paths.py), and the driver paths take the statements the repositories built once
(`once`) as they come."""

from __future__ import annotations


def install() -> None:
    """Every `Store` built from now on takes the fast paths (as `PRICKLE_FAST_PATHS` and the
    compat check allow)."""
    from app.storage import store
    from app.storage.fast.paths import FastPaths

    store.install(FastPaths)
