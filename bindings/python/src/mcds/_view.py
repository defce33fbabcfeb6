"""``ViewCounter``: a cached count whose true total lives elsewhere
(``mcds_view_counter``), with a Python loader called back from C."""

from __future__ import annotations

import operator
from typing import TYPE_CHECKING, Any, Callable, Optional, SupportsIndex

from . import errors
from ._callback import call_with_callback, escaped
from ._ffi import ffi, lib
from ._handle import U32_MAX, U64_MAX, Data, Handle, display, int_arg, name_arg

if TYPE_CHECKING:
    from ._store import Store

#: A loader: no arguments, returns the stored total (an ``int`` >= 0, or
#: ``None`` for 0, as a SQL query on a missing row gives).
Loader = Callable[[], Optional[SupportsIndex]]


class _Call:
    """One view()/get() call's loader and what it raised, if anything."""

    __slots__ = ("loader", "error")

    def __init__(self, loader: Loader) -> None:
        self.loader = loader
        self.error: Optional[BaseException] = None


def _loaded(value: Any) -> int:
    if value is None:
        return 0
    if isinstance(value, bool) or not hasattr(value, "__index__"):
        raise TypeError(
            f"a ViewCounter loader must return an int >= 0 (or None for 0), not {type(value).__name__}: "
            "convert it with int() if it is a whole number"
        )
    total: int = operator.index(value)
    if not 0 <= total <= U64_MAX:
        raise errors.InvalidArgument(f"a ViewCounter loader returned {total}, outside 0 to 2**64-1")
    return total


def _load_into(ctx: Any, out_value: Any) -> int:
    # Called by libmcds, on the thread of the view()/get() call, with the
    # GIL taken again by cffi. It must return normally: every exception is
    # kept for the caller and reported to C as MCDS_CALLBACK_FAILED.
    call = ffi.from_handle(ctx)
    try:
        out_value[0] = _loaded(call.loader())
        return 0
    except BaseException as e:  # noqa: BLE001 - re-raised by _run, KeyboardInterrupt included
        call.error = e
        failed: int = lib.MCDS_CALLBACK_FAILED
        return failed


#: The C function pointer libmcds calls: made once, for the life of the
#: module (a cffi callback must outlive every call that may use it).
_trampoline = ffi.callback("mcds_loader", _load_into, error=lib.MCDS_CALLBACK_FAILED, onerror=escaped)


class ViewCounter(Handle):
    """A view counter: a count whose true total lives elsewhere (a
    database column), cached in memcached for real-time display.

    >>> def stored_views():
    ...     return db.execute("SELECT views FROM pages WHERE id = 7").fetchone()[0]
    >>> views = store.view_counter("page:7", stored_views, ttl=3600)
    >>> views.view()  # one round trip on a hit
    1042

    ``loader`` is called with no arguments on a cache miss, in this
    process and on the calling thread, while :meth:`view` or :meth:`get`
    runs (at most once per call, never on a hit). It returns the stored
    total: an ``int`` >= 0, or ``None`` for 0. If it raises, its exception
    reaches the caller of :meth:`view` or :meth:`get` as it was raised, and
    nothing is counted or cached. ``ttl``: seconds the cached total lasts
    before it is loaded again; 0 (the default), as in memcached, never
    expires. Persisting the views to the database stays the caller's job.
    """

    def __init__(self, store: "Store", name: Data, loader: Loader, ttl: int = 0) -> None:
        if not callable(loader):
            raise TypeError(f"loader must be callable, not {type(loader).__name__}")
        self.name = name_arg(name)
        #: Called on a miss for the stored total.
        self.loader = loader
        #: Seconds the cached total lasts (0: no expiry).
        self.ttl = int_arg(ttl, "ttl", 0, U32_MAX)
        self._create(
            store, lib.mcds_view_counter_new, "mcds_view_counter", lib.mcds_view_counter_free,
            f"ViewCounter({display(self.name)})", self.name, self.ttl,
        )

    def _run(self, fn: Callable[..., int], *args: Any) -> int:
        call = _Call(self.loader)
        out = ffi.new("uint64_t *")
        call_with_callback(self._call, call, fn, *args, _trampoline, ffi.new_handle(call), out)
        return int(out[0])

    def view(self, delta: int = 1) -> int:
        """Count ``delta`` views; returns the new total. One round trip on a
        hit. On a miss the cache is seeded with the loader's total plus
        ``delta`` by an atomic increment-or-create, never a plain set, so
        two first views at once are both counted (two round trips)."""
        return self._run(lib.mcds_view_counter_view, int_arg(delta, "delta"))

    def get(self) -> int:
        """The current total: the cached one (one round trip), or on a miss
        the loader's, which then seeds the cache if no other client did
        first."""
        return self._run(lib.mcds_view_counter_get)

    def invalidate(self) -> None:
        """Drop the cached total: the next :meth:`view` or :meth:`get` calls
        the loader (after the database was updated, say)."""
        self._call(lib.mcds_view_counter_invalidate)

    def __int__(self) -> int:
        return self.get()
