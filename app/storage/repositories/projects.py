"""Projects and their members: a project exists while it has a member.

A change of members marks the transaction (`tx.members_changed`: the store tells its member
listeners after the commit) and, on PostgreSQL, notifies MEMBERS_CHANNEL at commit, so that
every process's live subscriptions re-read their memberships before their next event.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from sqlalchemy import String, bindparam, delete, func, literal, select, text

from app.storage.repositories.base import Repository, insert_missing
from app.storage.statements import once
from app.storage.tables import ProjectMemberRow, table_of

MEMBERS_CHANNEL = "prickle_members"

members = table_of(ProjectMemberRow)

_EXISTS = once(select(members.c.project).where(members.c.project == bindparam("project")).limit(1))
_ROLE = once(
    select(members.c.role).where(
        members.c.project == bindparam("project"), members.c.handle == bindparam("handle")
    )
)
_PROJECTS_OF = select(members.c.project).where(members.c.handle == bindparam("handle"))
_ADMINS = (
    select(members.c.handle)
    .where(members.c.project == bindparam("project"), members.c.role == "admin")
    .order_by(members.c.handle)
)
_NOTIFY = select(func.pg_notify(MEMBERS_CHANNEL, literal("", String)))


class Projects(Repository):
    __slots__ = ()

    async def exists(self, project: str) -> bool:
        """Whether the project exists: as read ahead in this transaction, or read now."""
        known = self.tx.read_ahead.get(("projects", project))
        if known is not None:
            return bool(known)
        return await self._exists_now(project)

    async def _exists_now(self, project: str) -> bool:
        """Whether the project exists, read now (never from what was read ahead)."""
        return await self.tx.one(_EXISTS, {"project": project}) is not None

    def known(self, project: str, founded: bool) -> None:
        """Whether the project exists, read by a statement that read something else too."""
        self.tx.read_ahead[("projects", project)] = founded

    async def is_member(self, project: str, handle: str) -> bool:
        return await self.role(project, handle) is not None

    async def role(self, project: str, handle: str) -> str | None:
        """The person's role in the project (admin, member), None if not a member."""
        row = await self.tx.one(_ROLE, {"project": project, "handle": handle})
        return row[0] if row else None

    async def add_member(self, project: str, handle: str, role: str, at: str) -> None:
        """Add the person with `role` unless already a member (who keeps their role)."""
        if await self.role(project, handle) is None:
            row = {"project": project, "handle": handle, "role": role, "created_at": at}
            await insert_missing(self.tx, members, row)
            await self._changed()

    async def remove_member(self, project: str, handle: str) -> bool:
        """Remove the person from the project; False if it was no member."""
        stmt = delete(members).where(members.c.project == project, members.c.handle == handle)
        removed: bool = (await self.tx.conn.execute(stmt)).rowcount > 0
        if removed:
            await self._changed()
        return removed

    async def admins(self, project: str, for_update: bool = False) -> list[str]:
        """The project's administrators; `for_update` locks their rows until the commit, so
        two removals cannot each leave the other as the last one and both go through."""
        stmt = _ADMINS.with_for_update() if for_update and not self.tx.sqlite else _ADMINS
        return [r[0] for r in await self.tx.rows(stmt, {"project": project})]

    async def found(self, project: str, handle: str, at: str) -> bool:
        """Found the project with `handle` as its administrator, unless it exists. Concurrent
        founders of one project are serialised (on PostgreSQL by a transaction-scoped
        advisory lock on the project's name; SQLite has one writer), so exactly one founds it."""
        if await self.exists(project):
            return False
        if not self.tx.sqlite:
            lock = text("SELECT pg_advisory_xact_lock(hashtextextended(:key, 0))")
            await self.tx.conn.execute(lock, {"key": f"prickle-project:{project}"})
            if await self._exists_now(project):  # founded by whoever held the lock before us
                return False
        await self.add_member(project, handle, "admin", at)
        return True

    async def projects_of(self, handle: str) -> list[str]:
        return [r[0] for r in await self.tx.rows(_PROJECTS_OF, {"handle": handle})]

    async def projects_of_each(self, handles: Sequence[str]) -> dict[str, set[str]]:
        """Each person's projects, in one statement."""
        found: dict[str, set[str]] = defaultdict(set)
        if handles:
            stmt = select(members.c.handle, members.c.project).where(
                members.c.handle.in_(list(handles))
            )
            for handle, project in await self.tx.rows(stmt):
                found[handle].add(project)
        return {h: found[h] for h in handles}

    async def _changed(self) -> None:
        self.tx.members_changed = True
        if not self.tx.sqlite:
            await self.tx.conn.execute(_NOTIFY)
