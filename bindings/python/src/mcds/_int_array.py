"""``IntArray``: a set of 64-bit integers (``mcds_int_array``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterator, List

from ._ffi import ffi, lib
from ._handle import Data, Handle, check, display, int_arg, name_arg

if TYPE_CHECKING:
    from ._store import Store

I64_MIN = -(2**63)
I64_MAX = 2**63 - 1


def _values_arg(values: Any) -> Any:
    checked = [int_arg(v, "value", I64_MIN, I64_MAX) for v in values]
    return (ffi.new("int64_t[]", checked) if checked else ffi.NULL), len(checked)


def _take_int_list(ptr: Any) -> List[int]:
    """Read an ``mcds_int_list`` at once (``mcds_int_list_data``), then free it."""
    try:
        data = ffi.new("const int64_t **")
        length = ffi.new("uintptr_t *")
        check(lib.mcds_int_list_data(ptr, data, length))
        return [int(v) for v in ffi.unpack(data[0], length[0])] if length[0] else []
    finally:
        lib.mcds_int_list_free(ptr)


class IntArray(Handle):
    """A shared set of signed 64-bit integers, in first-insertion order
    (stored as decimal members of a set: one append per call).

    >>> seen = store.int_array("seen-ids")
    >>> seen.add(42, 7)
    >>> seen.members()
    [42, 7]
    >>> 7 in seen
    True
    """

    def __init__(self, store: "Store", name: Data) -> None:
        self.name = name_arg(name)
        self._create(
            store, lib.mcds_int_array_new, "mcds_int_array", lib.mcds_int_array_free,
            f"IntArray({display(self.name)})", self.name,
        )

    def add(self, *values: int) -> None:
        """Add the values in one append (none: nothing to do; at most
        1 000 000). ``add(*ids)`` adds a list."""
        array, count = _values_arg(values)
        self._call(lib.mcds_int_array_add, array, count)

    def remove(self, *values: int) -> None:
        """Remove the values in one append; absent ones are ignored."""
        array, count = _values_arg(values)
        self._call(lib.mcds_int_array_remove, array, count)

    def contains(self, value: int) -> bool:
        """Whether ``value`` is present (also ``value in a``). One round trip."""
        out = ffi.new("bool *")
        self._call(lib.mcds_int_array_contains, int_arg(value, "value", I64_MIN, I64_MAX), out)
        return bool(out[0])

    def __contains__(self, value: object) -> bool:
        if isinstance(value, bool) or not isinstance(value, int):
            return False
        if not I64_MIN <= value <= I64_MAX:
            return False
        return self.contains(value)

    def members(self) -> List[int]:
        """The values in first-insertion order. :class:`~mcds.Corrupt` if a
        member is not a decimal integer (another program wrote the key)."""
        out = ffi.new("mcds_int_list **")
        self._call(lib.mcds_int_array_members, out)
        return _take_int_list(out[0])

    def clear(self) -> None:
        """Delete the array (every value). One round trip."""
        self._call(lib.mcds_int_array_clear)

    def __iter__(self) -> Iterator[int]:
        return iter(self.members())

    def __len__(self) -> int:
        return len(self.members())
