"""``CounterMap``: named signed counters, Redis' HINCRBY and HINCRBYFLOAT
without float drift (``mcds_counter_map``)."""

from __future__ import annotations

import decimal
from typing import TYPE_CHECKING, Any, Dict, List, Union

from . import errors
from ._ffi import ffi, lib
from ._handle import U32_MAX, Data, Handle, _bytes, data_arg, display, int_arg, name_arg, take_bytes_list
from ._int_array import I64_MAX, I64_MIN, _take_int_list

if TYPE_CHECKING:
    from ._store import Store

#: An exact amount for :meth:`CounterMap.incr_decimal`: a
#: :class:`decimal.Decimal`, an ``int``, or text such as ``"-1.25"``.
Amount = Union[decimal.Decimal, int, str]


def _amount_arg(amount: Amount) -> bytes:
    """An exact amount as the NUL-terminated text libmcds parses
    (``[+-]digits[.digits]``); libmcds refuses more places than the scale."""
    if isinstance(amount, bool):
        raise TypeError("amount must be a Decimal, int or str, not bool")
    if isinstance(amount, int):
        text = str(amount)
    elif isinstance(amount, decimal.Decimal):
        if not amount.is_finite():
            raise errors.InvalidArgument(f"amount must be a finite decimal, not {amount}")
        text = format(amount, "f")  # never an exponent: Decimal("1E+2") is "100"
    elif isinstance(amount, str):
        text = amount
    else:
        raise TypeError(
            f"amount must be a Decimal, int or str, not {type(amount).__name__} (incr_f64 takes a float)"
        )
    raw = _bytes(text, "amount")
    if b"\0" in raw:
        raise errors.InvalidArgument(f"amount {amount!r} contains a NUL byte; write it as [+-]digits[.digits]")
    return raw


def _take_decimal(ptr: Any) -> decimal.Decimal:
    """A decimal libmcds handed over as text, exactly; the text is freed."""
    try:
        raw = ffi.string(ptr)
        assert isinstance(raw, bytes)  # a char * gives bytes
        return decimal.Decimal(raw.decode("ascii"))
    finally:
        lib.mcds_string_free(ptr)


def _take_raw(ptr: Any) -> bytes:
    """A string libmcds handed over (a name, a key), as bytes; it is freed."""
    try:
        raw = ffi.string(ptr)
        assert isinstance(raw, bytes)
        return raw
    finally:
        lib.mcds_string_free(ptr)


def _fields(raw: List[bytes]) -> List[str]:
    # libmcds lists only UTF-8 field names.
    return [f.decode("utf-8") for f in raw]


