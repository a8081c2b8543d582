"""`prickle`: serve, migrate, token create, token revoke, erase, docs, schema."""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from app.domain.errors import ProtocolError
from app.domain.principals import agent, person
from app.domain.table import TableError, table
from app.settings import DATABASE_FLAGS, SettingError, add_flags, current, given, read, use
from app.storage.pooling import DatabaseSettingError

if TYPE_CHECKING:
    from app.domain.tokens import TokenInfo
    from app.service.auth import NewToken
    from app.service.erasure import Erasure
    from app.storage.archive import Archived
    from app.storage.store import Store

T = TypeVar("T")


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        use(read(given(args)))  # the settings, read once: flags, PRICKLE_*, defaults
        return args.run(args) or 0
    except ProtocolError as error:
        from app.api import errors

        print(f"prickle: {errors.code(error)}: {errors.message(error)}", file=sys.stderr)
        return 2
    except TableError as error:
        print(f"prickle: the transition table: {error}", file=sys.stderr)
        return 2
    except SettingError as error:  # a setting's flag or variable (`app.settings`)
        print(f"prickle: {error}", file=sys.stderr)
        return 2
    except DatabaseSettingError as error:  # found at start: a pooler, a direct URL, a budget
        print(f"prickle: {error}", file=sys.stderr)
        return 2


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="prickle", description="The Prickle task server.")
    commands = parser.add_subparsers(required=True, metavar="COMMAND")

    serve = commands.add_parser("serve", help="run the GraphQL server (migrates on start)")
    add_flags(serve)  # every setting with a flag (`app.settings`), each also its PRICKLE_*
    serve.set_defaults(run=_serve)
    config = commands.add_parser(
        "config",
        help="print the settings `serve` would run with, and where each came from (secrets masked)",
    )
    add_flags(config)
    config.set_defaults(run=_config)

    migrate = commands.add_parser("migrate", help="bring the database schema to the latest")
    add_flags(migrate, DATABASE_FLAGS)
    migrate.set_defaults(run=_migrate)

    token = commands.add_parser("token", help="tokens").add_subparsers(
        required=True, metavar="ACTION"
    )
    create = token.add_parser("create", help="create a principal if missing and print a new token")
    who = create.add_mutually_exclusive_group(required=True)
    who.add_argument("--owner", metavar="HANDLE")
    who.add_argument("--agent", metavar="OWNER/NAME")
    create.add_argument("--label", default=None, help="a name for the token, shown by `tokens`")
    create.add_argument(
        "--expires-in", type=int, default=None, metavar="SECONDS", help="expire it after this"
    )
    add_flags(create, DATABASE_FLAGS)
    create.set_defaults(run=_token_create)
    revoke = token.add_parser("revoke", help="revoke a token by its id, on every server at once")
    revoke.add_argument("id", metavar="ID")
    add_flags(revoke, DATABASE_FLAGS)
    revoke.set_defaults(run=_token_revoke)

    erase = commands.add_parser(
        "erase", help="erase a person (and its agents) or an agent, for good"
    )
    whom = erase.add_mutually_exclusive_group(required=True)
    whom.add_argument("--person", metavar="HANDLE")
    whom.add_argument("--agent", metavar="OWNER/NAME")
    add_flags(erase, DATABASE_FLAGS)
    erase.set_defaults(run=_erase)

    archive = (
        commands.add_parser("events", help="the event log")
        .add_subparsers(required=True, metavar="ACTION")
        .add_parser(
            "archive",
            help="move the events of tasks ended before a date out of the log (a task's own"
            " history still reads them; a cursor before them is refused)",
        )
    )
    archive.add_argument("--ended-before", required=True, metavar="DATE")
    archive.add_argument("--jsonl", metavar="FILE", help="into this new file, not a table")
    add_flags(archive, DATABASE_FLAGS)
    archive.set_defaults(run=_events_archive)

    demo = commands.add_parser(
        "demo",
        help="fill an empty database with a small project in every state, for the board",
    )
    add_flags(demo, ["database_url"])
    demo.set_defaults(run=_demo)

    docs = commands.add_parser(
        "docs", help="write docs/task-states.md and README.md's state diagram from the table"
    )
    docs.add_argument("--output", default="docs/task-states.md")
    docs.add_argument(
        "--readme", default="README.md", help="whose diagram to refresh, if it exists"
    )
    docs.set_defaults(run=_docs)

    schema = commands.add_parser("schema", help="print (or write) the GraphQL SDL")
    schema.add_argument("--output", default=None)
    schema.add_argument(
        "--documents",
        default=None,
        metavar="DIRECTORY",
        help="also write each task verb's operation document there, <verb>.graphql "
        "(graphql/mutations)",
    )
    schema.set_defaults(run=_schema)
    return parser


def _serve(args: argparse.Namespace) -> int:
    from app.server import serve
    from app.service.verbs import registry

    table()  # a table that does not load (PRICKLE_TRANSITIONS) stops serve before it starts
    registry()  # and so does a verb declared (PRICKLE_VERBS) that the table does not name
    return serve(current())


def _config(args: argparse.Namespace) -> int:
    from app.settings import describe

    settings = current()  # each value checked as it was read: what `serve` would refuse
    if settings.trusted_documents:
        from app.api.persisted import load  # the API's modules only for a manifest to check

        try:
            load(Path(settings.trusted_documents))
        except ValueError as error:
            print(f"prickle: {error}", file=sys.stderr)
            return 2
    sys.stdout.write(describe(settings))
    return 0


