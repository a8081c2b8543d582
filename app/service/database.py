"""The database the service works on: its store (the unit of work) and its migration.

Entry points (the web app's lifespan, the API's context) take the store from here, so that
nothing above the service layer needs app.storage.
"""

from __future__ import annotations

from app.storage import replica
from app.storage.migrate import upgrade
from app.storage.outage import fault
from app.storage.store import Store

__all__ = ["Store", "fault", "migrate", "replica"]


async def migrate(store: Store) -> None:
    """Bring the store's database to the newest schema (one transaction)."""
    await upgrade(store.direct_engine)
