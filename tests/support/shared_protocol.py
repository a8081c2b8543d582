"""The shared protocol's files, for the tests that compare the project with it.

The shared protocol folder is found beside the project (`<root>/../shared/protocol`), as CI
lays it out. The project keeps a copy of the files its tests compare with
(`tests/support/protocol/`), so that they run where that folder is not beside it; where it is,
`test_the_kept_copy_is_the_shared_protocol` holds the copy to it, so a protocol change fails
until the copy (and the project) follows. `PRICKLE_REQUIRE_SHARED=1` makes a missing folder a
failure instead."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FOLDER = ROOT.parent / "shared" / "protocol"
KEPT = Path(__file__).resolve().parent / "protocol"


def beside(name: str) -> Path | None:
    """The shared folder's file `name`, where the folder is beside the project."""
    path = FOLDER / name
    if path.is_file():
        return path
    if os.environ.get("PRICKLE_REQUIRE_SHARED") == "1":
        pytest.fail(f"the shared protocol is required here and {path} is missing")
    return None


def shared_file(name: str) -> Path:
    """The shared protocol's file `name`: the folder's beside the project, else the kept copy."""
    return beside(name) or KEPT / name
