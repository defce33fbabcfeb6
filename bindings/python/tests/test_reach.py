"""The structures and calls added for C ABI parity: store options and
prefixes, ShadowCounter, ViewCounter (with a Python loader), ShardedSet,
IntArray, Set batches, Table entries, EventLog put_at/since, HLL unions."""

from __future__ import annotations

import datetime
import math
import threading
from typing import List, Optional
import time

import pytest
from conftest import Memcached, unique

import mcds

# -- the store ---------------------------------------------------------------


def test_store_options(memcached: Memcached) -> None:
    store = mcds.Store.memcached(
        memcached.addr, connect_timeout=0.5, io_timeout=datetime.timedelta(seconds=2), item_size_limit=4096
    )
    store.counter(unique("c")).incr()
    t = store.table(unique("t"))
    t["small"] = b"x" * 1000
    with pytest.raises(mcds.ValueTooLarge):
        t["big"] = b"x" * 5000  # refused before it is sent
    for kwargs in [{"connect_timeout": 0}, {"io_timeout": 3601}, {"io_timeout": -1}, {"item_size_limit": 100}]:
        with pytest.raises(mcds.InvalidArgument):
            mcds.Store.memcached(memcached.addr, **kwargs)
    # Every timeout out of range says the same range (-1 said "at least 0").
    for bad in [0, -1, -0.5, 3601, float("nan"), datetime.timedelta(seconds=-2)]:
        with pytest.raises(mcds.InvalidArgument, match="must be more than 0 and at most 3600 seconds") as e:
            mcds.Store.memcached(memcached.addr, io_timeout=bad)
        assert f"not {bad}" in str(e.value), e.value
    with pytest.raises(TypeError):
        mcds.Store.memcached(memcached.addr, io_timeout="1s")  # type: ignore[arg-type]


def test_an_io_timeout_is_a_timeout(new_memcached) -> None:  # type: ignore[no-untyped-def]
    import os
    import signal

    server = new_memcached()
    store = mcds.Store.memcached(server.addr, io_timeout=0.2)
    counter = store.counter(unique("c"))
    counter.incr()
    os.kill(server.proc.pid, signal.SIGSTOP)
    try:
        started = time.monotonic()
        with pytest.raises((mcds.Timeout, mcds.Ambiguous)):
            counter.incr()
        assert time.monotonic() - started < 2, "the 0.2 s timeout held"
    finally:
        os.kill(server.proc.pid, signal.SIGCONT)


def test_memory_budget_and_eviction() -> None:
    strict = mcds.Store.memory(memory_limit=64 * 1024, evict=False)
    t = strict.table(unique("t"))
    with pytest.raises(mcds.OutOfMemory):
        for i in range(1000):
            t[str(i)] = b"v" * 1000
    lru = mcds.Store.memory(memory_limit=64 * 1024)
    t2 = lru.table(unique("t"))
    for i in range(1000):
        t2[str(i)] = b"v" * 1000  # the oldest items go
    assert t2.get("999") == b"v" * 1000
    with pytest.raises(mcds.ValueTooLarge):
        mcds.Store.memory(item_size_limit=2048).table("t")["x"] = b"v" * 4096
    for kwargs in [{"memory_limit": 10}, {"item_size_limit": 2**31}, {"memory_limit": -1}]:
        with pytest.raises(mcds.InvalidArgument):
            mcds.Store.memory(**kwargs)
    with pytest.raises(TypeError):
        mcds.Store.memory(evict=1)  # type: ignore[arg-type]


def test_prefixes_keep_applications_apart(store: mcds.Store) -> None:
    name = unique("hits")
    billing, search = store.with_prefix("billing/"), store.with_prefix("search/")
    assert billing.prefix == "billing/" and store.prefix == ""
    billing.counter(name).incr(5)
    search.counter(name).incr(7)
    assert (billing.counter(name).get(), search.counter(name).get(), store.counter(name).get()) == (5, 7, 0)
    again = search.with_prefix("billing/")  # replaces, does not nest
    assert again.counter(name).get() == 5
    assert search.with_prefix("").counter(name).get() == 0
    with billing.lock(name):
        assert not store.with_prefix("billing/").lock(name).try_acquire()
        assert store.lock(name).try_acquire()
    for bad in ["has space", "ctl\x01", "x" * 250, "nul\0"]:
        with pytest.raises(mcds.InvalidKey):
            store.with_prefix(bad)
    billing.close()
    assert again.counter(name).get() == 5, "either handle can be closed first"


