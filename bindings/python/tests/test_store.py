"""Store construction, and the life of every handle: close, with, finalizers,
use after close (fork: test_fork.py)."""

from __future__ import annotations

import gc
import inspect
import os
import threading
import time

import pytest
from conftest import Memcached, unique

import mcds
import mcds.aio
from mcds._ffi import ffi
from mcds._store import FACTORIES as REGISTERED

# Every structure's factory, with the arguments it needs.
FACTORIES = {
    "counter": lambda s, n: s.counter(n),
    "lock": lambda s, n: s.lock(n, ttl=30),
    "set": lambda s, n: s.set(n),
    "window_counter": lambda s, n: s.window_counter(n, slot_secs=60, slots=5),
    "rate_limiter": lambda s, n: s.rate_limiter(n, limit=10, window_secs=60),
    "event_log": lambda s, n: s.event_log(n, chunk_secs=60, chunks=10),
    "table": lambda s, n: s.table(n),
    "hyperloglog": lambda s, n: s.hyperloglog(n),
    "bloom_filter": lambda s, n: s.bloom_filter(n, expected_items=100),
    "activity_bitmap": lambda s, n: s.activity_bitmap(n, start_unix_secs=0, unit_ms=1000),
}
CLASSES = {
    "counter": mcds.Counter,
    "lock": mcds.Lock,
    "set": mcds.Set,
    "window_counter": mcds.WindowCounter,
    "rate_limiter": mcds.RateLimiter,
    "event_log": mcds.EventLog,
    "table": mcds.Table,
    "hyperloglog": mcds.HyperLogLog,
    "bloom_filter": mcds.BloomFilter,
    "activity_bitmap": mcds.ActivityBitmap,
}


def test_every_factory_is_registered_with_its_class_signature() -> None:
    """Store's factories come from one registry (_store.FACTORIES): each is
    a plain method with the signature of its class less the store (save
    counter_map's scale), a docstring naming the class, and a plain call on
    mcds.aio.Store."""
    assert len(REGISTERED) == 19
    for name, method in REGISTERED.items():
        assert inspect.getattr_static(mcds.Store, name) is method
        assert method.__name__ == name and method.__qualname__ == f"Store.{name}"
        sig = inspect.signature(getattr(mcds.Store, name))
        cls = getattr(mcds, sig.return_annotation)
        assert f":class:`~mcds.{cls.__name__}`" in (method.__doc__ or ""), name
        params = list(sig.parameters.values())
        assert params[0].name == "self"
        if name != "counter_map":
            assert params[1:] == list(inspect.signature(cls).parameters.values())[1:], name
    assert mcds.aio.Store._local == frozenset(REGISTERED)
    with mcds.Store.memory() as store:
        assert store.counter("c").incr(2) == 2
        assert store.counter_map("m", 2).scale == 2
        assert store.lock("l", 5, fencing=True).ttl == 5


def test_store_forms(memcached: Memcached) -> None:
    host, port = memcached.addr.split(":")
    for servers in [memcached.addr, [memcached.addr], [(host, int(port))], (memcached.addr,)]:
        with mcds.Store.memcached(servers) as store:
            assert store.servers == memcached.addr
            assert store.counter(unique("c")).incr() == 1
    with mcds.Store(memcached.addr) as store:
        assert "127.0.0.1" in repr(store)
    with mcds.Store.memory() as store:
        assert store.servers is None and "memory" in repr(store)
    assert store.closed and "closed" in repr(store)


def test_bad_server_lists_are_refused() -> None:
    with pytest.raises(mcds.Error) as e:
        mcds.Store.memcached("")
    assert e.value.message
    with pytest.raises(mcds.InvalidArgument):
        mcds.Store.memcached("127.0.0.1:1\0")


@pytest.mark.parametrize("kind", sorted(FACTORIES))
def test_every_structure_closes_once_and_refuses_use_after(store: mcds.Store, kind: str) -> None:
    obj = FACTORIES[kind](store, unique(kind))
    assert isinstance(obj, CLASSES[kind])
    assert not obj.closed
    obj.close()
    obj.close()  # idempotent
    assert obj.closed and obj._owner.ptr == ffi.NULL
    method = {
        "counter": lambda o: o.incr(),
        "lock": lambda o: o.try_acquire(),
        "set": lambda o: o.add("x"),
        "window_counter": lambda o: o.incr(),
        "rate_limiter": lambda o: o.check(),
        "event_log": lambda o: o.put("x"),
        "table": lambda o: o.get("x"),
        "hyperloglog": lambda o: o.count(),
        "bloom_filter": lambda o: o.add("x"),
        "activity_bitmap": lambda o: o.get(0),
    }[kind]
    with pytest.raises(mcds.Closed, match="is closed") as e:
        method(obj)
    assert isinstance(e.value, ValueError) and e.value.code is None


@pytest.mark.parametrize("kind", sorted(FACTORIES))
def test_every_structure_is_a_context_manager_and_is_collected(store: mcds.Store, kind: str) -> None:
    if kind != "lock":  # a Lock's with takes the lock (test_lock.py)
        with FACTORIES[kind](store, unique(kind)) as obj:
            assert not obj.closed
        assert obj.closed
    obj = FACTORIES[kind](store, unique(kind))
    finalizer = obj._finalizer
    owner = obj._owner
    assert finalizer.alive
    del obj
    gc.collect()
    assert not finalizer.alive and owner.closed and owner.ptr == ffi.NULL


def test_every_structure_takes_its_class_constructor(store: mcds.Store) -> None:
    assert mcds.Counter(store, unique("c")).incr() == 1
    assert mcds.Lock(store, unique("l"), ttl=5).try_acquire()
    assert mcds.WindowCounter(store, unique("w"), slot_secs=60, slots=5).incr() == 1
    assert mcds.RateLimiter(store, unique("r"), limit=1, window_secs=60).check()
    assert mcds.BloomFilter(store, unique("b"), expected_items=10).add("x")


def test_structures_outlive_a_closed_store(store: mcds.Store) -> None:
    c = store.counter(unique("c"))
    store.close()
    assert c.incr() == 1, "a structure holds its own reference"
    with pytest.raises(mcds.Closed):
        store.counter(unique("c"))


def test_a_collected_store_leaves_its_structures_working(memcached: Memcached) -> None:
    c = mcds.Store.memcached(memcached.addr).counter(unique("c"))
    gc.collect()
    assert c.incr() == 1


def test_close_waits_for_a_call_in_progress(store: mcds.Store) -> None:
    name = unique("job")
    holder = store.lock(name)
    assert holder.try_acquire()
    waiter = store.lock(name)
    results = []
    t = threading.Thread(target=lambda: results.append(waiter.acquire(timeout=0.5)))
    t.start()
    time.sleep(0.1)  # waiter is inside mcds_lock_acquire
    waiter.close()  # deferred: the handle is in use
    assert waiter.closed
    t.join()
    assert results == [False], "the call in progress finished normally"
    assert waiter._owner.ptr == ffi.NULL, "freed when the call returned"
    with pytest.raises(mcds.Closed):
        waiter.try_acquire()
    holder.release()
