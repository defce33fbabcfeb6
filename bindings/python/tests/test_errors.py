"""The exception hierarchy, and the mapping of result codes and messages."""

from __future__ import annotations

import pickle
import re
import threading

import pytest
from conftest import REPO, Memcached, unique

import mcds
from mcds import errors
from mcds._ffi import lib


def header_codes() -> dict:
    text = (REPO / "include" / "mcds.h").read_text()
    return {name: int(value) for name, value in re.findall(r"^#define (MCDS_\w+) (\d+)$", text, re.M)}


def test_every_result_code_has_its_own_class() -> None:
    codes = header_codes()
    assert codes["MCDS_OK"] == 0 and len(codes) > 15
    seen = set()
    for name, code in codes.items():
        if code == 0:
            continue
        cls = errors.class_of(code)
        assert cls.code == code, f"{name} has no class of its own"
        assert issubclass(cls, mcds.Error)
        assert cls not in seen
        seen.add(cls)
        assert mcds.result_name(code) == name
        assert getattr(mcds, cls.__name__) is cls, f"mcds.{cls.__name__} is not exported"
        assert cls.__doc__ and name in cls.__doc__
    assert errors.class_of(12345) is mcds.Other
    assert mcds.result_name(12345) == "MCDS_UNKNOWN"


def test_the_hierarchy_follows_the_standard_library() -> None:
    for cls in [mcds.InvalidKey, mcds.InvalidArgument, mcds.ValueTooLarge, mcds.InvalidUtf8, mcds.Closed]:
        assert issubclass(cls, ValueError)
    for cls in [mcds.IoError, mcds.ServerDown]:
        assert issubclass(cls, ConnectionError) and issubclass(cls, mcds.BackendError)
    for cls in [mcds.Timeout, mcds.WaitTimeout]:
        assert issubclass(cls, TimeoutError)
    assert issubclass(mcds.BackendError, OSError)
    for cls in [mcds.Ambiguous, mcds.OutOfMemory, mcds.ServerError, mcds.ProtocolError]:
        assert issubclass(cls, mcds.BackendError)
    assert not issubclass(mcds.WaitTimeout, mcds.BackendError)


def test_bad_key_is_invalid_key_with_the_message(store: mcds.Store) -> None:
    with pytest.raises(mcds.InvalidKey) as e:
        store.counter("bad key")
    err = e.value
    assert err.code == lib.MCDS_INVALID_KEY and err.code_name == "MCDS_INVALID_KEY"
    assert "space" in err.message and "bad key" in err.message
    assert str(err) == f"{err.message} (MCDS_INVALID_KEY)"
    with pytest.raises(mcds.InvalidKey):
        store.set("x" * 300)
    with pytest.raises(mcds.InvalidKey, match="NUL"):
        store.table("a\0b")


def test_names_must_be_utf8(store: mcds.Store) -> None:
    with pytest.raises(mcds.InvalidUtf8) as e:
        store.counter(b"\xff")
    assert e.value.code == lib.MCDS_INVALID_UTF8 and e.value.message
    with pytest.raises(mcds.InvalidUtf8):
        store.counter("\udc80")  # a lone surrogate cannot be encoded


def test_wrong_types_are_type_errors(store: mcds.Store) -> None:
    with pytest.raises(TypeError):
        store.counter(42)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        store.set(unique("s")).add(3.14)  # type: ignore[arg-type]


def test_a_dead_server_is_a_connection_error(new_memcached) -> None:  # type: ignore[no-untyped-def]
    server: Memcached = new_memcached()
    store = mcds.Store.memcached(server.addr)
    counter = store.counter(unique("c"))
    assert counter.incr() == 1
    server.stop()
    for _ in range(3):  # the first failure, then the server marked down
        with pytest.raises(mcds.BackendError) as e:
            counter.incr()
        assert isinstance(e.value, ConnectionError), type(e.value)
        assert e.value.code in (lib.MCDS_IO, lib.MCDS_SERVER_DOWN)
        assert server.addr in e.value.message or "down" in e.value.message, e.value.message


def test_a_server_never_up_is_io_error() -> None:
    from conftest import _free_port

    store = mcds.Store.memcached(f"127.0.0.1:{_free_port()}")  # nothing listens there
    with pytest.raises(mcds.IoError) as e:
        store.counter(unique("c")).incr()
    assert "cannot reach" in e.value.message


def test_each_thread_reads_its_own_message(store: mcds.Store) -> None:
    # mcds_last_error_message is per thread: with many threads failing at
    # once, each exception must carry the message of its own call.
    failures = []

    def fail(i: int) -> None:
        for _ in range(200):
            try:
                store.counter(f"bad key {i}")
            except mcds.InvalidKey as e:
                if f"bad key {i}" not in e.message:
                    failures.append(e.message)

    threads = [threading.Thread(target=fail, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failures == []


def test_errors_pickle_with_their_code() -> None:
    for err in [mcds.InvalidKey("bad", lib.MCDS_INVALID_KEY), mcds.IoError("down", lib.MCDS_IO), mcds.Other("new", 777)]:
        back = pickle.loads(pickle.dumps(err))
        assert type(back) is type(err) and back.code == err.code and back.message == err.message
        assert str(back) == str(err)
    assert str(mcds.LockLost("lost")) == "lost"
