"""``Counter``: an exact shared counter (``mcds_counter``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._ffi import ffi, lib
from ._handle import Data, Handle, display, int_arg, name_arg

if TYPE_CHECKING:
    from ._store import Store


class Counter(Handle):
    """An exact shared counter: memcached's ``incr``/``decr``, atomic across
    every client, threads and processes alike.

    >>> hits = store.counter("hits")
    >>> hits.incr()
    1
    >>> hits.get()
    1

    Values are unsigned 64-bit integers; ``decr`` stops at 0.
    """

    def __init__(self, store: "Store", name: Data) -> None:
        self.name = name_arg(name)
        self._create(store, lib.mcds_counter_new, "mcds_counter", lib.mcds_counter_free, f"Counter({display(self.name)})", self.name)

    def incr(self, delta: int = 1) -> int:
        """Add ``delta`` (0 to 2**64-1) and return the new value. One round trip."""
        out = ffi.new("uint64_t *")
        self._call(lib.mcds_counter_incr, int_arg(delta, "delta"), out)
        return int(out[0])

    def decr(self, delta: int = 1) -> int:
        """Subtract ``delta``, stopping at 0, and return the new value."""
        out = ffi.new("uint64_t *")
        self._call(lib.mcds_counter_decr, int_arg(delta, "delta"), out)
        return int(out[0])

    def get(self) -> int:
        """The current value (0 if the counter does not exist yet)."""
        out = ffi.new("uint64_t *")
        self._call(lib.mcds_counter_get, out)
        return int(out[0])

    def __int__(self) -> int:
        return self.get()
