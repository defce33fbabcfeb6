"""``Table``: members with values, O(1) membership (``mcds_table``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterator, List, Optional, Tuple, TypeVar, Union, overload

from ._ffi import ffi, lib
from ._handle import Data, Handle, data_arg, display, name_arg, take_bytes_list

if TYPE_CHECKING:
    from ._store import Store

_T = TypeVar("_T")


class Table(Handle):
    """A shared table of members and their values, used like a dict.

    >>> users = store.table("users")
    >>> users["alice"] = "admin"
    >>> users["alice"]
    b'admin'
    >>> "bob" in users
    False

    Members and values are any bytes (``str`` is stored as UTF-8) and come
    back as ``bytes``. Each member has its own key, so membership is one
    round trip; :meth:`keys` lists members in insertion order.
    """

    def __init__(self, store: "Store", name: Data) -> None:
        self.name = name_arg(name)
        self._create(store, lib.mcds_table_new, "mcds_table", lib.mcds_table_free, f"Table({display(self.name)})", self.name)

    def set(self, member: Data, value: Data) -> None:
        """Set ``member``'s value, adding the member if new. Two round trips."""
        m = data_arg(member)
        v = data_arg(value, "value")
        self._call(lib.mcds_table_set, m, len(m), v, len(v))

    @overload
    def get(self, member: Data) -> Optional[bytes]: ...
    @overload
    def get(self, member: Data, default: _T) -> Union[bytes, _T]: ...

    def get(self, member: Data, default: object = None) -> object:
        """``member``'s value, or ``default`` if it is absent. One round trip."""
        m = data_arg(member)
        out = ffi.new("mcds_bytes_list **")
        self._call(lib.mcds_table_get, m, len(m), out)
        if out[0] == ffi.NULL:
            return default
        return take_bytes_list(out[0])[0]

    def has(self, member: Data) -> bool:
        """Whether ``member`` is present (also ``member in table``). One round trip."""
        m = data_arg(member)
        out = ffi.new("bool *")
        self._call(lib.mcds_table_has, m, len(m), out)
        return bool(out[0])

    __contains__ = has

    def delete(self, member: Data) -> bool:
        """Remove ``member``; returns whether it was present."""
        m = data_arg(member)
        out = ffi.new("bool *")
        self._call(lib.mcds_table_delete, m, len(m), out)
        return bool(out[0])

    def keys(self) -> List[bytes]:
        """Every member, in insertion order."""
        out = ffi.new("mcds_bytes_list **")
        self._call(lib.mcds_table_keys, out)
        return take_bytes_list(out[0])

    def entries(self) -> List[Tuple[bytes, bytes]]:
        """Every member with its value, as ``(member, value)`` pairs in
        insertion order (also :meth:`items`); a member whose value item is
        gone (evicted, expired) is left out. One round trip for the
        members, one per server for the values."""
        members = ffi.new("mcds_bytes_list **")
        values = ffi.new("mcds_bytes_list **")
        self._call(lib.mcds_table_entries, members, values)
        try:
            m = take_bytes_list(members[0])
        finally:
            v = take_bytes_list(values[0])
        return list(zip(m, v))

    items = entries

    def __getitem__(self, member: Data) -> bytes:
        value = self.get(member)
        if value is None:
            raise KeyError(member)
        return value

    def __setitem__(self, member: Data, value: Data) -> None:
        self.set(member, value)

    def __delitem__(self, member: Data) -> None:
        if not self.delete(member):
            raise KeyError(member)

    def __iter__(self) -> Iterator[bytes]:
        return iter(self.keys())

    def __len__(self) -> int:
        return len(self.keys())
