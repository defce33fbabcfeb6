"""The exceptions: one class per ``MCDS_…`` result code of include/mcds.h.

Every exception mcds raises is an :class:`Error`. A failed C call raises the
class of its result code, carrying the code (:attr:`Error.code`), its name
(:attr:`Error.code_name`, e.g. ``"MCDS_INVALID_KEY"``) and the library's
message (:attr:`Error.message`, from ``mcds_last_error_message()``, read on
the failing thread right after the call)::

    Error
    ├── InvalidKey, InvalidArgument, ValueTooLarge, InvalidUtf8, NullArgument
    │                              (also ValueError: the caller's input)
    ├── NonNumeric, Corrupt        (what is stored is not what was expected)
    │   └── Lost                   (a Corrupt: the server may have dropped it)
    ├── BackendError               (also OSError: the server side; retryable)
    │   ├── IoError, ServerDown    (also ConnectionError; not applied)
    │   ├── Timeout                (also TimeoutError; not applied)
    │   ├── Ambiguous              (sent, no reply: it may have been applied)
    │   └── OutOfMemory, ServerError, ProtocolError
    ├── WaitTimeout                (also TimeoutError: a lock stayed taken)
    ├── Conflict, Unsupported
    ├── Panic, Internal, Other     (bugs, or a newer libmcds)
    ├── Cancelled                  (a call of mcds.aio whose task was cancelled)
    ├── Closed                     (also ValueError: a closed handle)
    └── LockLost                   (a lock's lease expired while held)

``except ValueError`` catches bad input, ``except ConnectionError`` an
unreachable server, ``except TimeoutError`` both kinds of timeout, as with
the standard library.
"""

from __future__ import annotations

from typing import Dict, Optional, Type

from ._ffi import lib, text

__all__ = [
    "Error",
    "NullArgument",
    "InvalidUtf8",
    "Panic",
    "Internal",
    "CallbackFailed",
    "Cancelled",
    "InvalidKey",
    "ValueTooLarge",
    "InvalidArgument",
    "NonNumeric",
    "Corrupt",
    "Lost",
    "BackendError",
    "IoError",
    "ServerDown",
    "Timeout",
    "Ambiguous",
    "OutOfMemory",
    "ServerError",
    "ProtocolError",
    "Conflict",
    "Unsupported",
    "WaitTimeout",
    "Other",
    "Closed",
    "LockLost",
    "result_name",
]


def result_name(code: int) -> str:
    """The name of a result code, e.g. ``"MCDS_INVALID_KEY"`` (``mcds_result_name``)."""
    return text(lib.mcds_result_name(code))


class Error(Exception):
    """Base of every mcds exception.

    Attributes:
        message: what happened and what to do (the library's own words).
        code: the ``MCDS_…`` result code, or ``None`` for errors raised by the
            Python package itself (:class:`Closed`, :class:`LockLost`).
    """

    #: The result code of this class (``None``: raised by the Python side).
    code: Optional[int] = None

    def __init__(self, message: str, code: Optional[int] = None) -> None:
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code

    @property
    def code_name(self) -> Optional[str]:
        """The name of :attr:`code`, e.g. ``"MCDS_INVALID_KEY"`` (``None`` if no code)."""
        return None if self.code is None else result_name(self.code)

    def __str__(self) -> str:
        name = self.code_name
        return f"{self.message} ({name})" if name else self.message

    def __reduce__(self):  # type: ignore[no-untyped-def]
        # Keep the code through pickling (multiprocessing sends exceptions).
        return (self.__class__, (self.message, self.code))


# -- the caller's input -------------------------------------------------------


class NullArgument(Error, ValueError):
    """``MCDS_NULL_ARGUMENT``: a required pointer was NULL (a bug in these bindings)."""

    code = lib.MCDS_NULL_ARGUMENT


class InvalidUtf8(Error, ValueError):
    """``MCDS_INVALID_UTF8``: a name was not valid UTF-8."""

    code = lib.MCDS_INVALID_UTF8


class InvalidKey(Error, ValueError):
    """``MCDS_INVALID_KEY``: the key built from a name is empty, too long, or
    has spaces, control bytes or a NUL."""

    code = lib.MCDS_INVALID_KEY


class ValueTooLarge(Error, ValueError):
    """``MCDS_VALUE_TOO_LARGE``: the value would exceed the item size limit."""

    code = lib.MCDS_VALUE_TOO_LARGE


class InvalidArgument(Error, ValueError):
    """``MCDS_INVALID_ARGUMENT``: an argument is out of range (a TTL of 0, a
    negative count), or the call does not fit the handle's state (releasing a
    lock that is not held)."""

    code = lib.MCDS_INVALID_ARGUMENT


# -- what is stored -----------------------------------------------------------


class NonNumeric(Error):
    """``MCDS_NON_NUMERIC``: incr/decr found a value that is not a number."""

    code = lib.MCDS_NON_NUMERIC


