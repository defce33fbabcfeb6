"""``TimeSeries`` (``mcds_timeseries``) and ``PackedSeries``
(``mcds_packed_series``), with their values ``Resolution``, ``Stats``,
``Bucket`` (an item of ``mcds_bucket_list``) and ``Slot`` (an item of
``mcds_slot_list``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Iterable, List, NamedTuple, Optional, Tuple, Union

from ._ffi import ffi, lib
from ._handle import U32_MAX, Data, Handle, check, display, int_arg, name_arg, take_string

if TYPE_CHECKING:
    from ._store import Store

I64_MIN = -(2**63)
I64_MAX = 2**63 - 1


class Resolution(NamedTuple):
    """One resolution of a :class:`TimeSeries`: buckets of ``step_ms``
    milliseconds, readable for ``retention_ms`` after each bucket's end."""

    #: The bucket length, whole milliseconds (at least 1).
    step_ms: int
    #: How long a bucket stays readable after its end, milliseconds (at
    #: least one step, at most 100 years).
    retention_ms: int


@dataclass(frozen=True)
class Stats:
    """The aggregates of at least one sample: how many, their exact sum (a
    Python int of any size: sums of ``int64`` samples can pass 2**63), the
    smallest and the largest. A frozen dataclass rather than a named tuple,
    whose ``count`` method the field would hide."""

    #: How many samples.
    count: int
    #: Their exact sum.
    sum: int
    #: The smallest sample.
    min: int
    #: The largest sample.
    max: int

    @property
    def avg(self) -> float:
        """The mean, ``sum / count``, as a float."""
        return self.sum / self.count


class Bucket(NamedTuple):
    """One non-empty bucket of a :class:`TimeSeries` read."""

    #: The bucket's start, Unix milliseconds (a multiple of the step).
    start_ms: int
    #: Its samples' aggregates.
    stats: Stats


class Slot(NamedTuple):
    """One slot of a :class:`PackedSeries` read."""

    #: The slot's start, Unix milliseconds (a multiple of the slot length).
    start_ms: int
    #: Its count (0 when nothing was counted).
    value: int


def _sum(x: Any) -> int:
    """An ``mcds_i128`` as the exact Python int ``hi * 2**64 + lo``."""
    return int(x.hi) * 2**64 + int(x.lo)


def _stats(s: Any) -> Stats:
    return Stats(int(s.count), _sum(s.sum), int(s.min), int(s.max))


def _take_bucket_list(ptr: Any) -> List[Bucket]:
    try:
        n = ffi.new("uintptr_t *")
        check(lib.mcds_bucket_list_len(ptr, n))
        b: Any = ffi.new("mcds_bucket *")
        buckets = []
        for i in range(n[0]):
            check(lib.mcds_bucket_list_get(ptr, i, b))
            buckets.append(Bucket(int(b.start_ms), _stats(b.stats)))
        return buckets
    finally:
        lib.mcds_bucket_list_free(ptr)


def _take_slot_list(ptr: Any) -> List[Slot]:
    try:
        n = ffi.new("uintptr_t *")
        check(lib.mcds_slot_list_len(ptr, n))
        s: Any = ffi.new("mcds_slot *")
        slots = []
        for i in range(n[0]):
            check(lib.mcds_slot_list_get(ptr, i, s))
            slots.append(Slot(int(s.start_ms), int(s.value)))
        return slots
    finally:
        lib.mcds_slot_list_free(ptr)


def _range_args(from_ms: int, to_ms: int, step_ms: int) -> Tuple[int, int, int]:
    return int_arg(from_ms, "from_ms"), int_arg(to_ms, "to_ms"), int_arg(step_ms, "step_ms")


