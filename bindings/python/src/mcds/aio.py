"""mcds for :mod:`asyncio`: every structure, awaited.

::

    import mcds.aio

    async def main() -> None:
        store = mcds.aio.Store("127.0.0.1:11211")   # or mcds.aio.Store.memory()
        hits = store.counter("hits")
        print(await hits.incr())
        async with store.lock("nightly-report", ttl=60):
            ...

An object of this module wraps the object of :mod:`mcds` of the same name
(its ``sync`` attribute) and has the same methods and properties; those
that talk to the server are coroutines here (``await counter.incr(1)``),
those that only make or derive an object are not (``store.counter("x")``,
``counter.with_ttl(60)``), and properties are read as they are.

How a call runs: on a worker thread of this module's pool, never on the
event loop's thread, so a call never blocks the loop, even against a
stopped server (the call fails with :class:`~mcds.Timeout` or
:class:`~mcds.IoError` after the store's ``io_timeout``; the loop serves
other tasks meanwhile). The call runs under a cancellation token of
libmcds: cancelling the awaiting task (``task.cancel()``,
``asyncio.wait_for``'s timeout) raises :class:`asyncio.CancelledError` in
the task at once and stops the call's wait for memcached, so the worker
is free again right away rather than after ``io_timeout``. As with any
cancelled request, a write may have reached the server before the
cancellation: treat it as :class:`~mcds.Ambiguous`.

Concurrent calls share the store's connections (libmcds queues the
requests of callers that arrive together on one connection), so a
thousand tasks need neither a thousand connections nor a thousand threads:
at most :func:`max_threads` calls wait at once, the rest queue in order.

A waiting :class:`Lock` acquire does not hold a worker thread: it tries
on a worker and sleeps on the loop between tries. A lock's acquire,
release and extend are not cut short by a cancelled task (see
:class:`Lock`): a lease is never left held by nobody.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import functools
import os
import random
import threading
import time
from types import TracebackType
from typing import Any, Callable, Generic, Iterable, Optional, Tuple, Type, TypeVar, Union, cast

from . import errors
from ._counter import Counter
from ._ffi import ffi, lib
from ._handle import Handle, Seconds, check, seconds_arg
from ._kv import KeyValue
from ._lock import Lock as _SyncLock
from ._store import FACTORIES, Servers
from ._store import Store as _SyncStore

__all__ = ["Store", "Async", "Lock", "incr_many", "max_threads", "set_max_threads"]

_T = TypeVar("_T")

#: Worker threads by default: enough for 64 calls in flight to overlap
#: their round trips, few enough to stay cheap when idle.
_DEFAULT_THREADS = 64

_threads = _DEFAULT_THREADS
_pool: Optional[concurrent.futures.ThreadPoolExecutor] = None
_pool_mutex = threading.Lock()


def _after_fork_in_child() -> None:
    # The parent's worker threads do not exist in the child: start afresh.
    global _pool, _pool_mutex
    _pool = None
    _pool_mutex = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def max_threads() -> int:
    """How many calls may wait for memcached at once (default 64)."""
    return _threads


def set_max_threads(threads: int) -> None:
    """Set :func:`max_threads` (1 to 1024), for calls made from now on.
    More lets more slow calls (a stopped server, a long read) wait at once
    without holding up the others."""
    global _threads, _pool
    if isinstance(threads, bool) or not isinstance(threads, int):
        raise TypeError(f"threads must be an int, not {type(threads).__name__}")
    if not 1 <= threads <= 1024:
        raise errors.InvalidArgument(f"threads must be between 1 and 1024, not {threads}")
    with _pool_mutex:
        _threads = threads
        old, _pool = _pool, None
    if old is not None:
        old.shutdown(wait=False)


def _executor() -> concurrent.futures.ThreadPoolExecutor:
    global _pool
    pool = _pool
    if pool is None:
        with _pool_mutex:
            if _pool is None:
                _pool = concurrent.futures.ThreadPoolExecutor(_threads, thread_name_prefix="mcds-aio")
            pool = _pool
    return pool


def _under(token: Any, fn: Callable[..., _T], args: Tuple[Any, ...], kwargs: Any) -> _T:
    """On a worker thread: ``fn(*args, **kwargs)`` with ``token`` in charge
    of the thread's calls into libmcds."""
    lib.mcds_cancel_set_current(token)
    try:
        return fn(*args, **kwargs)
    finally:
        lib.mcds_cancel_set_current(ffi.NULL)


async def _run(fn: Callable[..., _T], *args: Any, **kwargs: Any) -> _T:
    """Await ``fn(*args, **kwargs)`` run on a worker thread, cancellable."""
    out = ffi.new("mcds_cancel **")
    check(lib.mcds_cancel_new(out))
    # Freed when both this coroutine and the worker are done with it.
    token = ffi.gc(out[0], lib.mcds_cancel_free)
    loop = asyncio.get_running_loop()
    call = functools.partial(_under, token, fn, args, kwargs)
    future = loop.run_in_executor(_executor(), call)
    try:
        return await future
    except asyncio.CancelledError:
        # The task is cancelled (the future with it): stop the worker's wait
        # too, so it is free at once rather than at the I/O timeout.
        lib.mcds_cancel_trigger(token)
        raise


