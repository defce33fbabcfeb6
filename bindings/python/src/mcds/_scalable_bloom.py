"""``ScalableBloomFilter`` (``mcds_scalable_bloom``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterable, List

from ._ffi import ffi, lib
from ._handle import U32_MAX, Data, DataArray, Handle, copy_bytes, data_arg, display, int_arg, name_arg

if TYPE_CHECKING:
    from ._store import Store


class ScalableBloomFilter(Handle):
    """A Bloom filter that grows by layers (RedisBloom's scalable filter): a
    first layer for ``initial_capacity`` elements, then layers ``growth``
    times larger (2 unless :meth:`with_growth`), for a compound false-positive
    rate below ``error_rate`` however many elements it takes. Every client
    must pass the same numbers.

    >>> seen = store.scalable_bloom_filter("seen", initial_capacity=1000)
    >>> seen.add("user7")
    True
    >>> "user7" in seen
    True
    """

    def __init__(self, store: "Store", name: Data, initial_capacity: int, error_rate: float = 0.01) -> None:
        self.name = name_arg(name)
        self.initial_capacity = int_arg(initial_capacity, "initial_capacity")
        self.error_rate = float(error_rate)
        self._create(
            store, lib.mcds_scalable_bloom_new, "mcds_scalable_bloom", lib.mcds_scalable_bloom_free,
            f"ScalableBloomFilter({display(self.name)})", self.name, self.initial_capacity, self.error_rate,
        )

    def with_growth(self, growth: int) -> "ScalableBloomFilter":
        """A new ``ScalableBloomFilter`` on the same filter whose layers each
        hold ``growth`` (1 to 16) times the previous one's capacity
        (RedisBloom's ``EXPANSION``). This object is unchanged."""
        return self._twin(lib.mcds_scalable_bloom_with_growth, int_arg(growth, "growth", 0, U32_MAX))

    @property
    def header_key(self) -> bytes:
        """The memcached key of the header item (the layer count; the
        store's prefix included)."""
        return self._call_bytes(lib.mcds_scalable_bloom_header_key)

    def add(self, element: Data) -> bool:
        """Add ``element``; returns whether it was new (in no layer yet)."""
        data = data_arg(element, "element")
        out = ffi.new("bool *")
        self._call(lib.mcds_scalable_bloom_add, data, len(data), out)
        return bool(out[0])

    def contains(self, element: Data) -> bool:
        """Whether ``element`` may have been added (no false negatives). One round trip."""
        data = data_arg(element, "element")
        out = ffi.new("bool *")
        self._call(lib.mcds_scalable_bloom_contains, data, len(data), out)
        return bool(out[0])

    __contains__ = contains

    def contains_many(self, elements: Iterable[Data]) -> List[bool]:
        """For each element, whether it may have been added, in order, from
        one batch of reads."""
        arrays = DataArray(elements, "element")
        out = ffi.new("bool[]", max(arrays.count, 1))
        self._call(lib.mcds_scalable_bloom_contains_many, arrays.members, arrays.lens, arrays.count, out)
        return [bool(out[i]) for i in range(arrays.count)]

    def layers(self) -> int:
        """How many layers the filter has (1 until it first grows). One round trip."""
        out = ffi.new("uintptr_t *")
        self._call(lib.mcds_scalable_bloom_layers, out)
        return int(out[0])

    def clear(self) -> None:
        """Empty the filter (delete its header and every layer's items)."""
        self._call(lib.mcds_scalable_bloom_clear)
