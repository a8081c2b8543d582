"""Projects and their members: a project exists while it has a member."""

from __future__ import annotations

from sqlalchemy import bindparam, select

from app.storage.repositories.base import Repository, insert_missing
from app.storage.tables import ProjectMemberRow, table_of

members = table_of(ProjectMemberRow)

_EXISTS = select(members.c.project).where(members.c.project == bindparam("project")).limit(1)
_ROLE = select(members.c.role).where(
    members.c.project == bindparam("project"), members.c.handle == bindparam("handle")
)
_PROJECTS_OF = select(members.c.project).where(members.c.handle == bindparam("handle"))


class Projects(Repository):
    __slots__ = ()

    async def exists(self, project: str) -> bool:
        return await self.tx.one(_EXISTS, {"project": project}) is not None

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

    async def projects_of(self, handle: str) -> list[str]:
        return [r[0] for r in await self.tx.rows(_PROJECTS_OF, {"handle": handle})]
