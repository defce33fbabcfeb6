#!/usr/bin/env bash
# scripts/install-cli.sh as an operator runs it, with no arguments (into
# ~/.local), for a scratch HOME: then bash-completion finds the completions
# on its own (no `source` by hand), completing `mcds lock run --no` to
# `--nonblock`, and `man mcds` finds and renders the page with ~/.local/bin
# on PATH.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/cli-checks.sh
scratch=$(mktemp -d /tmp/mcds-cli-install.XXXXXX)
trap 'rm -rf "$scratch"' EXIT
# cargo and rustup keep their homes; only the operator's HOME is new.
export CARGO_HOME="${CARGO_HOME:-$HOME/.cargo}" RUSTUP_HOME="${RUSTUP_HOME:-$HOME/.rustup}"
export HOME="$scratch/home"
unset XDG_DATA_HOME XDG_DATA_DIRS MANPATH BASH_COMPLETION_USER_DIR
mkdir -p "$HOME"
prefix="$HOME/.local"
scripts/install-cli.sh
export PATH="$prefix/bin:$PATH"

check_completion
check_man
echo "completions and man pages work from $prefix"
