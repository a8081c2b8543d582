"""The dispatcher's settings: its lease, the polls of remote tasks, the requests' timeout,
and whether private addresses may be reached."""

from __future__ import annotations

from dataclasses import dataclass

from app import tuning
from app.service.remote_agents import private_allowed


@dataclass(frozen=True)
class Settings:
    lease: float = tuning.A2A_LEASE_SECONDS.default
    poll: tuple[float, ...] = tuning.A2A_POLL.default
    timeout: float = tuning.A2A_TIMEOUT_SECONDS.default
    allow_private: bool = False

    @classmethod
    def from_environment(cls) -> Settings:
        """The PRICKLE_A2A_* tuning variables and PRICKLE_ALLOW_PRIVATE_AGENTS."""
        return cls(
            lease=tuning.A2A_LEASE_SECONDS.value(),
            poll=tuning.A2A_POLL.value(),
            timeout=tuning.A2A_TIMEOUT_SECONDS.value(),
            allow_private=private_allowed(),
        )