def _run_to_end(fn: Callable[..., _T], *args: Any) -> "asyncio.Future[_T]":
    """Start ``fn(*args)`` on a worker thread, with no token: cancelling
    the awaiting task does not stop it (a lock's acquire, release and
    extend, whose outcome must be known). Returns its future, for
    :func:`_outcome` to await."""
    loop = asyncio.get_running_loop()
    return loop.run_in_executor(_executor(), functools.partial(fn, *args))


async def _outcome(future: "asyncio.Future[_T]") -> _T:
    """Await ``future`` shielded: a cancelled task raises
    :class:`asyncio.CancelledError` at once, and the call goes on."""
    return await asyncio.shield(future)


def _unwrap(value: Any) -> Any:
    """The :mod:`mcds` object behind an :class:`Async` (in a list or tuple
    too, for the calls that take several structures)."""
    if isinstance(value, Async):
        return value.sync
    if isinstance(value, list):
        return [_unwrap(v) for v in value]
    if isinstance(value, tuple):
        return tuple(_unwrap(v) for v in value)
    return value


def _wrap(value: Any) -> Any:
    """A handle made by a local call, as the object of this module."""
    if isinstance(value, _SyncLock):
        return Lock(value)
    if isinstance(value, _SyncStore):
        return Store(value)
    if isinstance(value, (Handle, KeyValue)):
        return Async(value)
    return value


#: The store's factories (as :class:`mcds.Store` registers them): they make
#: a structure's handle without a round trip, so they are plain calls (as
#: are ``close`` and the ``with_*`` methods of every object).
_FACTORIES = frozenset(FACTORIES)


class Async(Generic[_T]):
    """An object of :mod:`mcds` (``sync``), awaited: its methods that talk
    to the server are coroutines, run as the module docs say; the others,
    and its properties, are as they are on ``sync``. ``async with`` closes
    it at the end of the block."""

    __slots__ = ("_sync",)

    #: Methods of ``sync`` that are plain calls here, besides ``close`` and
    #: the ``with_*`` ones.
    _local: "frozenset[str]" = frozenset()

    def __init__(self, sync: _T) -> None:
        self._sync = sync

    @property
    def sync(self) -> _T:
        """The :mod:`mcds` object this one awaits."""
        return self._sync

    def __getattr__(self, name: str) -> Any:
        if name == "_sync":  # not set yet (copy, pickle): no recursion
            raise AttributeError(name)
        attr = getattr(self._sync, name)
        if not callable(attr):
            return _wrap(attr)
        if name == "close" or name.startswith("with_") or name in self._local:

            @functools.wraps(attr)
            def local(*args: Any, **kwargs: Any) -> Any:
                return _wrap(attr(*_unwrap(args), **kwargs))

            return local

        @functools.wraps(attr)
        async def call(*args: Any, **kwargs: Any) -> Any:
            return await _run(attr, *_unwrap(args), **kwargs)

        return call

    def __dir__(self) -> Iterable[str]:
        return sorted(set(dir(type(self))) | set(dir(self._sync)))

    def __repr__(self) -> str:
        return f"<mcds.aio {self._sync!r}>"

    async def __aenter__(self: "_A") -> "_A":
        return self

    async def __aexit__(
        self,
        exc_type: Optional[Type[BaseException]],
        exc: Optional[BaseException],
        tb: Optional[TracebackType],
    ) -> None:
        close = getattr(self._sync, "close", None)
        if close is not None:
            close()


_A = TypeVar("_A", bound=Async[Any])


class Store(Async[_SyncStore]):
    """:class:`mcds.Store`, awaited. ``Store(servers, ...)`` takes what
    :class:`mcds.Store` takes; :meth:`memory`, :meth:`from_url` and
    :meth:`memcached` are its other constructors, and ``Store(store)``
    wraps an :class:`mcds.Store` you already have (sharing its
    connections). Its structure factories (``store.counter("hits")``)
    return objects of this module.

    A store made before ``os.fork()`` works in the child as
    :class:`mcds.Store` does (the child makes its own connections and its
    own worker threads)."""

    __slots__ = ()
    _local = _FACTORIES

    def __init__(self, servers: Union[Servers, _SyncStore], **options: Any) -> None:
        if isinstance(servers, _SyncStore):
            if options:
                raise TypeError("Store(store) takes no options: the store has them")
            super().__init__(servers)
        else:
            super().__init__(_SyncStore(servers, **options))

    @classmethod
    def memcached(cls, servers: Servers, **options: Any) -> "Store":
        """:meth:`mcds.Store.memcached`, awaited."""
        return cls(_SyncStore.memcached(servers, **options))

    @classmethod
    def memory(cls, **options: Any) -> "Store":
        """:meth:`mcds.Store.memory`, awaited."""
        return cls(_SyncStore.memory(**options))

    @classmethod
    def from_url(cls, url: str) -> "Store":
        """:meth:`mcds.Store.from_url`, awaited."""
        return cls(_SyncStore.from_url(url))

    @property
    def kv(self) -> "Async[KeyValue]":
        """:attr:`mcds.Store.kv`, awaited: ``await store.kv.get(key)``."""
        return Async(self._sync.kv)


