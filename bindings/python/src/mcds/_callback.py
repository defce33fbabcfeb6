"""Python functions that libmcds calls back (a ViewCounter's loader, an
update function): how their exceptions reach the caller as raised."""

from __future__ import annotations

import threading
from typing import Any, Callable, Optional

from . import errors

# An exception that escapes a callback before its own try (a signal
# handler's KeyboardInterrupt raised as cffi enters it, a RecursionError at
# the recursion limit) is not lost either: cffi hands it to `escaped` (the
# `onerror` of every callback) and returns MCDS_CALLBACK_FAILED.
_escaped_here = threading.local()


def escaped(exc_type: Any, exc: Any, tb: Any) -> None:
    """The ``onerror`` of every callback: keep the exception for the caller."""
    _escaped_here.error = exc


def call_with_callback(call_c: Callable[..., None], call: Any, *args: Any) -> None:
    """``call_c(*args)``, a C call whose callback keeps what it raised in
    ``call.error``: if the C call fails with MCDS_CALLBACK_FAILED, that
    exception (or one that escaped the callback) is raised as it was, not
    :class:`~mcds.CallbackFailed`."""
    _escaped_here.error = None
    error: Optional[BaseException] = None
    try:
        call_c(*args)
    except errors.CallbackFailed:
        error = call.error or getattr(_escaped_here, "error", None)
        _escaped_here.error = None
        if error is None:
            raise
    if error is not None:
        # Outside the except block: the exception arrives as it was raised
        # (its own __cause__ and __context__ intact).
        raise error
