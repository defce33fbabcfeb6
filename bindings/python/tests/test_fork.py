"""A store made before ``os.fork()`` works in the children, as a pre-forking
server (gunicorn --preload, Celery prefork, uWSGI) uses it: each child makes
its own connections on first use, and the parent's keep working."""

from __future__ import annotations

import os
import socket
from typing import Callable, List

import pytest
from conftest import Memcached, unique

import mcds

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork")

WORKERS = 4
INCREMENTS = 500


def fork_workers(work: Callable[[int], str], workers: int = WORKERS) -> List[str]:
    """Fork ``workers`` children; each runs ``work(i)`` and reports the
    string it returns (or the exception it raised) through a pipe. Returns
    the reports, in order; every child has exited when this returns."""
    children = []
    for i in range(workers):
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child: report through the pipe, never return into pytest
            code = 1
            try:
                try:
                    report = work(i)
                except BaseException as e:  # noqa: BLE001 - reported to the parent
                    report = f"raised {type(e).__name__}: {e}"
                os.write(write, report.encode())
                code = 0
            finally:
                os._exit(code)
        os.close(write)
        children.append((pid, read))
    reports = []
    for pid, read in children:
        with os.fdopen(read, "rb") as f:
            reports.append(f.read().decode())
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0
    return reports


def stat(server: Memcached, name: str) -> int:
    """One figure of the server's ``stats``, read on a connection of its own."""
    with socket.create_connection(("127.0.0.1", server.port), timeout=5) as s:
        s.sendall(b"stats\r\n")
        data = b""
        while not data.endswith(b"END\r\n"):
            data += s.recv(65536)
    for line in data.decode().splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] == name:
            return int(parts[2])
    raise KeyError(name)


def test_a_module_level_store_serves_forked_workers(new_memcached: Callable[..., Memcached]) -> None:
    server = new_memcached()
    # As at import time in a pre-forking server: the store, a structure,
    # and the parent using both (its connections are open at the fork).
    store = mcds.Store.memcached(server.addr)
    hits = store.counter(unique("hits"))
    assert hits.incr() == 1
    lock = store.lock(unique("job"), ttl=60)
    assert lock.try_acquire()
    before = stat(server, "total_connections")
    fresh_name, own_lock = unique("fresh"), unique("child-own")

    def work(i: int) -> str:
        assert not lock.held, "a lease is the process's that took it"
        assert not lock.try_acquire(), "the parent holds it"
        for _ in range(INCREMENTS):
            hits.incr()
        fresh = store.counter(f"{fresh_name}-{i}")  # a structure made in the child
        fresh.incr(2)
        with store.lock(f"{own_lock}-{i}"):
            pass
        return f"ok {fresh.get()}"

    reports = fork_workers(work)
    assert reports == ["ok 2"] * WORKERS, reports
    assert hits.get() == 1 + WORKERS * INCREMENTS
    # Each child made connections of its own; the parent's are intact: its
    # lease is still held and its calls still get their own replies.
    assert stat(server, "total_connections") > before
    assert lock.held and lock.release()
    assert hits.incr() == 2 + WORKERS * INCREMENTS


def test_a_child_works_on_a_store_closed_before_the_fork(mc_store: mcds.Store) -> None:
    """A structure outlives its store, in a child too: the child remakes the
    store from its recipe just to make the structure, then frees it."""
    prefixed = mc_store.with_prefix("app/")
    counter = prefixed.counter(unique("c")).with_ttl(600)
    lock = prefixed.lock(unique("l"), fencing=True, owner_label="worker")
    prefixed.close()
    counter.incr(5)

    def work(_: int) -> str:
        value = counter.incr(1)
        with lock:
            token = lock.fencing_token
            holder = lock.holder()
        return f"{value} {token > 0} {(holder or '').startswith('worker ')}"

    assert fork_workers(work, 1) == ["6 True True"]
    assert counter.get() == 6
    # The derived settings (prefix, TTL, fencing, label) were kept.
    assert mcds.Counter.with_key(mc_store, f"app/counter:{counter.name.decode()}:value").get() == 6


def test_a_closed_handle_stays_closed_in_the_child(mc_store: mcds.Store) -> None:
    counter = mc_store.counter(unique("c"))
    counter.close()

    def work(_: int) -> str:
        try:
            counter.incr()
        except mcds.Closed:
            return "closed"
        return "used"

    assert fork_workers(work, 1) == ["closed"]


def test_an_embedded_store_starts_empty_in_the_child() -> None:
    store = mcds.Store.memory()
    counter = store.counter("c")
    counter.incr(7)

    def work(_: int) -> str:
        return str(counter.incr())

    assert fork_workers(work, 2) == ["1", "1"]
    assert counter.get() == 7
