"""A `prickle serve` whose SQLite file can be made full or read-only while it runs.

A `sitecustomize` on the server's PYTHONPATH gives every sqlite3 connection the process
opens (SQLAlchemy's, the fast paths', the writer kept open) a check before each statement:
it reads the control file and, when its word changed, applies SQLite's own pragma to the
connection, so the server meets SQLite's own errors:

- `full`: `PRAGMA max_page_count` down to the file's size: a write that needs a new page
  fails with SQLITE_FULL, "database or disk is full", as on a full disk;
- `read-only`: `PRAGMA query_only`: a write fails with SQLITE_READONLY, "attempt to write a
  readonly database";
- anything else (an empty file): as usual again.
"""

from __future__ import annotations

import os
from pathlib import Path

_HOOK = """
import os
import sqlite3

_CONTROL = {control!r}
_PRAGMAS = {{
    "full": ("PRAGMA max_page_count = 1", "PRAGMA query_only = 0"),
    "read-only": ("PRAGMA max_page_count = 4294967294", "PRAGMA query_only = 1"),
    "": ("PRAGMA max_page_count = 4294967294", "PRAGMA query_only = 0"),
}}


def _word():
    try:
        with open(_CONTROL) as control:
            word = control.read().strip()
    except OSError:
        return ""
    return word if word in _PRAGMAS else ""


class _Faulty(sqlite3.Connection):
    _applied = ""

    def _check(self):
        word = _word()
        if word != self._applied:
            for pragma in _PRAGMAS[word]:
                sqlite3.Connection.execute(self, pragma).fetchall()
            self._applied = word

    def execute(self, *args, **kwargs):
        self._check()
        return super().execute(*args, **kwargs)

    def executemany(self, *args, **kwargs):
        self._check()
        return super().executemany(*args, **kwargs)

    def cursor(self, *args, **kwargs):
        return super().cursor(_checking(self))


def _checking(connection):
    class _Cursor(sqlite3.Cursor):
        def execute(self, *args, **kwargs):
            connection._check()
            return super().execute(*args, **kwargs)

        def executemany(self, *args, **kwargs):
            connection._check()
            return super().executemany(*args, **kwargs)

    return _Cursor


_connect = sqlite3.connect


def _connect_faulty(*args, **kwargs):
    kwargs.setdefault("factory", _Faulty)
    return _connect(*args, **kwargs)


sqlite3.connect = _connect_faulty
sqlite3.dbapi2.connect = _connect_faulty
"""


def faulty(directory: Path) -> tuple[dict[str, str], Path]:
    """The environment of a server whose SQLite file obeys the returned control file."""
    control = directory / "sqlite-fault"
    control.write_text("")
    (directory / "sitecustomize.py").write_text(_HOOK.format(control=str(control)))
    path = os.pathsep.join(p for p in (str(directory), os.environ.get("PYTHONPATH")) if p)
    return {"PYTHONPATH": path}, control
