"""Work for the processes of test_processes.py (importable by spawned children)."""

from __future__ import annotations

import os
import time

import mcds


def increment(servers: str, name: str, times: int, results) -> None:  # type: ignore[no-untyped-def]
    store = mcds.Store.memcached(servers)
    counter = store.counter(name)
    for _ in range(times):
        counter.incr()
    results.put(os.getpid())


def locked_increments(servers: str, name: str, path: str, times: int, results) -> None:  # type: ignore[no-untyped-def]
    """Read-modify-write a file under the lock; count overlaps seen."""
    store = mcds.Store.memcached(servers)
    inside = store.counter(name + "-inside")
    overlaps = 0
    for _ in range(times):
        with store.lock(name, ttl=30):
            if inside.incr() != 1:
                overlaps += 1
            with open(path) as f:
                value = int(f.read())
            time.sleep(0.002)
            with open(path, "w") as f:
                f.write(str(value + 1))
            inside.decr()
    results.put(overlaps)


def fencing_tokens(servers: str, name: str, times: int, results) -> None:  # type: ignore[no-untyped-def]
    """Take the lock ``times`` times with fencing; report the tokens seen."""
    store = mcds.Store.memcached(servers)
    lock = store.lock(name, ttl=30, fencing=True)
    tokens = []
    for _ in range(times):
        with lock:
            tokens.append(lock.fencing_token)
    results.put(tokens)