# -- counters ------------------------------------------------------------------


def test_shadow_counter(store: mcds.Store) -> None:
    c = store.shadow_counter(unique("rpm"), period_secs=1)
    with pytest.raises(mcds.InvalidArgument):
        store.shadow_counter(unique("rpm"), period_secs=0)
    # Count within one period (retry if a boundary fell in between), then
    # read it back as the previous period once the next one starts.
    for _ in range(5):
        period = math.floor(time.time())
        counts = [c.incr(), c.incr(2), c.incr()]
        if math.floor(time.time()) == period:
            break
    assert counts[-1] - counts[0] == 3
    time.sleep(max(0.0, period + 1.05 - time.time()))
    assert c.value() == counts[-1] and c.get() == counts[-1]


class LoaderFailed(Exception):
    pass


def test_view_counter_loads_once_and_counts(store: mcds.Store) -> None:
    calls = []

    def loader() -> int:
        calls.append(threading.get_ident())
        return 1000

    views = store.view_counter(unique("page"), loader, ttl=3600)
    assert views.view() == 1001 and calls == [threading.get_ident()], "on the calling thread"
    assert views.view(4) == 1005 and views.get() == 1005 and int(views) == 1005
    assert len(calls) == 1, "a hit never calls the loader"
    views.invalidate()
    assert views.get() == 1000 and len(calls) == 2


def test_view_counter_loader_results(store: mcds.Store) -> None:
    assert store.view_counter(unique("page"), lambda: None).view() == 1  # None: 0
    assert store.view_counter(unique("page"), lambda: 2**64 - 2).view() == 2**64 - 1
    for bad, error in [(-1, mcds.InvalidArgument), (2**64, mcds.InvalidArgument), (1.5, TypeError),
                       ("7", TypeError), (True, TypeError)]:
        v = store.view_counter(unique("page"), lambda bad=bad: bad)
        with pytest.raises(error):
            v.view()
    with pytest.raises(TypeError):
        store.view_counter(unique("page"), 42)  # type: ignore[arg-type]


def test_an_exception_escaping_the_loader_callback_is_not_lost(store: mcds.Store) -> None:
    # Near the recursion limit the RecursionError comes as cffi enters the
    # callback, before the loader runs: it must reach the caller, never
    # seed the cache with 0.
    import inspect
    import sys

    views = store.view_counter(unique("page"), lambda: 1000)

    def at_depth(n: int) -> int:
        return views.view() if n == 0 else at_depth(n - 1)

    room = sys.getrecursionlimit() - len(inspect.stack())
    outcomes = set()
    for depth in range(max(0, room - 40), room + 5):
        views.invalidate()
        try:
            got = at_depth(depth)
        except RecursionError:
            outcomes.add("RecursionError")
            continue
        assert got == 1001, f"at depth {depth} the cache was seeded with {got - 1}, not the loaded 1000"
        outcomes.add("ok")
    assert outcomes == {"ok", "RecursionError"}, outcomes


def test_the_loaders_exception_keeps_its_cause(store: mcds.Store) -> None:
    def loader() -> int:
        try:
            raise ConnectionError("db socket closed")
        except ConnectionError as e:
            raise LoaderFailed("no total") from e

    with pytest.raises(LoaderFailed) as info:
        store.view_counter(unique("page"), loader).view()
    assert isinstance(info.value.__cause__, ConnectionError)


def test_a_failing_loader_raises_its_own_exception_and_counts_nothing(store: mcds.Store) -> None:
    name = unique("page")

    def broken() -> int:
        raise LoaderFailed("database down")

    with pytest.raises(LoaderFailed, match="database down"):
        store.view_counter(name, broken).view()
    with pytest.raises(LoaderFailed):
        store.view_counter(name, broken).get()
    assert store.view_counter(name, lambda: 10).view() == 11, "nothing was counted or cached"

    def interrupted() -> int:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        store.view_counter(unique("page"), interrupted).view()


