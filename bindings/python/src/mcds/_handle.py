"""What every wrapper shares: owning a C handle, calling it, converting
arguments.

A C handle is freed exactly once: by ``close()``, by the ``with`` block that
owns it, or (as a fallback) by a ``weakref.finalize`` when the Python object
is collected or the interpreter exits. It is never freed while a call on
another thread is using it: the free waits for the last such call to
return. A closed handle raises :class:`~mcds.Closed`.

After ``os.fork()`` the child must not use (or free) the parent's handles:
they share the parent's connections, and freeing a lock would release the
parent's lease. So every handle remembers how it was made (its *recipe*:
the C constructor and its arguments, on its store's or parent's recipe),
and in the child its first call makes a new C handle that way, on new
connections of the child's own: a store made at import time, before a
pre-forking server (gunicorn ``--preload``, Celery's prefork pool, uWSGI
without ``lazy-apps``) forks its workers, works in each worker with no
code change, as redis-py's and pymemcache's clients do. The parent's
handles are left alone in the child (never used, never freed), and a lock
the parent holds is not held by the child's copy.
"""

from __future__ import annotations

import datetime
import math
import operator
import os
import threading
import weakref
from types import TracebackType
from typing import Any, Callable, List, Optional, Type, TypeVar, Union

from . import errors
from ._ffi import ffi, lib

#: A name, member or value: ``str`` (encoded as UTF-8) or bytes-like.
Data = Union[str, bytes, bytearray, memoryview]

#: A duration: seconds as a number, or a :class:`datetime.timedelta`.
Seconds = Union[int, float, datetime.timedelta]

U32_MAX = 2**32 - 1
U64_MAX = 2**64 - 1

_H = TypeVar("_H", bound="Handle")

# Bumped in a child after fork: handles from an older generation hold the
# parent's C handles, which are neither used nor freed here; their first
# use makes new ones from their recipes.
_generation = 0

# Serializes the remaking of handles after a fork (a store shared by
# several threads of the child is remade once).
_rebirth = threading.RLock()

#: Makes a new C handle in this process and returns its pointer.
Recipe = Callable[[], Any]


def _after_fork_in_child() -> None:
    global _generation, _rebirth
    _generation += 1
    # Another thread of the parent may have held it at the fork.
    _rebirth = threading.RLock()


def new_handle(new: Callable[..., int], ctype: str, *args: Any) -> Any:
    """Call ``new(*args, out)`` and return the handle it wrote to ``out``."""
    out = ffi.new(f"{ctype} **")
    check(new(*args, out))
    return out[0]


def derived(base: Recipe, fn: Callable[..., int], ctype: str, free: Callable[[Any], None], *args: Any) -> Recipe:
    """The recipe of a handle made by ``fn(handle, *args, out)`` from the
    handle ``base`` makes (which is freed once it is used)."""

    def make() -> Any:
        ptr = base()
        try:
            return new_handle(fn, ctype, ptr, *args)
        finally:
            free(ptr)

    return make


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


