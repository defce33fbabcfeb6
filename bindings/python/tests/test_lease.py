"""Lock leases beyond with/acquire/release: fencing tokens, extend,
auto-extend, lost leases, holders and owner labels, backoff."""

from __future__ import annotations

import socket
import threading
import time

import pytest
from conftest import Memcached, unique

import mcds


def flush_all(server: Memcached) -> None:
    """memcached's flush_all, over a raw socket: every item is gone."""
    with socket.create_connection(("127.0.0.1", server.port), timeout=5) as s:
        s.sendall(b"flush_all\r\n")
        assert s.recv(64) == b"OK\r\n"


def test_fencing_tokens_increase_across_holders(store: mcds.Store) -> None:
    name = unique("ledger")
    tokens = []
    for _ in range(3):
        with store.lock(name, ttl=30, fencing=True) as guard:
            tokens.append(guard.fencing_token)
            assert guard.fencing_token == tokens[-1], "stable while held"
    other = store.lock(name, fencing=True)
    assert other.try_acquire()
    tokens.append(other.fencing_token)
    other.release()
    assert tokens == sorted(set(tokens)) and len(tokens) == 4, tokens


def test_fencing_token_needs_fencing_and_a_lease(store: mcds.Store) -> None:
    plain = store.lock(unique("ledger"))
    with plain:
        with pytest.raises(mcds.InvalidArgument, match="fencing=True"):
            plain.fencing_token
    fenced = store.lock(unique("ledger"), fencing=True)
    with pytest.raises(mcds.InvalidArgument):
        fenced.fencing_token  # holds nothing
    twin = plain.with_fencing()
    with twin:
        assert twin.fencing_token >= 1
    assert not plain.with_fencing(False)._fencing


def test_extend_renews_and_reports_a_lost_lease(new_memcached) -> None:  # type: ignore[no-untyped-def]
    server = new_memcached()
    store = mcds.Store.memcached(server.addr)
    lock = store.lock(unique("job"), ttl=30)
    with pytest.raises(mcds.InvalidArgument):
        lock.extend()  # holds nothing
    assert lock.try_acquire()
    lock.extend()
    lock.extend(60)
    assert not lock.lost
    flush_all(server)  # the lease item is gone, as after an eviction
    with pytest.raises(mcds.LockLost, match="lost before the extension"):
        lock.extend()
    assert lock.lost
    assert lock.release() is False, "a lost lease is not ours to release"
    assert not lock.lost and not lock.held


def test_auto_extend_outlives_the_ttl(store: mcds.Store) -> None:
    name = unique("long-job")
    lock = store.lock(name, ttl=1)
    assert lock.try_acquire()
    lock.auto_extend()  # every 1/3 s, for 1 s
    thief = store.lock(name)
    deadline = time.monotonic() + 2.5  # well past the 1 s lease
    while time.monotonic() < deadline:
        assert not thief.try_acquire(), "taken while the renewer ran"
        assert not lock.lost
        time.sleep(0.25)
    assert lock.release() is True
    assert thief.try_acquire()
    thief.release()


def test_auto_extend_finds_a_lost_lease(new_memcached) -> None:  # type: ignore[no-untyped-def]
    server = new_memcached()
    store = mcds.Store.memcached(server.addr)
    lock = store.lock(unique("job"), ttl=3)
    with pytest.raises(mcds.InvalidArgument):
        lock.auto_extend()  # holds nothing
    assert lock.try_acquire()
    lock.auto_extend()
    flush_all(server)
    deadline = time.monotonic() + 5  # the next renewal comes within 1 s
    while not lock.lost:
        assert time.monotonic() < deadline, "the renewer never found the lease gone"
        time.sleep(0.05)
    assert lock.release() is False


def test_holder_and_owner_label(store: mcds.Store) -> None:
    name = unique("cron")
    lock = store.lock(name, owner_label="host=web1 pid=42")
    assert lock.holder() is None and not lock.locked() and lock.owner_token is None
    with lock:
        token = lock.owner_token
        assert token is not None and token.startswith("host=web1 pid=42 ")
        watcher = store.lock(name)
        assert watcher.holder() == token and watcher.locked()
    assert watcher.holder() is None
    relabeled = lock.with_owner_label("other")
    with relabeled:
        assert relabeled.holder().startswith("other ")  # type: ignore[union-attr]
    for bad in ["tab\there", "é", "x" * 201]:
        with pytest.raises(mcds.InvalidArgument, match="printable ASCII"):
            store.lock(unique("cron"), owner_label=bad)
    with pytest.raises(TypeError):
        store.lock(unique("cron"), owner_label=b"bytes")  # type: ignore[arg-type]


def test_backoff_is_checked_and_used(store: mcds.Store) -> None:
    name = unique("busy")
    holder = store.lock(name)
    assert holder.try_acquire()
    waiter = store.lock(name, backoff=(0.01, 0.02))
    started = time.monotonic()
    assert waiter.acquire(timeout=0.1) is False
    assert time.monotonic() - started >= 0.09
    holder.release()
    assert waiter.with_backoff(0.001, 0.001).acquire(timeout=1)
    for bad in [(0, 1), (2, 1), (1, 61)]:
        with pytest.raises(mcds.InvalidArgument, match="backoff"):
            store.lock(unique("busy"), backoff=bad)
    with pytest.raises(TypeError):
        store.lock(unique("busy"), backoff=1)  # type: ignore[arg-type]


def test_derived_locks_share_the_name_and_ttl(store: mcds.Store) -> None:
    lock = store.lock(unique("job"), ttl=7, timeout=3)
    for twin in [lock.with_fencing(), lock.with_owner_label("x"), lock.with_backoff(0.01, 0.1)]:
        assert (twin.name, twin.ttl, twin.timeout) == (lock.name, 7, 3.0) and not twin.held
        with twin:
            assert not lock.try_acquire()
    with pytest.raises(AttributeError):
        lock.ttl = 5  # type: ignore[misc]


def test_threads_get_distinct_fencing_tokens(mc_store: mcds.Store) -> None:
    name, per_thread = unique("fenced"), 20
    tokens: list = []
    mutex = threading.Lock()

    def work() -> None:
        lock = mc_store.lock(name, ttl=30, fencing=True)
        for _ in range(per_thread):
            with lock:
                with mutex:
                    tokens.append(lock.fencing_token)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(tokens) == 4 * per_thread == len(set(tokens))
    assert tokens == sorted(tokens), "each holder's token is above every earlier holder's"


class Deadline(Exception):
    pass


def test_an_interrupted_acquire_leaves_no_lease(store: mcds.Store) -> None:
    # A signal handler raises while `with lock:` waits in C, and the C call
    # takes the lock before Python runs the handler: the lease is released,
    # the object stays usable.
    import signal

    name = unique("job")
    holder = store.lock(name)
    assert holder.try_acquire()
    waiter = store.lock(name)

    def on_alarm(signum, frame):  # type: ignore[no-untyped-def]
        raise Deadline()

    previous = signal.signal(signal.SIGALRM, on_alarm)
    timer = threading.Timer(0.3, holder.release)
    timer.start()
    try:
        signal.setitimer(signal.ITIMER_REAL, 0.1)  # fires while the C call waits
        with pytest.raises(Deadline):
            with waiter:
                pytest.fail("the block ran")
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        timer.join()
    assert not waiter.held and waiter.holder() is None, "no lease left behind"
    assert waiter.try_acquire(), "the object is not stuck"
    assert waiter.release()
