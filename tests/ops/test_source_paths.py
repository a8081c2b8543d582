"""The source's docstrings and comments name concepts and Python objects, never file paths:
a path under app/ or tests/ goes stale the day its file moves, and nothing would say so.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from collections.abc import Iterator
from pathlib import Path

import pytest

pytestmark = pytest.mark.once  # the source, not the database: not run on PostgreSQL

ROOT = Path(__file__).resolve().parents[2]
APP = ROOT / "app"
# a file under app/ or tests/: the folder, any subfolders, a name with its extension
PATH = re.compile(r"(?<![\w./-])(?:app|tests)/[\w./-]*\w\.[A-Za-z]\w*\b")


def named_paths(source: str) -> Iterator[tuple[int, str, str]]:
    """Each file path a comment or docstring of `source` names: its line, where, the path."""
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT:
            for found in PATH.finditer(token.string):
                yield token.start[0], "a comment", found.group()
    for node in ast.walk(ast.parse(source)):
        if (
            isinstance(node, ast.Expr)
            and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)
        ):
            text = node.value.value
            for found in PATH.finditer(text):
                line = node.lineno + text[: found.start()].count("\n")
                yield line, "a docstring", found.group()


def test_docstrings_and_comments_of_app_name_no_file_paths() -> None:
    named = [
        f"{path.relative_to(ROOT)}:{line}: {where} names the file {found}"
        for path in sorted(APP.rglob("*.py"))
        for line, where, found in named_paths(path.read_text())
    ]
    assert not named, (
        "name the concept or the Python object instead of its file "
        "(e.g. `Store.command`, not app/storage/store.py):\n" + "\n".join(named)
    )


def test_a_named_path_is_found_with_its_line() -> None:
    source = (
        '"""The log (app/storage/repositories/events.py)."""\n'
        "x = 1  # see tests/service/test_unit.py\n"
        "y = 'app/main.py'  # a value, not a docstring\n"
        "# the app/ folder and the app.main module are no file paths\n"
    )
    assert list(named_paths(source)) == [
        (2, "a comment", "tests/service/test_unit.py"),
        (1, "a docstring", "app/storage/repositories/events.py"),
    ]
