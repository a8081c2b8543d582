"""Token buckets, one per principal: the mutation rate limit (docs/limits.md).

A bucket holds up to `burst` tokens (twice the rate) and gains `rate` tokens a second; a
mutation spends one. A bucket left alone long enough to be full again is the same as no
bucket, so it is dropped: memory holds only the principals seen in the last few seconds.
Each process keeps its own buckets. The clock is injected, so the arithmetic is tested
without sleeping.
"""

from __future__ import annotations

import math
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import dataclass

from app.domain.principals import Principal

Clock = Callable[[], float]


@dataclass
class _Bucket:
    tokens: float
    stamp: float  # when `tokens` was counted


@dataclass(frozen=True)
class Refusal:
    """A mutation over the rate limit: what to say, and the seconds until one is allowed."""

    message: str
    retry_after: float


class RateLimit:
    """`rate` tokens a second per key, up to a burst of `2 * rate`."""

    def __init__(self, rate: float, clock: Clock = time.monotonic) -> None:
        if rate <= 0:
            raise ValueError("a rate limit must be above 0 (0 means no limit: no RateLimit)")
        self.rate = rate
        self.burst = 2 * rate
        self._clock = clock
        self._buckets: OrderedDict[Hashable, _Bucket] = OrderedDict()  # least recent first

    def spend(self, key: Hashable) -> float:
        """Spend one of `key`'s tokens: 0.0 when it had one, else the seconds until it has
        one (nothing spent)."""
        now = self._clock()
        self._forget_full(now)
        bucket = self._buckets.pop(key, None) or _Bucket(self.burst, now)
        bucket.tokens = min(self.burst, bucket.tokens + (now - bucket.stamp) * self.rate)
        bucket.stamp = now
        self._buckets[key] = bucket  # now the most recent
        if bucket.tokens >= 1:
            bucket.tokens -= 1
            return 0.0
        return _milliseconds_up((1 - bucket.tokens) / self.rate)

    def refused(self, principal: Principal) -> Refusal | None:
        """Spend one of the principal's mutations: None when it had one, else the refusal
        every surface answers (`rate_limited`, with `retry_after`), and nothing spent."""
        wait = self.spend((principal.kind, principal.id))
        if not wait:
            return None
        message = (
            f"over the rate limit of {self.rate:g} mutations a second (a burst of"
            f" {self.burst:g}); retry after {wait:g} s"
        )
        return Refusal(message, wait)

    def __len__(self) -> int:
        """How many buckets are held (the full ones are forgotten)."""
        return len(self._buckets)

    def _forget_full(self, now: float) -> None:
        """Drop the buckets idle long enough to have refilled, oldest first."""
        refill = self.burst / self.rate
        while self._buckets:
            oldest = next(iter(self._buckets.values()))
            if now - oldest.stamp < refill:
                return
            self._buckets.popitem(last=False)


def rate_limit(rate: int) -> RateLimit | None:
    """The limit for `rate` mutations a second; None (no limit) for 0."""
    return RateLimit(rate) if rate else None


def _milliseconds_up(seconds: float) -> float:
    """`seconds` rounded up to the millisecond, never 0."""
    return max(0.001, math.ceil(round(seconds * 1000, 6)) / 1000)
