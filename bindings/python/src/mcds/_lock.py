"""``Lock``: a distributed lock with a lease (``mcds_lock``)."""

from __future__ import annotations

import math
import os
import time
from types import TracebackType
from typing import TYPE_CHECKING, Any, Callable, Optional, Tuple, Type

from . import errors
from ._ffi import ffi, lib
from ._handle import (
    _bytes,
    Data,
    Handle,
    derived,
    Seconds,
    display,
    name_arg,
    seconds_arg,
    take_string,
    whole_seconds_arg,
)

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

    A holder that may outlive its lease (a paused process, a slow job) is
    the classic way for two holders to overlap. Three tools against it:

    * ``fencing=True``: every acquire also takes a :attr:`fencing_token`,
      strictly increasing per lock name. Pass it to the resource the lock
      protects, which refuses writes carrying a token older than one it
      has seen::

          with store.lock("ledger", ttl=30, fencing=True) as guard:
              db.write(rows, fencing_token=guard.fencing_token)

    * :meth:`extend` renews the lease from the work loop, and
      :meth:`auto_extend` renews it from a background thread of libmcds;
      poll :attr:`lost` to learn that a renewal found it gone.
    * ``owner_label`` names the holder (``"host=web1 pid=4242"``) in its
      owner token, which :meth:`holder` shows to anyone inspecting the lock.

    ``backoff=(min, max)``: a blocking acquire waits between tries a random
    time under a ceiling that starts at ``min`` seconds and doubles up to
    ``max`` (default ``(0.001, 0.05)``; at most 60).
    """

    def __init__(
        self,
        store: "Store",
        name: Data,
        ttl: Seconds = 30,
        timeout: Optional[Seconds] = None,
        *,
        fencing: bool = False,
        owner_label: Optional[str] = None,
        backoff: Optional[Tuple[Seconds, Seconds]] = None,
    ) -> None:
        raw = name_arg(name)
        self._setup(
            store, raw, ttl, timeout, fencing, owner_label, backoff,
            lib.mcds_lock_new, f"Lock({display(raw)})", raw,
        )

    def _setup(
        self,
        store: "Store",
        name: bytes,
        ttl: Seconds,
        timeout: Optional[Seconds],
        fencing: bool,
        owner_label: Optional[str],
        backoff: Optional[Tuple[Seconds, Seconds]],
        new: Callable[..., int],
        what: str,
        *new_args: Any,
    ) -> None:
        """What ``__init__`` and :meth:`with_key` share: check the
        arguments, make the handle with ``new(store, *new_args, ttl, out)``,
        then derive the fencing, label and backoff handles."""
        self._name = name
        self._ttl = whole_seconds_arg(ttl, "ttl")
        #: How long ``with`` waits, in seconds (``None``: forever).
        self.timeout = None if timeout is None else seconds_arg(timeout, "timeout")
        self._held = False
        self._fencing = False
        label = None if owner_label is None else _label_arg(owner_label)
        pause = None if backoff is None else _backoff_arg(backoff)
        self._create(store, new, "mcds_lock", lib.mcds_lock_free, what, *new_args, self._ttl)
        if fencing:
            self._derive(lib.mcds_lock_with_fencing, True)
            self._fencing = True
        if label is not None:
            self._derive(lib.mcds_lock_with_owner_label, label)
        if pause is not None:
            self._derive(lib.mcds_lock_with_backoff, *pause)

    @classmethod
    def with_key(
        cls,
        store: "Store",
        key: Data,
        ttl: Seconds = 30,
        timeout: Optional[Seconds] = None,
        *,
        fencing: bool = False,
        owner_label: Optional[str] = None,
        backoff: Optional[Tuple[Seconds, Seconds]] = None,
    ) -> "Lock":
        """The lock kept under exactly ``key`` (no ``lock:`` naming, no
        prefix): for a lock other applications take by ``add``-ing the key
        with a random value and a TTL, and release by deleting it (as
        Symfony Lock's MemcachedStore does, or pymemcache code calling
        ``client.add(key, token, expire=30)``). Each side is refused while
        the other holds the key; this lock releases and extends only its
        own lease (by CAS). With ``fencing``, tokens count in
        ``<key>:fence``, so ``key`` is at most 244 bytes. The other
        arguments are as for :class:`Lock`."""
        raw = _bytes(key, "key")
        lock = cls.__new__(cls)
        lock._setup(
            store, raw, ttl, timeout, fencing, owner_label, backoff,
            lib.mcds_lock_new_with_key, f"Lock(key={display(raw)})", raw, len(raw),
        )
        return lock

    def _derive(self, fn: Callable[..., int], *args: Any) -> None:
        """Replace this new object's handle by ``fn(handle, *args, out)``
        (a ``mcds_lock_with_*`` call); before any other thread can see it."""
        out = ffi.new("mcds_lock **")
        self._call(fn, *args, out)
        old, self._owner.ptr = self._owner.ptr, out[0]
        lib.mcds_lock_free(old)
        self._owner.recipe = derived(self._owner.recipe, fn, "mcds_lock", lib.mcds_lock_free, *args)

    def _copy(self) -> "Lock":
        """A new object on the same lock and settings, holding nothing."""
        twin = Lock.__new__(Lock)
        twin._name, twin._ttl, twin.timeout = self._name, self._ttl, self.timeout
        twin._held = False
        twin._fencing = self._fencing
        owner = self._owner
        # An identity derivation: the same settings on a fresh handle.
        twin._from(owner, lib.mcds_lock_with_fencing, "mcds_lock", lib.mcds_lock_free, owner.what, self._fencing)
        return twin

    def with_fencing(self, fencing: bool = True) -> "Lock":
        """A new ``Lock`` on the same lock and settings that takes fencing
        tokens (or not): see :attr:`fencing_token`. It holds no lease."""
        twin = self._copy()
        twin._fencing = bool(fencing)
        twin._derive(lib.mcds_lock_with_fencing, bool(fencing))
        return twin

    def with_owner_label(self, label: str) -> "Lock":
        """A new ``Lock`` on the same lock and settings whose owner tokens
        name the holder: ``"<label> <random hex>"``, shown by
        :meth:`holder`. ``label`` is at most 200 bytes of printable ASCII,
        spaces included (``""`` removes it). It holds no lease."""
        twin = self._copy()
        twin._derive(lib.mcds_lock_with_owner_label, _label_arg(label))
        return twin

    def with_backoff(self, min: Seconds, max: Seconds) -> "Lock":  # noqa: A002 - the natural names
        """A new ``Lock`` on the same lock and settings whose blocking
        acquire waits between tries a random time under a ceiling that
        starts at ``min`` seconds and doubles up to ``max``. It holds no
        lease."""
        twin = self._copy()
        twin._derive(lib.mcds_lock_with_backoff, *_backoff_arg((min, max)))
        return twin

    @property
    def name(self) -> bytes:
        """The lock's name."""
        return self._name

    @property
    def ttl(self) -> int:
        """The lease, in whole seconds (at least 1)."""
        return self._ttl

    @property
    def _held(self) -> bool:
        # A lease belongs to the process that took it: in a child after
        # fork this object (remade there) holds nothing.
        return self.__dict__.get("_held_by") == os.getpid()

    @_held.setter
    def _held(self, value: bool) -> None:
        self.__dict__["_held_by"] = os.getpid() if value else None

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
        try:
            self._call(lib.mcds_lock_try_acquire, out)
            self._held = bool(out[0])
        except errors.Error:
            raise
        except BaseException:
            self._undo_interrupted_acquire()
            raise
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
                self._held = True
            except errors.WaitTimeout:
                if deadline is not None and time.monotonic() >= deadline:
                    return False
                continue
            except errors.Error:
                raise
            except BaseException:
                self._undo_interrupted_acquire()
                raise
            return True

    def _undo_interrupted_acquire(self) -> None:
        """An exception of Python's own (a signal handler's
        ``KeyboardInterrupt``, say) arrived while or just after the C call
        took the lock, before this object recorded it: release that lease
        (best effort), so that no lease is left held by an object that
        says it holds nothing and refuses to acquire again."""
        out = ffi.new("bool *")
        try:
            self._call(lib.mcds_lock_is_lost, out)  # InvalidArgument: holds nothing
        except BaseException:
            self._held = False
            return
        try:
            self._call(lib.mcds_lock_release, out)
            self._held = False
        except BaseException:
            self._held = True  # still held: release() can be retried

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

    def extend(self, ttl: Optional[Seconds] = None) -> None:
        """Renew the lease this object holds for ``ttl`` seconds from now
        (default: the lock's ``ttl``; whole seconds, at least 1), if it is
        still ours. One round trip.

        Raises :class:`~mcds.LockLost` if the lease had been lost (expired,
        evicted or taken by another owner, who keeps it; :attr:`lost` is
        then true), and :class:`~mcds.InvalidArgument` if this object holds
        nothing. An error such as :class:`~mcds.Ambiguous` can be retried: a
        renewal applied unseen is recognised by the next one."""
        secs = self._ttl if ttl is None else whole_seconds_arg(ttl, "ttl")
        out = ffi.new("bool *")
        self._call(lib.mcds_lock_extend, secs, out)
        if not out[0]:
            raise errors.LockLost(
                f"the lease of lock {display(self._name)} was lost before the extension "
                "(expired, evicted or taken by another owner): stop the work it protects"
            )

    def auto_extend(self, ttl: Optional[Seconds] = None) -> None:
        """Renew the lease in the background every ``ttl / 3`` seconds, for
        ``ttl`` each time (default: the lock's ``ttl``), until it is
        released or found lost. Poll :attr:`lost` from the work loop: it
        turns true when a renewal finds the lease gone, or when renewals
        keep failing and the next would come after the lease ends (about
        ``ttl / 3`` before another client can take the lock: time to stop
        the work). The renewer is a thread of libmcds that never runs
        Python code. Calling it again replaces the renewer.
        :class:`~mcds.InvalidArgument` if this object holds nothing."""
        secs = self._ttl if ttl is None else whole_seconds_arg(ttl, "ttl")
        self._call(lib.mcds_lock_auto_extend, secs)

    @property
    def lost(self) -> bool:
        """Whether the lease this object holds is known to be lost: found
        so by :meth:`extend`, the auto-extension or a release. No round
        trip: ``False`` means no call has found it lost yet (and also that
        this object holds nothing)."""
        if not self._held:
            return False
        out = ffi.new("bool *")
        try:
            self._call(lib.mcds_lock_is_lost, out)
        except errors.InvalidArgument:
            return False
        return bool(out[0])

    @property
    def fencing_token(self) -> int:
        """The fencing token of the lease this object holds: strictly
        greater than every token handed out before for this lock name
        (while its counter item lives). Pass it to the resource the lock
        protects. :class:`~mcds.InvalidArgument` if this object holds no
        lease or was made without ``fencing=True``."""
        if not self._fencing:
            raise errors.InvalidArgument(
                f"lock {display(self._name)} was made without fencing tokens: "
                "use store.lock(name, fencing=True)"
            )
        out = ffi.new("uint64_t *")
        self._call(lib.mcds_lock_fencing_token, out)
        return int(out[0])

    @property
    def owner_token(self) -> Optional[str]:
        """The owner token of the lease this object holds (what
        :meth:`holder` shows while it holds it), or ``None``."""
        if not self._held:
            return None
        out = ffi.new("char **")
        try:
            self._call(lib.mcds_lock_owner_token, out)
        except errors.InvalidArgument:
            return None
        return take_string(out[0])

    def holder(self) -> Optional[str]:
        """Who holds the lock now, whichever object or process it is: the
        holder's owner token, or ``None`` if the lock is free. One round
        trip."""
        out = ffi.new("char **")
        self._call(lib.mcds_lock_holder, out)
        return take_string(out[0])

    def locked(self) -> bool:
        """Whether anyone holds the lock now (as
        :meth:`threading.Lock.locked`). One round trip."""
        return self.holder() is not None

    def __enter__(self) -> "Lock":
        if not self.acquire():
            raise errors.WaitTimeout(
                f"lock {display(self._name)} stayed taken for {self.timeout:g} s", errors.WaitTimeout.code
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
            f"the lease of lock {display(self._name)} ({self._ttl} s) had expired before the "
            "release: another holder may have run at the same time; use a longer ttl"
        )
        if exc is None:
            raise errors.LockLost(lost)
        if hasattr(exc, "add_note"):  # Python 3.11+
            exc.add_note(f"mcds: {lost}")

    def __repr__(self) -> str:
        state = " closed" if self.closed else (" held" if self._held else "")
        return f"<mcds.Lock {display(self._name)} ttl={self._ttl}{state}>"