# A blocking acquire's pauses between tries, in seconds: random under a
# ceiling that starts here and doubles up to the maximum (a lock's own
# backoff, set in libmcds, is for its blocking acquire).
_BACKOFF = (0.001, 0.05)


class Lock(Async[_SyncLock]):
    """:class:`mcds.Lock`, awaited. ``async with store.lock(name):`` waits
    for the lock (up to its ``timeout``) and releases it at the end, as
    ``with`` does on :class:`mcds.Lock`, raising the same exceptions.

    A waiting acquire tries on a worker thread and sleeps on the event
    loop between tries (a random pause under a ceiling that starts at
    1 ms and doubles up to 50 ms), so waiting tasks hold no thread.

    Cancelling a task in :meth:`acquire` raises
    :class:`asyncio.CancelledError` at once, but the try in flight is not
    cut short (its outcome must be known: a lease taken and forgotten
    would keep the lock from everyone until its ``ttl``); if it took the
    lock, the lock is released at once on a worker. :meth:`release` and
    :meth:`extend` likewise finish on their worker when their task is
    cancelled, as does the release at the end of ``async with``."""

    __slots__ = ()

    async def try_acquire(self) -> bool:
        """Take the lock if it is free (one try): see :meth:`acquire`."""
        return await self.acquire(blocking=False)

    async def acquire(self, blocking: bool = True, timeout: Optional[Seconds] = None) -> bool:
        """Take the lock, as :meth:`mcds.Lock.acquire` does: wait up to
        ``timeout`` seconds (default: the lock's ``timeout``; ``None`` and
        ``math.inf`` wait forever), or with ``blocking=False`` try once.
        Returns whether the lock was taken."""
        lock = self._sync
        wait = lock.timeout if timeout is None else seconds_arg(timeout, "timeout")
        deadline = None if wait is None or wait == float("inf") else time.monotonic() + wait
        ceiling = _BACKOFF[0]
        while True:
            if await self._try():
                return True
            now = time.monotonic()
            if not blocking or (deadline is not None and now >= deadline):
                return False
            pause = random.uniform(0, ceiling)
            if deadline is not None:
                pause = min(pause, deadline - now)
            await asyncio.sleep(pause)
            ceiling = min(ceiling * 2, _BACKOFF[1])

    async def _try(self) -> bool:
        """One try on a worker, run to its end; a lease it took after its
        task was cancelled is released at once."""
        lock = self._sync
        future = _run_to_end(lock.try_acquire)
        try:
            return await _outcome(future)
        except asyncio.CancelledError:
            loop = asyncio.get_running_loop()

            def release_if_taken(done: "asyncio.Future[bool]") -> None:
                if not done.cancelled() and done.exception() is None and done.result():
                    loop.run_in_executor(_executor(), lock.release)

            future.add_done_callback(release_if_taken)
            raise

    async def release(self) -> bool:
        """:meth:`mcds.Lock.release`, run to its end on a worker."""
        return await _outcome(_run_to_end(self._sync.release))

    async def extend(self, ttl: Optional[Seconds] = None) -> None:
        """:meth:`mcds.Lock.extend`, run to its end on a worker."""
        await _outcome(_run_to_end(self._sync.extend, ttl))

    async def __aenter__(self) -> "Lock":
        lock = self._sync
        if not await self.acquire():
            raise errors.WaitTimeout(
                f"lock {lock.name!r} stayed taken for {lock.timeout:g} s", errors.WaitTimeout.code
            )
        return self

    async def __aexit__(
        self,
        exc_type: Optional[Type[BaseException]],
        exc: Optional[BaseException],
        tb: Optional[TracebackType],
    ) -> None:
        # Run to its end: a task cancelled inside the block still releases.
        await _outcome(_run_to_end(self._sync.__exit__, exc_type, exc, tb))


async def incr_many(
    increments: Iterable[Tuple[Union[Counter, "Async[Counter]"], int]], *, return_exceptions: bool = False
) -> Any:
    """:meth:`mcds.Counter.incr_many`, awaited: several counters (of this
    module or of :mod:`mcds`) in one pipelined batch."""
    pairs = [(cast(Counter, _unwrap(c)), delta) for c, delta in increments]
    return await _run(Counter.incr_many, pairs, return_exceptions=return_exceptions)
