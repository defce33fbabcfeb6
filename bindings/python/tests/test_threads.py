"""Threads: one counter from many threads, exact totals; locks between threads."""

from __future__ import annotations

import threading
import time

from conftest import unique

import mcds

THREADS = 8
PER_THREAD = 500


def run_threads(target, n: int = THREADS) -> None:  # type: ignore[no-untyped-def]
    threads = [threading.Thread(target=target, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def test_threads_share_one_counter_exactly(store: mcds.Store) -> None:
    counter = store.counter(unique("threads"))
    returned: list = []

    def work(_: int) -> None:
        values = [counter.incr() for _ in range(PER_THREAD)]
        returned.extend(values)

    run_threads(work)
    assert counter.get() == THREADS * PER_THREAD
    # incr is atomic: every value from 1 to the total came back exactly once.
    assert sorted(returned) == list(range(1, THREADS * PER_THREAD + 1))


def test_threads_with_their_own_handles_count_exactly(store: mcds.Store) -> None:
    name = unique("handles")

    def work(_: int) -> None:
        with store.counter(name) as mine:
            for _ in range(PER_THREAD):
                mine.incr()

    run_threads(work)
    assert store.counter(name).get() == THREADS * PER_THREAD


def test_lock_excludes_other_threads(store: mcds.Store) -> None:
    name = unique("mutex")
    state = {"inside": 0, "most": 0, "total": 0}

    def work(_: int) -> None:
        lock = store.lock(name, ttl=30)  # one Lock object per competing thread
        for _ in range(15):
            with lock:
                state["inside"] += 1
                state["most"] = max(state["most"], state["inside"])
                total = state["total"]
                time.sleep(0.001)  # let the others try meanwhile
                state["total"] = total + 1
                state["inside"] -= 1

    run_threads(work, 4)
    assert state["most"] == 1
    assert state["total"] == 4 * 15


def test_calls_release_the_gil(store: mcds.Store) -> None:
    # A thread blocked in a C call (waiting for a lock) must not stop the others.
    name = unique("gil")
    holder = store.lock(name)
    assert holder.try_acquire()
    waiter = store.lock(name)
    t = threading.Thread(target=lambda: waiter.acquire(timeout=0.6))
    t.start()
    time.sleep(0.05)
    counter = store.counter(unique("meanwhile"))
    started = time.monotonic()
    for _ in range(50):
        counter.incr()
    assert time.monotonic() - started < 0.5, "the waiting thread held the GIL"
    t.join()
    holder.release()
