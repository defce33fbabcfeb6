"""``HyperLogLog``: distinct counting in 12 KiB (``mcds_hll``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterable, Optional

from ._ffi import ffi, lib
from ._handle import Data, DataArray, Handle, Seconds, check, data_arg, display, name_arg, ttl_arg

if TYPE_CHECKING:
    from ._store import Store


class HyperLogLog(Handle):
    """Counts distinct elements approximately (about 0.8 % standard error)
    in 12 KiB, like Redis's PFADD, PFCOUNT and PFMERGE.

    >>> visitors = store.hyperloglog("visitors:2026-01-01")
    >>> visitors.add("alice")
    True
    >>> visitors.count()
    1
    """

    def __init__(self, store: "Store", name: Data) -> None:
        self.name = name_arg(name)
        self._create(store, lib.mcds_hll_new, "mcds_hll", lib.mcds_hll_free, f"HyperLogLog({display(self.name)})", self.name)

    def add(self, element: Data) -> bool:
        """PFADD ``element``: whether the estimate may have changed."""
        data = data_arg(element, "element")
        out = ffi.new("bool *")
        self._call(lib.mcds_hll_add, data, len(data), out)
        return bool(out[0])

    def add_many(self, elements: Iterable[Data]) -> bool:
        """PFADD of several elements at once (one read and one CAS write
        for the whole batch): whether the estimate may have changed."""
        arrays = DataArray(elements, "element")
        out = ffi.new("bool *")
        self._call(lib.mcds_hll_add_many, arrays.members, arrays.lens, arrays.count, out)
        return bool(out[0])

    def clear(self) -> None:
        """Forget every element (delete the sketch)."""
        self._call(lib.mcds_hll_clear)

    def with_ttl(self, ttl: Optional[Seconds]) -> "HyperLogLog":
        """A new ``HyperLogLog`` on the same sketch whose writes give it a
        TTL of ``ttl`` whole seconds from the write (``0`` or ``None``:
        never expires). This object is unchanged."""
        return self._twin(lib.mcds_hll_with_ttl, ttl_arg(ttl))

    def count(self) -> int:
        """PFCOUNT: the estimated number of distinct elements. One round trip."""
        out = ffi.new("uint64_t *")
        self._call(lib.mcds_hll_count, out)
        return int(out[0])

    def count_union(self, *others: "HyperLogLog") -> int:
        """PFCOUNT of several keys: the estimated number of distinct
        elements in the union of this sketch and ``others``, writing
        nothing. One round trip per server. All must come from one store
        (or stores made from it by :meth:`Store.with_prefix`): else
        :class:`~mcds.InvalidArgument`."""
        for s in others:
            if not isinstance(s, HyperLogLog):
                raise TypeError(f"count_union takes HyperLogLog objects, not {type(s).__name__}")
        owners = [self._owner]
        ptrs = [self._owner.enter()]
        try:
            for s in others:
                ptrs.append(s._owner.enter())
                owners.append(s._owner)
            out = ffi.new("uint64_t *")
            check(lib.mcds_hll_count_union(ffi.new("mcds_hll *[]", ptrs), len(ptrs), out))
            return int(out[0])
        finally:
            for owner in owners:
                owner.exit()

    def merge(self, *sources: "HyperLogLog") -> None:
        """PFMERGE: make this sketch the union of itself and ``sources``."""
        for s in sources:
            if not isinstance(s, HyperLogLog):
                raise TypeError(f"merge takes HyperLogLog objects, not {type(s).__name__}")
        owners = []
        try:
            ptrs = []
            for s in sources:
                ptrs.append(s._owner.enter())
                owners.append(s._owner)
            array = ffi.new("mcds_hll *[]", ptrs) if ptrs else ffi.NULL
            self._call(lib.mcds_hll_merge, array, len(ptrs))
        finally:
            for owner in owners:
                owner.exit()
