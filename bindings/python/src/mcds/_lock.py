"""``Lock``: a distributed lock with a lease (``mcds_lock``)."""

from __future__ import annotations

import math
import time
from types import TracebackType
from typing import TYPE_CHECKING, Optional, Type

from . import errors
from ._ffi import ffi, lib
from ._handle import Data, Handle, Seconds, display, name_arg, seconds_arg, whole_seconds_arg

if TYPE_CHECKING:
    from ._store import Store

# A blocking wait is made of C waits of at most this long, so Ctrl-C (and
# any signal handler) gets a turn at least once a second.
_SLICE_MS = 1000


class Lock(Handle):
    """A distributed lock: at most one holder at a time, across threads,
    processes and machines, with a lease of ``ttl`` seconds after which an
    unreleased lock frees itself (a crashed holder cannot block it forever).

    >>> with store.lock("nightly-report", ttl=60) as guard:
    ...     run_report()

    ``with`` waits for the lock (up to ``timeout`` seconds; ``None`` waits
    forever) and raises :class:`~mcds.WaitTimeout` if it stayed taken. On
    exit it releases the lock; if the lease had already expired, so that
    another holder may have run at the same time, it raises
    :class:`~mcds.LockLost` (or, if the block raised, adds a note to that
    exception). Choose a ``ttl`` longer than the work.

    A ``Lock`` object holds at most one lease. Threads that compete for a
    lock should each use their own ``Lock`` object (``store.lock(name)``);
    sharing one object makes them one holder.
    """

    def __init__(self, store: "Store", name: Data, ttl: Seconds = 30, timeout: Optional[Seconds] = None) -> None:
        self.name = name_arg(name)
        #: The lease, in whole seconds (at least 1).
        self.ttl = whole_seconds_arg(ttl, "ttl")
        #: How long ``with`` waits, in seconds (``None``: forever).
        self.timeout = None if timeout is None else seconds_arg(timeout, "timeout")
        self._held = False
        self._create(store, lib.mcds_lock_new, "mcds_lock", lib.mcds_lock_free, f"Lock({display(self.name)})", self.name, self.ttl)

    @property
    def held(self) -> bool:
        """Whether this object holds a lease, as far as it knows (the lease
        may have expired since: see :meth:`release`)."""
        return self._held

    def try_acquire(self) -> bool:
        """Take the lock if it is free: ``True`` if this object now holds it,
        ``False`` if another holder does. One round trip.

        Raises :class:`~mcds.InvalidArgument` if this object already holds it."""
        out = ffi.new("bool *")
        self._call(lib.mcds_lock_try_acquire, out)
        self._held = bool(out[0])
        return self._held

    def acquire(self, blocking: bool = True, timeout: Optional[Seconds] = None) -> bool:
        """Take the lock, as :meth:`threading.Lock.acquire` does.

        With ``blocking=False``, one try (:meth:`try_acquire`). Otherwise wait
        up to ``timeout`` seconds (default: the lock's ``timeout``; ``None``
        and ``math.inf`` wait forever). Returns whether the lock was taken."""
        if not blocking:
            return self.try_acquire()
        wait = self.timeout if timeout is None else seconds_arg(timeout, "timeout")
        deadline = None if wait is None or math.isinf(wait) else time.monotonic() + wait
        while True:
            if deadline is None:
                slice_ms = _SLICE_MS
            else:
                slice_ms = min(_SLICE_MS, max(0, math.ceil((deadline - time.monotonic()) * 1000)))
            try:
                self._call(lib.mcds_lock_acquire, slice_ms)
            except errors.WaitTimeout:
                if deadline is not None and time.monotonic() >= deadline:
                    return False
                continue
            self._held = True
            return True

    def release(self) -> bool:
        """Release the lock: ``True`` if the lease was still ours, ``False``
        if it had expired (another holder may have it now; it was not
        touched).

        Raises :class:`~mcds.InvalidArgument` if this object holds nothing.
        On a server error this object still holds the lease: call
        ``release()`` again to retry."""
        out = ffi.new("bool *")
        try:
            self._call(lib.mcds_lock_release, out)
        except errors.InvalidArgument:
            self._held = False
            raise
        self._held = False
        return bool(out[0])

    def __enter__(self) -> "Lock":
        if not self.acquire():
            raise errors.WaitTimeout(
                f"lock {display(self.name)} stayed taken for {self.timeout:g} s", errors.WaitTimeout.code
            )
        return self

    def __exit__(
        self,
        exc_type: Optional[Type[BaseException]],
        exc: Optional[BaseException],
        tb: Optional[TracebackType],
    ) -> None:
        if not self._held:
            return  # released inside the block
        if self.release():
            return
        lost = (
            f"the lease of lock {display(self.name)} ({self.ttl} s) had expired before the "
            "release: another holder may have run at the same time; use a longer ttl"
        )
        if exc is None:
            raise errors.LockLost(lost)
        if hasattr(exc, "add_note"):  # Python 3.11+
            exc.add_note(f"mcds: {lost}")

    def __repr__(self) -> str:
        state = " closed" if self.closed else (" held" if self._held else "")
        return f"<mcds.Lock {display(self.name)} ttl={self.ttl}{state}>"