def _label_arg(label: str) -> bytes:
    if not isinstance(label, str):
        raise TypeError(f"owner_label must be str, not {type(label).__name__}")
    if not all(" " <= c <= "~" for c in label) or len(label) > 200:
        raise errors.InvalidArgument(
            f"owner_label {label!r} must be at most 200 characters of printable ASCII (spaces allowed)"
        )
    return label.encode("ascii")


def _backoff_arg(backoff: Tuple[Seconds, Seconds]) -> Tuple[int, int]:
    try:
        low, high = backoff
    except (TypeError, ValueError):
        raise TypeError("backoff must be a pair (min_seconds, max_seconds)") from None
    low_s, high_s = seconds_arg(low, "backoff min"), seconds_arg(high, "backoff max")
    if math.isinf(high_s) or high_s > 60:
        raise errors.InvalidArgument(f"backoff must satisfy 0.001 <= min <= max <= 60 seconds, not ({low_s:g}, {high_s:g})")
    low_ms, high_ms = math.ceil(low_s * 1000), math.ceil(high_s * 1000)
    if not 1 <= low_ms <= high_ms <= 60_000:
        raise errors.InvalidArgument(
            f"backoff must satisfy 0.001 <= min <= max <= 60 seconds, not ({low_ms / 1000:g}, {high_ms / 1000:g})"
        )
    return low_ms, high_ms
