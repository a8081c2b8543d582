"""npm packages that tests run in node (clients nobody here wrote), installed by the tests
themselves, once per clone, into `.cache/npm-<name>/` (gitignored).

Where node or npm is missing, the test that asks skips and says so; under CI (`CI=true` or
`PRICKLE_REQUIRE_NPM=1`) it fails instead. An install runs under a file lock: tests spread
over several processes wait for the one installing rather than install over it.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from server import ROOT


def required() -> bool:
    """Whether a missing node or npm fails the run (under CI) rather than skips."""
    return os.environ.get("CI") == "true" or os.environ.get("PRICKLE_REQUIRE_NPM") == "1"


def cache(name: str) -> Path:
    return ROOT / ".cache" / f"npm-{name}"


def installed(name: str, packages: tuple[str, ...], marker: str, node: int = 20) -> Path:
    """`packages` installed into `.cache/npm-<name>/`, now unless the package `marker` is
    there already; its node_modules. `node`: the Node.js major the packages need."""
    missing = [tool for tool in ("node", "npm") if shutil.which(tool) is None]
    if missing:
        reason = f"no {' and no '.join(missing)} on PATH: install Node.js {node}+ with npm"
        if required():
            pytest.fail(reason)
        pytest.skip(reason)
    folder = cache(name)
    modules = folder / "node_modules"
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / "install.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # another worker may be installing: wait for it
        if not (modules / marker / "package.json").exists():
            done = subprocess.run(
                ["npm", "install", "--prefix", str(folder), "--no-audit", "--no-fund", *packages],
                capture_output=True,
                text=True,
                timeout=600,
                check=False,
            )
            assert done.returncode == 0, f"npm install {' '.join(packages)} failed:\n{done.stderr}"
    return modules
