"""``Set``: a set of byte strings (``mcds_set``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterable, Iterator, List, Optional

from ._ffi import ffi, lib
from ._handle import Data, DataArray, Handle, Seconds, data_arg, display, name_arg, take_bytes_list, ttl_arg

if TYPE_CHECKING:
    from ._store import Store


class Set(Handle):
    """A shared set of byte strings, kept in insertion order.

    Members are any bytes (``str`` is stored as UTF-8) and come back as
    ``bytes``. ``member in s``, ``len(s)`` and iteration work as on a
    built-in set; each is a round trip to the store.
    """

    def __init__(self, store: "Store", name: Data) -> None:
        self.name = name_arg(name)
        self._create(store, lib.mcds_set_new, "mcds_set", lib.mcds_set_free, f"Set({display(self.name)})", self.name)

    def add(self, member: Data) -> None:
        """Add ``member``. One round trip."""
        data = data_arg(member)
        self._call(lib.mcds_set_add, data, len(data))

    def remove(self, member: Data) -> None:
        """Remove ``member``; nothing happens if it is absent (unlike
        :meth:`set.remove`, no ``KeyError``: the check would cost a round
        trip and race with other clients). Same as :meth:`discard`."""
        data = data_arg(member)
        self._call(lib.mcds_set_remove, data, len(data))

    discard = remove

    def add_many(self, members: Iterable[Data]) -> None:
        """Add every member in one append: one round trip, whatever the
        count (at most 1 000 000). Also :meth:`update`."""
        arrays = DataArray(members)
        self._call(lib.mcds_set_add_many, arrays.members, arrays.lens, arrays.count)

    update = add_many

    def remove_many(self, members: Iterable[Data]) -> None:
        """Remove every member in one append; a missing set stays missing."""
        arrays = DataArray(members)
        self._call(lib.mcds_set_remove_many, arrays.members, arrays.lens, arrays.count)

    def compact(self) -> bool:
        """Rewrite the set's log without the tokens of removed members, by
        CAS: ``True`` if it was rewritten, ``False`` if there was nothing to
        do or a concurrent write won (nothing is lost either way).
        :meth:`members` also compacts when much of the log is dead."""
        out = ffi.new("bool *")
        self._call(lib.mcds_set_compact, out)
        return bool(out[0])

    def clear(self) -> None:
        """Delete the set (every member). One round trip."""
        self._call(lib.mcds_set_clear)

    def contains(self, member: Data) -> bool:
        """Whether ``member`` is in the set (also ``member in s``)."""
        data = data_arg(member)
        out = ffi.new("bool *")
        self._call(lib.mcds_set_contains, data, len(data), out)
        return bool(out[0])

    __contains__ = contains

    def members(self) -> List[bytes]:
        """Every member, in insertion order."""
        out = ffi.new("mcds_bytes_list **")
        self._call(lib.mcds_set_members, out)
        return take_bytes_list(out[0])

    def with_ttl(self, ttl: Optional[Seconds]) -> "Set":
        """A new ``Set`` on the same set whose writes give its items a
        TTL of ``ttl`` whole seconds from the write (``0`` or ``None``: never
        expires). This object is unchanged."""
        return self._twin(lib.mcds_set_with_ttl, ttl_arg(ttl))

    def __iter__(self) -> Iterator[bytes]:
        return iter(self.members())

    def __len__(self) -> int:
        return len(self.members())
