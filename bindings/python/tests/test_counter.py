"""Counter, WindowCounter and RateLimiter, on both stores."""

from __future__ import annotations

import time

import pytest
from conftest import unique

import mcds


def test_counter_incr_decr_get(store: mcds.Store) -> None:
    c = store.counter(unique("hits"))
    assert c.get() == 0
    assert c.incr() == 1
    assert c.incr(41) == 42
    assert c.incr(0) == 42
    assert c.decr(2) == 40
    assert c.get() == 40
    assert int(c) == 40
    assert c.decr(1000) == 0, "decr stops at 0"
    assert c.incr(2**63) == 2**63


def test_counter_handles_share_the_value(store: mcds.Store) -> None:
    name = unique("shared")
    a, b = store.counter(name), mcds.Counter(store, name)
    a.incr(3)
    assert b.incr(4) == 7
    assert a.get() == 7


def test_counter_rejects_bad_deltas(store: mcds.Store) -> None:
    c = store.counter(unique("deltas"))
    with pytest.raises(mcds.InvalidArgument, match="delta must be between 0 and"):
        c.incr(-1)
    with pytest.raises(mcds.InvalidArgument):
        c.decr(2**64)
    with pytest.raises(TypeError):
        c.incr("1")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        c.incr(1.0)  # type: ignore[arg-type]
    assert c.get() == 0


def _at_slot_start(slot_secs: int) -> None:
    """Sleep until just after a slot boundary, so a few calls share a slot."""
    now = time.time()
    time.sleep(slot_secs - now % slot_secs + 0.02)


def test_window_counter(store: mcds.Store) -> None:
    w = store.window_counter(unique("window"), slot_secs=1, slots=3)
    assert (w.slot_secs, w.slots) == (1, 3)
    _at_slot_start(1)
    assert w.incr() == 1
    assert w.incr(4) == 5, "the current slot's count"
    assert w.get() == 0, "the current slot is not complete yet"
    _at_slot_start(1)
    assert w.get() == 5
    assert w.value() == 5


def test_window_counter_checks_its_shape(store: mcds.Store) -> None:
    with pytest.raises(mcds.InvalidArgument) as e:
        store.window_counter(unique("window"), slot_secs=1, slots=1)
    assert e.value.code == mcds.InvalidArgument.code and e.value.message


def test_rate_limiter_fixed_window(store: mcds.Store) -> None:
    # A day-long window: the test does not cross its boundary.
    limiter = store.rate_limiter(unique("api"), limit=3, window_secs=86400)
    assert limiter.peek() == mcds.Decision(True, 3, 0)
    decisions = [limiter.check() for _ in range(4)]
    assert [d.allowed for d in decisions] == [True, True, True, False]
    assert [d.remaining for d in decisions] == [2, 1, 0, 0]
    denied = decisions[-1]
    assert not denied
    assert 0 < denied.retry_after_ms <= 86_400_000
    assert denied.retry_after == denied.retry_after_ms / 1000
    assert not limiter.peek().allowed
    assert (limiter.limit, limiter.window_secs, limiter.sliding) == (3, 86400, False)


def test_rate_limiter_sliding(store: mcds.Store) -> None:
    limiter = store.rate_limiter(unique("sliding"), limit=2, window_secs=86400, sliding=True)
    assert limiter.check() and limiter.check()
    assert not limiter.check()


def test_rate_limiter_rejects_a_zero_window(store: mcds.Store) -> None:
    with pytest.raises(mcds.InvalidArgument):
        store.rate_limiter(unique("zero"), limit=1, window_secs=0)
