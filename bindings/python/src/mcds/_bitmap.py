"""``ActivityBitmap``: one bit per time unit (``mcds_bitmap``)."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Optional

from ._ffi import ffi, lib
from ._handle import Data, Handle, Seconds, display, int_arg, name_arg, ttl_arg

if TYPE_CHECKING:
    from ._store import Store


class ActivityBitmap(Handle):
    """One bit per time unit, like Redis's SETBIT, GETBIT and BITCOUNT: bit 0
    is the unit starting at ``start_unix_secs``, each unit ``unit_ms`` long.

    >>> days = store.activity_bitmap("alice:active", start_unix_secs=1767225600, unit_ms=86_400_000)
    >>> days.mark()          # alice is active today
    False
    >>> days.count(0, 364)   # days active in the first year
    1
    """

    def __init__(self, store: "Store", name: Data, start_unix_secs: int, unit_ms: int) -> None:
        self.name = name_arg(name)
        self.start_unix_secs = int_arg(start_unix_secs, "start_unix_secs")
        self.unit_ms = int_arg(unit_ms, "unit_ms")
        self._create(
            store, lib.mcds_bitmap_new, "mcds_bitmap", lib.mcds_bitmap_free, f"ActivityBitmap({display(self.name)})",
            self.name, self.start_unix_secs, self.unit_ms,
        )

    def set(self, index: int) -> bool:
        """SETBIT ``index`` to 1; returns the previous bit."""
        out = ffi.new("bool *")
        self._call(lib.mcds_bitmap_set, int_arg(index, "index"), out)
        return bool(out[0])

    def mark(self, at_unix_ms: Optional[int] = None) -> bool:
        """Set the bit of the unit containing ``at_unix_ms`` (default: now);
        returns the previous bit. :class:`~mcds.InvalidArgument` before the start."""
        at = int(time.time() * 1000) if at_unix_ms is None else int_arg(at_unix_ms, "at_unix_ms")
        out = ffi.new("bool *")
        self._call(lib.mcds_bitmap_mark, at, out)
        return bool(out[0])

    def get(self, index: int) -> bool:
        """GETBIT ``index`` (also ``bitmap[index]``)."""
        out = ffi.new("bool *")
        self._call(lib.mcds_bitmap_get, int_arg(index, "index"), out)
        return bool(out[0])

    __getitem__ = get

    def count(self, first: int, last: int) -> int:
        """BITCOUNT of bits ``first`` to ``last``, both included. One round trip."""
        out = ffi.new("uint64_t *")
        self._call(lib.mcds_bitmap_count, int_arg(first, "first"), int_arg(last, "last"), out)
        return int(out[0])

    def with_ttl(self, ttl: Optional[Seconds]) -> "ActivityBitmap":
        """A new ``ActivityBitmap`` on the same bitmap whose writes give its
        items a TTL of ``ttl`` whole seconds from the write (``0`` or
        ``None``: never expires). This object is unchanged."""
        return self._twin(lib.mcds_bitmap_with_ttl, ttl_arg(ttl))
