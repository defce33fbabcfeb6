"""TimeSeries and PackedSeries, on both stores: exact aggregates (sums
beyond 2**63 as Python ints), union and intersection, saturating slots, the
loss check, and bad input refused with a clear error.

The tests record samples of ten minutes ago, before their memcached
started: a read with the loss check cannot vouch for those buckets (see
test_reads_cannot_vouch_for_data_from_before_the_server_started), so the
other tests read without it (``unchecked``)."""

from __future__ import annotations

import random
import time

from typing import TypeVar

import pytest
from conftest import unique

import mcds

T = TypeVar("T", mcds.TimeSeries, mcds.PackedSeries)

SECOND, MINUTE = 1000, 60_000
HOUR, DAY = 3_600_000, 86_400_000
I64_MIN, I64_MAX = -(2**63), 2**63 - 1


def now_ms() -> int:
    return time.time_ns() // 1_000_000


def ten_minutes_ago() -> int:
    """A minute start ten minutes ago: closed buckets, within retention."""
    return now_ms() // MINUTE * MINUTE - 10 * MINUTE


def unchecked(s: T) -> T:
    """``s`` without the loss check (samples from before the server started)."""
    return s.with_loss_check(False)  # type: ignore[return-value]


def series(store: mcds.Store, prefix: str = "latency") -> mcds.TimeSeries:
    # Coarsest first: the series keeps them finest first.
    return unchecked(store.time_series(unique(prefix), [(MINUTE, DAY), mcds.Resolution(SECOND, HOUR)]))


def test_time_series_aggregates(store: mcds.Store) -> None:
    t0 = ten_minutes_ago()
    name = unique("latency")
    ts = unchecked(store.time_series(name, [(MINUTE, DAY), mcds.Resolution(SECOND, HOUR)]))
    assert ts.name == name
    assert ts.resolutions == [mcds.Resolution(SECOND, HOUR), mcds.Resolution(MINUTE, DAY)]
    assert ts.aggregate(t0, t0, MINUTE) is None
    assert (ts.count(t0, t0, MINUTE), ts.sum(t0, t0, MINUTE)) == (0, 0)
    assert ts.avg(t0, t0, MINUTE) is None and ts.min(t0, t0, MINUTE) is None and ts.max(t0, t0, MINUTE) is None

    ts.record(t0, 12)
    ts.record(t0 + 500, -3)  # same second
    ts.record(t0 + 1000, 40)  # next second, same minute
    assert ts.range(t0, t0 + MINUTE - 1, SECOND) == [
        mcds.Bucket(t0, mcds.Stats(2, 9, -3, 12)),
        mcds.Bucket(t0 + SECOND, mcds.Stats(1, 40, 40, 40)),
    ]
    stats = ts.aggregate(t0, t0, MINUTE)
    assert stats == mcds.Stats(count=3, sum=49, min=-3, max=40)
    assert stats is not None and stats.avg == 49 / 3
    assert ts.count(t0, t0 + MINUTE - 1, SECOND) == 3
    assert ts.sum(t0, t0 + MINUTE - 1, SECOND) == 49
    assert ts.avg(t0, t0 + MINUTE - 1, SECOND) == 49 / 3
    assert (ts.min(t0, t0, MINUTE), ts.max(t0, t0, MINUTE)) == (-3, 40)
    # Backwards: nothing.
    assert ts.range(t0 + SECOND, t0, SECOND) == []


def test_time_series_sums_beyond_64_bits_are_exact(store: mcds.Store) -> None:
    t0 = ten_minutes_ago()
    ts = series(store, "big")
    for _ in range(3):
        ts.record(t0 + 2000, I64_MAX)
        ts.record(t0 + 3000, I64_MIN)
    assert ts.sum(t0 + 2000, t0 + 2000, SECOND) == 3 * I64_MAX
    assert ts.aggregate(t0 + 3000, t0 + 3000, SECOND) == mcds.Stats(3, 3 * I64_MIN, I64_MIN, I64_MIN)
    assert ts.sum(t0, t0 + 2999, SECOND) == 3 * I64_MAX
    assert ts.aggregate(t0, t0, MINUTE) == mcds.Stats(6, -3, I64_MIN, I64_MAX)


