"""`prickle serve`'s settings: each flag also read from a PRICKLE_* environment variable
(`--rate-limit` from PRICKLE_RATE_LIMIT, `--access-log` from PRICKLE_ACCESS_LOG=1, ...), and
`prickle config`, which prints what `serve` would run with, secrets masked.

A flag given on the command line wins over the variable, which wins over the default.
"""

from __future__ import annotations

import argparse
import os

from sqlalchemy.engine import make_url

from app.storage.engine import database_url

PREFIX = "PRICKLE_"
_TRUE = frozenset({"1", "true", "yes", "on"})


def variable(action: argparse.Action) -> str:
    """The environment variable of a flag: PRICKLE_ and its name in capitals."""
    return PREFIX + action.dest.upper()


def _flags(parser: argparse.ArgumentParser) -> list[argparse.Action]:
    return [
        a for a in parser._actions if a.option_strings and not isinstance(a, argparse._HelpAction)
    ]


def read_environment(parser: argparse.ArgumentParser) -> None:
    """Make each flag's PRICKLE_* variable, when set, its default (converted by its type)."""
    for action in _flags(parser):
        value = os.environ.get(variable(action))
        if value is None:
            continue
        if isinstance(action, argparse._StoreTrueAction):
            action.default = value.strip().lower() in _TRUE
        else:
            action.default = value
        action.help = f"{action.help or ''} [env {variable(action)}]".strip()


def copy_options(source: argparse.ArgumentParser, target: argparse.ArgumentParser) -> None:
    """The same flags (and defaults) on another command."""
    for action in _flags(source):
        target._add_action(action)


def describe(args: argparse.Namespace) -> str:
    """One line per setting: its flag, its value (secrets masked), and whether its variable is
    set (a flag on the command line wins over it)."""
    lines = []
    for name, value in sorted(vars(args).items()):
        if name == "run":
            continue
        if name == "database_url":
            value = masked(database_url(value))
        elif name.startswith("database_") and name.endswith("_url") and value:
            value = masked(value)
        name_in_environment = PREFIX + name.upper()
        shown = "" if value is None else str(value)
        if name_in_environment in os.environ:
            shown += f"  ({name_in_environment} is set)"
        lines.append(f"{name.replace('_', '-')} = {shown}")
    return "\n".join(lines) + "\n"


def masked(url: str) -> str:
    """A database URL with its password replaced by ***, also one given as a query parameter
    (`?password=...`, `sslpassword=...`, which asyncpg accepts too)."""
    try:
        parsed = make_url(url)
        query = {k: "***" if _secret(k) else v for k, v in parsed.query.items()}
        shown = parsed.set(query=query).render_as_string(hide_password=True)
        return shown.replace("%2A%2A%2A", "***")
    except Exception:
        return "***"


def _secret(parameter: str) -> bool:
    name = parameter.lower()
    return "pass" in name or name in ("pwd", "secret", "token")
