"""Turn include/mcds.h into the text cffi's ``ffi.cdef()`` accepts.

The Python package declares nothing by hand: setup.py runs this on the
header at build time and writes the result into the wheel as
``mcds/_cdef.py``, so the declarations Python sees are the header's own.
The tests check that the installed copy matches the header of the checkout
(rebuild the wheel when they say it is stale).

cffi's parser takes C declarations and ``#define NAME <integer>``, but no
other preprocessor line. This keeps declarations and integer ``#define``s,
drops comments, ``#include``s, the include guard and the ``__cplusplus``
blocks (``extern "C" {`` and its brace), and refuses anything else, so a
new kind of line in the header fails the build instead of being lost.

Run it by hand to see the result::

    python3 bindings/python/header_to_cdef.py include/mcds.h
"""

from __future__ import annotations

import re
import sys

__all__ = ["cdef_from_header", "function_names"]

_DEFINE_INT = re.compile(r"^#\s*define\s+([A-Za-z_]\w*)\s+(-?(?:0[xX][0-9a-fA-F]+|\d+)[uUlL]*)$")
_DEFINE_FLAG = re.compile(r"^#\s*define\s+([A-Za-z_]\w*)$")
_CPLUSPLUS = re.compile(r"^#\s*(?:ifdef\s+__cplusplus|if\s+defined\s*\(?\s*__cplusplus\s*\)?)$")
_GUARD = re.compile(r"^#\s*ifndef\s+([A-Za-z_]\w*_H)$")
_FUNCTION = re.compile(r"\b(mcds_\w+)\(")


def _strip_comments(text: str) -> str:
    """Remove ``/* */`` and ``//`` comments, leaving string literals alone."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append(text[i : j + 1])
            i = j + 1
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            if j < 0:
                raise ValueError("unterminated /* comment in the header")
            # Keep the line count, so errors can name header lines.
            out.append("\n" * text.count("\n", i, j))
            i = j + 2
        elif text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        else:
            out.append(c)
            i += 1
    return "".join(out)


def cdef_from_header(header: str) -> str:
    """The declarations of ``header`` (the text of mcds.h) for ``ffi.cdef``.

    Raises ``ValueError`` naming the line for a preprocessor line it does
    not know how to carry over.
    """
    # Each open conditional: True if its lines are kept.
    stack: list[bool] = []
    guard: str | None = None
    lines: list[str] = []
    for number, raw in enumerate(_strip_comments(header).splitlines(), start=1):
        line = raw.strip()
        keep = all(stack)
        if not line.startswith("#"):
            if keep and line:
                lines.append(raw.rstrip())
            continue
        directive = re.sub(r"\s+", " ", line)
        if _CPLUSPLUS.match(directive):
            stack.append(False)
        elif _GUARD.match(directive) and guard is None and not stack:
            guard = _GUARD.match(directive).group(1)  # type: ignore[union-attr]
            stack.append(True)
        elif directive.startswith(("#if", "#elif")):
            raise ValueError(f"mcds.h line {number}: cannot carry over {line!r} (extend header_to_cdef.py)")
        elif directive.startswith("#else"):
            if not stack:
                raise ValueError(f"mcds.h line {number}: #else without #if")
            raise ValueError(f"mcds.h line {number}: cannot carry over {line!r} (extend header_to_cdef.py)")
        elif directive.startswith("#endif"):
            if not stack:
                raise ValueError(f"mcds.h line {number}: #endif without #if")
            stack.pop()
        elif directive.startswith("#include"):
            pass  # cffi knows the standard types (bool, uint64_t, uintptr_t, ...)
        elif _DEFINE_INT.match(directive):
            if keep:
                name, value = _DEFINE_INT.match(directive).groups()  # type: ignore[union-attr]
                lines.append(f"#define {name} {value.rstrip('uUlL')}")
        elif _DEFINE_FLAG.match(directive) and _DEFINE_FLAG.match(directive).group(1) == guard:  # type: ignore[union-attr]
            pass  # the include guard
        else:
            raise ValueError(f"mcds.h line {number}: cannot carry over {line!r} (extend header_to_cdef.py)")
    if stack:
        raise ValueError("mcds.h: an #if is never closed")
    return "\n".join(lines) + "\n"


def function_names(cdef: str) -> list[str]:
    """The ``mcds_*`` functions a cdef declares, in order."""
    names: list[str] = []
    for name in _FUNCTION.findall(cdef):
        if name not in names:
            names.append(name)
    return names


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: header_to_cdef.py path/to/mcds.h")
    with open(sys.argv[1], encoding="utf-8") as f:
        sys.stdout.write(cdef_from_header(f.read()))
