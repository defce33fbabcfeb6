"""``WindowCounter``: a sliding-window counter (``mcds_window``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._ffi import ffi, lib
from ._handle import U32_MAX, Data, Handle, display, int_arg, name_arg

if TYPE_CHECKING:
    from ._store import Store


class WindowCounter(Handle):
    """Counts events in a sliding window: ``slots`` slots of ``slot_secs``
    seconds each; :meth:`get` sums the last ``slots - 1`` complete slots.

    >>> errors_5m = store.window_counter("errors", slot_secs=60, slots=6)
    >>> errors_5m.incr()
    1
    >>> errors_5m.get()  # events in the 5 complete minutes before this one
    0
    """

    def __init__(self, store: "Store", name: Data, slot_secs: int, slots: int) -> None:
        self.name = name_arg(name)
        self.slot_secs = int_arg(slot_secs, "slot_secs", 0, U32_MAX)
        self.slots = int_arg(slots, "slots", 0, U32_MAX)
        self._create(
            store, lib.mcds_window_new, "mcds_window", lib.mcds_window_free,
            f"WindowCounter({display(self.name)})", self.name, self.slot_secs, self.slots,
        )

    def incr(self, delta: int = 1) -> int:
        """Count ``delta`` events now; returns the current slot's count."""
        out = ffi.new("uint64_t *")
        self._call(lib.mcds_window_incr, int_arg(delta, "delta"), out)
        return int(out[0])

    def get(self) -> int:
        """The events of the last ``slots - 1`` complete slots."""
        out = ffi.new("uint64_t *")
        self._call(lib.mcds_window_value, out)
        return int(out[0])

    value = get