class Corrupt(Error):
    """``MCDS_CORRUPT``: stored bytes could not be decoded."""

    code = lib.MCDS_CORRUPT


class Lost(Corrupt):
    """``MCDS_LOST``: a read cannot vouch for the data, because its server
    lost items (a restart, a flush, an eviction) since it could have been
    written. A :class:`Corrupt` too."""

    code = lib.MCDS_LOST


# -- the server side ----------------------------------------------------------


class BackendError(Error, OSError):
    """The server side failed (codes 200 to 299). Also an :class:`OSError`."""

    def __init__(self, message: str, code: Optional[int] = None) -> None:
        Error.__init__(self, message, code)

    def __str__(self) -> str:
        return Error.__str__(self)


class IoError(BackendError, ConnectionError):
    """``MCDS_IO``: the server could not be reached; the request was not applied."""

    code = lib.MCDS_IO


class ServerDown(BackendError, ConnectionError):
    """``MCDS_SERVER_DOWN``: the server is marked down after a failed
    connection; the request was not applied."""

    code = lib.MCDS_SERVER_DOWN


class Timeout(BackendError, TimeoutError):
    """``MCDS_TIMEOUT``: the server did not answer in time; the request was not applied."""

    code = lib.MCDS_TIMEOUT


class Ambiguous(BackendError):
    """``MCDS_AMBIGUOUS``: the request was sent but no reply came: it may have
    been applied. Retrying a non-idempotent call (an increment) may apply it twice."""

    code = lib.MCDS_AMBIGUOUS


class OutOfMemory(BackendError):
    """``MCDS_OUT_OF_MEMORY``: the server is out of memory and does not evict."""

    code = lib.MCDS_OUT_OF_MEMORY


class ServerError(BackendError):
    """``MCDS_SERVER_ERROR``: the server reported an error."""

    code = lib.MCDS_SERVER_ERROR


class ProtocolError(BackendError):
    """``MCDS_PROTOCOL``: the server's reply could not be understood."""

    code = lib.MCDS_PROTOCOL


# -- contention and operations --------------------------------------------------


class Conflict(Error):
    """``MCDS_CONFLICT``: a CAS loop kept losing to concurrent writers."""

    code = lib.MCDS_CONFLICT


class Unsupported(Error):
    """``MCDS_UNSUPPORTED``: the backend does not support the operation."""

    code = lib.MCDS_UNSUPPORTED


class WaitTimeout(Error, TimeoutError):
    """``MCDS_WAIT_TIMEOUT``: a blocking call (lock acquire) gave up waiting."""

    code = lib.MCDS_WAIT_TIMEOUT


# -- bugs and newer libraries ---------------------------------------------------


class Panic(Error):
    """``MCDS_PANIC``: mcds panicked (a bug; please report it)."""

    code = lib.MCDS_PANIC


class Internal(Error):
    """``MCDS_INTERNAL``: mcds found a bug in itself (please report it)."""

    code = lib.MCDS_INTERNAL


class CallbackFailed(Error):
    """``MCDS_CALLBACK_FAILED``: a callback given to mcds (a view counter's
    loader) reported an error; nothing was cached."""

    code = lib.MCDS_CALLBACK_FAILED


class Cancelled(Error):
    """``MCDS_CANCELLED``: the call was cancelled while it waited (the
    :mod:`mcds.aio` task awaiting it was cancelled); a write it made may
    have been applied, as with :class:`Ambiguous`. :mod:`mcds.aio` raises
    :class:`asyncio.CancelledError` in the cancelled task itself."""

    code = lib.MCDS_CANCELLED


class Other(Error):
    """``MCDS_OTHER``, or a code this version of the package does not know."""

    code = lib.MCDS_OTHER


# -- raised by the Python side ----------------------------------------------------


class Closed(Error, ValueError):
    """The handle was closed.

    Like a closed file, a closed handle refuses every call. (A handle made
    before ``os.fork()`` is not closed in the child: its first call there
    makes it again, on the child's own connections.)
    """


class LockLost(Error):
    """A lock's lease had expired before it was released: another holder may
    have run at the same time. Use a longer ``ttl``."""


_BY_CODE: Dict[int, Type[Error]] = {}
for _cls in list(globals().values()):
    if isinstance(_cls, type) and issubclass(_cls, Error) and _cls.code is not None:
        assert _cls.code not in _BY_CODE, f"two classes for code {_cls.code}"
        _BY_CODE[_cls.code] = _cls
del _cls


def class_of(code: int) -> Type[Error]:
    """The exception class for a result code (:class:`Other` if unknown)."""
    return _BY_CODE.get(code, Other)


def from_code(code: int) -> Error:
    """The exception for a failed call's ``code``, with this thread's last
    error message. Call it right after the failing call, on the same thread."""
    message = text(lib.mcds_last_error_message())
    return class_of(code)(message or result_name(code), code)
