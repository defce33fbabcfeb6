"""``EventLog`` (``mcds_log``) and ``Event`` (an item of ``mcds_event_list``)."""

from __future__ import annotations

import datetime
from typing import TYPE_CHECKING, Any, List, NamedTuple, Optional, Tuple

from ._ffi import ffi, lib
from ._handle import U32_MAX, U64_MAX, Data, Handle, check, copy_bytes, data_arg, display, int_arg, name_arg

if TYPE_CHECKING:
    from ._store import Store


class Event(NamedTuple):
    """An event of an :class:`EventLog`."""

    #: When it was recorded, in Unix milliseconds.
    at_ms: int
    #: Its payload.
    payload: bytes

    @property
    def at(self) -> datetime.datetime:
        """:attr:`at_ms` as an aware UTC datetime."""
        return datetime.datetime.fromtimestamp(self.at_ms / 1000.0, tz=datetime.timezone.utc)


class Cursor(NamedTuple):
    """A polling position in an :class:`EventLog` (see
    :meth:`EventLog.since`): the timestamp of the last event seen and how
    many events with exactly that timestamp were seen. A plain value: keep
    it, store it (two integers), pass it back. ``Cursor()`` is the start:
    every event still in the log."""

    #: Unix milliseconds of the last event seen.
    at_ms: int = 0
    #: How many events at :attr:`at_ms` were seen.
    seen_at_ms: int = 0

    @classmethod
    def after(cls, at_ms: int) -> "Cursor":
        """The position after every event up to and including Unix ms ``at_ms``."""
        return cls(int_arg(at_ms, "at_ms", 0, U64_MAX - 1) + 1, 0)


def _take_event_list(ptr: object) -> List[Event]:
    try:
        n = ffi.new("uintptr_t *")
        check(lib.mcds_event_list_len(ptr, n))
        at = ffi.new("uint64_t *")
        data = ffi.new("const uint8_t **")
        length = ffi.new("uintptr_t *")
        events = []
        for i in range(n[0]):
            check(lib.mcds_event_list_get(ptr, i, at, data, length))
            events.append(Event(int(at[0]), copy_bytes(data[0], length[0])))
        return events
    finally:
        lib.mcds_event_list_free(ptr)


class EventLog(Handle):
    """A time-ordered log of events (a ring of ``chunks`` time-chunk keys of
    ``chunk_secs`` seconds; it keeps ``(chunks - 1) * chunk_secs`` seconds).

    >>> log = store.event_log("logins", chunk_secs=60, chunks=61)
    >>> at = log.put(b"alice")
    >>> [e.payload for e in log.fetch(at - 60_000)]
    [b'alice']
    """

    def __init__(self, store: "Store", name: Data, chunk_secs: int, chunks: int) -> None:
        self.name = name_arg(name)
        self.chunk_secs = int_arg(chunk_secs, "chunk_secs", 0, U32_MAX)
        self.chunks = int_arg(chunks, "chunks", 0, U32_MAX)
        self._create(
            store, lib.mcds_log_new, "mcds_log", lib.mcds_log_free,
            f"EventLog({display(self.name)})", self.name, self.chunk_secs, self.chunks,
        )

    def put(self, payload: Data) -> int:
        """Record an event now; returns its timestamp (Unix ms). One round trip."""
        data = data_arg(payload, "payload")
        out = ffi.new("uint64_t *")
        self._call(lib.mcds_log_put, data, len(data), out)
        return int(out[0])

    def fetch(self, first_ms: int = 0, last_ms: Optional[int] = None) -> List[Event]:
        """The events with ``first_ms <= at_ms <= last_ms`` (default: all
        that the log still keeps), in time order."""
        last = U64_MAX if last_ms is None else int_arg(last_ms, "last_ms")
        out = ffi.new("mcds_event_list **")
        self._call(lib.mcds_log_fetch, int_arg(first_ms, "first_ms"), last, out)
        return _take_event_list(out[0])

    def put_at(self, at_ms: int, payload: Data) -> None:
        """Record an event with timestamp ``at_ms`` (Unix ms): a late event,
        or one imported from elsewhere. ``at_ms`` must lie in the current
        chunk or the log's capacity before it, else
        :class:`~mcds.InvalidArgument`. One round trip."""
        data = data_arg(payload, "payload")
        self._call(lib.mcds_log_put_at, int_arg(at_ms, "at_ms"), data, len(data))

    def since(self, cursor: Optional[Cursor] = None) -> Tuple[List[Event], Cursor]:
        """The events after ``cursor`` (default: the start, every event
        still kept), up to now in time order, and the cursor to poll with
        next (``cursor`` itself when nothing is new)::

            cursor = mcds.Cursor()
            while True:
                events, cursor = log.since(cursor)
                handle(events)
                time.sleep(1)

        Events that arrive later with a timestamp before the cursor (a
        ``put_at`` in the past, a writer whose clock lags) are not seen.
        One round trip per server."""
        if cursor is None:
            cursor = Cursor()
        elif not isinstance(cursor, tuple) or len(cursor) != 2:
            raise TypeError(f"cursor must be an mcds.Cursor, not {type(cursor).__name__}")
        c: Any = ffi.new("mcds_cursor *", [int_arg(cursor[0], "cursor.at_ms"), int_arg(cursor[1], "cursor.seen_at_ms")])
        out = ffi.new("mcds_event_list **")
        self._call(lib.mcds_log_since, c, out, c)
        return _take_event_list(out[0]), Cursor(int(c.at_ms), int(c.seen_at_ms))
