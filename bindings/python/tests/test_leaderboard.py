"""Leaderboard and ScalableBloomFilter, on both stores."""

from __future__ import annotations

from typing import Any, List

import pytest
from conftest import unique

import mcds
from mcds import _leaderboard, _scalable_bloom


def test_leaderboard_is_exact_below_its_capacity(store: mcds.Store) -> None:
    name = unique("board")
    board = store.leaderboard(name, capacity=3)
    assert board.capacity == 3
    assert board.key == f"topk:{name}:board".encode()
    assert board.summary() == mcds.BoardSummary(capacity=3, total=0, exact=True, max_error=0, members=0)
    assert board.score("ann") is None
    assert board.incr("ann", 5) == 5
    assert board.incr(b"bob", 3) == 3
    assert board.incr("cy") == 1
    assert board.incr("ann", 2) == 7
    assert board.top(10) == [
        mcds.Entry(b"ann", 7, 0),
        mcds.Entry(b"bob", 3, 0),
        mcds.Entry(b"cy", 1, 0),
    ]
    assert board.top(0) == []
    assert board.score("bob") == mcds.Entry(b"bob", 3, 0)
    assert board.summary() == mcds.BoardSummary(3, 11, True, 0, 3)


def test_leaderboard_reports_its_error_past_its_capacity(store: mcds.Store) -> None:
    board = store.leaderboard(unique("board"), capacity=3)
    board.incr_many([("ann", 7), ("bob", 3), ("cy", 1)])
    # Full: dan replaces cy (the smallest, 1) and starts at 1 + 2, error 1.
    assert board.incr("dan", 2) == 3
    dan = board.score("dan")
    assert dan == mcds.Entry(b"dan", 3, 1) and dan is not None and dan.lower_bound == 2
    assert board.score("cy") is None
    summary = board.summary()
    assert summary == mcds.BoardSummary(capacity=3, total=13, exact=False, max_error=3, members=3)
    assert summary.max_error <= summary.total // summary.capacity
    # bob and dan tie at 3: by member bytes.
    assert board.top(2) == [mcds.Entry(b"ann", 7, 0), mcds.Entry(b"bob", 3, 0)]
    assert board.top(2**64 - 1)[2] == mcds.Entry(b"dan", 3, 1)
    board.clear()
    assert board.summary().total == 0 and board.top(5) == []


def test_leaderboard_refuses_bad_input_and_counts_nothing(store: mcds.Store) -> None:
    board = store.leaderboard(unique("board"), capacity=4)
    board.incr("ann", 2)
    with pytest.raises(mcds.InvalidArgument, match="at least 1"):
        board.incr("ann", 0)
    with pytest.raises(mcds.InvalidArgument, match="128 bytes"):
        board.incr(b"m" * 129)
    with pytest.raises(mcds.InvalidArgument, match="128 bytes"):
        board.incr_many([("bob", 1), (b"m" * 129, 1)])
    with pytest.raises(mcds.InvalidArgument):
        board.incr_many([("bob", 1), ("cy", 0)])
    with pytest.raises(mcds.InvalidArgument, match="2\\^64"):
        board.incr("bob", 2**64 - 1)
    with pytest.raises(mcds.InvalidArgument):
        board.incr("bob", -1)
    with pytest.raises(mcds.InvalidArgument):
        board.top(-1)
    with pytest.raises(TypeError):
        board.incr("bob", True)
    assert board.summary().total == 2, "nothing was counted"
    assert board.incr(b"m" * 128, 3) == 3
    assert board.incr(bytearray(b"x")) == 1
    assert board.score(memoryview(b"x")) == mcds.Entry(b"x", 1, 0)
    board.incr_many([])
    for capacity in (0, 2**32 - 1):
        with pytest.raises(mcds.InvalidArgument, match="capacity"):
            store.leaderboard(unique("board"), capacity=capacity)
    with pytest.raises(mcds.InvalidArgument):
        store.leaderboard(unique("board"), capacity=2**32)


def test_leaderboard_of_another_capacity_is_refused(store: mcds.Store) -> None:
    name = unique("board")
    store.leaderboard(name, capacity=3).incr("ann")
    other = store.leaderboard(name, capacity=5)
    with pytest.raises(mcds.Corrupt, match="capacity 3"):
        other.summary()


