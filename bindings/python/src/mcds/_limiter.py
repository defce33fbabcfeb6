"""``RateLimiter`` (``mcds_limiter``) and ``Decision`` (``mcds_decision``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

from ._ffi import ffi, lib
from ._handle import U32_MAX, Data, Handle, display, int_arg, name_arg

if TYPE_CHECKING:
    from ._store import Store


class Decision(NamedTuple):
    """A rate limiter's answer. True when the request is allowed."""

    #: Whether the request is allowed.
    allowed: bool
    #: How many more requests would be allowed now.
    remaining: int
    #: When denied, milliseconds until a request would be allowed (else 0).
    retry_after_ms: int

    @property
    def retry_after(self) -> float:
        """:attr:`retry_after_ms` in seconds (for a ``Retry-After`` header, round up)."""
        return self.retry_after_ms / 1000.0

    def __bool__(self) -> bool:
        return self.allowed


def _decision(d: object) -> Decision:
    return Decision(bool(d.allowed), int(d.remaining), int(d.retry_after_ms))  # type: ignore[attr-defined]


class RateLimiter(Handle):
    """At most ``limit`` requests per ``window_secs`` seconds, in a fixed
    window or (``sliding=True``) the sliding-window estimate.

    >>> api = store.rate_limiter("api:alice", limit=100, window_secs=60)
    >>> if not api.check():
    ...     reply_429()
    """

    def __init__(self, store: "Store", name: Data, limit: int, window_secs: int, sliding: bool = False) -> None:
        self.name = name_arg(name)
        self.limit = int_arg(limit, "limit")
        self.window_secs = int_arg(window_secs, "window_secs", 0, U32_MAX)
        self.sliding = bool(sliding)
        self._create(
            store, lib.mcds_limiter_new, "mcds_limiter", lib.mcds_limiter_free,
            f"RateLimiter({display(self.name)})", self.name, self.limit, self.window_secs, self.sliding,
        )

    def check(self) -> Decision:
        """Count this request and decide."""
        out = ffi.new("mcds_decision *")
        self._call(lib.mcds_limiter_check, out)
        return _decision(out)

    def peek(self) -> Decision:
        """Decide without counting a request."""
        out = ffi.new("mcds_decision *")
        self._call(lib.mcds_limiter_peek, out)
        return _decision(out)
