"""The project memberships of the persons with a live subscription, kept current.

A commit that changes a project's members bumps `version` (in this process through the
store's member listeners; from other processes through a notification on MEMBERS_CHANNEL).
Before the hub offers its next batch of events it calls `refresh()`, which re-reads, in one
statement, the projects of every person tracked here, only when the version moved since the
last read: when nobody's membership changes it costs one integer comparison per batch.
Each person's set is updated in place, so every filter holding it sees the change.
"""

from __future__ import annotations

from collections import Counter

from app.storage.store import Store


class Memberships:
    def __init__(self, store: Store) -> None:
        self.store = store
        self.version = 0  # bumped by each membership change this process hears of
        self._read_at = 0  # the version the sets were last read at
        self._projects: dict[str, set[str]] = {}
        self._holders: Counter[str] = Counter()

    def changed(self) -> None:
        self.version += 1

    def notified(self, _conn: object, _pid: int, _channel: str, _payload: object) -> None:
        self.changed()

    async def track(self, handle: str) -> set[str]:
        """The person's projects, read now, and kept current until `untrack(handle)`."""
        async with self.store.read() as tx:
            fresh = set(await tx.projects.projects_of(handle))
        self._holders[handle] += 1
        projects = self._projects.setdefault(handle, set())
        projects.clear()
        projects.update(fresh)
        return projects

    def untrack(self, handle: str) -> None:
        self._holders[handle] -= 1
        if self._holders[handle] <= 0:
            del self._holders[handle]
            self._projects.pop(handle, None)

    async def refresh(self) -> None:
        """Re-read every tracked person's projects if a membership changed since the last read."""
        if self.version == self._read_at:
            return
        version = self.version
        handles = list(self._projects)
        async with self.store.read() as tx:
            fresh = await tx.projects.projects_of_each(handles)
        for handle, projects in fresh.items():
            if handle in self._projects:
                self._projects[handle].clear()
                self._projects[handle].update(projects)
        self._read_at = version
