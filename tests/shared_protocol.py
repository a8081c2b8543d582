"""The shared protocol folder, found beside the project (`<root>/../shared/protocol`), as CI
clones it. Where it is missing, a test that compares with it fails under CI (`CI=true` or
`PRICKLE_REQUIRE_SHARED=1`) and is skipped elsewhere, saying where it looked."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FOLDER = ROOT.parent / "shared" / "protocol"


def required() -> bool:
    return (
        os.environ.get("CI", "").lower() == "true"
        or os.environ.get("PRICKLE_REQUIRE_SHARED") == "1"
    )


def shared_file(name: str) -> Path:
    """The shared protocol's file `name`; a failure (CI) or a skip where it is missing."""
    path = FOLDER / name
    if path.is_file():
        return path
    if required():
        pytest.fail(f"the shared protocol is required here (CI) and {path} is missing")
    pytest.skip(f"the shared protocol is not beside the project: {path} is missing")
