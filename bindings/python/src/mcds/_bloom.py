"""``BloomFilter`` (``mcds_bloom``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterable, List, Optional

from ._ffi import ffi, lib
from ._handle import Data, DataArray, Handle, Seconds, data_arg, display, int_arg, name_arg, ttl_arg

if TYPE_CHECKING:
    from ._store import Store


class BloomFilter(Handle):
    """A Bloom filter: ``element in bf`` is never wrong when it says no, and
    wrong with probability ``false_positive_rate`` when it says yes (up to
    ``expected_items`` elements). Every client must pass the same two numbers.

    >>> seen = store.bloom_filter("seen-urls", expected_items=1_000_000)
    >>> seen.add("https://example.org/")
    True
    >>> "https://example.org/" in seen
    True
    """

    def __init__(self, store: "Store", name: Data, expected_items: int, false_positive_rate: float = 0.01) -> None:
        self.name = name_arg(name)
        self.expected_items = int_arg(expected_items, "expected_items")
        self.false_positive_rate = float(false_positive_rate)
        self._create(
            store, lib.mcds_bloom_new, "mcds_bloom", lib.mcds_bloom_free, f"BloomFilter({display(self.name)})",
            self.name, self.expected_items, self.false_positive_rate,
        )

    def add(self, element: Data) -> bool:
        """Add ``element``; returns whether it was new (some bit was clear)."""
        data = data_arg(element, "element")
        out = ffi.new("bool *")
        self._call(lib.mcds_bloom_add, data, len(data), out)
        return bool(out[0])

    def contains(self, element: Data) -> bool:
        """Whether ``element`` may have been added (no false negatives). One round trip."""
        data = data_arg(element, "element")
        out = ffi.new("bool *")
        self._call(lib.mcds_bloom_contains, data, len(data), out)
        return bool(out[0])

    __contains__ = contains

    def add_many(self, elements: Iterable[Data]) -> int:
        """Add every element in one batch; returns how many were new (an
        element repeated in the batch counts once)."""
        arrays = DataArray(elements, "element")
        out = ffi.new("uintptr_t *")
        self._call(lib.mcds_bloom_add_many, arrays.members, arrays.lens, arrays.count, out)
        return int(out[0])

    def contains_many(self, elements: Iterable[Data]) -> List[bool]:
        """For each element, whether it may have been added, in order, from
        one batch of reads."""
        arrays = DataArray(elements, "element")
        out = ffi.new("bool[]", max(arrays.count, 1))
        self._call(lib.mcds_bloom_contains_many, arrays.members, arrays.lens, arrays.count, out)
        return [bool(out[i]) for i in range(arrays.count)]

    def clear(self) -> None:
        """Empty the filter (delete its items)."""
        self._call(lib.mcds_bloom_clear)

    def with_ttl(self, ttl: Optional[Seconds]) -> "BloomFilter":
        """A new ``BloomFilter`` on the same filter whose writes give its
        items a TTL of ``ttl`` whole seconds from the write (``0`` or
        ``None``: never expires). This object is unchanged."""
        return self._twin(lib.mcds_bloom_with_ttl, ttl_arg(ttl))
