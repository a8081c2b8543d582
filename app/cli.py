"""`prickle`: serve, migrate, token create, docs, schema."""

from __future__ import annotations

import argparse
import asyncio
import sys

from app.domain.errors import ProtocolError
from app.domain.principals import agent, person
from app.storage.engine import database_url


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        return args.run(args) or 0
    except ProtocolError as error:
        from app.api import errors

        print(f"prickle: {errors.code(error)}: {errors.message(error)}", file=sys.stderr)
        return 2


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="prickle", description="The Prickle task server.")
    commands = parser.add_subparsers(required=True, metavar="COMMAND")

    serve = commands.add_parser("serve", help="run the GraphQL server (migrates on start)")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=8000)
    serve.add_argument("--database-url", default=None)
    serve.add_argument("--workers", type=int, default=1)
    serve.add_argument("--owner", default="admin", help="owner created on an empty database")
    serve.add_argument("--access-log", action="store_true", help="log a line per request")
    serve.add_argument(
        "--rate-limit",
        type=int,
        default=None,
        metavar="N",
        help="mutations a second per principal, a burst of 2N, in each process; 0 turns it "
        "off (default: PRICKLE_RATE_LIMIT or 50)",
    )
    serve.set_defaults(run=_serve)

    migrate = commands.add_parser("migrate", help="bring the database schema to the latest")
    migrate.add_argument("--database-url", default=None)
    migrate.set_defaults(run=_migrate)

    token = commands.add_parser("token", help="tokens").add_subparsers(
        required=True, metavar="ACTION"
    )
    create = token.add_parser("create", help="create a principal if missing and print a new token")
    who = create.add_mutually_exclusive_group(required=True)
    who.add_argument("--owner", metavar="HANDLE")
    who.add_argument("--agent", metavar="OWNER/NAME")
    create.add_argument("--database-url", default=None)
    create.set_defaults(run=_token_create)

    docs = commands.add_parser("docs", help="write docs/task-states.md from the transition table")
    docs.add_argument("--output", default="docs/task-states.md")
    docs.set_defaults(run=_docs)

    schema = commands.add_parser("schema", help="print (or write) the GraphQL SDL")
    schema.add_argument("--output", default=None)
    schema.set_defaults(run=_schema)
    return parser


def _serve(args: argparse.Namespace) -> int:
    from app.server import serve

    return serve(
        host=args.host,
        port=args.port,
        url=database_url(args.database_url),
        workers=args.workers,
        owner=args.owner,
        access_log=args.access_log,
        rate_limit=args.rate_limit,
    )


def _migrate(args: argparse.Namespace) -> int:
    from app.storage.migrate import upgrade
    from app.storage.store import Store

    async def run() -> None:
        store = Store(args.database_url)
        try:
            await upgrade(store.engine)
        finally:
            await store.close()

    asyncio.run(run())
    print(f"migrated {database_url(args.database_url)}")
    return 0


def _token_create(args: argparse.Namespace) -> int:
    from app.service import create_token
    from app.storage.migrate import upgrade
    from app.storage.store import Store

    principal = person(args.owner) if args.owner else agent(args.agent)

    async def run() -> str:
        store = Store(args.database_url)
        try:
            await upgrade(store.engine)
            return await create_token(store, principal)
        finally:
            await store.close()

    token = asyncio.run(run())
    print(f"token for {principal.kind} {principal.id}:")
    print(token)
    return 0


def _docs(args: argparse.Namespace) -> int:
    from app.docs import write_task_states

    write_task_states(args.output)
    print(f"wrote {args.output}")
    return 0


def _schema(args: argparse.Namespace) -> int:
    from app.api.schema import sdl

    text = sdl()
    if args.output:
        with open(args.output, "w") as out:
            out.write(text)
        print(f"wrote {args.output}")
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
