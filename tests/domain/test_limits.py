"""The token buckets of app/api/limits.py, on a clock the tests move by hand."""

from __future__ import annotations

import pytest

from app.api.limits import RateLimit, rate_limit
from app.settings import DEFAULT_RATE, SettingError, read

VARIABLE = "PRICKLE_RATE_LIMIT"

pytestmark = pytest.mark.once  # the same on either backend: not run on PostgreSQL


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


def spent(limit: RateLimit, key: str, times: int) -> list[float]:
    return [limit.spend(key) for _ in range(times)]


def test_a_new_principal_has_a_burst_of_twice_the_rate(clock: Clock) -> None:
    limit = RateLimit(5, clock)
    assert spent(limit, "a", 10) == [0.0] * 10
    assert limit.spend("a") == pytest.approx(0.2)


def test_retry_after_is_the_time_until_a_whole_token(clock: Clock) -> None:
    limit = RateLimit(4, clock)
    spent(limit, "a", 8)
    clock.now += 0.1875  # three quarters of a token
    assert limit.spend("a") == 0.063  # 0.0625, rounded up
    clock.now += 0.0625
    assert limit.spend("a") == 0.0
    assert limit.spend("a") == 0.25


def test_a_refusal_spends_nothing(clock: Clock) -> None:
    limit = RateLimit(5, clock)
    spent(limit, "a", 10)
    assert all(wait > 0 for wait in spent(limit, "a", 50))
    clock.now += 0.2
    assert limit.spend("a") == 0.0


def test_tokens_refill_at_the_rate_up_to_the_burst(clock: Clock) -> None:
    limit = RateLimit(5, clock)
    spent(limit, "a", 10)
    clock.now += 60
    assert spent(limit, "a", 10) == [0.0] * 10
    assert limit.spend("a") > 0


def test_principals_have_buckets_of_their_own(clock: Clock) -> None:
    limit = RateLimit(5, clock)
    spent(limit, "a", 10)
    assert limit.spend("a") > 0
    assert spent(limit, "b", 10) == [0.0] * 10


def test_retry_after_is_rounded_up_to_the_millisecond(clock: Clock) -> None:
    limit = RateLimit(3, clock)
    spent(limit, "a", 6)
    wait = limit.spend("a")
    assert wait == 0.334
    clock.now += 1 / 3 - 1e-9
    assert limit.spend("a") == 0.001


def test_buckets_idle_long_enough_to_be_full_are_forgotten(clock: Clock) -> None:
    limit = RateLimit(5, clock)
    for n in range(10_000):
        limit.spend(f"p{n}")
        clock.now += 0.001
    assert len(limit) <= 2001  # the last two seconds' principals, not all ten thousand
    clock.now += 2
    limit.spend("late")
    assert len(limit) == 1


def test_a_forgotten_bucket_comes_back_full(clock: Clock) -> None:
    limit = RateLimit(5, clock)
    spent(limit, "a", 10)
    clock.now += 2
    limit.spend("b")
    assert len(limit) == 1
    assert spent(limit, "a", 10) == [0.0] * 10


def test_a_busy_principal_keeps_its_bucket(clock: Clock) -> None:
    limit = RateLimit(4, clock)
    waits = []
    for _ in range(41):  # at twice the rate
        waits.append(limit.spend("busy"))
        clock.now += 0.125
    assert len(limit) == 1
    assert waits[:15] == [0.0] * 15  # the burst, with what refilled meanwhile
    assert waits[15:] == [0.125, 0.0] * 13  # then every other one: the rate


def test_zero_is_no_limit() -> None:
    assert rate_limit(0) is None
    assert isinstance(rate_limit(5), RateLimit)
    with pytest.raises(ValueError, match="above 0"):
        RateLimit(0)


def test_the_rate_is_the_flag_else_the_environment_else_50() -> None:
    assert read(environ={}).rate_limit == DEFAULT_RATE == 50
    assert read(environ={VARIABLE: "7"}).rate_limit == 7
    assert read({"rate_limit": "0"}, environ={VARIABLE: "7"}).rate_limit == 0
    assert read({"rate_limit": "9"}, environ={VARIABLE: "7"}).rate_limit == 9


def test_a_bad_rate_is_refused() -> None:
    with pytest.raises(SettingError, match="at least 0"):
        read({"rate_limit": "-1"}, environ={})
    with pytest.raises(SettingError, match="PRICKLE_RATE_LIMIT='fast': must be a whole number"):
        read(environ={VARIABLE: "fast"})
