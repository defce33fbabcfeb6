#!/usr/bin/env bash
# Build the API docs of every workspace crate into <target>/doc, with every
# reference to another mcds crate a link, and check that it is:
#
#   scripts/doc.sh          (then open target/doc/mcds/index.html)
#
# rustdoc links to another crate only if that crate's directory exists in
# the output when it starts, and cargo deletes a crate's directory when it
# starts documenting it (to drop stale pages). With cargo's parallel jobs a
# crate documented while a dependency's directory is deleted gets bare
# names instead of links, with no warning. So: every crate's directory is
# made first, the docs are built one crate at a time (-j1: no crate starts
# while another's directory is gone; the dependencies' metadata, which the
# docs need, is built in parallel first), and
# scripts/check-rustdoc-links.py fails on any unlinked reference left.
# Warnings are errors (RUSTDOCFLAGS=-D warnings).
set -euo pipefail
cd "$(dirname "$0")/.."
target=$(cargo metadata --format-version 1 --no-deps | sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')
export RUSTDOCFLAGS="-D warnings ${RUSTDOCFLAGS:-}"
# What the docs compile against, in parallel: the crates' metadata.
cargo check --workspace --lib --quiet
cargo metadata --format-version 1 --no-deps | python3 -c '
import json, sys
for p in json.load(sys.stdin)["packages"]:
    for t in p["targets"]:
        if t.get("doc", True) and set(t["kind"]) & {"lib", "rlib", "proc-macro"}:
            print(t["name"].replace("-", "_"))
' | while read -r crate; do mkdir -p "$target/doc/$crate"; done
cargo doc --workspace --no-deps --quiet -j1
python3 scripts/check-rustdoc-links.py "$target/doc"
