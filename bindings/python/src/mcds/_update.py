"""``Store.update``: a CAS read-modify-write of one key
(``mcds_store_update``), with a Python function called back from C."""

from __future__ import annotations

from typing import Any, Callable, Optional

from ._callback import call_with_callback, escaped
from ._ffi import ffi, lib

#: An updater: given the current value (``None`` when the key is missing),
#: returns the new value (``bytes``), or ``None`` to leave the item as it is.
Updater = Callable[[Optional[bytes]], Optional[bytes]]


class _Call:
    """One update() call's function and what it raised, if anything."""

    __slots__ = ("fn", "error", "calls")

    def __init__(self, fn: Updater) -> None:
        self.fn = fn
        self.error: Optional[BaseException] = None
        self.calls = 0


def _update_into(ctx: Any, current: Any, current_len: int, exists: bool, out: Any) -> int:
    # Called by libmcds, on the thread of the update() call, once per
    # attempt. It must return normally: every exception is kept for the
    # caller and reported to C as MCDS_CALLBACK_FAILED (nothing written).
    call = ffi.from_handle(ctx)
    try:
        call.calls += 1
        value = call.fn(bytes(ffi.buffer(current, current_len)) if exists else None)
        if value is None:
            return 0
        if isinstance(value, str) or not isinstance(value, (bytes, bytearray, memoryview)):
            raise TypeError(
                f"an updater must return bytes (or None to leave the item), not {type(value).__name__}: "
                "encode text with .encode()"
            )
        raw = bytes(value)
        code: int = lib.mcds_update_set(out, raw, len(raw))
        return code
    except BaseException as e:  # noqa: BLE001 - re-raised by update(), KeyboardInterrupt included
        call.error = e
        failed: int = lib.MCDS_CALLBACK_FAILED
        return failed


#: The C function pointer libmcds calls: made once, for the life of the
#: module (a cffi callback must outlive every call that may use it).
_trampoline = ffi.callback("mcds_updater", _update_into, error=lib.MCDS_CALLBACK_FAILED, onerror=escaped)


def run_update(call_c: Callable[..., None], key: bytes, fn: Updater, ttl: int, max_attempts: int) -> bool:
    """Run ``mcds_store_update`` through ``call_c`` (the store's ``_call``)
    with ``fn`` as the updater; whether a value was written."""
    if not callable(fn):
        raise TypeError(f"fn must be callable, not {type(fn).__name__}")
    call = _Call(fn)
    written = ffi.new("bool *")
    call_with_callback(call_c, call, lib.mcds_store_update, key, ttl, max_attempts, _trampoline, ffi.new_handle(call), written)
    return bool(written[0])
