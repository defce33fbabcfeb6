"""Plain key/value on the store (``store.kv``), as pymemcache users have
it: get, set, add, delete, incr (with an initial value and a TTL), through
the store's prefix, refusing bad keys before anything is sent."""

from __future__ import annotations

import pytest
from conftest import unique

import mcds


def test_get_set_add_delete(store: mcds.Store) -> None:
    kv = store.kv
    key = unique("kv")
    assert kv.get(key) is None
    assert kv.get(key, b"default") == b"default"
    kv.set(key, "v1")
    assert kv.get(key) == b"v1"
    assert kv.add(key, b"v2") is False, "add of a present key stores nothing"
    assert kv.get(key) == b"v1"
    kv.set(key, bytearray(b"v3"), ttl=60)
    assert kv.get(key) == b"v3"
    assert kv.delete(key) is True
    assert kv.delete(key) is False
    assert kv.add(key, memoryview(b"v4")) is True
    assert kv.get(key) == b"v4"
    kv.set(key, b"")
    assert kv.get(key) == b"", "an empty value is a value"
    assert isinstance(kv, mcds.KeyValue) and "KeyValue" in repr(kv)


def test_incr_creates_nothing_unless_given_an_initial_value(store: mcds.Store) -> None:
    kv = store.kv
    key = unique("n")
    assert kv.incr(key) is None, "memcached's incr creates nothing"
    assert kv.get(key) is None
    assert kv.incr(key, 5, initial=10, ttl=60) == 10, "created with initial, not initial + delta"
    assert kv.incr(key, 5) == 15
    assert kv.incr(key, 5, initial=10) == 20, "initial only applies to an absent counter"
    assert kv.get(key) == b"20"
    kv.set(key, "not a number")
    with pytest.raises(mcds.NonNumeric):
        kv.incr(key)
    with pytest.raises(mcds.InvalidArgument):
        kv.incr(key, -1)
    with pytest.raises(TypeError):
        kv.incr(key, True)


def test_keys_go_through_the_prefix_and_bad_ones_are_refused(store: mcds.Store) -> None:
    key = unique("p")
    app = store.with_prefix("app/").kv
    kv = store.kv
    app.set(key, b"x")
    assert kv.get("app/" + key) == b"x"
    assert kv.get(key) is None
    for bad in ["", "a b", "line\nbreak", "x" * 251, "x" * 247]:
        with pytest.raises(mcds.InvalidKey):
            app.set(bad, b"v")
        with pytest.raises(mcds.InvalidKey):
            app.get(bad)
    assert app.incr("ok-" + key, initial=1) == 1
    with pytest.raises(TypeError):
        kv.set(key, 5)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="takes an mcds.Store"):
        mcds.KeyValue(None)  # type: ignore[arg-type]
