"""``ShardedSet``: a set spread over several items (``mcds_sharded_set``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterable, Iterator, List

from ._ffi import ffi, lib
from ._handle import Data, DataArray, Handle, data_arg, display, int_arg, name_arg, take_bytes_list

if TYPE_CHECKING:
    from ._store import Store


class ShardedSet(Handle):
    """A shared set spread over ``shards`` items by a stable hash of the
    member: for sets too large for one item (memcached's 1 MiB) or too busy
    for one key. Every client of a name must use the same ``shards``.

    >>> online = store.sharded_set("online", shards=16)
    >>> online.add_many(["alice", "bob"])  # one round trip per server
    >>> "alice" in online                   # reads one shard
    True

    Members are any bytes (``str`` is stored as UTF-8) and come back as
    ``bytes``.
    """

    def __init__(self, store: "Store", name: Data, shards: int) -> None:
        self.name = name_arg(name)
        #: How many items the set is spread over (1 to 4096).
        self.shards = int_arg(shards, "shards", 1, 4096)
        self._create(
            store, lib.mcds_sharded_set_new, "mcds_sharded_set", lib.mcds_sharded_set_free,
            f"ShardedSet({display(self.name)})", self.name, self.shards,
        )

    def add(self, member: Data) -> None:
        """Add ``member``. One round trip."""
        data = data_arg(member)
        self._call(lib.mcds_sharded_set_add, data, len(data))

    def remove(self, member: Data) -> None:
        """Remove ``member``; nothing happens if it is absent. Same as
        :meth:`discard`."""
        data = data_arg(member)
        self._call(lib.mcds_sharded_set_remove, data, len(data))

    discard = remove

    def add_many(self, members: Iterable[Data]) -> None:
        """Add every member: one append per shard touched, all in one
        pipelined batch (one round trip per server; at most 1 000 000
        members). On a pool, shards on different servers are written
        independently: after an error some may be written already. Adding
        is idempotent, so retry the whole call."""
        arrays = DataArray(members)
        self._call(lib.mcds_sharded_set_add_many, arrays.members, arrays.lens, arrays.count)

    update = add_many

    def remove_many(self, members: Iterable[Data]) -> None:
        """Remove every member, as :meth:`add_many` adds them."""
        arrays = DataArray(members)
        self._call(lib.mcds_sharded_set_remove_many, arrays.members, arrays.lens, arrays.count)

    def contains(self, member: Data) -> bool:
        """Whether ``member`` is in the set (also ``member in s``). Reads one shard."""
        data = data_arg(member)
        out = ffi.new("bool *")
        self._call(lib.mcds_sharded_set_contains, data, len(data), out)
        return bool(out[0])

    __contains__ = contains

    def members(self) -> List[bytes]:
        """Every member, shard by shard (each in first-insertion order).
        One round trip per server."""
        out = ffi.new("mcds_bytes_list **")
        self._call(lib.mcds_sharded_set_members, out)
        return take_bytes_list(out[0])

    def compact(self) -> None:
        """Compact every shard whose log holds tokens of removed members
        (by CAS: a concurrent write is never lost)."""
        self._call(lib.mcds_sharded_set_compact)

    def clear(self) -> None:
        """Delete every shard: one pipelined batch (after an error, shards
        on other servers may be deleted already)."""
        self._call(lib.mcds_sharded_set_clear)

    def __iter__(self) -> Iterator[bytes]:
        return iter(self.members())

    def __len__(self) -> int:
        return len(self.members())
