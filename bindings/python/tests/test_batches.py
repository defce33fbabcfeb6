"""Batches, clears and TTL handles: Counter.reset/incr_many/with_ttl,
BloomFilter and HyperLogLog add_many/clear, with_ttl on Set, BloomFilter,
HyperLogLog and ActivityBitmap."""

from __future__ import annotations

import os
import signal
import time

import pytest
from conftest import unique

import mcds


def test_counter_reset(store: mcds.Store) -> None:
    c = store.counter(unique("hits"))
    c.incr(5)
    c.reset()
    assert c.get() == 0 and c.incr() == 1
    store.counter(unique("never")).reset()  # a missing counter: nothing to do


def test_counter_incr_many(store: mcds.Store) -> None:
    a, b = store.counter(unique("a")), store.counter(unique("b"))
    assert mcds.Counter.incr_many([(a, 1), (b, 10), (a, 2)]) == [1, 10, 3]
    assert (a.get(), b.get()) == (3, 10)
    assert mcds.Counter.incr_many([]) == []
    prefixed = store.with_prefix("p/").counter(unique("c"))
    assert mcds.Counter.incr_many([(a, 1), (prefixed, 4)]) == [4, 4], "a prefixed handle is the same store"
    other = mcds.Store.memory().counter("x")
    with pytest.raises(mcds.InvalidArgument):
        mcds.Counter.incr_many([(a, 1), (other, 1)])
    assert a.get() == 4, "a refused batch sends nothing"
    for bad in [[(a,)], [("a", 1)], [a], [(a, -1)]]:
        with pytest.raises((TypeError, mcds.InvalidArgument)):
            mcds.Counter.incr_many(bad)  # type: ignore[arg-type]
    with pytest.raises(mcds.InvalidArgument):
        mcds.Counter.incr_many([(a, 1)] * 100_001)


def test_incr_many_reports_each_failure(new_memcached) -> None:  # type: ignore[no-untyped-def]
    # One server stopped: the increments routed to it fail, the others
    # apply; return_exceptions puts each outcome in its slot.
    live, stopped = new_memcached(), new_memcached()
    store = mcds.Store.memcached([live.addr, stopped.addr], io_timeout=0.3)
    counters = [store.counter(unique("spread")) for _ in range(12)]
    # A pool's store reads every server's pool record once before it
    # works (RELIABILITY.md): one call while both are up.
    counters[0].get()
    os.kill(stopped.proc.pid, signal.SIGSTOP)
    try:
        outcomes = mcds.Counter.incr_many([(c, 1) for c in counters], return_exceptions=True)
        failed = [o for o in outcomes if isinstance(o, mcds.Error)]
        assert failed and len(failed) < len(counters), outcomes
        assert all(o == 1 for o in outcomes if not isinstance(o, mcds.Error))
        assert all(isinstance(o, mcds.BackendError) for o in failed), failed
        with pytest.raises(mcds.BackendError):  # a timeout, or the server marked down
            mcds.Counter.incr_many([(c, 1) for c in counters])
    finally:
        os.kill(stopped.proc.pid, signal.SIGCONT)


def test_bloom_batches_and_clear(store: mcds.Store) -> None:
    bf = store.bloom_filter(unique("seen"), expected_items=1000)
    assert bf.add_many(["a", b"b", "a"]) == 2, "a repeat in the batch counts once"
    assert bf.add_many(["a", "c"]) == 1
    assert bf.add_many([]) == 0
    assert bf.contains_many(["a", "b", "c", "zzz-never"]) == [True, True, True, False]
    assert bf.contains_many([]) == []
    assert bf.contains_many(["a", "b"]) == [bf.contains("a"), "b" in bf]
    bf.clear()
    assert bf.contains_many(["a", "b", "c"]) == [False, False, False]
    with pytest.raises(TypeError):
        bf.add_many("abc")


def test_hll_batches_and_clear(store: mcds.Store) -> None:
    h = store.hyperloglog(unique("visitors"))
    assert h.add_many([f"u{i}" for i in range(1000)]) is True
    assert 960 <= h.count() <= 1040
    assert h.add_many(["u1", "u2"]) is False, "nothing new"
    h.clear()
    assert h.count() == 0
    assert h.add_many([]) is False


def test_ttl_handles(store: mcds.Store) -> None:
    # Items written through a 1 s TTL handle expire; the originals do not.
    # (Real expiry: one sleep for every structure.)
    counter = store.counter(unique("c"))
    s = store.set(unique("s"))
    bf = store.bloom_filter(unique("b"), expected_items=100)
    h = store.hyperloglog(unique("h"))
    bm = store.activity_bitmap(unique("m"), start_unix_secs=0, unit_ms=1000)
    keep = store.counter(unique("keep"))
    keep.with_ttl(None).incr()
    keep.with_ttl(0).incr()
    counter.with_ttl(1).incr(7)
    short_set = s.with_ttl(1)
    short_set.add("x")
    bf.with_ttl(1).add("x")
    h.with_ttl(1).add("x")
    bm.with_ttl(1).set(3)
    assert (counter.get(), "x" in s, "x" in bf, h.count(), bm.get(3)) == (7, True, True, 1, True)
    assert short_set.name == s.name and isinstance(short_set, mcds.Set)
    deadline = time.monotonic() + 4  # memcached's clock ticks whole seconds
    while counter.get() or "x" in s or "x" in bf or h.count() or bm.get(3):
        assert time.monotonic() < deadline, "a 1 s TTL item outlived 4 s"
        time.sleep(0.2)
    assert keep.get() == 2
    for bad in [-1, 1.5, "1"]:
        with pytest.raises((mcds.InvalidArgument, TypeError)):
            counter.with_ttl(bad)  # type: ignore[arg-type]
