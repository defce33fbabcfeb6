"""mcds.aio: exact totals under 1,000 concurrent tasks, a loop that keeps
serving while a server is stopped, cancellation that frees the wait, and an
awaitable twin of every method of every structure."""

from __future__ import annotations

import asyncio
import inspect
import os
import signal
import time
from typing import Any, Callable, Iterator, List

import pytest
from conftest import Memcached, unique

import mcds
import mcds.aio


@pytest.fixture
def one_thread() -> Iterator[None]:
    """A pool of one worker thread: a call that held it would hold up every
    other call."""
    before = mcds.aio.max_threads()
    mcds.aio.set_max_threads(1)
    yield
    mcds.aio.set_max_threads(before)


@pytest.fixture
def stopped(new_memcached: Callable[..., Memcached]) -> Iterator[Memcached]:
    """A memcached that accepts connections but answers nothing (SIGSTOP)."""
    server = new_memcached()
    # Connect first (a stopped process still has its listening socket, but
    # the handshake of a new connection would need an answer).
    os.kill(server.proc.pid, signal.SIGSTOP)
    yield server
    os.kill(server.proc.pid, signal.SIGCONT)


@pytest.mark.parametrize("backend", ["memory", "memcached"])
def test_a_thousand_tasks_count_exactly(backend: str, memcached: Memcached) -> None:
    tasks, each = 1000, 5

    async def main() -> int:
        store = mcds.aio.Store.memory() if backend == "memory" else mcds.aio.Store(memcached.addr)
        async with store:
            hits = store.counter(unique("hits"))
            seen: List[int] = []

            async def worker() -> None:
                for _ in range(each):
                    seen.append(await hits.incr())

            await asyncio.gather(*(worker() for _ in range(tasks)))
            assert sorted(seen) == list(range(1, tasks * each + 1)), "every value once"
            total: int = await hits.get()
            return total

    assert asyncio.run(main()) == tasks * each


def test_the_loop_keeps_serving_while_a_server_is_stopped(stopped: Memcached, memcached: Memcached) -> None:
    async def main() -> None:
        dead = mcds.aio.Store(stopped.addr, connect_timeout=0.5, io_timeout=0.5)
        live = mcds.aio.Store(memcached.addr)
        ticks = 0

        async def ticker() -> None:
            nonlocal ticks
            while True:
                await asyncio.sleep(0.01)
                ticks += 1

        tick = asyncio.ensure_future(ticker())
        counter = live.counter(unique("c"))
        started = time.monotonic()
        failing = asyncio.ensure_future(dead.counter(unique("d")).incr())
        # Other calls go on meanwhile.
        for _ in range(20):
            await counter.incr()
        with pytest.raises((mcds.Timeout, mcds.IoError, mcds.Ambiguous)):
            await failing
        took = time.monotonic() - started
        tick.cancel()
        assert 0.4 < took < 3, f"the call failed after {took:.2f} s, not at its 0.5 s timeout"
        assert ticks >= 10, f"the loop ran its ticker {ticks} times in {took:.2f} s"
        assert await counter.get() == 20

    asyncio.run(main())


def test_cancelling_a_call_frees_its_wait(stopped: Memcached, memcached: Memcached, one_thread: None) -> None:
    async def main() -> None:
        # The stopped server would hold the call for 30 s.
        dead = mcds.aio.Store(stopped.addr, connect_timeout=30, io_timeout=30)
        live = mcds.aio.Store(memcached.addr)
        call = asyncio.ensure_future(dead.counter(unique("d")).incr())
        await asyncio.sleep(0.2)
        assert not call.done()
        started = time.monotonic()
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call
        # The one worker thread is free again: a call on a live server
        # completes long before the dead one's 30 s.
        assert await asyncio.wait_for(live.counter(unique("c")).incr(), timeout=5) == 1
        took = time.monotonic() - started
        assert took < 5, f"the worker was busy for {took:.2f} s after the cancel"

    asyncio.run(main())


def test_wait_for_cancels_a_call_at_its_deadline(stopped: Memcached) -> None:
    async def main() -> None:
        dead = mcds.aio.Store(stopped.addr, connect_timeout=30, io_timeout=30)
        with pytest.raises(asyncio.TimeoutError):
            await asyncio.wait_for(dead.kv.get("k"), timeout=0.2)

    started = time.monotonic()
    asyncio.run(main())  # asyncio.run waits for the worker's call: it must have stopped
    assert time.monotonic() - started < 10


def test_a_cancelled_call_under_a_token_reports_cancelled_to_c() -> None:
    """The C ABI's side of it: a call on a thread whose token is triggered
    fails with MCDS_CANCELLED (mcds.Cancelled) before it waits."""
    from mcds._ffi import ffi, lib

    store = mcds.Store.memory()
    counter = store.counter("c")
    out = ffi.new("mcds_cancel **")
    assert lib.mcds_cancel_new(out) == 0
    token = ffi.gc(out[0], lib.mcds_cancel_free)
    lib.mcds_cancel_set_current(token)
    try:
        assert counter.incr() == 1
        lib.mcds_cancel_trigger(token)
        with pytest.raises(mcds.Cancelled) as e:
            counter.incr()
        assert e.value.code_name == "MCDS_CANCELLED"
    finally:
        lib.mcds_cancel_set_current(ffi.NULL)
    assert counter.incr() == 2, "without the token the thread's calls run"