class CounterMap(Handle):
    """Named fields, each an atomic signed counter, listed and read all at
    once: Redis' ``HINCRBY``, ``HINCRBYFLOAT`` (without float drift),
    ``HGET``, ``HGETALL``, ``HKEYS``, ``HDEL`` and ``HLEN``.

    >>> stock = store.counter_map("stock")
    >>> stock.incr("apples", 10)
    10
    >>> stock.incr("apples", -12)
    -2
    >>> stock.get_all()
    {'apples': -2}
    >>> balance = store.counter_map("balance", scale=2)
    >>> balance.incr_decimal("ann", Decimal("0.10"))
    Decimal('0.10')

    Fields are ``str`` (1 to 1024 bytes of UTF-8; bytes that are UTF-8 work
    too) and come back as ``str``. A field holds -2**61 to 2**61 - 1 units
    (decrements stop at the bottom; an increment past the top is refused
    with :class:`~mcds.InvalidArgument`), and one call adds at most
    2**56 - 1 units either way. With a scale (:meth:`with_scale`) a unit is
    ``10**-scale``: the ``*_decimal`` methods take and give
    :class:`decimal.Decimal` exactly (more places than the scale is
    :class:`~mcds.InvalidArgument`, never rounded), so 0.1 added ten times
    is exactly ``Decimal("1.0")``. Every client of a map must use the same
    scale.
    """

    def __init__(self, store: "Store", name: Data) -> None:
        raw = name_arg(name)
        self._create(
            store, lib.mcds_counter_map_new, "mcds_counter_map", lib.mcds_counter_map_free,
            f"CounterMap({display(raw)})", raw,
        )

    def with_scale(self, places: int) -> "CounterMap":
        """A new ``CounterMap`` on the same map counting units of
        ``10**-places`` (0 to 18). This object is unchanged."""
        return self._twin(lib.mcds_counter_map_with_scale, int_arg(places, "places", 0, U32_MAX))

    @property
    def name(self) -> str:
        """The map's name."""
        out = ffi.new("char **")
        self._call(lib.mcds_counter_map_name, out)
        return _take_raw(out[0]).decode("utf-8")

    @property
    def scale(self) -> int:
        """Its decimal places (0 to 18)."""
        out = ffi.new("uint32_t *")
        self._call(lib.mcds_counter_map_scale, out)
        return int(out[0])

    def registry_key(self) -> bytes:
        """The memcached key of the field registry (with the store's prefix)."""
        out = ffi.new("char **")
        self._call(lib.mcds_counter_map_registry_key, out)
        return _take_raw(out[0])

    def field_key(self, field: Data) -> bytes:
        """The memcached key of ``field``'s counter. No round trip."""
        f = data_arg(field, "field")
        out = ffi.new("char **")
        self._call(lib.mcds_counter_map_field_key, f, len(f), out)
        return _take_raw(out[0])

    def incr(self, field: Data, by: int = 1) -> int:
        """Add ``by`` units (negative to subtract) to ``field``, creating it
        at ``by`` if it does not exist; returns the new value. One round
        trip, two on the field's first touch; atomic across every client."""
        f = data_arg(field, "field")
        out = ffi.new("int64_t *")
        self._call(lib.mcds_counter_map_incr, f, len(f), int_arg(by, "by", I64_MIN, I64_MAX), out)
        return int(out[0])

    def incr_decimal(self, field: Data, amount: Amount) -> decimal.Decimal:
        """Add the exact ``amount`` (a ``Decimal``, an ``int`` or text such
        as ``"0.1"``) at the map's scale; returns the new value with exactly
        ``scale`` places. More places than the scale (unless zeros) is
        :class:`~mcds.InvalidArgument`: nothing is rounded."""
        f = data_arg(field, "field")
        a = _amount_arg(amount)
        out = ffi.new("char **")
        self._call(lib.mcds_counter_map_incr_decimal, f, len(f), a, out)
        return _take_decimal(out[0])

    def incr_f64(self, field: Data, amount: float) -> decimal.Decimal:
        """Add the float ``amount``, taken as its shortest decimal form
        (``0.1``, not 0.1000000000000000055...) rounded half away from zero
        to the map's scale; returns the new value. NaN and infinities are
        :class:`~mcds.InvalidArgument`."""
        if isinstance(amount, bool) or not isinstance(amount, (int, float)):
            raise TypeError(f"amount must be a float, not {type(amount).__name__}")
        try:
            value = float(amount)
        except OverflowError:
            raise errors.InvalidArgument(f"amount {amount} does not fit a float") from None
        f = data_arg(field, "field")
        out = ffi.new("char **")
        self._call(lib.mcds_counter_map_incr_f64, f, len(f), value, out)
        return _take_decimal(out[0])

    def get(self, field: Data) -> int:
        """``field``'s value in units, 0 if it does not exist. One round trip."""
        f = data_arg(field, "field")
        out = ffi.new("int64_t *")
        self._call(lib.mcds_counter_map_get, f, len(f), out)
        return int(out[0])

    def get_decimal(self, field: Data) -> decimal.Decimal:
        """:meth:`get` as a ``Decimal`` with exactly ``scale`` places."""
        f = data_arg(field, "field")
        out = ffi.new("char **")
        self._call(lib.mcds_counter_map_get_decimal, f, len(f), out)
        return _take_decimal(out[0])

    def get_all(self) -> Dict[str, int]:
        """Every field with its value in units, in first-registration order.
        Two round trips (one for an empty map), not a snapshot; a listed
        field whose counter is missing (removed meanwhile, evicted) is left
        out."""
        fields = ffi.new("mcds_bytes_list **")
        values = ffi.new("mcds_int_list **")
        self._call(lib.mcds_counter_map_get_all, fields, values)
        try:
            names = _fields(take_bytes_list(fields[0]))
        finally:
            numbers = _take_int_list(values[0])
        return dict(zip(names, numbers))

    def get_all_decimal(self) -> Dict[str, decimal.Decimal]:
        """:meth:`get_all` with ``Decimal`` values at the map's scale."""
        fields = ffi.new("mcds_bytes_list **")
        values = ffi.new("mcds_bytes_list **")
        self._call(lib.mcds_counter_map_get_all_decimal, fields, values)
        try:
            names = _fields(take_bytes_list(fields[0]))
        finally:
            texts = take_bytes_list(values[0])
        return {n: decimal.Decimal(t.decode("ascii")) for n, t in zip(names, texts)}

    def fields(self) -> List[str]:
        """The registered fields, in first-registration order. One round trip."""
        out = ffi.new("mcds_bytes_list **")
        self._call(lib.mcds_counter_map_fields, out)
        return _fields(take_bytes_list(out[0]))

    def len(self) -> int:
        """How many fields are registered (also ``len(m)``). One round trip."""
        out = ffi.new("uintptr_t *")
        self._call(lib.mcds_counter_map_len, out)
        return int(out[0])

    def is_empty(self) -> bool:
        """Whether no field is registered. One round trip."""
        out = ffi.new("bool *")
        self._call(lib.mcds_counter_map_is_empty, out)
        return bool(out[0])

    def remove(self, field: Data) -> bool:
        """Unregister ``field``, then delete its counter; returns whether
        its counter existed. Two round trips."""
        f = data_arg(field, "field")
        out = ffi.new("bool *")
        self._call(lib.mcds_counter_map_remove, f, len(f), out)
        return bool(out[0])

    def __len__(self) -> int:
        return self.len()

