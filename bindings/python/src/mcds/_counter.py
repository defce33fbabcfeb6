"""``Counter``: an exact shared counter (``mcds_counter``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterable, List, Optional, Tuple, Union

from . import errors
from ._ffi import ffi, lib
from ._handle import Data, Handle, Seconds, _bytes, display, int_arg, name_arg, ttl_arg

if TYPE_CHECKING:
    from ._store import Store

# The out-parameter's type, looked up once (a string is parsed or looked
# up on every ``ffi.new`` call).
_U64_OUT = ffi.typeof("uint64_t *")


class Counter(Handle):
    """An exact shared counter: memcached's ``incr``/``decr``, atomic across
    every client, threads and processes alike.

    >>> hits = store.counter("hits")
    >>> hits.incr()
    1
    >>> hits.get()
    1

    Values are unsigned 64-bit integers; ``decr`` stops at 0.
    """

    def __init__(self, store: "Store", name: Data) -> None:
        self.name = name_arg(name)
        self._create(store, lib.mcds_counter_new, "mcds_counter", lib.mcds_counter_free, f"Counter({display(self.name)})", self.name)

    def incr(self, delta: int = 1) -> int:
        """Add ``delta`` (0 to 2**64-1) and return the new value. One round trip."""
        out = ffi.new(_U64_OUT)
        self._call(lib.mcds_counter_incr, int_arg(delta, "delta"), out)
        return int(out[0])

    def decr(self, delta: int = 1) -> int:
        """Subtract ``delta``, stopping at 0, and return the new value."""
        out = ffi.new(_U64_OUT)
        self._call(lib.mcds_counter_decr, int_arg(delta, "delta"), out)
        return int(out[0])

    def get(self) -> int:
        """The current value (0 if the counter does not exist yet)."""
        out = ffi.new(_U64_OUT)
        self._call(lib.mcds_counter_get, out)
        return int(out[0])

    @classmethod
    def with_key(cls, store: "Store", key: Data) -> "Counter":
        """The counter kept under exactly ``key`` (no ``counter:`` naming,
        and no prefix, even from a :meth:`Store.with_prefix` store): for a
        counter another application already uses, such as pymemcache or
        pylibmc code calling ``client.incr("hits", 1)``. memcached's
        counters are decimal text whoever writes them, so increments from
        both sides add up. On a pool, both must place the key on the same
        server (one server, or ``ketama`` in :meth:`Store.from_url` with
        pylibmc's ``ketama_weighted``).

        ``key`` is a memcached key (bytes or str): 1 to 250 bytes, no
        spaces or control bytes, else :class:`~mcds.InvalidKey`."""
        raw = _bytes(key, "key")
        counter = cls.__new__(cls)
        counter.name = raw
        counter._create(
            store, lib.mcds_counter_new_with_key, "mcds_counter", lib.mcds_counter_free,
            f"Counter(key={display(raw)})", raw, len(raw),
        )
        return counter

    def reset(self) -> None:
        """Set the counter to 0 (deleting its item: the next ``incr``
        starts from 0). One round trip."""
        self._call(lib.mcds_counter_reset)

    def with_ttl(self, ttl: Optional[Seconds]) -> "Counter":
        """A new ``Counter`` on the same item whose writes give it a TTL of
        ``ttl`` whole seconds from the write (``0`` or ``None``: never
        expires; over 30 days works too, mcds converts it for memcached).
        This object is unchanged. memcached's clock ticks in whole seconds,
        so an item lives between ``ttl - 1`` and ``ttl + 1`` seconds."""
        return self._twin(lib.mcds_counter_with_ttl, ttl_arg(ttl))

    @staticmethod
    def incr_many(
        increments: Iterable[Tuple["Counter", int]], *, return_exceptions: bool = False
    ) -> List[Union[int, errors.Error]]:
        """Add to several counters in one pipelined batch: one round trip
        per server, however many. ``increments`` are ``(counter, delta)``
        pairs (a counter may appear more than once; its increments apply in
        order); the counters must all come from one store (or stores made
        from it by :meth:`Store.with_prefix`). Returns the new values, in
        order.

        The increments are independent: one failing does not undo the
        others. If any failed, this raises the first failure's exception
        after the whole batch was sent, unless ``return_exceptions`` is
        true: then the list holds the exception in that slot (as
        :func:`asyncio.gather` does)."""
        pairs = list(increments)
        for pair in pairs:
            if not isinstance(pair, tuple) or len(pair) != 2 or not isinstance(pair[0], Counter):
                raise TypeError(f"incr_many takes (Counter, delta) pairs, not {pair!r}")
        deltas = [int_arg(delta, "delta") for _, delta in pairs]
        owners = []
        try:
            ptrs = []
            for counter, _ in pairs:
                ptrs.append(counter._owner.enter())
                owners.append(counter._owner)
            n = len(ptrs)
            if n == 0:
                return []
            values = ffi.new("uint64_t[]", n)
            results = ffi.new("mcds_result[]", n)
            code = lib.mcds_counter_incr_many(ffi.new("mcds_counter *[]", ptrs), ffi.new("uint64_t[]", deltas), n, values, results)
            first = errors.from_code(code) if code else None
        finally:
            for owner in owners:
                owner.exit()
        codes = [int(results[i]) for i in range(n)]
        if first is not None and not any(codes):
            raise first  # refused before anything was sent: no slot written
        out: List[Union[int, errors.Error]] = []
        for i, c in enumerate(codes):
            if c == 0:
                out.append(int(values[i]))
            elif first is not None and c == first.code and first not in out:
                out.append(first)  # the first failure: it carries the message
            else:
                out.append(errors.class_of(c)(f"increment {i} of the batch failed: {errors.result_name(c)}", c))
        if first is not None and not return_exceptions:
            raise first
        return out

    def __int__(self) -> int:
        return self.get()