def test_async_with_a_lock_excludes_other_tasks(memcached: Memcached) -> None:
    async def main() -> int:
        store = mcds.aio.Store(memcached.addr)
        name = unique("lock")
        inside = overlaps = 0

        async def worker() -> None:
            nonlocal inside, overlaps
            for _ in range(5):
                async with store.lock(name, ttl=30, timeout=30):
                    inside += 1
                    if inside != 1:
                        overlaps += 1
                    await asyncio.sleep(0.001)
                    inside -= 1

        await asyncio.gather(*(worker() for _ in range(20)))
        lock = store.lock(name, timeout=0.1)
        assert await lock.acquire(timeout=0.1)
        other = store.lock(name)
        assert not await other.acquire(timeout=0.05), "held by the first"
        assert not await other.acquire(blocking=False)
        assert lock.held
        assert await lock.release()
        return overlaps

    assert asyncio.run(main()) == 0


def test_every_method_of_every_structure_has_its_awaitable_twin(memcached: Memcached) -> None:
    """Each public method of an mcds object is on its mcds.aio twin: a
    coroutine function where it talks to the server, a plain one where it
    only makes or derives an object."""

    async def main() -> None:
        store = mcds.aio.Store(memcached.addr)
        objects: List[Any] = [
            store, store.kv, store.counter("c"), store.counter_map("m"), store.shadow_counter("s", 60),
            store.view_counter("v", lambda: 0), store.lock("l"), store.set("s"), store.sharded_set("ss", 4),
            store.int_array("i"), store.window_counter("w", 1, 60), store.rate_limiter("r", 10, 60),
            store.event_log("e", 60, 10), store.table("t"), store.hyperloglog("h"),
            store.bloom_filter("b", 1000), store.activity_bitmap("a", 0, 1000),
            store.time_series("ts", [(1000, 60_000)]), store.packed_series("p", 1000, 60, 4, 600_000),
            store.leaderboard("lb", 10), store.scalable_bloom_filter("sb", 1000),
        ]
        kinds = {type(o.sync) for o in objects}
        assert len(kinds) == len(objects), "one object of each class"
        assert {c for c in vars(mcds).values() if isinstance(c, type) and c.__module__.startswith("mcds._")
                and issubclass(c, (mcds.Store, mcds.KeyValue, mcds._handle.Handle))} <= kinds | {mcds._handle.Handle}
        checked = 0
        for o in objects:
            for name, member in inspect.getmembers(type(o.sync)):
                if name.startswith("_") or not callable(member) or isinstance(member, type):
                    continue
                if isinstance(inspect.getattr_static(type(o.sync), name), (staticmethod, classmethod)):
                    continue
                twin = getattr(o, name)
                local = name in {"close"} or name.startswith("with_") or (o is store and name != "update")
                assert inspect.iscoroutinefunction(twin) != local, f"{type(o.sync).__name__}.{name}"
                checked += 1
        assert checked > 100
        c = store.counter(unique("c"))
        assert isinstance(c.with_ttl(60), mcds.aio.Async)
        assert await c.incr(2) == 2
        assert await mcds.aio.incr_many([(c, 1), (c.sync, 1)]) == [3, 4]

    asyncio.run(main())


def test_a_token_stops_a_quorum_lock_waiting_on_frozen_servers(new_memcached: Callable[..., Memcached]) -> None:
    """A quorum lock waits on every server at once, each on its own
    connection: a triggered token stops all of those waits (every one is
    woken), not only the first one's, so the call returns at once instead
    of after the frozen servers' timeout."""
    import threading

    from mcds._ffi import ffi, lib

    servers = [new_memcached() for _ in range(3)]
    url = "memcached://" + ",".join(s.addr for s in servers) + "?quorum&timeout_ms=10000"
    store = mcds.Store.from_url(url)
    assert store.lock(unique("warm"), ttl=5).try_acquire()  # connections open
    out = ffi.new("mcds_cancel **")
    assert lib.mcds_cancel_new(out) == 0
    token = ffi.gc(out[0], lib.mcds_cancel_free)
    outcome: dict = {}

    def call() -> None:
        lib.mcds_cancel_set_current(token)
        started = time.monotonic()
        try:
            store.lock(unique("q"), ttl=5).try_acquire()
        except mcds.Error as e:
            outcome["error"] = e
        finally:
            outcome["took"] = time.monotonic() - started
            lib.mcds_cancel_set_current(ffi.NULL)

    for s in servers[:2]:
        os.kill(s.proc.pid, signal.SIGSTOP)
    try:
        worker = threading.Thread(target=call)
        worker.start()
        time.sleep(0.3)
        lib.mcds_cancel_trigger(token)
        worker.join(20)
    finally:
        for s in servers[:2]:
            os.kill(s.proc.pid, signal.SIGCONT)
    assert isinstance(outcome.get("error"), mcds.Cancelled), outcome
    assert outcome["took"] < 3, f"stopped after {outcome['took']:.2f} s, not at the trigger"
