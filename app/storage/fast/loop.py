"""SQLite: a blocking connection whose marked statements go straight to sqlite3 (direct.py),
inside the transaction SQLAlchemy (or the grouped writes, grouped.py) began; every statement
through SQLAlchemy while anything listens to the engine's statements."""

from __future__ import annotations

import sqlite3
from typing import Any

from sqlalchemy import Connection

from app.storage.engine import Blocking
from app.storage.fast.direct import marked


class OnLoop(Blocking):
    __slots__ = ("driver",)

    def __init__(self, conn: Connection, driver: sqlite3.Connection | None = None) -> None:
        super().__init__(conn)
        self.driver = driver

    async def execute(self, statement: Any, parameters: Any = None) -> Any:
        found = marked(statement)
        if found is not None and not self.conn.dispatch.before_cursor_execute:
            if self.driver is None:
                driver = self.conn.connection.driver_connection
                assert isinstance(driver, sqlite3.Connection)
                self.driver = driver
            done = found.run(self.driver, self.conn.dialect, parameters)
            if done is not None:
                return done
        return self.conn.execute(statement, parameters)
