"""A `prickle serve` whose library lacks a name its fast paths rely on: a `sitecustomize`
on the server's PYTHONPATH adds the name to the compat module's `REQUIRED` at startup, so
the check fails as it would on a version the fast paths were not written for."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any


def lacking(directory: Path, library: str, name: Any) -> dict[str, str]:
    """The environment of a server whose `library` (a module of app/compat) lacks `name`."""
    (directory / "sitecustomize.py").write_text(
        f"from app.compat import {library} as compat\n\n"
        f"compat.REQUIRED = (*compat.REQUIRED, {name!r})\n"
    )
    path = os.pathsep.join(p for p in (str(directory), os.environ.get("PYTHONPATH")) if p)
    return {"PYTHONPATH": path, "PRICKLE_FAST_PATHS": "on"}
