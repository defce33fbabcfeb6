"""The C ABI: ``ffi`` (cffi, ABI mode) and ``lib``, the bundled libmcds.

The declarations come from include/mcds.h itself: the wheel's build turns
the header into ``_cdef.py`` (see header_to_cdef.py beside setup.py), and
the shared library the wheel bundles is loaded by its path inside this
package, never from the system's library path.
"""

from __future__ import annotations

import os
import sys
from typing import Any

from cffi import FFI

try:
    from ._cdef import CDEF, HEADER_SHA256
except ImportError as e:  # pragma: no cover - only in a source checkout
    raise ImportError(
        "mcds is not built: its C declarations (mcds/_cdef.py) and libmcds are "
        "added when the wheel is built. Build and install the wheel with "
        "scripts/build-python-wheel.sh (see bindings/python/README.md)."
    ) from e

__all__ = ["ffi", "lib", "LIB_PATH", "HEADER_SHA256", "text"]

if sys.platform == "darwin":  # pragma: no cover
    _LIB_NAME = "libmcds.dylib"
elif sys.platform == "win32":  # pragma: no cover
    _LIB_NAME = "mcds.dll"
else:
    _LIB_NAME = "libmcds.so"

#: The path of the bundled shared library this package loads.
LIB_PATH: str = os.path.join(os.path.dirname(os.path.abspath(__file__)), _LIB_NAME)

ffi = FFI()
ffi.cdef(CDEF)
# Any: its attributes are the header's functions and constants.
lib: Any = ffi.dlopen(LIB_PATH)


def text(ptr: Any) -> str:
    """A NUL-terminated UTF-8 C string (owned by libmcds) as ``str``."""
    raw = ffi.string(ptr)
    return raw.decode("utf-8", "replace") if isinstance(raw, bytes) else str(raw)
