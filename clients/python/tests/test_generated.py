"""The generated layer matches schema.graphql, graphql/ and the protocol's task shape:
regenerated into a temporary directory, every file is the same as the committed one (the
task verbs' methods, _verbs.py, among them)."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]
PACKAGE = HERE / "src" / "prickle_client"
GENERATED = ("generated", "_verbs.py", "_sync.py", "schemas")


def files(root: Path) -> dict[str, str]:
    found: dict[str, str] = {}
    for name in GENERATED:
        path = root / name
        paths = [path] if path.is_file() else sorted(path.rglob("*.*"))
        for item in paths:
            if "__pycache__" not in item.parts:
                found[str(item.relative_to(root))] = item.read_text()
    return found


def test_the_generated_code_is_up_to_date(tmp_path: Path) -> None:
    sys.path.insert(0, str(HERE))
    try:
        generate = importlib.import_module("generate")
    finally:
        sys.path.remove(str(HERE))
    generate.generate(tmp_path)
    fresh, committed = files(tmp_path), files(PACKAGE)
    stale = sorted(n for n in fresh.keys() | committed.keys() if fresh.get(n) != committed.get(n))
    assert not stale, f"stale generated files {stale}: run `python generate.py` in clients/python"
