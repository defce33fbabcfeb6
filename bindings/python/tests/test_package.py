"""The package as built: declarations from the header (not stale), every C
function wrapped, the bundled library loaded from inside the package, a
platform wheel with py.typed."""

from __future__ import annotations

import hashlib
import importlib.metadata
import importlib.util
import re
from pathlib import Path

import pytest
from conftest import REPO

import mcds
from mcds import _cdef, _ffi

PACKAGE = Path(mcds.__file__).parent
HEADER = REPO / "include" / "mcds.h"


def generator():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("header_to_cdef", REPO / "bindings/python/header_to_cdef.py")
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def test_the_declarations_are_the_headers_own() -> None:
    header = HEADER.read_bytes()
    fresh = generator().cdef_from_header(header.decode())
    assert _cdef.CDEF == fresh and _cdef.HEADER_SHA256 == hashlib.sha256(header).hexdigest(), (
        "the installed mcds was built from another include/mcds.h: rebuild the wheel "
        "(scripts/build-python-wheel.sh) and reinstall it"
    )


#: C functions the package reaches another way, on purpose:
#: ``IntArray.members`` reads an ``mcds_int_list`` at once with
#: ``mcds_int_list_data`` rather than value by value. Every other C function
#: has a Python wrapper; a new one must get its wrapper, or be listed here
#: with its reason.
NOT_WRAPPED_ON_PURPOSE = {
    "mcds_int_list_len",
    "mcds_int_list_get",
}


def test_every_function_of_the_header_is_wrapped() -> None:
    # A function added to the C ABI must get its Python method (one module
    # per handle: src/mcds/_<handle>.py) before this passes.
    functions = generator().function_names(_cdef.CDEF)
    assert len(functions) >= 62
    source = "\n".join(p.read_text() for p in PACKAGE.glob("*.py") if p.name != "_cdef.py")
    unwrapped = {f for f in functions if not re.search(rf"\blib\.{f}\b", source)}
    assert unwrapped == NOT_WRAPPED_ON_PURPOSE, (
        f"C functions with no Python wrapper that NOT_WRAPPED_ON_PURPOSE does not list: "
        f"{sorted(unwrapped - NOT_WRAPPED_ON_PURPOSE)}; listed but wrapped now (remove them): "
        f"{sorted(NOT_WRAPPED_ON_PURPOSE - unwrapped)}"
    )
    for f in functions:
        getattr(_ffi.lib, f)  # and the bundled library exports each


def test_the_generator_keeps_what_cffi_takes_and_refuses_the_rest() -> None:
    gen = generator()
    cdef = gen.cdef_from_header(HEADER.read_text())
    assert "#include" not in cdef and "extern" not in cdef and "/*" not in cdef and "#if" not in cdef
    assert "#define MCDS_INVALID_KEY 100" in cdef and "#define MCDS_H" not in cdef
    header = '#ifndef X_H\n#define X_H\n#include <stdint.h>\n/* doc */\n#define A 0x10u\nint mcds_f(void); // c\n#endif\n'
    assert gen.cdef_from_header(header) == "#define A 0x10\nint mcds_f(void);\n"
    for bad in ['#define S "text"\n', "#if FEATURE\nint f(void);\n#endif\n", "#pragma once\n", "#ifdef __cplusplus\n"]:
        with pytest.raises(ValueError):
            gen.cdef_from_header(bad)


def test_the_bundled_library_is_loaded_from_the_package() -> None:
    assert Path(_ffi.LIB_PATH).parent == PACKAGE and Path(_ffi.LIB_PATH).is_file()
    maps = Path("/proc/self/maps")
    if maps.exists():
        loaded = {line.split()[-1] for line in maps.read_text().splitlines() if "libmcds" in line}
        assert loaded == {str(Path(_ffi.LIB_PATH).resolve())}, loaded


def test_it_is_the_installed_package_not_the_sources() -> None:
    assert REPO / "bindings" / "python" / "src" not in PACKAGE.parents
    assert (PACKAGE / "py.typed").is_file()


def test_versions_agree() -> None:
    cargo = (REPO / "Cargo.toml").read_text().split("[workspace.package]", 1)[1]
    version = re.search(r'^version = "([^"]+)"', cargo, re.M).group(1)  # type: ignore[union-attr]
    assert mcds.__version__ == version == mcds.lib_version() == importlib.metadata.version("mcds")


def test_it_is_a_platform_wheel() -> None:
    wheel = importlib.metadata.distribution("mcds").read_text("WHEEL") or ""
    tags = re.findall(r"^Tag: (\S+)$", wheel, re.M)
    assert tags and all(t.startswith("py3-none-") and not t.endswith("-any") for t in tags), tags
    assert "Root-Is-Purelib: false" in wheel


def test_every_public_name_is_documented() -> None:
    for name in mcds.__all__:
        obj = getattr(mcds, name)
        if callable(obj):
            assert obj.__doc__, f"mcds.{name} has no docstring"
    classes = [obj for obj in map(lambda n: getattr(mcds, n), mcds.__all__) if isinstance(obj, type)]
    assert mcds.IntArray in classes and mcds.Cursor in classes
    for cls in classes:
        for attr, member in vars(cls).items():
            if callable(member) and not attr.startswith("_"):
                assert member.__doc__, f"mcds.{cls.__name__}.{attr} has no docstring"