def test_first_views_at_once_are_all_counted(mc_store: mcds.Store) -> None:
    name, n = unique("page"), 8
    barrier = threading.Barrier(n)

    def slow_loader() -> int:
        time.sleep(0.05)  # every thread misses before any seeds the cache
        return 100

    def view() -> None:
        counter = mc_store.view_counter(name, slow_loader)
        barrier.wait()
        counter.view()

    threads = [threading.Thread(target=view) for _ in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert mc_store.view_counter(name, lambda: 0).get() == 100 + n


# -- sets ------------------------------------------------------------------------


def test_set_batches_compact_and_clear(store: mcds.Store) -> None:
    s = store.set(unique("tags"))
    s.add_many(["a", b"b", bytearray(b"c"), memoryview(b"d"), ""])
    s.add_many([])
    s.update(iter(["e"]))
    assert s.members() == [b"a", b"b", b"c", b"d", b"", b"e"]
    s.remove_many(["a", "b", "absent"])
    assert s.members() == [b"c", b"d", b"", b"e"]
    assert s.compact() is True and s.compact() is False
    assert s.members() == [b"c", b"d", b"", b"e"]
    s.clear()
    assert s.members() == []
    with pytest.raises(TypeError, match="iterable"):
        s.add_many("abc")  # a str is one member, not three
    with pytest.raises(TypeError):
        s.add_many([1])  # type: ignore[list-item]
    with pytest.raises(mcds.InvalidArgument):
        s.add_many([b""] * 1_000_001)


def test_sharded_set(store: mcds.Store) -> None:
    s = store.sharded_set(unique("online"), shards=8)
    members = [f"user{i}".encode() for i in range(200)]
    s.add_many(members)
    s.add("extra")
    assert sorted(s.members()) == sorted(members + [b"extra"]) and len(s) == 201
    assert "user7" in s and s.contains(b"extra") and "nobody" not in s
    s.remove_many(members[:100])
    s.remove("extra")
    s.discard("never")
    assert sorted(s) == sorted(members[100:])
    s.compact()
    assert sorted(s.members()) == sorted(members[100:])
    s.clear()
    assert s.members() == []
    for bad in [0, 4097]:
        with pytest.raises(mcds.InvalidArgument):
            store.sharded_set(unique("online"), shards=bad)


def test_sharded_set_from_threads(mc_store: mcds.Store) -> None:
    s = mc_store.sharded_set(unique("online"), shards=4)

    def add(base: int) -> None:
        for i in range(10):
            s.add_many([f"{base}-{i}-{j}" for j in range(10)])

    threads = [threading.Thread(target=add, args=(b,)) for b in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(set(s.members())) == len(s) == 400, "no append lost"


def test_int_array(store: mcds.Store) -> None:
    a = store.int_array(unique("ids"))
    a.add(42, 7, -(2**63), 2**63 - 1)
    a.add(*range(3))
    a.add()
    assert a.members() == [42, 7, -(2**63), 2**63 - 1, 0, 1, 2]
    assert 7 in a and a.contains(-(2**63)) and 8 not in a and "7" not in a and 2**70 not in a
    a.remove(7, 1000)
    assert list(a) == [42, -(2**63), 2**63 - 1, 0, 1, 2] and len(a) == 6
    with pytest.raises(mcds.InvalidArgument):
        a.add(2**63)
    with pytest.raises(TypeError):
        a.add("1")  # type: ignore[arg-type]
    a.clear()
    assert a.members() == []


def test_int_array_reports_foreign_members(mc_store: mcds.Store, memcached: Memcached) -> None:
    # Another program writes the array's key (ints:<name>:log): a set log
    # in the text codec ("+<member> " adds) whose member "abc" is no integer.
    import socket

    name = unique("ids")
    with socket.create_connection(("127.0.0.1", memcached.port), timeout=5) as s:
        s.sendall(f"set ints:{name}:log 0 0 9\r\n+12 +abc \r\n".encode())
        assert s.recv(64) == b"STORED\r\n"
    with pytest.raises(mcds.Corrupt):
        mc_store.int_array(name).members()


# -- table, event log, hll ------------------------------------------------------


def test_table_entries(store: mcds.Store) -> None:
    t = store.table(unique("users"))
    assert t.entries() == []
    t["alice"] = "admin"
    t["bob"] = b"\x00"
    assert t.entries() == [(b"alice", b"admin"), (b"bob", b"\x00")] == t.items()
    assert dict(t.items()) == {b"alice": b"admin", b"bob": b"\x00"}


def test_event_log_put_at_and_since(store: mcds.Store) -> None:
    log = store.event_log(unique("audit"), chunk_secs=60, chunks=11)
    now = int(time.time() * 1000)
    log.put_at(now - 5000, b"late")
    at = log.put("now")
    events, cursor = log.since()
    assert [e.payload for e in events] == [b"late", b"now"] and cursor.at_ms == at
    assert log.since(cursor) == ([], cursor), "nothing new"
    log.put("next")
    events, cursor2 = log.since(cursor)
    assert [e.payload for e in events] == [b"next"] and cursor2 >= cursor
    assert [e.payload for e in log.since(mcds.Cursor.after(now - 5000))[0]] == [b"now", b"next"]
    assert log.since(mcds.Cursor(0, 0))[0] == log.fetch()
    with pytest.raises(mcds.InvalidArgument):
        log.put_at(now - 3600_000, b"too old")  # beyond the 10 minutes kept
    with pytest.raises(TypeError):
        log.since(5)  # type: ignore[arg-type]


def test_hll_count_union(store: mcds.Store) -> None:
    a, b = store.hyperloglog(unique("day1")), store.hyperloglog(unique("day2"))
    for i in range(100):
        a.add(f"u{i}")
    for i in range(50, 150):
        b.add(f"u{i}")
    assert 140 <= a.count_union(b) <= 160
    assert a.count_union() == a.count()
    assert a.count() <= 105, "nothing was written"
    other = mcds.Store.memory().hyperloglog("x")
    with pytest.raises(mcds.InvalidArgument):
        a.count_union(other)
    with pytest.raises(TypeError):
        a.count_union("day2")  # type: ignore[arg-type]


def test_numbers_are_checked() -> None:
    store = mcds.Store.memory()
    for call in [lambda: store.counter("c").incr(True), lambda: store.sharded_set("s", shards=True),
                 lambda: store.int_array("a").add(True), lambda: store.view_counter("v", lambda: 1, ttl=True)]:
        with pytest.raises(TypeError, match="bool"):
            call()
    for call in [lambda: store.lock("l", ttl=math.inf), lambda: store.lock("l", ttl=10**400),
                 lambda: mcds.Store.memcached("127.0.0.1:1", io_timeout=10**400),
                 lambda: store.lock("l", backoff=(0.001, math.inf)), lambda: store.lock("l", ttl=2**32)]:
        with pytest.raises(mcds.InvalidArgument):
            call()
    lock = store.lock("l")
    with lock:
        with pytest.raises(mcds.InvalidArgument):
            lock.extend(math.inf)


def test_a_store_from_a_url(memcached: Memcached) -> None:
    name = unique("url")
    store = mcds.Store.from_url(f"memcached://{memcached.addr}?ketama&timeout_ms=500&prefix=py-url%2F")
    assert store.counter(name).incr(3) == 3
    assert mcds.Store.memcached(memcached.addr).with_prefix("py-url/").counter(name).get() == 3
    assert mcds.Store.from_url(memcached.addr).with_prefix("py-url/").counter(name).get() == 3
    assert mcds.Store.from_url("memory://?memory_limit=1m&evict=false").counter(name).incr() == 1
    for url, says in [("memcached://a:1?colour=blue", "colour"), ("memory://?ketama", "ketama"),
                      ("memcached://", "no memcached servers")]:
        with pytest.raises(mcds.InvalidArgument, match=says):
            mcds.Store.from_url(url)
    with pytest.raises(mcds.InvalidArgument, match="/nonexistent/ca.pem"):
        mcds.Store.from_url("memcached+tls://127.0.0.1:1?ca_file=/nonexistent/ca.pem")
    with pytest.raises(mcds.InvalidArgument) as e:
        mcds.Store.from_url("memcached://user:hunter2%20x@127.0.0.1:1")
    assert "hunter2" not in str(e.value)
    # A unix socket: made now, connected on first use.
    with pytest.raises(mcds.IoError, match="/nonexistent/m.sock"):
        mcds.Store.from_url("unix:/nonexistent/m.sock").counter(name).incr()
    with pytest.raises(mcds.InvalidKey):
        mcds.Store.from_url("memory://?prefix=a%20b")


def test_exact_keys_shared_with_other_clients(memcached: Memcached) -> None:
    # Another client's raw text-protocol writes on the exact keys.
    import socket

    store = mcds.Store.memcached(memcached.addr).with_prefix("ignored/")
    key = unique("hits")
    hits = mcds.Counter.with_key(store, key)
    with socket.create_connection(("127.0.0.1", memcached.port), timeout=5) as s:
        s.sendall(f"set {key} 0 0 2\r\n40\r\n".encode())
        assert s.recv(64) == b"STORED\r\n"
        assert hits.incr(2) == 42, "the prefix is not applied to an exact key"
        s.sendall(f"incr {key} 8\r\n".encode())
        assert s.recv(64) == b"50\r\n"
    assert hits.get() == 50
    lock_key = unique("report-lock")
    lock = mcds.Lock.with_key(store, lock_key, ttl=30, fencing=True)
    with socket.create_connection(("127.0.0.1", memcached.port), timeout=5) as s:
        with lock:
            assert lock.fencing_token >= 1 and lock.name == lock_key.encode()
            s.sendall(f"add {lock_key} 0 30 5\r\ntoken\r\n".encode())
            assert s.recv(64) == b"NOT_STORED\r\n", "the other side is refused while mcds holds it"
        s.sendall(f"add {lock_key} 0 30 5\r\ntoken\r\n".encode())
        assert s.recv(64) == b"STORED\r\n"
        assert not lock.try_acquire() and lock.holder() == "token"
    for bad in ["has space", "x" * 251, ""]:
        with pytest.raises(mcds.InvalidKey):
            mcds.Counter.with_key(store, bad)
    with pytest.raises(mcds.InvalidKey):
        mcds.Lock.with_key(store, "x" * 245)  # <key>:fence must fit too


def test_ascii_auth_and_a_unix_socket_from_a_url(new_memcached, tmp_path) -> None:  # type: ignore[no-untyped-def]
    # memcached -Y: credentials in the URL (percent-encoded) or the environment.
    authfile = tmp_path / "authfile"
    authfile.write_text("py:s3cr%t\n")
    authfile.chmod(0o644)
    server = new_memcached("-Y", str(authfile))
    name = unique("auth")
    store = mcds.Store.from_url(f"memcached://py:s3cr%25t@{server.addr}")
    assert store.counter(name).incr() == 1
    with pytest.raises(mcds.IoError) as e:
        mcds.Store.from_url(f"memcached://py:hunter2@{server.addr}").counter(name).incr()
    assert "refused the credentials" in str(e.value)
    assert "hunter2" not in str(e.value)
    # memcached -s: a unix socket.
    sock = tmp_path / "m.sock"
    unix = new_memcached("-s", str(sock))
    assert mcds.Store.from_url(f"unix:{sock}").counter(name).incr(2) == 2


def test_update_is_a_cas_read_modify_write(store: mcds.Store) -> None:
    key = unique("upd")

    def add_one(current: Optional[bytes]) -> bytes:
        return str(int(current or b"0") + 1).encode()

    def worker() -> None:
        for _ in range(100):
            assert store.update(key, add_one)

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    seen: List[Optional[bytes]] = []
    assert store.update(key, lambda v: seen.append(v)) is False  # None: left as it is
    assert seen == [b"400"]
    # The function's own exception, nothing written.
    with pytest.raises(ZeroDivisionError):
        store.update(key, lambda v: (1 // 0).to_bytes(1, "big"))
    with pytest.raises(TypeError, match="encode"):
        store.update(key, lambda v: "text")  # type: ignore[arg-type,return-value]
    assert store.update(key, lambda v: None) is False
    assert mcds.Counter.with_key(store, key).get() == 400
