"""str and bytes (and other bytes-like objects) wherever a name, member or
value goes: str is UTF-8, what comes back is bytes."""

from __future__ import annotations

import random

import pytest
from conftest import SEED, unique

import mcds


def test_str_and_bytes_names_are_the_same_structure(store: mcds.Store) -> None:
    name = unique("zähler-∑")
    store.counter(name).incr(2)
    assert store.counter(name.encode("utf-8")).incr(3) == 5
    assert store.counter(bytearray(name.encode("utf-8"))).get() == 5
    assert store.counter(memoryview(name.encode("utf-8"))).get() == 5


def test_str_and_bytes_members_and_values(store: mcds.Store) -> None:
    s = store.set(unique("members"))
    s.add("ü")
    assert "ü".encode() in s and "ü" in s and bytearray("ü".encode()) in s
    s.add(memoryview(b"mv"))
    s.add(bytearray(b"ba"))
    assert s.members() == ["ü".encode(), b"mv", b"ba"]
    t = store.table(unique("values"))
    t["ключ"] = "значение"
    assert t["ключ".encode()] == "значение".encode()
    assert t.keys() == ["ключ".encode()]
    h = store.hyperloglog(unique("hll"))
    assert h.add("x") and not h.add(b"x")
    bf = store.bloom_filter(unique("bloom"), expected_items=10)
    assert bf.add("y") and not bf.add(bytearray(b"y"))
    log = store.event_log(unique("log"), chunk_secs=60, chunks=3)
    log.put("é")
    assert log.fetch()[0].payload == "é".encode()


def test_random_binary_members_round_trip(store: mcds.Store, rng: random.Random) -> None:
    # Any bytes, including NUL, spaces and invalid UTF-8 (seed printed by the run).
    members = [bytes(rng.randrange(256) for _ in range(rng.randrange(1, 40))) for _ in range(30)]
    members.append(bytes(range(256)))
    members = list(dict.fromkeys(members))
    s = store.set(unique("binary"))
    t = store.table(unique("binary-table"))
    for m in members:
        s.add(m)
        t[m] = m[::-1]
    assert s.members() == members, f"seed {SEED}"
    assert t.keys() == members, f"seed {SEED}"
    for m in members:
        assert m in s and t[m] == m[::-1], f"seed {SEED}"


def test_surrogates_in_members_are_refused(store: mcds.Store) -> None:
    with pytest.raises(mcds.InvalidUtf8):
        store.set(unique("s")).add("\ud800")
