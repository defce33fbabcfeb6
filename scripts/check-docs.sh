#!/usr/bin/env bash
# The guide (docs/, mdBook): it builds, and every link in it resolves
# (offline: scripts/check-docs.py over the built HTML). mdBook comes from
# crates.io when it is missing (cargo install, without its server).
#
#   scripts/check-docs.sh             install mdBook if missing, check the guide
#   scripts/check-docs.sh --install   only install mdBook if missing
#                                     (test.sh does it early, in the background)
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v mdbook >/dev/null 2>&1; then
  cargo install mdbook --locked --no-default-features --version '^0.4' --quiet
fi
[ "${1:-}" = --install ] && exit 0
rm -rf docs/book
mdbook build docs
python3 scripts/check-docs.py docs/book