def test_leaderboard_with_ttl_is_the_same_board(store: mcds.Store) -> None:
    board = store.leaderboard(unique("board"), capacity=3)
    board.incr("ann")
    timed = board.with_ttl(3600)
    assert timed.incr("ann") == 2 and timed.capacity == 3
    assert board.score("ann") == mcds.Entry(b"ann", 2, 0)
    timed.close()
    assert board.top(1) == [mcds.Entry(b"ann", 2, 0)]


def test_scalable_bloom_filter_grows_and_forgets_nothing(store: mcds.Store) -> None:
    name = unique("sbloom")
    sb = store.scalable_bloom_filter(name, initial_capacity=100, error_rate=0.01)
    assert sb.header_key == f"sbloom:{name}:meta".encode()
    assert sb.layers() == 1
    added = [f"e{i}" for i in range(1000)]
    others = [f"o{i}" for i in range(1000)]
    new = sum(sb.add(e) for e in added)
    assert new > 980, "a few false positives at most"
    assert 4 <= sb.layers() <= 6, "100, 200, 400, 800"
    assert sb.add("e7") is False
    assert all(sb.contains_many(added)), "no false negatives"
    assert "e999" in sb and sb.contains(b"e0")
    false_positives = sum(sb.contains_many(others))
    assert false_positives < 30, "rate 0.01: about 10"
    assert sb.contains_many([]) == []
    sb.clear()
    assert sb.layers() == 1 and "e7" not in sb


def test_scalable_bloom_filter_growth(store: mcds.Store) -> None:
    sb = store.scalable_bloom_filter(unique("sbloom"), initial_capacity=100)
    for growth in (0, 17, 2**32 - 1):
        with pytest.raises(mcds.InvalidArgument, match="1 to 16"):
            sb.with_growth(growth)
    wide = sb.with_growth(4)
    for i in range(1000):
        wide.add(f"e{i}")
    assert 2 <= wide.layers() <= 3, "100, 400, 1600"
    assert all(wide.contains_many([f"e{i}" for i in range(1000)]))
    # The filter was made with growth 4: growth 2 is refused, not misread.
    with pytest.raises(mcds.Corrupt, match="other parameters"):
        sb.contains("e1")


def test_scalable_bloom_filter_refuses_bad_numbers(store: mcds.Store) -> None:
    with pytest.raises(mcds.InvalidArgument):
        store.scalable_bloom_filter(unique("sbloom"), initial_capacity=0)
    with pytest.raises(mcds.InvalidArgument):
        store.scalable_bloom_filter(unique("sbloom"), initial_capacity=100, error_rate=1.5)
    with pytest.raises(mcds.InvalidArgument):
        store.scalable_bloom_filter(unique("sbloom"), initial_capacity=-1)
    with pytest.raises(TypeError):
        store.scalable_bloom_filter(unique("sbloom"), initial_capacity=100).contains_many("abc")


class _CloseDuringCall:
    """``lib`` with one function that closes ``victim`` while its call is in
    flight: what another thread's ``close()`` does at that moment (the free
    waits for the call to release the handle)."""

    def __init__(self, real: Any, fn: str, victim: List[Any]) -> None:
        self.real, self.fn, self.victim = real, fn, victim

    def __getattr__(self, name: str) -> Any:
        f = getattr(self.real, name)
        if name != self.fn:
            return f

        def call(*args: Any) -> Any:
            code = f(*args)
            self.victim[0].close()
            return code

        return call


@pytest.mark.parametrize("kind", ["leaderboard", "scalable_bloom"])
def test_a_key_is_copied_before_a_concurrent_close_frees_the_handle(
    store: mcds.Store, kind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The key points into the C handle: it is copied while the handle is
    held (it was once read after a close() on another thread freed it)."""
    victim: List[Any] = [None]
    long_name = unique("k") + "-" + "x" * 100
    if kind == "leaderboard":
        board = store.leaderboard(long_name, 3)
        expected = board.key
        victim[0] = board
        monkeypatch.setattr(_leaderboard, "lib", _CloseDuringCall(_leaderboard.lib, "mcds_leaderboard_key", victim))
        got = board.key
    else:
        bloom = store.scalable_bloom_filter(long_name, 100)
        expected = bloom.header_key
        victim[0] = bloom
        monkeypatch.setattr(
            _scalable_bloom, "lib", _CloseDuringCall(_scalable_bloom.lib, "mcds_scalable_bloom_header_key", victim)
        )
        got = bloom.header_key
    assert victim[0].closed
    assert got == expected, f"read after free: {got!r}"
