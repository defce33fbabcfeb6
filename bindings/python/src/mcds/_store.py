"""``Store``: the embedded in-process store or real memcached (``mcds_store``)."""

from __future__ import annotations

import inspect
import math
from typing import TYPE_CHECKING, Any, Callable, Dict, Generic, Iterable, Optional, Tuple, TypeVar, Union, overload

from ._bitmap import ActivityBitmap
from ._bloom import BloomFilter
from ._counter import Counter
from ._counter_map import CounterMap
from ._eventlog import EventLog
from ._ffi import ffi, lib
from .errors import InvalidArgument
from ._handle import U32_MAX, Data, Handle, Seconds, check, int_arg, name_arg, seconds_arg
from ._hll import HyperLogLog
from ._int_array import IntArray
from ._kv import KeyValue
from ._leaderboard import Leaderboard
from ._limiter import RateLimiter
from ._lock import Lock
from ._scalable_bloom import ScalableBloomFilter
from ._set import Set
from ._shadow import ShadowCounter
from ._sharded_set import ShardedSet
from ._table import Table
from ._timeseries import PackedSeries, Resolution, TimeSeries  # noqa: F401 (the factories' annotations)
from ._update import Updater, run_update
from ._view import Loader, ViewCounter  # noqa: F401 (the factories' annotations)
from ._window import WindowCounter

if TYPE_CHECKING:
    # typeshed's, which every type checker has: nothing to install.
    from typing_extensions import Concatenate, ParamSpec

    _P = ParamSpec("_P")
else:
    _P = TypeVar("_P")  # at run time any type variable does: only type checkers read it
_S = TypeVar("_S")

#: The structure factories of :class:`Store`, by method name: each makes a
#: structure's handle with no round trip (``store.counter("hits")``).
#: Filled as ``Store`` is defined, from its ``_Factory`` attributes;
#: :mod:`mcds.aio` makes these plain calls rather than coroutines.
FACTORIES: Dict[str, Callable[..., Any]] = {}


class _Factory(Generic[_P, _S]):
    """A structure factory of :class:`Store`, registered in ``FACTORIES``:
    ``counter = _Factory(Counter, "doc")`` in the class body makes
    ``store.counter(*args, **kwargs)`` call ``Counter(store, *args,
    **kwargs)``, with the signature of ``Counter`` less its store and
    ``doc`` as its docstring. ``@_Factory`` on a method registers the
    method as it is (a factory that does more than call a class).

    As the class is made, ``__set_name__`` puts a plain function in its
    place (``inspect``, ``help`` and Sphinx see an ordinary method); type
    checkers read the ``__get__`` below: ``store.counter`` is
    ``Callable[[Data], Counter]``, parameters, defaults and all."""

    def __init__(self, make: "Callable[Concatenate[Store, _P], _S]", doc: Optional[str] = None) -> None:
        self.make = make
        self.doc = make.__doc__ if doc is None else doc

    def __set_name__(self, owner: type, name: str) -> None:
        make = self.make
        if getattr(make, "__qualname__", None) == f"{owner.__qualname__}.{name}":
            method: Callable[..., Any] = make  # @_Factory on the method itself
        else:
            sig = inspect.signature(make)
            params = list(sig.parameters.values())
            returns = make.__name__ if isinstance(make, type) else sig.return_annotation
            this = inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)

            def method(self: Store, *args: Any, **kwargs: Any) -> Any:
                return make(self, *args, **kwargs)

            method.__name__ = name
            method.__qualname__ = f"{owner.__qualname__}.{name}"
            method.__module__ = owner.__module__
            method.__doc__ = self.doc
            method.__signature__ = sig.replace(  # type: ignore[attr-defined]
                parameters=[this, *params[1:]], return_annotation=returns
            )
            method.__annotations__ = {
                **{p.name: p.annotation for p in params[1:] if p.annotation is not p.empty},
                "return": returns,
            }
        FACTORIES[name] = method
        setattr(owner, name, method)

    if TYPE_CHECKING:  # replaced by a function as the class is made: for type checkers only

        @overload
        def __get__(self, store: None, owner: Any) -> "Callable[Concatenate[Store, _P], _S]": ...

        @overload
        def __get__(self, store: "Store", owner: Any) -> "Callable[_P, _S]": ...

        def __get__(self, store: "Optional[Store]", owner: Any) -> Any: ...


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


def _timeout_ms(value: Seconds, what: str) -> int:
    """A timeout in seconds as the C ABI's milliseconds (rounded up): more
    than 0 and at most an hour."""
    # One message for every value out of range: -1 and NaN as 0 and 3601
    # (seconds_arg alone would say "at least 0" of a negative one).
    try:
        secs = seconds_arg(value, what)
    except InvalidArgument:
        secs = math.nan
    if not 0 < secs <= 3600:
        shown = value
        raise InvalidArgument(f"{what} must be more than 0 and at most 3600 seconds (an hour), not {shown}")
    return max(1, math.ceil(secs * 1000))


