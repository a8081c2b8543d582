"""Who acts: a person (an owner, by handle) or an agent (``owner/name``)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from app.domain.errors import InvalidInput

SLUG = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
AGENT_ID = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*/[a-z0-9]+(?:-[a-z0-9]+)*$")
SLUG_MAX = 39
AGENT_ID_MAX = 79


@dataclass(frozen=True)
class Principal:
    kind: str  # "person" | "agent"
    id: str

    @property
    def is_person(self) -> bool:
        return self.kind == "person"

    @property
    def owner(self) -> str:
        """The handle of the person this principal answers to (itself for a person)."""
        return owner_of(self.id)

    def acts_for(self, agent_id: str | None) -> bool:
        """True when this principal is the agent, or the person who owns it."""
        if agent_id is None:
            return False
        return self.id == agent_id or (self.is_person and self.id == owner_of(agent_id))

    def as_reference(self) -> dict[str, str]:
        if self.is_person:
            return {"kind": "person", "handle": self.id}
        return {"kind": "agent", "agent_id": self.id}


def person(handle: str) -> Principal:
    return Principal("person", check_handle(handle))


def agent(agent_id: str) -> Principal:
    return Principal("agent", check_agent_id(agent_id))


def owner_of(principal_id: str) -> str:
    return principal_id.split("/", 1)[0]


def check_handle(handle: str, what: str = "handle") -> str:
    if not isinstance(handle, str) or len(handle) > SLUG_MAX or not SLUG.match(handle):
        raise InvalidInput(f"{what} {handle!r} must match {SLUG.pattern}, at most {SLUG_MAX} chars")
    return handle


def check_agent_id(agent_id: str, what: str = "agent id") -> str:
    if (
        not isinstance(agent_id, str)
        or len(agent_id) > AGENT_ID_MAX
        or not AGENT_ID.match(agent_id)
    ):
        raise InvalidInput(f"{what} {agent_id!r} must look like owner/name (lowercase, digits, -)")
    return agent_id


def check_project(project: str) -> str:
    return check_handle(project, "project")