class _Owner:
    """Owns one C pointer: counts the calls using it, frees it once."""

    __slots__ = ("ptr", "free", "ctype", "what", "mutex", "users", "closed", "generation", "recipe")

    def __init__(self, ptr: Any, free: Callable[[Any], None], what: str, ctype: str, recipe: Recipe) -> None:
        self.ptr = ptr
        self.free = free
        self.ctype = ctype
        self.what = what
        self.mutex = threading.Lock()
        self.users = 0
        self.closed = False
        self.generation = _generation
        #: How to make this handle again, in a child after fork.
        self.recipe = recipe

    def _reborn(self) -> None:
        """In a child after fork: leave the parent's C handle alone and, if
        this one is still open, make a new one from the recipe."""
        with _rebirth:
            if self.generation == _generation:
                return  # another thread of the child did it
            ptr = ffi.NULL if self.closed else self.recipe()
            # The parent's pointer is dropped, not freed: freeing it would
            # close the parent's connections or release its lease.
            self.ptr = ptr
            self.mutex = threading.Lock()
            self.users = 0
            self.generation = _generation

    def enter(self) -> Any:
        """Mark a call in progress and return the pointer (or raise Closed)."""
        if self.generation != _generation:
            self._reborn()
        with self.mutex:
            if self.closed:
                raise errors.Closed(f"{self.what} is closed")
            self.users += 1
            return self.ptr

    def exit(self) -> None:
        """End a call; the last one out frees a handle closed meanwhile."""
        with self.mutex:
            self.users -= 1
            if self.closed and self.users == 0:
                self._free()

    def lent(self) -> "_Lent":
        """A pointer to make a derived handle from (a structure from its
        store): this handle's own, or, when it is closed, a temporary one
        made from the recipe (a structure outlives the store it came from,
        in a child after fork as well)."""
        return _Lent(self)

    def close(self) -> None:
        """Free now, or when the calls in progress return. Idempotent."""
        if self.generation != _generation:
            self.closed = True  # the parent's: leave it to the parent
            return
        with self.mutex:
            if self.closed:
                return
            self.closed = True
            if self.users == 0:
                self._free()

    def _free(self) -> None:
        ptr, self.ptr = self.ptr, ffi.NULL
        if ptr != ffi.NULL:
            self.free(ptr)


class _Lent:
    """``with owner.lent() as ptr``: see :meth:`_Owner.lent`."""

    __slots__ = ("owner", "temporary")

    def __init__(self, owner: _Owner) -> None:
        self.owner = owner
        self.temporary: Any = None

    def __enter__(self) -> Any:
        try:
            return self.owner.enter()
        except errors.Closed:
            self.temporary = self.owner.recipe()
            return self.temporary

    def __exit__(self, *exc: object) -> None:
        if self.temporary is None:
            self.owner.exit()
        else:
            self.owner.free(self.temporary)


