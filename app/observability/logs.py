"""Logging: one line per event, as JSON (`--log-format json`, the default when stderr is not
a terminal) or as text, through the standard library for the app's and uvicorn's loggers.

A JSON line holds `time`, `level`, `logger`, `message`, the request id of the request being
served (if any), the fields a call gives in `extra=`, and a fault's traceback in `exc_info`.
Nothing logs a token or a body: the request line names the principal, never its credential.
"""

from __future__ import annotations

import copy
import logging
import sys
from datetime import UTC, datetime
from typing import Any

import orjson
import uvicorn.config
import uvicorn.logging

from app.observability.context import request_id

FORMATS = ("json", "text")
# the attributes every LogRecord has; any other attribute came from `extra=`
_STANDARD = frozenset(vars(logging.makeLogRecord({}))) | {"message", "asctime", "color_message"}
# uvicorn's own line for each WebSocket opened or closed; the request line replaces them
_CONNECTION_CHATTER = frozenset({"connection open", "connection closed"})


def default_format() -> str:
    return "text" if sys.stderr.isatty() else "json"


class JsonFormatter(logging.Formatter):
    """A LogRecord as one line of JSON."""

    def __init__(self, fmt: str | None = None) -> None:
        super().__init__()

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        line.update(_fields(record))
        if record.exc_info:
            line["exc_info"] = self.formatException(record.exc_info)
        return orjson.dumps(line, default=str).decode()


class TextFormatter(uvicorn.logging.DefaultFormatter):
    """uvicorn's text line, followed by the record's fields as `key=value`."""

    def format(self, record: logging.LogRecord) -> str:
        line = super().format(record)
        fields = _fields(record)
        if fields:
            line += " " + " ".join(f"{key}={value}" for key, value in fields.items())
        return line


def _fields(record: logging.LogRecord) -> dict[str, Any]:
    return {
        key: value
        for key, value in vars(record).items()
        if key not in _STANDARD and not key.startswith("_") and value is not None
    }


class RequestIdFilter(logging.Filter):
    """Adds the request id of the request being served to every record written meanwhile."""

    def filter(self, record: logging.LogRecord) -> bool:
        if getattr(record, "request_id", None) is None:
            record.request_id = request_id()
        return True


class QuietConnections(logging.Filter):
    """Drops uvicorn's per-WebSocket "connection open/closed" lines (the request line says
    when a connection ends, with its request id, principal and duration)."""

    def filter(self, record: logging.LogRecord) -> bool:
        return record.getMessage() not in _CONNECTION_CHATTER


def log_config(log_format: str) -> dict[str, Any]:
    """uvicorn's logging config in `log_format`, with the app's loggers ("app.*") beside it."""
    config = copy.deepcopy(uvicorn.config.LOGGING_CONFIG)
    config["filters"] = {
        "request_id": {"()": f"{__name__}.RequestIdFilter"},
        "quiet_connections": {"()": f"{__name__}.QuietConnections"},
    }
    formatter = "JsonFormatter" if log_format == "json" else "TextFormatter"
    config["formatters"]["default"] = {
        "()": f"{__name__}.{formatter}",
        "fmt": "%(levelprefix)s %(message)s",
    }
    config["formatters"]["access"] = config["formatters"]["default"]
    for handler in config["handlers"].values():
        handler["filters"] = ["request_id", "quiet_connections"]
    config["handlers"]["access"]["stream"] = "ext://sys.stderr"
    config["loggers"]["app"] = {"handlers": ["default"], "level": "INFO", "propagate": False}
    # The A2A SDK logs every request it refuses, a malformed one with its traceback: what a
    # client sent wrong is in the answer, and the request line; a fault in the server's own
    # A2A handler is logged by app.a2a.inbound.errors. Only the SDK's critical lines stay.
    config["loggers"]["a2a"] = {"handlers": ["default"], "level": "CRITICAL", "propagate": False}
    return config
