"""mcds: distributed data structures on memcached, from Python.

The Python face of libmcds (the C ABI of the mcds Rust library), loaded
from the shared library bundled in this package through cffi::

    import mcds

    store = mcds.Store.memcached("127.0.0.1:11211")   # or mcds.Store.memory()
    hits = store.counter("hits")
    hits.incr()
    with store.lock("nightly-report", ttl=60):
        ...

Structures: :class:`Counter`, :class:`ShadowCounter`,
:class:`ViewCounter`, :class:`Lock`, :class:`Set`, :class:`ShardedSet`,
:class:`IntArray`, :class:`CounterMap`, :class:`WindowCounter`, :class:`RateLimiter`,
:class:`EventLog`, :class:`Table`, :class:`HyperLogLog`,
:class:`BloomFilter`, :class:`ActivityBitmap`, :class:`TimeSeries`,
:class:`PackedSeries`, :class:`Leaderboard` and
:class:`ScalableBloomFilter`, each made by a method of :class:`Store` or by its
constructor (``mcds.Counter(store, "hits")``). Names, members and values
take ``str`` (as UTF-8) or bytes; what comes back is ``bytes`` (save a
:class:`CounterMap`'s field names, UTF-8 text by design, which come back
as ``str``, and its decimals, as :class:`decimal.Decimal`). Errors are
:class:`Error` subclasses, one per result code (see :mod:`mcds.errors`).

Every object can be shared between threads, and each call releases the GIL
while it waits. Objects free their C handle on ``close()``, at the end of a
``with`` block (for a :class:`Lock`, ``with`` takes and releases the lock
instead), or when they are garbage-collected.
"""

from __future__ import annotations

from ._bitmap import ActivityBitmap
from ._bloom import BloomFilter
from ._counter import Counter
from ._counter_map import CounterMap
from ._eventlog import Cursor, Event, EventLog
from . import _ffi
from ._hll import HyperLogLog
from ._int_array import IntArray
from ._kv import KeyValue
from ._leaderboard import BoardSummary, Entry, Leaderboard
from ._limiter import Decision, RateLimiter
from ._lock import Lock
from ._scalable_bloom import ScalableBloomFilter
from ._set import Set
from ._shadow import ShadowCounter
from ._sharded_set import ShardedSet
from ._store import Store
from ._table import Table
from ._timeseries import Bucket, PackedSeries, Resolution, Slot, Stats, TimeSeries
from ._version import __version__
from ._view import ViewCounter
from ._window import WindowCounter
from .errors import (
    Ambiguous,
    BackendError,
    CallbackFailed,
    Cancelled,
    Closed,
    Conflict,
    Corrupt,
    Lost,
    Error,
    Internal,
    InvalidArgument,
    InvalidKey,
    InvalidUtf8,
    IoError,
    LockLost,
    NonNumeric,
    NullArgument,
    Other,
    OutOfMemory,
    Panic,
    ProtocolError,
    ServerDown,
    ServerError,
    Timeout,
    Unsupported,
    ValueTooLarge,
    WaitTimeout,
    result_name,
)


def lib_version() -> str:
    """The version of the bundled libmcds, e.g. ``"0.1.0"`` (``mcds_version``)."""
    return _ffi.text(_ffi.lib.mcds_version())


__all__ = [
    "__version__",
    "lib_version",
    "result_name",
    "Store",
    "KeyValue",
    "Counter",
    "CounterMap",
    "ShadowCounter",
    "ViewCounter",
    "Lock",
    "Set",
    "ShardedSet",
    "IntArray",
    "WindowCounter",
    "RateLimiter",
    "Decision",
    "EventLog",
    "Event",
    "Cursor",
    "Table",
    "HyperLogLog",
    "BloomFilter",
    "ActivityBitmap",
    "TimeSeries",
    "Resolution",
    "Stats",
    "Bucket",
    "PackedSeries",
    "Slot",
    "Leaderboard",
    "Entry",
    "BoardSummary",
    "ScalableBloomFilter",
    "Error",
    "NullArgument",
    "InvalidUtf8",
    "Panic",
    "Internal",
    "CallbackFailed",
    "Cancelled",
    "InvalidKey",
    "ValueTooLarge",
    "InvalidArgument",
    "NonNumeric",
    "Corrupt",
    "Lost",
    "BackendError",
    "IoError",
    "ServerDown",
    "Timeout",
    "Ambiguous",
    "OutOfMemory",
    "ServerError",
    "ProtocolError",
    "Conflict",
    "Unsupported",
    "WaitTimeout",
    "Other",
    "Closed",
    "LockLost",
]