def _migrate(args: argparse.Namespace) -> int:
    from app.storage.migrate import upgrade
    from app.storage.store import Store

    async def run() -> None:
        store = Store(current().database_url)
        try:
            await _checked(store)
            await upgrade(store.direct_engine)
        finally:
            await store.close()

    asyncio.run(run())
    print(f"migrated {current().database_url}")
    return 0


def _token_create(args: argparse.Namespace) -> int:
    from app.service.admin import provision_token
    from app.storage.migrate import upgrade

    principal = person(args.owner) if args.owner else agent(args.agent)

    async def run(store: Store) -> NewToken:
        await upgrade(store.direct_engine)
        return await provision_token(store, principal, args.label, args.expires_in)

    made = _with_store(current().database_url, run)
    print(f"token {made.token_info.id} for {principal.kind} {principal.id}:")
    print(made.token)
    return 0


def _token_revoke(args: argparse.Namespace) -> int:
    from app.service.credentials import revoke_token
    from app.storage.migrate import upgrade

    async def run(store: Store) -> TokenInfo:
        await upgrade(store.direct_engine)
        return await revoke_token(store, None, args.id)

    info = _with_store(current().database_url, run)
    print(f"revoked token {info.id} of {info.principal_kind} {info.principal} at {info.revoked_at}")
    return 0


def _erase(args: argparse.Namespace) -> int:
    from app.service.erasure import erase_agent, erase_person
    from app.storage.migrate import upgrade

    async def run(store: Store) -> Erasure:
        await upgrade(store.direct_engine)
        if args.person:
            return await erase_person(store, None, args.person)
        return await erase_agent(store, None, args.agent)

    done = _with_store(current().database_url, run)
    print(
        f"erased {done.principal} at {done.erased_at}: {done.tokens_revoked} tokens revoked, "
        f"{done.tasks_marked} tasks marked"
    )
    return 0


def _events_archive(args: argparse.Namespace) -> int:
    from app.service.archive import archive_events
    from app.storage.migrate import upgrade

    jsonl = Path(args.jsonl) if args.jsonl else None
    if jsonl is not None and jsonl.exists():
        print(f"prickle: --jsonl: {jsonl} exists; name a new file", file=sys.stderr)
        return 2

    async def run(store: Store) -> Archived:
        await upgrade(store.direct_engine)
        return await archive_events(store, args.ended_before, jsonl)

    done = _with_store(current().database_url, run)
    where = jsonl or "events_archive"
    print(
        f"archived {done.events} events of tasks ended before {args.ended_before} to {where};"
        f" the log is served from cursor {done.archived_to} on"
    )
    return 0


def _with_store(url: str | None, run: Callable[[Store], Awaitable[T]]) -> T:
    """`run(store)` on the database, the store closed after."""

    from app.storage.store import Store

    async def running() -> T:
        store = Store(url)
        try:
            await _checked(store)
            return await run(store)
        finally:
            await store.close()

    return asyncio.run(running())


async def _checked(store: Store) -> None:
    """PostgreSQL: the pooler, the direct URL and the read URL as `serve` checks them."""
    if not store.sqlite:
        from app.storage.engine import startup_settings
        from app.storage.pooling import check
        from app.storage.replica import check as check_read

        await check(store.url, store.pooled, store.direct_url, startup_settings())
        if store.read_url is not None:
            await check_read(store.url, store.read_url, store.pooled, startup_settings())


def _demo(args: argparse.Namespace) -> int:
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import DBAPIError

    from app.service.database import fault, migrate
    from app.service.demo import Demo, fill

    url = make_url(current().database_url)
    shown = url.render_as_string(hide_password=True)
    folder = Path(url.database or ".").parent
    if url.get_backend_name() == "sqlite" and url.database and not folder.is_dir():
        print(f"prickle: {shown}: the folder {folder} does not exist", file=sys.stderr)
        return 2

    async def run(store: Store) -> Demo:
        try:
            await migrate(store)
            return await fill(store)
        except Exception as error:  # a database away is one line (main), not a traceback
            raise (fault(error) or error) from None

    try:
        made = _with_store(current().database_url, run)
    except (OSError, DBAPIError) as error:  # no such database, no access to it, ...
        cause = getattr(error, "orig", None) or error
        print(f"prickle: {shown}: {str(cause).splitlines()[0]}", file=sys.stderr)
        return 2
    print(f"made {made.tasks} tasks in project {made.project} on {shown}")
    print("serve this database (bash scripts/serve.sh, or prickle serve) and open")
    print(f"  the board: http://127.0.0.1:8000/board?project={made.project}")
    print("  GraphiQL:  http://127.0.0.1:8000/graphql")
    print(f"{made.owner}'s token (the board asks for it once; GraphiQL: Authorization: Bearer):")
    print(made.token)
    return 0


def _docs(args: argparse.Namespace) -> int:
    from app.docs import write_readme_diagram, write_task_states

    write_task_states(args.output)
    print(f"wrote {args.output}")
    if Path(args.readme).exists():
        write_readme_diagram(args.readme)
        print(f"refreshed the state diagram in {args.readme}")
    return 0


def _schema(args: argparse.Namespace) -> int:
    from app.api.schema import sdl
    from app.api.verbs import operation_document
    from app.service.verbs import registry

    text = sdl()
    if args.output:
        with open(args.output, "w") as out:
            out.write(text)
        print(f"wrote {args.output}")
    else:
        sys.stdout.write(text)
    if args.documents:
        for verb in registry():
            (Path(args.documents) / f"{verb.name}.graphql").write_text(operation_document(verb))
        print(f"wrote {len(registry())} documents to {args.documents}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
