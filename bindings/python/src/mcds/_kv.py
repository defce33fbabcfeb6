"""Plain key/value on a store: :class:`KeyValue`, ``store.kv``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional, TypeVar, Union, overload

from ._ffi import ffi, lib
from ._handle import Data, Seconds, data_arg, int_arg, take_bytes_list, ttl_arg

if TYPE_CHECKING:
    from ._store import Store

_T = TypeVar("_T")


class KeyValue:
    """memcached's own commands on single keys of a store, as pymemcache
    and php-memcached have them: ``get``, ``set``, ``add``, ``delete`` and
    ``incr``. Get one from :attr:`Store.kv <mcds.Store.kv>`; it uses the
    store's connections and lives as long as you keep it (closing the
    store closes it).

    Each key is raw (not a structure name), with the store's prefix in
    front, and is refused as every key is (:class:`~mcds.InvalidKey`:
    empty, a space or a control byte, over 250 bytes with the prefix)
    before anything is sent. Values are ``bytes`` (``str`` is written as
    UTF-8).
    """

    __slots__ = ("_store",)

    def __init__(self, store: Store) -> None:
        from ._store import Store

        if not isinstance(store, Store):
            raise TypeError(f"KeyValue takes an mcds.Store, not {type(store).__name__}")
        self._store = store

    def __repr__(self) -> str:
        return f"<mcds.KeyValue of {self._store!r}>"

    @overload
    def get(self, key: Data) -> Optional[bytes]: ...
    @overload
    def get(self, key: Data, default: _T) -> Union[bytes, _T]: ...

    def get(self, key: Data, default: object = None) -> object:
        """``key``'s value, or ``default`` if it is absent. One round trip.

        >>> store.kv.set("greeting", "hello", ttl=60)
        >>> store.kv.get("greeting")
        b'hello'
        """
        k = data_arg(key, "key")
        out = ffi.new("mcds_bytes_list **")
        self._store._call(lib.mcds_store_get, k, len(k), out)
        if out[0] == ffi.NULL:
            return default
        return take_bytes_list(out[0])[0]

    def set(self, key: Data, value: Data, ttl: Optional[Seconds] = None) -> None:
        """Store ``value`` under ``key``, for ``ttl`` whole seconds (``None``
        or 0: no expiry). One round trip; an exception means it was not
        stored, or :class:`~mcds.Ambiguous` that it may have been."""
        k, v = data_arg(key, "key"), data_arg(value, "value")
        self._store._call(lib.mcds_store_set, k, len(k), v, len(v), ttl_arg(ttl))

    def add(self, key: Data, value: Data, ttl: Optional[Seconds] = None) -> bool:
        """Store ``value`` under ``key`` only if ``key`` is absent: whether
        it was stored. One round trip."""
        k, v = data_arg(key, "key"), data_arg(value, "value")
        out = ffi.new("bool *")
        self._store._call(lib.mcds_store_add, k, len(k), v, len(v), ttl_arg(ttl), out)
        return bool(out[0])

    def delete(self, key: Data) -> bool:
        """Delete ``key``: whether it existed. One round trip."""
        k = data_arg(key, "key")
        out = ffi.new("bool *")
        self._store._call(lib.mcds_store_delete, k, len(k), out)
        return bool(out[0])

    def incr(
        self, key: Data, delta: int = 1, *, initial: Optional[int] = None, ttl: Optional[Seconds] = None
    ) -> Optional[int]:
        """Add ``delta`` to the counter under ``key``: its new value, or
        ``None`` if ``key`` is absent (memcached's ``incr`` creates nothing;
        ``ttl`` is then unused). With ``initial``, an absent counter is
        created atomically with the value ``initial`` (not ``initial +
        delta``, as php-memcached's ``increment``) and ``ttl``: the result is
        always an int. :class:`~mcds.NonNumeric` if the value is not a
        decimal number. One round trip."""
        k = data_arg(key, "key")
        d = int_arg(delta, "delta")
        value = ffi.new("uint64_t *")
        if initial is not None:
            self._store._call(
                lib.mcds_store_incr_or_init, k, len(k), d, int_arg(initial, "initial"), ttl_arg(ttl), value
            )
            return int(value[0])
        found = ffi.new("bool *")
        self._store._call(lib.mcds_store_incr, k, len(k), d, value, found)
        return int(value[0]) if found[0] else None
