"""The dispatcher's settings: its lease, the polls of remote tasks, the requests' timeout,
and whether private addresses may be reached."""

from __future__ import annotations

from dataclasses import dataclass

from app import settings


@dataclass(frozen=True)
class Settings:
    lease: float = settings.Settings.a2a_lease_seconds
    poll: tuple[float, ...] = settings.Settings.a2a_poll
    timeout: float = settings.Settings.a2a_timeout_seconds
    allow_private: bool = False

    @classmethod
    def of(cls, configured: settings.Settings) -> Settings:
        """The server's: PRICKLE_A2A_* and --allow-private-agents (`app.settings`)."""
        return cls(
            lease=configured.a2a_lease_seconds,
            poll=configured.a2a_poll,
            timeout=configured.a2a_timeout_seconds,
            allow_private=configured.allow_private_agents,
        )
