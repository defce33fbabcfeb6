"""Build the `mcds` wheel: the Python sources plus two things made here.

* ``mcds/_cdef.py``: the declarations of include/mcds.h in the form cffi's
  ``ffi.cdef`` takes, made by header_to_cdef.py from the header itself.
* ``mcds/libmcds.so``: the shared library cargo built
  (``cargo build --release -p mcds-ffi``), from ``$MCDS_LIB`` or else the
  target directory that ``cargo metadata`` names. The build fails if it is
  missing or lacks a function of the header (a stale build).

The wheel is tagged ``py3-none-<platform>``: the library is native code,
but cffi's ABI mode does not depend on the Python version or ABI.
"""

from __future__ import annotations

import ctypes
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys

from setuptools import Distribution, setup
from setuptools.command.build_py import build_py

try:
    from setuptools.command.bdist_wheel import bdist_wheel
except ImportError:  # setuptools < 70.1
    from wheel.bdist_wheel import bdist_wheel  # type: ignore[no-redef]

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
HEADER = os.path.join(ROOT, "include", "mcds.h")
sys.path.insert(0, HERE)
from header_to_cdef import cdef_from_header, function_names  # noqa: E402

LIB_NAME = {"darwin": "libmcds.dylib", "win32": "mcds.dll"}.get(sys.platform, "libmcds.so")
CARGO_LIB_NAME = {"darwin": "libmcds_ffi.dylib", "win32": "mcds_ffi.dll"}.get(sys.platform, "libmcds_ffi.so")


def workspace_version() -> str:
    """The workspace's version ([workspace.package] in Cargo.toml)."""
    with open(os.path.join(ROOT, "Cargo.toml"), encoding="utf-8") as f:
        text = f.read()
    section = text.split("[workspace.package]", 1)[1]
    match = re.search(r'^version\s*=\s*"([^"]+)"', section, re.M)
    if not match:
        raise SystemExit("no version in [workspace.package] of Cargo.toml")
    return match.group(1)


def find_lib() -> str:
    """The libmcds cargo built: $MCDS_LIB, or <target dir>/release/."""
    path = os.environ.get("MCDS_LIB")
    if not path:
        try:
            meta = subprocess.run(
                [os.environ.get("CARGO", "cargo"), "metadata", "--format-version", "1", "--no-deps"],
                cwd=ROOT, check=True, capture_output=True, text=True,
            ).stdout
        except (OSError, subprocess.CalledProcessError) as e:
            raise SystemExit(f"cannot ask cargo where libmcds is ({e}); set MCDS_LIB to its path") from None
        # Cargo names the library for its crate, mcds-ffi; the package
        # holds it as LIB_NAME.
        path = os.path.join(json.loads(meta)["target_directory"], "release", CARGO_LIB_NAME)
    if not os.path.isfile(path):
        raise SystemExit(f"{path} does not exist: run `cargo build --release -p mcds-ffi` first, or set MCDS_LIB")
    return path


def check_exports(lib_path: str, names: list) -> None:
    """Every function of the header must be in the library."""
    lib = ctypes.CDLL(lib_path)
    missing = [n for n in names if not hasattr(lib, n)]
    if missing:
        raise SystemExit(
            f"{lib_path} lacks {', '.join(missing)} of include/mcds.h: it is stale; "
            "rebuild it with `cargo build --release -p mcds-ffi`"
        )


class BuildPy(build_py):
    """build_py, then write _cdef.py and _version.py and copy libmcds."""

    def run(self) -> None:
        super().run()
        package = os.path.join(self.build_lib, "mcds")
        with open(HEADER, "rb") as f:
            header = f.read()
        cdef = cdef_from_header(header.decode("utf-8"))
        if '"""' in cdef or "\\" in cdef:
            body = repr(cdef)
        else:
            body = '"""\\\n' + cdef + '"""'
        with open(os.path.join(package, "_cdef.py"), "w", encoding="utf-8") as f:
            f.write(
                '"""The declarations of include/mcds.h for cffi. Generated at build time by\n'
                'bindings/python/header_to_cdef.py (setup.py); do not edit."""\n\n'
                f'HEADER_SHA256 = "{hashlib.sha256(header).hexdigest()}"\n\n'
                f"CDEF = {body}\n"
            )
        with open(os.path.join(package, "_version.py"), "w", encoding="utf-8") as f:
            f.write(f'"""Generated at build time from Cargo.toml."""\n\n__version__ = "{workspace_version()}"\n')
        lib = find_lib()
        check_exports(lib, function_names(cdef))
        shutil.copyfile(lib, os.path.join(package, LIB_NAME))
        os.chmod(os.path.join(package, LIB_NAME), 0o755)


class BinaryDistribution(Distribution):
    """Holds native code (libmcds): installed to platlib, a platform wheel."""

    def has_ext_modules(self) -> bool:
        return True


class BdistWheel(bdist_wheel):
    """A platform wheel for any Python 3: cffi's ABI mode does not depend on
    the Python version or ABI, only the bundled library on the platform."""

    def get_tag(self):  # type: ignore[no-untyped-def]
        _, _, platform = super().get_tag()
        return "py3", "none", platform


setup(
    version=workspace_version(),
    distclass=BinaryDistribution,
    cmdclass={"build_py": BuildPy, "bdist_wheel": BdistWheel},
)