class Handle:
    """Base of :class:`~mcds.Store` and every structure: ``close()``, the
    context manager protocol (closing on exit), and the finalizer that frees
    the C handle if neither was used."""

    __slots__ = ("_owner", "_finalizer", "__weakref__")
    _owner: _Owner
    _finalizer: "weakref.finalize[[], Handle]"

    def _own(self, ptr: Any, recipe: Recipe, ctype: str, free: Callable[[Any], None], what: str) -> None:
        """Own the new handle ``ptr``; ``recipe`` makes it again in a child
        after fork."""
        self._owner = _Owner(ptr, free, what, ctype, recipe)
        self._finalizer = weakref.finalize(self, self._owner.close)

    def _adopt(self, new: Callable[..., int], ctype: str, free: Callable[[Any], None], what: str, *args: Any) -> None:
        """Own the handle ``new(*args, out)`` makes (the arguments are kept
        for the recipe: plain values, or handles kept alive by it)."""
        self._own(new_handle(new, ctype, *args), lambda: new_handle(new, ctype, *args), ctype, free, what)

    def _from(self, parent: _Owner, fn: Callable[..., int], ctype: str, free: Callable[[Any], None], what: str, *args: Any) -> None:
        """Own the handle ``fn(parent, *args, out)`` makes: now from the
        parent's open handle (a closed one raises :class:`~mcds.Closed`);
        in a child after fork from whatever the parent's recipe makes
        there."""
        ptr = parent.enter()
        try:
            first = new_handle(fn, ctype, ptr, *args)
        finally:
            parent.exit()

        def make() -> Any:
            with parent.lent() as p:
                return new_handle(fn, ctype, p, *args)

        self._own(first, make, ctype, free, what)

    def _create(self, store: Any, new: Callable[..., int], ctype: str, free: Callable[[Any], None], what: str, *args: Any) -> None:
        """Make this structure's handle from ``store``: ``new(store, *args, out)``."""
        self._from(store._owner, new, ctype, free, what, *args)

    def _twin(self: _H, fn: Callable[..., int], *args: Any) -> _H:
        """A new object of this class on the handle ``fn(handle, *args, out)``
        makes (a ``mcds_<handle>_with_*`` call), with this object's plain
        attributes (name, shape) copied."""
        twin = type(self).__new__(type(self))
        twin.__dict__.update(self.__dict__)
        owner = self._owner
        twin._from(owner, fn, owner.ctype, owner.free, owner.what, *args)
        return twin

    def close(self) -> None:
        """Free the C handle now (later calls raise :class:`~mcds.Closed`).

        Safe to call twice, and from any thread: if a call is in progress on
        another thread, the handle is freed when it returns."""
        self._finalizer.detach()
        self._owner.close()

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` was called."""
        return self._owner.closed

    def __enter__(self: _H) -> _H:
        return self

    def __exit__(
        self,
        exc_type: Optional[Type[BaseException]],
        exc: Optional[BaseException],
        tb: Optional[TracebackType],
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        state = " closed" if self._owner.closed else ""
        return f"<mcds.{self._owner.what}{state}>"

    def _call(self, fn: Callable[..., int], *args: Any) -> None:
        """Call ``fn(handle, *args)`` and raise the error of its result code."""
        owner = self._owner
        ptr = owner.enter()
        try:
            code = fn(ptr, *args)
            if code:
                raise errors.from_code(code)
        finally:
            owner.exit()

    def _call_bytes(self, fn: Callable[..., int]) -> bytes:
        """Call ``fn(handle, &data, &len)``, which points into the handle,
        and copy those bytes before the handle is released: a
        :meth:`close` on another thread frees the handle as the call
        returns, so a copy made after :meth:`_call` could read freed
        memory."""
        data = ffi.new("const uint8_t **")
        length = ffi.new("uintptr_t *")
        owner = self._owner
        ptr = owner.enter()
        try:
            code = fn(ptr, data, length)
            if code:
                raise errors.from_code(code)
            return copy_bytes(data[0], length[0])
        finally:
            owner.exit()


def display(name: bytes) -> str:
    """A name for messages and reprs: as text if it is UTF-8, else as bytes."""
    try:
        return repr(name.decode("utf-8"))
    except UnicodeDecodeError:
        return repr(name)


def check(code: int) -> None:
    """Raise the exception of a failed call's result code (0 is success)."""
    if code:
        raise errors.from_code(code)


def name_arg(value: Data, what: str = "name") -> bytes:
    """A name for a C string: ``str`` as UTF-8, or bytes; no NUL byte."""
    raw = _bytes(value, what)
    if b"\0" in raw:
        raise errors.InvalidKey(f"{what} {value!r} contains a NUL byte, which no memcached key can hold")
    return raw


def data_arg(value: Data, what: str = "member") -> Any:
    """A member or value for a pointer and a length: ``str`` as UTF-8, or any
    bytes-like object (passed without a copy)."""
    if isinstance(value, bytes):
        return value
    if isinstance(value, str):
        return _bytes(value, what)
    if isinstance(value, (bytearray, memoryview)):
        return ffi.from_buffer("uint8_t[]", value)
    raise TypeError(f"{what} must be str or bytes-like, not {type(value).__name__}")


def _bytes(value: Data, what: str) -> bytes:
    if isinstance(value, bytes):
        return value
    if isinstance(value, str):
        try:
            return value.encode("utf-8")
        except UnicodeEncodeError as e:
            raise errors.InvalidUtf8(f"{what} {value!r} cannot be encoded as UTF-8: {e.reason}") from None
    if isinstance(value, (bytearray, memoryview)):
        return bytes(value)
    raise TypeError(f"{what} must be str or bytes, not {type(value).__name__}")


def int_arg(value: int, what: str, low: int = 0, high: int = U64_MAX) -> int:
    """An integer in ``[low, high]``, or :class:`~mcds.InvalidArgument`.
    ``bool`` is refused (``incr(True)`` is a mistake, not 1)."""
    # The common case first, in one test (``type(True)`` is ``bool``, not
    # ``int``): a counter's call spends a fifth of its Python time here.
    if type(value) is int and low <= value <= high:
        return value
    if isinstance(value, bool):
        raise TypeError(f"{what} must be an int, not bool")
    try:
        value = operator.index(value)
    except TypeError:
        raise TypeError(f"{what} must be an int, not {type(value).__name__}") from None
    if not low <= value <= high:
        raise errors.InvalidArgument(f"{what} must be between {low} and {high}, not {value}")
    return value


def seconds_arg(value: Seconds, what: str, low: float = 0.0) -> float:
    """A duration in seconds (a number or a timedelta), at least ``low``."""
    if isinstance(value, datetime.timedelta):
        secs = value.total_seconds()
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        try:
            secs = float(value)
        except OverflowError:
            raise errors.InvalidArgument(f"{what} of {value} seconds is out of range") from None
    else:
        raise TypeError(f"{what} must be seconds (a number or a timedelta), not {type(value).__name__}")
    if math.isnan(secs) or secs < low:
        raise errors.InvalidArgument(f"{what} must be at least {low:g} seconds, not {secs:g}")
    return secs


def ttl_arg(value: Optional[Seconds]) -> int:
    """An item TTL in whole seconds for the ``*_with_ttl`` calls: 0 (or
    ``None``) never expires."""
    return 0 if value is None else whole_seconds_arg(value, "ttl", 0)


def whole_seconds_arg(value: Seconds, what: str, low: int = 1) -> int:
    """A duration in whole seconds, as the C ABI takes it (``uint32_t``)."""
    secs = seconds_arg(value, what, low)
    if math.isinf(secs) or secs > U32_MAX:
        raise errors.InvalidArgument(f"{what} must be at most {U32_MAX} seconds, not {secs:g}")
    if secs != int(secs):
        raise errors.InvalidArgument(f"{what} must be whole seconds, not {secs:g}")
    return int_arg(int(secs), what, low, U32_MAX)


def copy_bytes(data: Any, length: int) -> bytes:
    """Copy ``length`` bytes at a C pointer into a Python ``bytes``."""
    return ffi.buffer(data, length)[:] if length else b""


def take_bytes_list(ptr: Any) -> List[bytes]:
    """Read an ``mcds_bytes_list`` into a list of bytes, then free it."""
    try:
        n = ffi.new("uintptr_t *")
        check(lib.mcds_bytes_list_len(ptr, n))
        data = ffi.new("const uint8_t **")
        length = ffi.new("uintptr_t *")
        items = []
        for i in range(n[0]):
            check(lib.mcds_bytes_list_get(ptr, i, data, length))
            items.append(copy_bytes(data[0], length[0]))
        return items
    finally:
        lib.mcds_bytes_list_free(ptr)


def take_string(ptr: Any) -> Optional[str]:
    """Read a string that mcds handed over (``char *``), then free it with
    ``mcds_string_free``; ``None`` for NULL."""
    if ptr == ffi.NULL:
        return None
    try:
        raw = ffi.string(ptr)
        assert isinstance(raw, bytes)  # a char * gives bytes
        return raw.decode("utf-8", "replace")
    finally:
        lib.mcds_string_free(ptr)


class DataArray:
    """Members for the ``(members, lens, count)`` arrays of the ``*_many``
    calls: ``str`` as UTF-8, bytes-like objects without a copy. Keeps the
    buffers alive as long as it lives."""

    __slots__ = ("keep", "members", "lens", "count")

    def __init__(self, values: Any, what: str = "member") -> None:
        if isinstance(values, (str, bytes, bytearray, memoryview)):
            raise TypeError(f"{what}s must be an iterable of {what}s, not a single {type(values).__name__}")
        self.keep = []
        for value in values:
            if isinstance(value, str):
                value = _bytes(value, what)
            elif not isinstance(value, (bytes, bytearray, memoryview)):
                raise TypeError(f"each {what} must be str or bytes-like, not {type(value).__name__}")
            self.keep.append(ffi.from_buffer("uint8_t[]", value))
        self.count = len(self.keep)
        if self.count:
            self.members = ffi.new("uint8_t *[]", self.keep)
            self.lens = ffi.new("uintptr_t[]", [len(b) for b in self.keep])
        else:
            self.members = ffi.NULL
            self.lens = ffi.NULL
