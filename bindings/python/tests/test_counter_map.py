"""CounterMap on both stores: signed fields, exact decimals, the bounds, bad
input, and threads counting exactly."""

from __future__ import annotations

import threading
from decimal import Decimal
from typing import List

import pytest
from conftest import unique

import mcds

MAX_AMOUNT = 2**56 - 1


def test_fields_count_signed_and_list_in_order(store: mcds.Store) -> None:
    name = unique("stock")
    m = store.counter_map(name)
    assert m.is_empty() and m.len() == 0 and len(m) == 0
    assert m.get_all() == {} and m.fields() == []
    assert m.incr("apples", 10) == 10
    assert m.incr("pears") == 1
    assert m.incr("apples", -12) == -2
    assert m.incr("a\0b", -5) == -5  # any UTF-8, a NUL included
    assert m.incr(b"caf\xc3\xa9", 2) == 2  # UTF-8 bytes are the str
    assert m.get("café") == 2
    assert m.get("apples") == -2 and m.get("plums") == 0
    assert m.get_all() == {"apples": -2, "pears": 1, "a\0b": -5, "café": 2}
    assert list(m.get_all()) == ["apples", "pears", "a\0b", "café"]  # first-registration order
    assert m.get_all_decimal() == {"apples": Decimal(-2), "pears": Decimal(1), "a\0b": Decimal(-5), "café": Decimal(2)}
    assert m.len() == 4 and not m.is_empty()
    assert m.remove("pears") is True
    assert m.remove("pears") is False
    assert m.fields() == ["apples", "a\0b", "café"]
    assert m.name == name and m.scale == 0
    assert m.registry_key() == f"cmap:{name}:fields".encode()
    key = m.field_key("apples")
    assert key.startswith(f"cmap:{name}:v:".encode()) and len(key) >= len(f"cmap:{name}:v:") + 32
    # Another handle on the same map sees the same counters.
    assert mcds.CounterMap(store, name).get_all() == {"apples": -2, "a\0b": -5, "café": 2}


def test_decimals_are_exact(store: mcds.Store) -> None:
    name = unique("money")
    money = store.counter_map(name, scale=1)
    assert money.scale == 1
    value = Decimal(0)
    for _ in range(1000):
        value = money.incr_decimal("ann", "0.1")
    assert value == Decimal("100.0") and str(value) == "100.0"
    assert money.get_decimal("ann") == Decimal("100.0")
    assert money.get("ann") == 1000  # units of 0.1
    assert store.counter_map(name).get("ann") == 1000  # the same counter at scale 0
    assert money.incr_decimal("ann", Decimal("-0.50")) == Decimal("99.5")  # zeros past the scale
    assert money.incr_decimal("ann", 1) == Decimal("100.5")
    assert money.incr_decimal("ann", Decimal("-1E+0")) == Decimal("99.5")
    assert money.incr_f64("ann", 0.1) == Decimal("99.6")
    assert money.incr_f64("ann", -0.05) == Decimal("99.5")  # half away from zero
    assert money.incr_decimal("bob", "-1.5") == Decimal("-1.5")
    assert str(money.incr_decimal("bob", "+0.5")) == "-1.0"
    assert str(money.get_decimal("carol")) == "0.0"
    assert money.get_all_decimal() == {"ann": Decimal("99.5"), "bob": Decimal("-1.0")}
    assert money.get_all() == {"ann": 995, "bob": -10}
    wide = money.with_scale(18)
    assert money.scale == 1  # unchanged
    tiny = wide.incr_decimal("tiny", "-0.000000000000000001")
    assert tiny == Decimal("-1E-18") and tiny.as_tuple().exponent == -18


def test_bounds_and_bad_input(store: mcds.Store) -> None:
    m = store.counter_map(unique("bounds"))
    money = m.with_scale(1)
    for by in [MAX_AMOUNT + 1, -MAX_AMOUNT - 1, -(2**63)]:
        with pytest.raises(mcds.InvalidArgument):
            m.incr("big", by)
    for by in [2**63, -(2**63) - 1]:
        with pytest.raises(mcds.InvalidArgument):
            m.incr("big", by)  # does not fit an int64_t
    for _ in range(32):
        m.incr("big", MAX_AMOUNT)
    with pytest.raises(mcds.InvalidArgument):
        m.incr("big", MAX_AMOUNT)  # past 2**61 - 1: undone and refused
    assert m.get("big") == 2**61 - 32
    for _ in range(33):
        low = m.incr("small", -MAX_AMOUNT)
    assert low == -(2**61)  # decrements stop at the bottom
    assert m.incr("f" * 1024) == 1
    with pytest.raises(mcds.InvalidArgument):
        m.incr("f" * 1025)
    with pytest.raises(mcds.InvalidArgument):
        m.get("")
    with pytest.raises(mcds.InvalidUtf8):
        m.incr(b"\xff\xfe")
    with pytest.raises(mcds.InvalidUtf8):
        m.incr("\udc80")  # a lone surrogate has no UTF-8
    for bad in ["0.05", "", "-", "1.", ".5", "1e3", " 1", "--1", "99999999999999999999", "1\x005", "7205759403792794"]:
        with pytest.raises(mcds.InvalidArgument):
            money.incr_decimal("ann", bad)
    for bad_decimal in [Decimal("0.05"), Decimal("NaN"), Decimal("-Infinity")]:
        with pytest.raises(mcds.InvalidArgument):
            money.incr_decimal("ann", bad_decimal)
    for bad_float in [float("nan"), float("-inf"), 1e300]:
        with pytest.raises(mcds.InvalidArgument):
            money.incr_f64("ann", bad_float)
    with pytest.raises(TypeError):
        money.incr_decimal("ann", 0.1)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        money.incr_decimal("ann", True)
    with pytest.raises(TypeError):
        money.incr_f64("ann", "0.1")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        m.incr("x", 1.5)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        m.incr(7)  # type: ignore[arg-type]
    with pytest.raises(mcds.InvalidArgument):
        m.with_scale(19)
    with pytest.raises(mcds.InvalidArgument):
        m.with_scale(-1)
    # Nothing refused above created a field or counted.
    assert m.fields() == ["big", "small", "f" * 1024]
    assert money.get_decimal("ann") == Decimal("0.0")


def test_threads_count_exactly(store: mcds.Store) -> None:
    name = unique("threads")
    per_thread = 250
    m = store.counter_map(name, scale=2)
    errors: List[BaseException] = []

    def work(i: int) -> None:
        try:
            mine = store.counter_map(name, scale=2)  # one handle per thread, and one shared
            for _ in range(per_thread):
                mine.incr_decimal("cents", "0.01")
                m.incr("units", 1)
                m.incr(f"t{i}", -1)
            mine.close()
        except BaseException as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert m.get_decimal("cents") == Decimal("10.00")
    assert m.get("units") == 4 * per_thread
    totals = m.get_all()
    assert sorted(totals) == sorted(["cents", "units", "t0", "t1", "t2", "t3"])
    assert all(totals[f"t{i}"] == -per_thread for i in range(4))


def test_closed(store: mcds.Store) -> None:
    m = store.counter_map(unique("closed"))
    m.close()
    with pytest.raises(mcds.Closed):
        m.incr("x")
