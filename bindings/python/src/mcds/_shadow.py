"""``ShadowCounter``: events of the previous period (``mcds_shadow_counter``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._ffi import ffi, lib
from ._handle import U32_MAX, Data, Handle, display, int_arg, name_arg

if TYPE_CHECKING:
    from ._store import Store


class ShadowCounter(Handle):
    """Counts events per period of ``period_secs`` seconds and shows the
    count of the previous, complete period: a figure that stays still for
    a whole period ("requests in the last full minute").

    >>> rpm = store.shadow_counter("requests", period_secs=60)
    >>> rpm.incr()   # counted into the current minute
    1
    >>> rpm.value()  # the whole previous minute
    0

    Two keys take turns: one is counted into while the other is shown.
    Periods are aligned to Unix time, so every client of a name must use
    the same ``period_secs``.
    """

    def __init__(self, store: "Store", name: Data, period_secs: int) -> None:
        self.name = name_arg(name)
        #: The period, in seconds.
        self.period_secs = int_arg(period_secs, "period_secs", 1, U32_MAX)
        self._create(
            store, lib.mcds_shadow_counter_new, "mcds_shadow_counter", lib.mcds_shadow_counter_free,
            f"ShadowCounter({display(self.name)})", self.name, self.period_secs,
        )

    def incr(self, delta: int = 1) -> int:
        """Count ``delta`` events in the current period; returns its count
        so far. One round trip, atomic."""
        out = ffi.new("uint64_t *")
        self._call(lib.mcds_shadow_counter_incr, int_arg(delta, "delta"), out)
        return int(out[0])

    def value(self) -> int:
        """The events of the previous (complete) period: the same for a
        whole period. One round trip."""
        out = ffi.new("uint64_t *")
        self._call(lib.mcds_shadow_counter_value, out)
        return int(out[0])

    get = value