def test_time_series_random_samples_match_a_model(store: mcds.Store, rng: random.Random) -> None:
    t0 = ten_minutes_ago()
    ts = series(store, "model")
    model: dict[int, list[int]] = {}
    for _ in range(60):
        at = t0 + rng.randrange(5 * SECOND)
        value = rng.choice([rng.randrange(-100, 100), rng.randrange(I64_MIN, I64_MAX + 1)])
        ts.record(at, value)
        model.setdefault(at // SECOND * SECOND, []).append(value)
    expected = [mcds.Bucket(s, mcds.Stats(len(v), sum(v), min(v), max(v))) for s, v in sorted(model.items())]
    assert ts.range(t0, t0 + 5 * SECOND, SECOND) == expected
    every = [v for vs in model.values() for v in vs]
    assert ts.aggregate(t0, t0, MINUTE) == mcds.Stats(len(every), sum(every), min(every), max(every))


def test_time_series_union_and_intersection(store: mcds.Store) -> None:
    t0 = ten_minutes_ago()
    a = series(store, "a")
    b = unchecked(mcds.TimeSeries(store.with_prefix("elsewhere:"), unique("b"), [(SECOND, HOUR), (MINUTE, DAY)]))
    a.record(t0, 12)
    a.record(t0 + 500, -3)
    a.record(t0 + 1000, 40)
    b.record(t0, 100)
    b.record(t0 + 5000, 7)
    assert mcds.TimeSeries.intersection([a, b], t0, t0 + MINUTE - 1, SECOND) == [
        mcds.Bucket(t0, mcds.Stats(3, 109, -3, 100))
    ]
    assert mcds.TimeSeries.union([a, b], t0, t0 + MINUTE - 1, SECOND) == [
        mcds.Bucket(t0, mcds.Stats(3, 109, -3, 100)),
        mcds.Bucket(t0 + 1000, mcds.Stats(1, 40, 40, 40)),
        mcds.Bucket(t0 + 5000, mcds.Stats(1, 7, 7, 7)),
    ]
    assert mcds.TimeSeries.union([a, b], t0, t0, MINUTE) == [mcds.Bucket(t0, mcds.Stats(5, 156, -3, 100))]
    assert mcds.TimeSeries.union([], t0, t0, SECOND) == []
    assert mcds.TimeSeries.intersection([], t0, t0, SECOND) == []
    with pytest.raises(mcds.InvalidArgument, match="different stores"):
        mcds.TimeSeries.union([a, series(mcds.Store.memory())], t0, t0, SECOND)
    with pytest.raises(mcds.InvalidArgument, match="does not record at a step"):
        mcds.TimeSeries.union([a, b], t0, t0, 5000)
    with pytest.raises(TypeError):
        mcds.TimeSeries.union(a, t0, t0, SECOND)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        mcds.TimeSeries.union([a, store.counter(unique("c"))], t0, t0, SECOND)  # type: ignore[list-item]
    b.close()
    with pytest.raises(mcds.Closed):
        mcds.TimeSeries.union([a, b], t0, t0, SECOND)


def test_time_series_record_now_and_retention(store: mcds.Store) -> None:
    ts = series(store, "now")
    before = now_ms()
    ts.record_now(-8)
    after = now_ms()
    assert ts.aggregate(before, after, SECOND) == mcds.Stats(1, -8, -8, -8)
    ts.record(5000, 1)  # long past retention: not written, not an error
    assert ts.count(0, 9999, SECOND) == 0
    with pytest.raises(mcds.InvalidArgument, match="at most 10000"):
        ts.count(0, 2**64 - 1, SECOND)


def test_time_series_refuses_bad_input(store: mcds.Store) -> None:
    for bad in ([], [(SECOND, HOUR)] * 2, [(0, HOUR)], [(MINUTE, SECOND)], [(2**64 - 1, 2**64 - 1)],
                [(i, 10) for i in range(1, 10)]):
        with pytest.raises(mcds.InvalidArgument):
            store.time_series(unique("bad"), bad)
    with pytest.raises(mcds.InvalidArgument):
        store.time_series(unique("bad"), [(-1, HOUR)])
    with pytest.raises(TypeError):
        store.time_series(unique("bad"), [SECOND])  # type: ignore[list-item]
    with pytest.raises(mcds.InvalidKey):
        store.time_series("has space", [(SECOND, HOUR)])
    ts = series(store, "bad")
    with pytest.raises(mcds.InvalidArgument):
        ts.record(0, 2**63)
    with pytest.raises(mcds.InvalidArgument):
        ts.record(-1, 0)
    with pytest.raises(TypeError):
        ts.record(0, True)
    with pytest.raises(mcds.InvalidArgument):
        ts.sum(0, 0, 0)
    with pytest.raises(mcds.InvalidArgument):
        ts.range(0, 2**64, SECOND)
    ts.close()
    with pytest.raises(mcds.Closed):
        ts.count(0, 0, SECOND)


def test_packed_series(store: mcds.Store) -> None:
    t0 = ten_minutes_ago()
    logins = unchecked(store.packed_series(unique("logins"), slot_ms=MINUTE, slots_per_period=1440, width=1,
                                           retention_ms=7 * DAY))
    assert logins.get(t0) == 0
    assert logins.incr(t0, 3) == 3
    assert logins.incr(t0 + 59_000, 1) == 4  # same minute
    assert logins.incr(t0 + MINUTE, 300) == 255  # saturates
    assert logins.incr(t0 + MINUTE) == 255
    assert logins.range(t0, t0 + 2 * MINUTE) == [
        mcds.Slot(t0, 4), mcds.Slot(t0 + MINUTE, 255), mcds.Slot(t0 + 2 * MINUTE, 0)
    ]
    assert logins.sum(t0, t0 + 2 * MINUTE) == 259
    assert logins.range(t0 + MINUTE, t0) == []
    before = now_ms()
    value = logins.incr_now(2)
    assert logins.sum(before, now_ms()) == value >= 2

    wide = unchecked(mcds.PackedSeries(store, unique("wide"), MINUTE, 60, 4, DAY))
    assert wide.incr(t0, 2**32 - 2) == 2**32 - 2
    assert wide.incr(t0, 5) == 2**32 - 1
    assert wide.sum(t0, t0 + HOUR) == 2**32 - 1


def test_packed_series_refuses_bad_input(store: mcds.Store) -> None:
    name = unique("bad")
    for args in ((MINUTE, 60, 3, DAY), (0, 60, 1, DAY), (MINUTE, 0, 1, DAY), (MINUTE, 65_537, 1, DAY),
                 (MINUTE, 60, 1, MINUTE), (2**64 - 1, 60, 1, 2**64 - 1)):
        with pytest.raises(mcds.InvalidArgument):
            store.packed_series(name, *args)
    with pytest.raises(mcds.InvalidArgument):
        store.packed_series(name, -1, 60, 1, DAY)
    p = unchecked(store.packed_series(name, MINUTE, 60, 2, DAY))
    with pytest.raises(mcds.InvalidArgument, match="past the retention"):
        p.incr(1000)
    with pytest.raises(mcds.InvalidArgument):
        p.incr(now_ms(), 2**32)
    with pytest.raises(mcds.InvalidArgument, match="at most 100000"):
        p.range(0, now_ms() + 400 * DAY)
    t0 = ten_minutes_ago()
    p.incr(t0)
    # The same shape with another width finds items it cannot read.
    with pytest.raises(mcds.Corrupt):
        unchecked(store.packed_series(name, MINUTE, 60, 1, DAY)).get(t0)


def test_union_and_intersection_take_any_iterable(store: mcds.Store) -> None:
    """A generator is read once (it once came back as an empty union)."""
    t0 = now_ms() // MINUTE * MINUTE - 5 * MINUTE
    a = unchecked(store.time_series(unique("ts"), [(SECOND, HOUR)]))
    b = unchecked(store.time_series(unique("ts"), [(SECOND, HOUR)]))
    a.record(t0, 2)
    b.record(t0, 5)
    expected = mcds.TimeSeries.union([a, b], t0, t0, SECOND)
    assert [bucket.stats.sum for bucket in expected] == [7]
    assert mcds.TimeSeries.union((s for s in [a, b]), t0, t0, SECOND) == expected
    assert mcds.TimeSeries.intersection(iter([a, b]), t0, t0, SECOND) == expected
    with pytest.raises(mcds.InvalidArgument, match="given twice"):
        mcds.TimeSeries.union([a, a], t0, t0, SECOND)


def test_reads_cannot_vouch_for_data_from_before_the_server_started(
    store: mcds.Store, request: pytest.FixtureRequest
) -> None:
    """A bucket of ten minutes ago on a memcached started since: the
    server may have lost it (a restart looks the same), so a read with the
    loss check (the default) is Corrupt rather than a possibly short
    answer. The embedded store has lost nothing."""
    t0 = ten_minutes_ago()
    ts = store.time_series(unique("vouch"), [(MINUTE, DAY)])
    ts.with_loss_check(False).record(t0, 5)
    memory = request.node.callspec.params["store"] == "memory"
    if memory:
        assert ts.aggregate(t0, t0, MINUTE) == mcds.Stats(1, 5, 5, 5)
    else:
        with pytest.raises(mcds.Lost, match="may have lost data"):
            ts.aggregate(t0, t0, MINUTE)
    assert unchecked(ts).aggregate(t0, t0, MINUTE) == mcds.Stats(1, 5, 5, 5)
    packed = store.packed_series(unique("vouch"), MINUTE, 60, 1, DAY)
    unchecked(packed).incr(t0)
    if not memory:
        with pytest.raises(mcds.Lost, match="may have lost data"):
            packed.get(t0)


def test_samples_ahead_of_the_clock_are_refused(store: mcds.Store) -> None:
    ts = store.time_series(unique("ahead"), [(SECOND, HOUR)])
    ts.record(now_ms() + 5_000, 1)  # within the default 60 s
    with pytest.raises(mcds.InvalidArgument, match="when its time comes"):
        ts.with_max_clock_skew(0).record(now_ms() + 5_000, 1)
    with pytest.raises(mcds.InvalidArgument, match="when its time comes"):
        ts.record(now_ms() + 120_000, 1)
    packed = store.packed_series(unique("ahead"), MINUTE, 60, 1, DAY).with_max_clock_skew(0)
    with pytest.raises(mcds.InvalidArgument):
        packed.incr(now_ms() + 5_000)
