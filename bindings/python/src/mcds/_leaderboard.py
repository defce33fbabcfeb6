"""``Leaderboard`` (``mcds_leaderboard``), ``Entry`` (an item of
``mcds_entry_list``) and ``BoardSummary`` (``mcds_board_summary``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Iterable, List, NamedTuple, Optional, Tuple

from ._ffi import ffi, lib
from ._handle import (
    U32_MAX,
    U64_MAX,
    Data,
    DataArray,
    Handle,
    Seconds,
    check,
    copy_bytes,
    data_arg,
    display,
    int_arg,
    name_arg,
    ttl_arg,
)

if TYPE_CHECKING:
    from ._store import Store


@dataclass(frozen=True)
class Entry:
    """A member of a :class:`Leaderboard` and its count (a plain value)."""

    #: The member.
    member: bytes
    #: Its count: exact while the board is exact, an upper bound on the
    #: true count once it is sketched.
    count: int
    #: How much :attr:`count` may overestimate the true count (0 while the
    #: board is exact).
    error: int

    @property
    def lower_bound(self) -> int:
        """The least the member's true count can be: ``count - error``."""
        return self.count - self.error


class BoardSummary(NamedTuple):
    """A whole :class:`Leaderboard` at once (:meth:`Leaderboard.summary`)."""

    #: How many members the board keeps.
    capacity: int
    #: The sum of every increment ever applied.
    total: int
    #: Whether every count is exact (no member was ever replaced).
    exact: bool
    #: The most a count on the board overestimates, and the most a member
    #: off the board can have been counted (0 while exact, else at most
    #: ``total / capacity``).
    max_error: int
    #: How many members are on the board.
    members: int


def _take_entry_list(ptr: Any) -> List[Entry]:
    try:
        n = ffi.new("uintptr_t *")
        check(lib.mcds_entry_list_len(ptr, n))
        data = ffi.new("const uint8_t **")
        length = ffi.new("uintptr_t *")
        count = ffi.new("uint64_t *")
        error = ffi.new("uint64_t *")
        entries = []
        for i in range(n[0]):
            check(lib.mcds_entry_list_get(ptr, i, data, length, count, error))
            entries.append(Entry(copy_bytes(data[0], length[0]), int(count[0]), int(error[0])))
        return entries
    finally:
        lib.mcds_entry_list_free(ptr)


class Leaderboard(Handle):
    """Counts per member, largest first (Redis's ``ZINCRBY`` and
    ``ZREVRANGE … WITHSCORES``): exact while at most ``capacity`` distinct
    members were counted, a Space-Saving sketch of ``capacity`` counters past
    that, where each count overestimates by at most its :attr:`Entry.error`
    (at most ``total / capacity``) and every member counted more than
    ``total / capacity`` times is on the board. Members are at most 128
    bytes. Every client must pass the same capacity.

    >>> scores = store.leaderboard("game:42", capacity=100)
    >>> scores.incr("ann", 10)
    10
    >>> scores.top(1)
    [Entry(member=b'ann', count=10, error=0)]
    """

    def __init__(self, store: "Store", name: Data, capacity: int) -> None:
        self.name = name_arg(name)
        self._capacity = int_arg(capacity, "capacity", 0, U32_MAX)
        self._create(
            store, lib.mcds_leaderboard_new, "mcds_leaderboard", lib.mcds_leaderboard_free,
            f"Leaderboard({display(self.name)})", self.name, self._capacity,
        )

    @property
    def capacity(self) -> int:
        """How many members the board keeps exactly, and counters once sketched."""
        out = ffi.new("uint32_t *")
        self._call(lib.mcds_leaderboard_capacity, out)
        return int(out[0])

    @property
    def key(self) -> bytes:
        """The memcached key the board lives under (the store's prefix included)."""
        return self._call_bytes(lib.mcds_leaderboard_key)

    def incr(self, member: Data, by: int = 1) -> int:
        """Add ``by`` (at least 1) to ``member``'s count; returns its new count
        (an upper bound once the board is sketched). Two round trips."""
        data = data_arg(member)
        out = ffi.new("uint64_t *")
        self._call(lib.mcds_leaderboard_incr, data, len(data), int_arg(by, "by"), out)
        return int(out[0])

    def incr_many(self, increments: Iterable[Tuple[Data, int]]) -> None:
        """Apply ``(member, by)`` increments in order, in one update (two
        round trips). A bad increment (``by`` of 0, a member over 128 bytes)
        raises and nothing is counted."""
        pairs = list(increments)
        arrays = DataArray([member for member, _ in pairs])
        bys = [int_arg(by, "by") for _, by in pairs]
        by_array = ffi.new("uint64_t[]", bys) if bys else ffi.NULL
        self._call(lib.mcds_leaderboard_incr_many, arrays.members, arrays.lens, by_array, arrays.count)

    def summary(self) -> BoardSummary:
        """The whole board's capacity, total, exactness, largest error and
        size. One round trip."""
        out: Any = ffi.new("mcds_board_summary *")
        self._call(lib.mcds_leaderboard_summary, out)
        return BoardSummary(
            int(out.capacity), int(out.total), bool(out.exact), int(out.max_error), int(out.members)
        )

    def top(self, k: int) -> List[Entry]:
        """The ``k`` members with the largest counts, largest first (ties by
        member bytes). One round trip."""
        out = ffi.new("mcds_entry_list **")
        self._call(lib.mcds_leaderboard_top, int_arg(k, "k", 0, U64_MAX), out)
        return _take_entry_list(out[0])

    def score(self, member: Data) -> Optional[Entry]:
        """``member``'s entry, or ``None`` if it is not on the board (its true
        count is then at most ``summary().max_error``). One round trip."""
        data = data_arg(member)
        found = ffi.new("bool *")
        count = ffi.new("uint64_t *")
        error = ffi.new("uint64_t *")
        self._call(lib.mcds_leaderboard_score, data, len(data), found, count, error)
        if not found[0]:
            return None
        member_bytes = data if isinstance(data, bytes) else copy_bytes(data, len(data))
        return Entry(member_bytes, int(count[0]), int(error[0]))

    def clear(self) -> None:
        """Delete the board: it is empty again."""
        self._call(lib.mcds_leaderboard_clear)

    def with_ttl(self, ttl: Optional[Seconds]) -> "Leaderboard":
        """A new ``Leaderboard`` on the same board whose increments give its
        item a TTL of ``ttl`` whole seconds from the write (``0`` or ``None``:
        never expires). This object is unchanged."""
        return self._twin(lib.mcds_leaderboard_with_ttl, ttl_arg(ttl))
