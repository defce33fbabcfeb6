"""Lock: with, acquire/release, timeouts, lost leases, on both stores."""

from __future__ import annotations

import datetime
import sys
import threading
import time

import pytest
from conftest import unique

import mcds


def test_with_takes_and_releases(store: mcds.Store) -> None:
    name = unique("job")
    other = store.lock(name, ttl=30)
    with store.lock(name, ttl=30) as guard:
        assert isinstance(guard, mcds.Lock) and guard.held
        assert not other.try_acquire(), "taken while the block runs"
    assert not guard.held
    assert other.try_acquire(), "free after the block"
    assert other.release() is True


def test_with_releases_when_the_block_raises(store: mcds.Store) -> None:
    name = unique("job")
    lock = store.lock(name)
    with pytest.raises(ZeroDivisionError):
        with lock:
            1 / 0
    assert not lock.held
    assert store.lock(name).try_acquire()


def test_acquire_and_release_as_threading_lock(store: mcds.Store) -> None:
    name = unique("job")
    a, b = store.lock(name, ttl=30), store.lock(name, ttl=30)
    assert a.acquire(blocking=False)
    assert not b.acquire(blocking=False)
    started = time.monotonic()
    assert b.acquire(timeout=0.2) is False
    assert 0.15 <= time.monotonic() - started < 5
    assert b.acquire(timeout=0) is False
    assert a.release() is True
    assert b.acquire(timeout=1)
    assert b.release()


def test_with_gives_up_after_timeout(store: mcds.Store) -> None:
    name = unique("job")
    holder = store.lock(name)
    assert holder.try_acquire()
    waiter = store.lock(name, ttl=30, timeout=0.2)
    with pytest.raises(mcds.WaitTimeout) as e:
        with waiter:
            pytest.fail("ran without the lock")
    assert isinstance(e.value, TimeoutError)
    assert "stayed taken" in e.value.message and e.value.code_name == "MCDS_WAIT_TIMEOUT"
    holder.release()


def test_blocking_with_waits_for_the_holder(store: mcds.Store) -> None:
    name = unique("job")
    holder = store.lock(name)
    assert holder.try_acquire()
    release_at = time.monotonic() + 0.3
    timer = threading.Timer(0.3, holder.release)
    timer.start()
    try:
        with store.lock(name):  # timeout None: waits as long as it takes
            assert time.monotonic() >= release_at - 0.05
    finally:
        timer.join()


def test_state_errors(store: mcds.Store) -> None:
    lock = store.lock(unique("job"))
    with pytest.raises(mcds.InvalidArgument, match="does not hold"):
        lock.release()
    assert lock.try_acquire()
    with pytest.raises(mcds.InvalidArgument, match="already holds"):
        lock.try_acquire()
    assert lock.release()


def test_ttl_is_checked(store: mcds.Store) -> None:
    with pytest.raises(mcds.InvalidArgument):
        store.lock(unique("job"), ttl=0)
    with pytest.raises(mcds.InvalidArgument, match="whole seconds"):
        store.lock(unique("job"), ttl=1.5)
    with pytest.raises(mcds.InvalidArgument):
        store.lock(unique("job"), ttl=30, timeout=-1)
    lock = store.lock(unique("job"), ttl=datetime.timedelta(minutes=2), timeout=datetime.timedelta(seconds=1))
    assert (lock.ttl, lock.timeout) == (120, 1.0)


def test_lost_lease_is_reported(store: mcds.Store) -> None:
    # Two locks with a 1 s lease, both held past it (one sleep for both).
    quiet, loud = unique("job"), unique("job")
    a, b = store.lock(quiet, ttl=1), store.lock(loud, ttl=1)
    a.__enter__()
    b.__enter__()
    thief = store.lock(quiet, ttl=30)
    deadline = time.monotonic() + 5  # expiry counts whole seconds, and rounds up
    while not thief.try_acquire():
        assert time.monotonic() < deadline, "the 1 s lease never expired"
        time.sleep(0.1)
    # The block ended normally: LockLost.
    with pytest.raises(mcds.LockLost, match="had expired"):
        a.__exit__(None, None, None)
    assert not store.lock(quiet).try_acquire(), "the thief's lease was not touched"
    # The block raised: its exception goes on, with a note.
    error = RuntimeError("the job failed")
    b.__exit__(RuntimeError, error, None)
    if sys.version_info >= (3, 11):
        assert any("had expired" in note for note in error.__notes__)
    thief.release()


def test_closing_a_lock_releases_its_lease(store: mcds.Store) -> None:
    name = unique("job")
    lock = store.lock(name)
    assert lock.try_acquire()
    lock.close()
    assert store.lock(name).try_acquire()


def test_a_collected_lock_releases_its_lease(store: mcds.Store) -> None:
    name = unique("job")
    lock = store.lock(name)
    assert lock.try_acquire()
    finalizer = lock._finalizer
    del lock  # CPython frees it here; the finalizer frees the C handle
    assert not finalizer.alive
    assert store.lock(name).try_acquire()


def test_repr(store: mcds.Store) -> None:
    lock = store.lock(unique("job"), ttl=5)
    assert "ttl=5" in repr(lock) and "held" not in repr(lock)
    with lock:
        assert "held" in repr(lock)
    lock.close()
    assert "closed" in repr(lock)


def test_a_quorum_url_holds_the_lock_on_a_majority(new_memcached) -> None:
    servers = [new_memcached() for _ in range(3)]
    url = "memcached://" + ",".join(s.addr for s in servers) + "?quorum&timeout_ms=300"
    store = mcds.Store.from_url(url)
    name = unique("quorum")
    a, b = store.lock(name, ttl=10, fencing=True), store.lock(name, ttl=10, fencing=True)
    assert a.try_acquire()
    first = a.fencing_token
    assert not b.try_acquire(), "one holder across the quorum"
    assert a.release() is True
    # One server of three gone: still a majority.
    servers[0].stop()
    assert b.try_acquire()
    assert b.fencing_token > first
    assert b.release() is True
    # Two gone: no majority, and the error says how many answered.
    servers[1].stop()
    with pytest.raises(mcds.ServerDown) as e:
        a.try_acquire()
    assert "1 of 3 servers answered, 2 needed" in e.value.message
    # Only locks run on a quorum.
    with pytest.raises(mcds.Unsupported):
        store.counter(unique("c")).incr()
    store.close()