class TimeSeries(Handle):
    """Count, exact sum, min and max of integer samples per time bucket, at
    1 to 8 resolutions (``(step_ms, retention_ms)`` pairs: say 1 s kept for
    an hour and 1 min kept for a day), all written by one :meth:`record`.
    Times are Unix milliseconds; "now" and retention follow the system
    clock. Every process must open a series with the same resolutions.

    >>> latency = store.time_series("latency-ms", [(1000, 3_600_000), (60_000, 86_400_000)])
    >>> latency.record(t0, 12)
    >>> latency.record(t0 + 500, -3)
    >>> latency.aggregate(t0, t0, 60_000)
    Stats(count=2, sum=9, min=-3, max=12)

    Reads skip buckets past retention and cover at most 10 000 buckets
    (else :class:`~mcds.InvalidArgument`). A read asks each server whether
    it lost items (a restart, flush or eviction) since the buckets it
    returns could first be written, and a bucket it cannot vouch for is
    :class:`~mcds.Corrupt` ("may have lost data") rather than a short or
    missing answer; that includes buckets from before a fresh server
    started (:meth:`with_loss_check` turns the check off). A sample more
    than the clock skew (60 s, :meth:`with_max_clock_skew`) ahead of the
    system clock is :class:`~mcds.InvalidArgument`. See the Rust
    ``TimeSeries`` docs for the round trips and what a failure may have
    applied.
    """

    def __init__(self, store: "Store", name: Data, resolutions: Iterable[Union[Resolution, Tuple[int, int]]]) -> None:
        key = name_arg(name)
        pairs = []
        for r in resolutions:
            if not isinstance(r, tuple) or len(r) != 2:
                raise TypeError(f"a resolution is a (step_ms, retention_ms) pair, not {r!r}")
            pairs.append((int_arg(r[0], "step_ms"), int_arg(r[1], "retention_ms")))
        array = ffi.new("mcds_resolution[]", pairs) if pairs else ffi.NULL
        self._create(
            store, lib.mcds_timeseries_new, "mcds_timeseries", lib.mcds_timeseries_free,
            f"TimeSeries({display(key)})", key, array, len(pairs),
        )

    @property
    def name(self) -> str:
        """The series' name."""
        out = ffi.new("char **")
        self._call(lib.mcds_timeseries_name, out)
        return take_string(out[0]) or ""

    @property
    def resolutions(self) -> List[Resolution]:
        """Its resolutions, finest first."""
        out = ffi.new("mcds_resolution[8]")
        n = ffi.new("uintptr_t *")
        self._call(lib.mcds_timeseries_resolutions, out, 8, n)
        return [Resolution(int(out[i].step_ms), int(out[i].retention_ms)) for i in range(n[0])]

    def with_loss_check(self, check: bool) -> "TimeSeries":
        """The same series whose reads ask the store whether it lost items
        (``True``, the default) or read what is there (``False``: a bucket
        may then read short, or empty, without an error)."""
        return self._twin(lib.mcds_timeseries_with_loss_check, bool(check))

    def with_max_clock_skew(self, skew_ms: int) -> "TimeSeries":
        """The same series allowing clocks ``skew_ms`` apart (default
        60 000): samples at most that far ahead of now, and reads that vouch
        for buckets starting twice that long after their server's last
        loss."""
        return self._twin(lib.mcds_timeseries_with_max_clock_skew, int_arg(skew_ms, "skew_ms"))

    def record(self, ts_ms: int, value: int) -> None:
        """Record ``value`` (an ``int64``) at ``ts_ms`` (Unix ms) at every
        resolution whose bucket is still within retention (none: nothing is
        written, not an error). Each bucket is one item, changed by CAS: 2
        round trips per server."""
        self._call(lib.mcds_timeseries_record, int_arg(ts_ms, "ts_ms"), int_arg(value, "value", I64_MIN, I64_MAX))

    def record_now(self, value: int) -> None:
        """Record ``value`` now, by the system clock."""
        self._call(lib.mcds_timeseries_record_now, int_arg(value, "value", I64_MIN, I64_MAX))

    def range(self, from_ms: int, to_ms: int, step_ms: int) -> List[Bucket]:
        """The non-empty buckets of resolution ``step_ms`` (one of the
        series' steps) from the one containing ``from_ms`` to the one
        containing ``to_ms`` (Unix ms, inclusive), oldest first. One round
        trip per server, and two more per server for the loss check."""
        out = ffi.new("mcds_bucket_list **")
        self._call(lib.mcds_timeseries_range, *_range_args(from_ms, to_ms, step_ms), out)
        return _take_bucket_list(out[0])

    def aggregate(self, from_ms: int, to_ms: int, step_ms: int) -> Optional[Stats]:
        """The aggregates of every sample in the range (as in
        :meth:`range`); ``None`` when it has none."""
        found = ffi.new("bool *")
        out = ffi.new("mcds_stats *")
        self._call(lib.mcds_timeseries_aggregate, *_range_args(from_ms, to_ms, step_ms), found, out)
        return _stats(out) if found[0] else None

    def count(self, from_ms: int, to_ms: int, step_ms: int) -> int:
        """How many samples the range holds."""
        out = ffi.new("uint64_t *")
        self._call(lib.mcds_timeseries_count, *_range_args(from_ms, to_ms, step_ms), out)
        return int(out[0])

    def sum(self, from_ms: int, to_ms: int, step_ms: int) -> int:
        """The exact sum of the range's samples (0 when none), of any size."""
        out = ffi.new("mcds_i128 *")
        self._call(lib.mcds_timeseries_sum, *_range_args(from_ms, to_ms, step_ms), out)
        return _sum(out)

    def avg(self, from_ms: int, to_ms: int, step_ms: int) -> Optional[float]:
        """The mean of the range's samples; ``None`` when none."""
        found = ffi.new("bool *")
        out = ffi.new("double *")
        self._call(lib.mcds_timeseries_avg, *_range_args(from_ms, to_ms, step_ms), found, out)
        return float(out[0]) if found[0] else None

    def min(self, from_ms: int, to_ms: int, step_ms: int) -> Optional[int]:
        """The smallest sample of the range; ``None`` when none."""
        found = ffi.new("bool *")
        out = ffi.new("int64_t *")
        self._call(lib.mcds_timeseries_min, *_range_args(from_ms, to_ms, step_ms), found, out)
        return int(out[0]) if found[0] else None

    def max(self, from_ms: int, to_ms: int, step_ms: int) -> Optional[int]:
        """The largest sample of the range; ``None`` when none."""
        found = ffi.new("bool *")
        out = ffi.new("int64_t *")
        self._call(lib.mcds_timeseries_max, *_range_args(from_ms, to_ms, step_ms), found, out)
        return int(out[0]) if found[0] else None

    @staticmethod
    def union(series: Iterable["TimeSeries"], from_ms: int, to_ms: int, step_ms: int) -> List[Bucket]:
        """The buckets where *any* of ``series`` has samples, each the merge
        of their samples there (counts and sums add, min and max widen).
        All must come from one store (or stores made from it by
        :meth:`Store.with_prefix`) and record at ``step_ms``: else
        :class:`~mcds.InvalidArgument`. One round trip per server."""
        return _combine(lib.mcds_timeseries_union, series, from_ms, to_ms, step_ms)

    @staticmethod
    def intersection(series: Iterable["TimeSeries"], from_ms: int, to_ms: int, step_ms: int) -> List[Bucket]:
        """The buckets where *every* one of ``series`` has samples, each the
        merge of their samples there (as :meth:`union`; no series gives no
        bucket)."""
        return _combine(lib.mcds_timeseries_intersection, series, from_ms, to_ms, step_ms)


