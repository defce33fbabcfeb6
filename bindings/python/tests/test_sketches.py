"""HyperLogLog, BloomFilter and ActivityBitmap, on both stores."""

from __future__ import annotations

import time

import pytest
from conftest import unique

import mcds


def test_hyperloglog(store: mcds.Store) -> None:
    h = store.hyperloglog(unique("pages"))
    assert h.count() == 0
    assert h.add("/page/0") is True
    assert h.add("/page/0") is False, "nothing changes for a repeat"
    for i in range(300):
        h.add(f"/page/{i % 100}")
    assert 97 <= h.count() <= 103


def test_hyperloglog_merge(store: mcds.Store) -> None:
    a, b, c = (store.hyperloglog(unique("hll")) for _ in range(3))
    for i in range(1000):
        a.add(b"a%d" % i)
        b.add(b"b%d" % i)
        c.add(b"a%d" % i)  # the same as a
    a.merge(b, c)
    assert 1940 <= a.count() <= 2060
    a.merge()  # no sources: nothing to do
    with pytest.raises(TypeError):
        a.merge(store.counter(unique("not-an-hll")))  # type: ignore[arg-type]
    c.close()
    with pytest.raises(mcds.Closed):
        a.merge(b, c)


def test_bloom_filter(store: mcds.Store) -> None:
    bf = store.bloom_filter(unique("users"), expected_items=1000, false_positive_rate=0.01)
    assert bf.add("ann") is True
    assert bf.add("ann") is False
    assert "ann" in bf and bf.contains(b"ann")
    assert "bob" not in bf
    assert (bf.expected_items, bf.false_positive_rate) == (1000, 0.01)


def test_bloom_filter_checks_its_rate(store: mcds.Store) -> None:
    with pytest.raises(mcds.InvalidArgument) as e:
        store.bloom_filter(unique("bad"), expected_items=1000, false_positive_rate=2.0)
    assert e.value.message


def test_activity_bitmap(store: mcds.Store) -> None:
    start = int(time.time()) - 3600
    bits = store.activity_bitmap(unique("active"), start_unix_secs=start, unit_ms=1000)
    assert bits.get(5) is False and bits[5] is False
    assert bits.set(5) is False
    assert bits.set(5) is True, "the previous bit"
    assert bits[5] and not bits[6]
    assert bits.set(100) is False
    assert bits.count(0, 99) == 1
    assert bits.count(0, 100) == 2
    assert bits.mark(start * 1000 + 7_500) is False  # unit 7
    assert bits.get(7)
    assert bits.mark() is False  # now: unit ~3600
    assert bits.count(3000, 4000) == 1
    with pytest.raises(mcds.InvalidArgument):
        bits.mark((start - 10) * 1000)  # before the start


def test_activity_bitmap_checks_its_unit(store: mcds.Store) -> None:
    with pytest.raises(mcds.InvalidArgument):
        store.activity_bitmap(unique("bits"), start_unix_secs=0, unit_ms=0)
