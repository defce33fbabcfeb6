"""Set, Table and EventLog, on both stores."""

from __future__ import annotations

import time

import pytest
from conftest import unique

import mcds


def test_set(store: mcds.Store) -> None:
    s = store.set(unique("tags"))
    assert s.members() == [] and len(s) == 0
    s.add("python")
    s.add(b"with space")
    s.add(b"\x00\xff")
    s.add("python")  # already there
    assert s.members() == [b"python", b"with space", b"\x00\xff"]
    assert "python" in s and b"python" in s and s.contains(b"\x00\xff")
    assert "absent" not in s
    s.remove("python")
    s.discard("never added")  # no KeyError
    assert list(s) == [b"with space", b"\x00\xff"]
    assert len(s) == 2


def test_table(store: mcds.Store) -> None:
    t = store.table(unique("users"))
    assert t.keys() == [] and len(t) == 0
    t.set("alice", "admin")
    t["bob"] = b"\x00binary\xff"
    t[b"carol"] = ""
    assert t.get("alice") == b"admin"
    assert t["bob"] == b"\x00binary\xff"
    assert t["carol"] == b""
    assert t.get("dave") is None
    assert t.get("dave", b"guest") == b"guest"
    with pytest.raises(KeyError):
        t["dave"]
    assert "alice" in t and t.has(b"bob") and "dave" not in t
    assert t.keys() == [b"alice", b"bob", b"carol"]
    assert list(t) == t.keys() and len(t) == 3
    t["alice"] = "user"  # overwrite keeps the order
    assert t["alice"] == b"user" and t.keys()[0] == b"alice"
    assert t.delete("alice") is True
    assert t.delete("alice") is False
    del t["bob"]
    with pytest.raises(KeyError):
        del t["bob"]
    assert t.keys() == [b"carol"]


def test_event_log(store: mcds.Store) -> None:
    log = store.event_log(unique("logins"), chunk_secs=60, chunks=10)
    assert log.fetch() == []
    before = int(time.time() * 1000)
    stamps = [log.put(payload) for payload in ["alice", b"bob", b"", bytearray(b"\x00\x01")]]
    after = int(time.time() * 1000)
    assert all(before - 5 <= at <= after + 5 for at in stamps)
    events = log.fetch()
    assert [e.payload for e in events] == [b"alice", b"bob", b"", b"\x00\x01"]
    assert [e.at_ms for e in events] == stamps
    assert events[0].at.timestamp() == pytest.approx(stamps[0] / 1000)
    assert log.fetch(stamps[1], stamps[1]) == [e for e in events if e.at_ms == stamps[1]]
    assert log.fetch(after + 10_000) == []
    assert log.fetch(0, before - 10_000) == []


def test_event_log_checks_its_shape(store: mcds.Store) -> None:
    with pytest.raises(mcds.InvalidArgument):
        store.event_log(unique("log"), chunk_secs=60, chunks=1)


def test_value_too_large(store: mcds.Store) -> None:
    t = store.table(unique("big"))
    with pytest.raises(mcds.ValueTooLarge) as e:
        t["member"] = b"x" * (2 << 20)
    assert isinstance(e.value, ValueError) and e.value.message