class _Builder:
    """An ``mcds_store_builder`` for the length of one ``Store`` creation."""

    def __init__(self) -> None:
        out = ffi.new("mcds_store_builder **")
        check(lib.mcds_store_builder_new(out))
        self.ptr = ffi.gc(out[0], lib.mcds_store_builder_free)

    def set(self, setter: Callable[..., int], value: Any) -> None:
        check(setter(self.ptr, value))


class Store(Handle):
    """Where the structures live: memcached, or the embedded store.

    ``Store(servers)`` is :meth:`Store.memcached`. Every structure is made
    from a store (``store.counter("hits")``) and keeps working after the
    store is closed: it holds its own reference to the connections. A store
    and its structures can be shared by any number of threads; each call
    releases the GIL while it waits for the server.

    A store made before ``os.fork()`` works in the child with no code
    change: its first use there (or the first use of a structure made from
    it) opens the child's own connections, as redis-py's clients do, so a
    module-level store serves the workers of gunicorn ``--preload``, Celery's
    prefork pool or uWSGI. An embedded store (:meth:`memory`) is the
    process's own: in the child it starts empty, like a new one.
    """

    def __init__(
        self,
        servers: Servers,
        *,
        connect_timeout: Optional[Seconds] = None,
        io_timeout: Optional[Seconds] = None,
        item_size_limit: Optional[int] = None,
    ) -> None:
        """Connect to memcached: see :meth:`memcached`."""
        text = _servers_arg(servers)
        #: The servers, as given (``None`` for the embedded store).
        self.servers: Optional[str] = text
        #: The key prefix of this handle's structures (see :meth:`with_prefix`).
        self.prefix = ""
        what = f"Store {text!r}"
        if connect_timeout is None and io_timeout is None and item_size_limit is None:
            self._adopt(lib.mcds_store_new_memcached, "mcds_store", lib.mcds_store_free, what, text.encode("utf-8"))
            return
        b = _Builder()
        if connect_timeout is not None:
            b.set(lib.mcds_store_builder_set_connect_timeout_ms, _timeout_ms(connect_timeout, "connect_timeout"))
        if io_timeout is not None:
            b.set(lib.mcds_store_builder_set_io_timeout_ms, _timeout_ms(io_timeout, "io_timeout"))
        if item_size_limit is not None:
            b.set(lib.mcds_store_builder_set_item_size_limit, int_arg(item_size_limit, "item_size_limit"))
        self._adopt(
            lib.mcds_store_builder_build_memcached, "mcds_store", lib.mcds_store_free, what, b.ptr, text.encode("utf-8")
        )

    @classmethod
    def memcached(
        cls,
        servers: Servers,
        *,
        connect_timeout: Optional[Seconds] = None,
        io_timeout: Optional[Seconds] = None,
        item_size_limit: Optional[int] = None,
    ) -> "Store":
        """A store on memcached.

        ``servers`` is ``"host:port"``, ``"host:port,host:port"``, or a list
        of ``"host:port"`` strings or ``(host, port)`` pairs. Connections are
        made on first use, so a server that is down shows up as an error
        (:class:`~mcds.IoError`, :class:`~mcds.ServerDown`) of the first call
        that needs it.

        ``connect_timeout``: how long dialing a server may take, and
        ``io_timeout``: how long one request and its reply may take, in
        seconds or as a ``timedelta`` (default 1 s each; more than 0, at
        most an hour; rounded up to whole milliseconds). A call that fails
        so raises :class:`~mcds.Timeout` (or :class:`~mcds.Ambiguous` when
        a write may have been applied). ``item_size_limit``: the servers'
        ``-I`` in bytes (default 1 MiB; 1024 to 1 GiB): larger values are
        refused with :class:`~mcds.ValueTooLarge` before they are sent (an
        append, which grows an item mcds has not read, is checked by the
        server, whose refusal is :class:`~mcds.ValueTooLarge` too).
        Out of range: :class:`~mcds.InvalidArgument`.
        """
        return cls(servers, connect_timeout=connect_timeout, io_timeout=io_timeout, item_size_limit=item_size_limit)

    @classmethod
    def memory(
        cls,
        *,
        memory_limit: Optional[int] = None,
        evict: Optional[bool] = None,
        item_size_limit: Optional[int] = None,
    ) -> "Store":
        """An embedded in-process store: memcached semantics, no server.

        Its data lives as long as the store or a structure made from it.

        ``memory_limit``: its budget in bytes, counting each item as key,
        value and 59 bytes (default 64 MiB, as ``memcached -m 64``; 1024 to
        1 TiB), taken as items are written. ``evict``: when the budget is
        full, evict the least recently used items (``True``, the default, as
        memcached) or refuse writes with :class:`~mcds.OutOfMemory`
        (``False``, as ``memcached -M``). ``item_size_limit``: the largest
        item in bytes (default 1 MiB; 1024 to 1 GiB). Out of range:
        :class:`~mcds.InvalidArgument`.
        """
        store = cls.__new__(cls)
        store.servers = None
        store.prefix = ""
        what = "Store (memory)"
        if memory_limit is None and evict is None and item_size_limit is None:
            store._adopt(lib.mcds_store_new_memory, "mcds_store", lib.mcds_store_free, what)
            return store
        b = _Builder()
        if memory_limit is not None:
            b.set(lib.mcds_store_builder_set_memory_limit, int_arg(memory_limit, "memory_limit"))
        if evict is not None:
            if not isinstance(evict, bool):
                raise TypeError(f"evict must be a bool, not {type(evict).__name__}")
            b.set(lib.mcds_store_builder_set_evict, evict)
        if item_size_limit is not None:
            b.set(lib.mcds_store_builder_set_item_size_limit, int_arg(item_size_limit, "item_size_limit"))
        store._adopt(lib.mcds_store_builder_build_memory, "mcds_store", lib.mcds_store_free, what, b.ptr)
        return store

    @classmethod
    def from_url(cls, url: str) -> "Store":
        """The store a URL names, options and all: the same string the
        ``mcds`` command takes in ``MCDS_SERVERS``.

        ``"memcached://host:port[,host:port...]?options"`` (or just the
        server list) or ``"memory://?options"``. Options: ``ketama`` (place
        keys as pylibmc with ``behaviors={"ketama_weighted": True}`` and
        php-memcached with ``OPT_LIBKETAMA_COMPATIBLE`` do, to share a
        pool's keys with them), ``distribution=rendezvous|ketama``,
        ``timeout_ms``, ``connect_timeout_ms``, ``io_timeout_ms``,
        ``item_size_limit`` (bytes, or with ``k``/``m``), ``memory_limit``,
        ``evict=true|false``, ``prefix``; values may be percent-encoded::

            mcds.Store.from_url("memcached://10.0.0.1:11211,10.0.0.2:11211?ketama&timeout_ms=500&prefix=app:")

        ``text://host:port?proxy`` speaks the classic text protocol, here
        through twemproxy (no CAS there: locks are refused). A mistake is
        :class:`~mcds.InvalidArgument` naming it.
        ``memcached://a:11211,b:11211,c:11211?quorum`` (3 to 15 servers)
        makes them independent members of a quorum, not a pool: a lock
        (:meth:`lock`) lives on every one and is held by whoever holds a
        majority, so it works while a minority is down (with a majority
        down it raises :class:`~mcds.ServerDown` saying how many answered);
        only locks run on a quorum (the rest raise
        :class:`~mcds.Unsupported`). TLS
        (``memcached+tls://host:port?ca_file=...``), unix sockets
        (``unix:/path``) and memcached's ASCII auth (``user:password@``, or
        ``MCDS_USERNAME``/``MCDS_PASSWORD``) are taken too; credentials are
        never repeated in a message."""
        if not isinstance(url, str):
            raise TypeError(f"url must be str, not {type(url).__name__}")
        if "\0" in url:
            raise InvalidArgument("the store URL contains a NUL byte")
        store = cls.__new__(cls)
        store.servers = None
        store.prefix = ""
        store._adopt(lib.mcds_store_new_url, "mcds_store", lib.mcds_store_free, "Store (url)", url.encode("utf-8"))
        return store

    def with_prefix(self, prefix: Data) -> "Store":
        """A store on the same connections (or the same embedded memory)
        whose structures keep their items under keys starting with
        ``prefix``: with ``"app/"`` the lock ``"job"`` is the key
        ``app/lock:job:owner``. Applications sharing one memcached pool
        keep their names apart so. It replaces this store's prefix (``""``
        gives none); this store is unchanged, and either can be closed
        first. The prefix must be key bytes (no spaces or control bytes),
        under 250 bytes: else :class:`~mcds.InvalidKey`."""
        raw = name_arg(prefix, "prefix")
        store = type(self).__new__(type(self))
        store.servers = self.servers
        store.prefix = raw.decode("utf-8", "replace")
        base = self._owner.what.split(" prefix=", 1)[0]
        store._create(self, lib.mcds_store_with_prefix, "mcds_store", lib.mcds_store_free, f"{base} prefix={raw!r}", raw)
        return store

    # -- the structures: one factory per class, with the class's arguments
    # (a line each: _Factory; FACTORIES lists them for mcds.aio) --

    def update(self, key: Data, fn: Updater, ttl: int = 0, max_attempts: int = 0) -> bool:
        """Update ``key`` (this store's prefix in front, as it is: a raw
        key, not a structure name) with a CAS read-modify-write: read it,
        call ``fn(current)`` (``bytes``, or ``None`` when missing) for the new
        value, and write it only if nobody changed the item since the read;
        when someone did, read again and call ``fn`` again, up to
        ``max_attempts`` reads (0: 64), then :class:`~mcds.Conflict`.
        ``fn`` returns ``bytes``, or ``None`` to leave the item as it is; it
        may run several times and must have no other effects. If it raises,
        nothing is written and its exception reaches the caller as raised.
        ``ttl``: seconds the written item lasts (0: no expiry). Returns
        whether a value was written. A store without CAS (memcached ``-C``,
        or the text protocol through a proxy) raises
        :class:`~mcds.Unsupported` before ``fn`` runs.

        >>> store.update("config:version", lambda v: str(int(v or b"0") + 1).encode())
        True
        """
        return run_update(
            self._call, name_arg(key, "key"), fn, int_arg(ttl, "ttl", 0, U32_MAX),
            int_arg(max_attempts, "max_attempts", 0, U32_MAX),
        )

    @property
    def kv(self) -> KeyValue:
        """Plain key/value on this store (``get``, ``set``, ``add``,
        ``delete``, ``incr``), as pymemcache has it: see
        :class:`~mcds.KeyValue`. (``store.set(name)`` is the set structure.)

        >>> store.kv.set("greeting", "hello", ttl=60)
        >>> store.kv.get("greeting")
        b'hello'
        """
        return KeyValue(self)

    counter = _Factory(Counter, """The exact shared counter ``name``: see :class:`~mcds.Counter`.""")

    @_Factory
    def counter_map(self, name: Data, scale: int = 0) -> CounterMap:
        """The counter map ``name`` counting units of ``10**-scale``: see
        :class:`~mcds.CounterMap`."""
        m = CounterMap(self, name)
        if scale == 0:
            return m
        with m:
            return m.with_scale(scale)

    shadow_counter = _Factory(ShadowCounter, """The shadow counter ``name``: see :class:`~mcds.ShadowCounter`.""")
    view_counter = _Factory(ViewCounter, """The view counter ``name``, loading its total with ``loader``:
        see :class:`~mcds.ViewCounter`.""")
    lock = _Factory(Lock, """The distributed lock ``name`` with a lease of ``ttl`` seconds;
        ``with`` waits up to ``timeout`` (``None``: forever). See
        :class:`~mcds.Lock` for ``fencing``, ``owner_label`` and ``backoff``.""")
    set = _Factory(Set, """The set ``name``: see :class:`~mcds.Set`.""")
    sharded_set = _Factory(
        ShardedSet, """The sharded set ``name`` over ``shards`` items: see :class:`~mcds.ShardedSet`."""
    )
    int_array = _Factory(IntArray, """The integer array ``name``: see :class:`~mcds.IntArray`.""")
    window_counter = _Factory(
        WindowCounter, """The sliding-window counter ``name``: see :class:`~mcds.WindowCounter`."""
    )
    rate_limiter = _Factory(RateLimiter, """The rate limiter ``name``: see :class:`~mcds.RateLimiter`.""")
    event_log = _Factory(EventLog, """The event log ``name``: see :class:`~mcds.EventLog`.""")
    table = _Factory(Table, """The table ``name``: see :class:`~mcds.Table`.""")
    hyperloglog = _Factory(HyperLogLog, """The HyperLogLog ``name``: see :class:`~mcds.HyperLogLog`.""")
    bloom_filter = _Factory(BloomFilter, """The Bloom filter ``name``: see :class:`~mcds.BloomFilter`.""")
    activity_bitmap = _Factory(ActivityBitmap, """The activity bitmap ``name``: see :class:`~mcds.ActivityBitmap`.""")
    time_series = _Factory(TimeSeries, """The time series ``name`` at ``resolutions``, ``(step_ms,
        retention_ms)`` pairs: see :class:`~mcds.TimeSeries`.""")
    packed_series = _Factory(PackedSeries, """The packed series ``name``: see :class:`~mcds.PackedSeries`.""")
    leaderboard = _Factory(Leaderboard, """The leaderboard ``name``: see :class:`~mcds.Leaderboard`.""")
    scalable_bloom_filter = _Factory(
        ScalableBloomFilter, """The scalable Bloom filter ``name``: see :class:`~mcds.ScalableBloomFilter`."""
    )