def _combine(fn: Any, series: Iterable[TimeSeries], from_ms: int, to_ms: int, step_ms: int) -> List[Bucket]:
    """Call a union or intersection with every series' handle held."""
    if isinstance(series, TimeSeries):
        raise TypeError("series must be a sequence of TimeSeries objects, not a single one")
    # Read once: a generator would be empty by the second loop.
    series = list(series)
    args = _range_args(from_ms, to_ms, step_ms)
    for s in series:
        if not isinstance(s, TimeSeries):
            raise TypeError(f"series must hold TimeSeries objects, not {type(s).__name__}")
    owners = []
    try:
        ptrs = []
        for s in series:
            ptrs.append(s._owner.enter())
            owners.append(s._owner)
        array = ffi.new("mcds_timeseries *[]", ptrs) if ptrs else ffi.NULL
        out = ffi.new("mcds_bucket_list **")
        check(fn(array, len(ptrs), *args, out))
        return _take_bucket_list(out[0])
    finally:
        for owner in owners:
            owner.exit()


class PackedSeries(Handle):
    """A saturating counter per time slot of ``slot_ms``, with
    ``slots_per_period`` slots of ``width`` bytes (1, 2 or 4: counts up to
    255, 65 535 or 4 294 967 295) packed into one item per period, readable
    for ``retention_ms`` after their period ends.

    >>> logins = store.packed_series("logins", slot_ms=60_000, slots_per_period=1440, width=1,
    ...                              retention_ms=7 * 86_400_000)
    >>> logins.incr(t0, 3)
    3
    >>> logins.incr(t0 + 60_000, 300)  # saturates
    255
    >>> [s.value for s in logins.range(t0, t0 + 120_000)]
    [3, 255, 0]
    """

    def __init__(
        self, store: "Store", name: Data, slot_ms: int, slots_per_period: int, width: int, retention_ms: int
    ) -> None:
        key = name_arg(name)
        self.slot_ms = int_arg(slot_ms, "slot_ms")
        self.slots_per_period = int_arg(slots_per_period, "slots_per_period")
        self.width = int_arg(width, "width", 0, U32_MAX)
        self.retention_ms = int_arg(retention_ms, "retention_ms")
        self._create(
            store, lib.mcds_packed_series_new, "mcds_packed_series", lib.mcds_packed_series_free,
            f"PackedSeries({display(key)})", key, self.slot_ms, self.slots_per_period, self.width,
            self.retention_ms,
        )

    def with_loss_check(self, check: bool) -> "PackedSeries":
        """The same series whose reads ask the store whether it lost items
        (``True``, the default) or not (as :meth:`TimeSeries.with_loss_check`)."""
        return self._twin(lib.mcds_packed_series_with_loss_check, bool(check))

    def with_max_clock_skew(self, skew_ms: int) -> "PackedSeries":
        """The same series allowing clocks ``skew_ms`` apart (as
        :meth:`TimeSeries.with_max_clock_skew`)."""
        return self._twin(lib.mcds_packed_series_with_max_clock_skew, int_arg(skew_ms, "skew_ms"))

    def incr(self, ts_ms: int, delta: int = 1) -> int:
        """Add ``delta`` to the slot containing ``ts_ms`` (Unix ms),
        saturating at the width's maximum; the slot's new value. 2 round
        trips (1 when the slot does not change). A slot past retention is
        :class:`~mcds.InvalidArgument`."""
        out = ffi.new("uint32_t *")
        self._call(lib.mcds_packed_series_incr, int_arg(ts_ms, "ts_ms"), int_arg(delta, "delta", 0, U32_MAX), out)
        return int(out[0])

    def incr_now(self, delta: int = 1) -> int:
        """:meth:`incr` the slot of now, by the system clock."""
        out = ffi.new("uint32_t *")
        self._call(lib.mcds_packed_series_incr_now, int_arg(delta, "delta", 0, U32_MAX), out)
        return int(out[0])

    def get(self, ts_ms: int) -> int:
        """The count of the slot containing ``ts_ms`` (0 past retention)."""
        out = ffi.new("uint32_t *")
        self._call(lib.mcds_packed_series_get, int_arg(ts_ms, "ts_ms"), out)
        return int(out[0])

    def range(self, from_ms: int, to_ms: int) -> List[Slot]:
        """Every slot from the one containing ``from_ms`` to the one
        containing ``to_ms`` (Unix ms, inclusive) within retention, oldest
        first, zeros included; at most 100 000. One round trip per server,
        and two more per server for the loss check (as
        :meth:`TimeSeries.range`)."""
        out = ffi.new("mcds_slot_list **")
        self._call(lib.mcds_packed_series_range, int_arg(from_ms, "from_ms"), int_arg(to_ms, "to_ms"), out)
        return _take_slot_list(out[0])

    def sum(self, from_ms: int, to_ms: int) -> int:
        """The sum of the slots of the range (as in :meth:`range`)."""
        out = ffi.new("uint64_t *")
        self._call(lib.mcds_packed_series_sum, int_arg(from_ms, "from_ms"), int_arg(to_ms, "to_ms"), out)
        return int(out[0])



