"""``Store``: the embedded in-process store or real memcached (``mcds_store``)."""

from __future__ import annotations

from typing import Iterable, Optional, Tuple, Union

from ._bitmap import ActivityBitmap
from ._bloom import BloomFilter
from ._counter import Counter
from ._eventlog import EventLog
from ._ffi import lib
from .errors import InvalidArgument
from ._handle import Data, Handle, Seconds
from ._hll import HyperLogLog
from ._limiter import RateLimiter
from ._lock import Lock
from ._set import Set
from ._table import Table
from ._window import WindowCounter

#: Servers: ``"host:port[,host:port...]"``, or an iterable of ``"host:port"``
#: strings or ``(host, port)`` pairs.
Servers = Union[str, Iterable[Union[str, Tuple[str, int]]]]


def _servers_arg(servers: Servers) -> str:
    if isinstance(servers, (str, bytes)):
        text = servers.decode("utf-8") if isinstance(servers, bytes) else servers
    else:
        parts = []
        for server in servers:
            if isinstance(server, tuple):
                host, port = server
                server = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
            parts.append(server)
        text = ",".join(parts)
    if "\0" in text:
        raise InvalidArgument(f"servers {text!r} contains a NUL byte")
    return text


class Store(Handle):
    """Where the structures live: memcached, or the embedded store.

    ``Store(servers)`` is :meth:`Store.memcached`. Every structure is made
    from a store (``store.counter("hits")``) and keeps working after the
    store is closed: it holds its own reference to the connections. A store
    and its structures can be shared by any number of threads; each call
    releases the GIL while it waits for the server.

    A store made before ``os.fork()`` cannot be used in the child: make a
    new one there.
    """

    def __init__(self, servers: Servers) -> None:
        """Connect to memcached: see :meth:`memcached`."""
        text = _servers_arg(servers)
        self.servers: Optional[str] = text
        self._adopt(lib.mcds_store_new_memcached, "mcds_store", lib.mcds_store_free, f"Store {text!r}", text.encode("utf-8"))

    @classmethod
    def memcached(cls, servers: Servers) -> "Store":
        """A store on memcached.

        ``servers`` is ``"host:port"``, ``"host:port,host:port"``, or a list
        of ``"host:port"`` strings or ``(host, port)`` pairs. Connections are
        made on first use, so a server that is down shows up as an error
        (:class:`~mcds.IoError`, :class:`~mcds.ServerDown`) of the first call
        that needs it.
        """
        return cls(servers)

    @classmethod
    def memory(cls) -> "Store":
        """An embedded in-process store: memcached semantics, no server.

        Its data lives as long as the store or a structure made from it."""
        store = cls.__new__(cls)
        store.servers = None
        store._adopt(lib.mcds_store_new_memory, "mcds_store", lib.mcds_store_free, "Store (memory)")
        return store

    # -- the structures: one factory per class, with the class's arguments --

    def counter(self, name: Data) -> Counter:
        """The exact shared counter ``name``: see :class:`~mcds.Counter`."""
        return Counter(self, name)

    def lock(self, name: Data, ttl: Seconds = 30, timeout: Optional[Seconds] = None) -> Lock:
        """The distributed lock ``name`` with a lease of ``ttl`` seconds;
        ``with`` waits up to ``timeout`` (``None``: forever). See :class:`~mcds.Lock`."""
        return Lock(self, name, ttl=ttl, timeout=timeout)

    def set(self, name: Data) -> Set:
        """The set ``name``: see :class:`~mcds.Set`."""
        return Set(self, name)

    def window_counter(self, name: Data, slot_secs: int, slots: int) -> WindowCounter:
        """The sliding-window counter ``name``: see :class:`~mcds.WindowCounter`."""
        return WindowCounter(self, name, slot_secs=slot_secs, slots=slots)

    def rate_limiter(self, name: Data, limit: int, window_secs: int, sliding: bool = False) -> RateLimiter:
        """The rate limiter ``name``: see :class:`~mcds.RateLimiter`."""
        return RateLimiter(self, name, limit=limit, window_secs=window_secs, sliding=sliding)

    def event_log(self, name: Data, chunk_secs: int, chunks: int) -> EventLog:
        """The event log ``name``: see :class:`~mcds.EventLog`."""
        return EventLog(self, name, chunk_secs=chunk_secs, chunks=chunks)

    def table(self, name: Data) -> Table:
        """The table ``name``: see :class:`~mcds.Table`."""
        return Table(self, name)

    def hyperloglog(self, name: Data) -> HyperLogLog:
        """The HyperLogLog ``name``: see :class:`~mcds.HyperLogLog`."""
        return HyperLogLog(self, name)

    def bloom_filter(self, name: Data, expected_items: int, false_positive_rate: float = 0.01) -> BloomFilter:
        """The Bloom filter ``name``: see :class:`~mcds.BloomFilter`."""
        return BloomFilter(self, name, expected_items=expected_items, false_positive_rate=false_positive_rate)

    def activity_bitmap(self, name: Data, start_unix_secs: int, unit_ms: int) -> ActivityBitmap:
        """The activity bitmap ``name``: see :class:`~mcds.ActivityBitmap`."""
        return ActivityBitmap(self, name, start_unix_secs=start_unix_secs, unit_ms=unit_ms)
