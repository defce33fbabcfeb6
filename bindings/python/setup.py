"""Build the `mcds` wheel and sdist: the Python sources plus things made here.

* ``mcds/_cdef.py``: the declarations of include/mcds.h in the form cffi's
  ``ffi.cdef`` takes, made by header_to_cdef.py from the header itself.
* ``mcds/libmcds.so``: the shared library, from ``$MCDS_LIB`` if set, else
  built here with ``cargo build --release -p mcds-ffi`` (in the target
  directory that ``cargo metadata`` names). The build fails if the library
  lacks a function of the header (a stale build).

The Rust workspace is the checkout's (two directories up), or, in an sdist,
the copy under ``rust/`` that the sdist command puts there: an sdist holds
what cargo needs to build libmcds, so ``pip install mcds-<version>.tar.gz``
works wherever cargo does.

The wheel is tagged ``py3-none-<platform>``: the library is native code,
but cffi's ABI mode does not depend on the Python version or ABI.
scripts/build-python-wheel.sh links the library against an old glibc and
has auditwheel retag the wheel manylinux.
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
from setuptools.command.sdist import sdist

try:
    from setuptools.command.bdist_wheel import bdist_wheel
except ImportError:  # setuptools < 70.1
    from wheel.bdist_wheel import bdist_wheel  # type: ignore[no-redef]

HERE = os.path.dirname(os.path.abspath(__file__))
#: The Rust workspace in an sdist (see Sdist), else the checkout's.
SDIST_ROOT = os.path.join(HERE, "rust")
IN_SDIST = os.path.isfile(os.path.join(SDIST_ROOT, "Cargo.toml"))
ROOT = SDIST_ROOT if IN_SDIST else os.path.normpath(os.path.join(HERE, "..", ".."))
#: What cargo needs to build mcds-ffi: the workspace's manifest and lock,
#: every member (cargo loads them all, and their path dev-dependencies),
#: the header, and the licences.
WORKSPACE_PATHS = ["Cargo.toml", "Cargo.lock", "LICENSE-APACHE", "LICENSE-MIT", "include", "ffi", "crates", "benches"]
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


def cargo() -> str:
    """The cargo to run ($CARGO, else cargo on PATH), or a clear exit."""
    name = os.environ.get("CARGO", "cargo")
    path = shutil.which(name)
    if path is None:
        raise SystemExit(
            f"Building mcds from source needs Rust's cargo (Rust 1.85 or newer) to compile libmcds, "
            f"and there is no {name!r} on PATH. Install Rust (https://rustup.rs) and retry; or install "
            "the prebuilt wheel instead (mcds-<version>-py3-none-manylinux_2_17_<arch>.whl, for Linux "
            "with glibc 2.17 or newer: no Rust needed); or set MCDS_LIB to a libmcds_ffi.so built already."
        )
    return path


def find_lib() -> str:
    """The libmcds to bundle: $MCDS_LIB, or cargo's release build, made now."""
    path = os.environ.get("MCDS_LIB")
    if not path:
        tool = cargo()
        command = [tool, "build", "--release", "-p", "mcds-ffi"]
        if IN_SDIST:
            command.append("--locked")  # the crates the sdist was made with
        print(f"building libmcds: {' '.join(command)} (in {ROOT})", file=sys.stderr, flush=True)
        try:
            subprocess.run(command, cwd=ROOT, check=True)
            meta = subprocess.run(
                [tool, "metadata", "--format-version", "1", "--no-deps"],
                cwd=ROOT, check=True, capture_output=True, text=True,
            ).stdout
        except (OSError, subprocess.CalledProcessError) as e:
            raise SystemExit(f"building libmcds with cargo failed ({e}); set MCDS_LIB to use a built one") from None
        # Cargo names the library for its crate, mcds-ffi; the package
        # holds it as LIB_NAME.
        path = os.path.join(json.loads(meta)["target_directory"], "release", CARGO_LIB_NAME)
    if not os.path.isfile(path):
        raise SystemExit(f"{path} does not exist: run `cargo build --release -p mcds-ffi` first, or set MCDS_LIB")
    return path


def workspace_files() -> list:
    """The files of WORKSPACE_PATHS, relative to ROOT: those git does not
    ignore in a checkout (tracked or new), every file but target/ in an sdist."""
    if not IN_SDIST and os.path.exists(os.path.join(ROOT, ".git")):
        try:
            listed = subprocess.run(
                ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard", "--", *WORKSPACE_PATHS],
                cwd=ROOT, check=True, capture_output=True, text=True,
            ).stdout.split("\0")
            return sorted(f for f in listed if f and os.path.isfile(os.path.join(ROOT, f)))
        except (OSError, subprocess.CalledProcessError):
            pass  # no git: every file but target/, as below
    files = []
    for top in WORKSPACE_PATHS:
        if os.path.isfile(os.path.join(ROOT, top)):
            files.append(top)
            continue
        for dirpath, dirnames, filenames in os.walk(os.path.join(ROOT, top)):
            dirnames[:] = sorted(d for d in dirnames if d not in ("target", ".git", "__pycache__"))
            files.extend(os.path.relpath(os.path.join(dirpath, f), ROOT) for f in sorted(filenames))
    return files


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


class Sdist(sdist):
    """The sdist, plus the Rust workspace under rust/ (what cargo needs to
    build libmcds from it: see WORKSPACE_PATHS)."""

    def make_release_tree(self, base_dir: str, files: list) -> None:
        super().make_release_tree(base_dir, files)
        for name in workspace_files():
            dest = os.path.join(base_dir, "rust", name)
            os.makedirs(os.path.dirname(dest), exist_ok=True)
            shutil.copy2(os.path.join(ROOT, name), dest)


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
    cmdclass={"build_py": BuildPy, "bdist_wheel": BdistWheel, "sdist": Sdist},
)
