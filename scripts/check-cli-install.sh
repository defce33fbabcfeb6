#!/usr/bin/env bash
# scripts/install-cli.sh as an operator runs it, with no arguments (into
# ~/.local), for a scratch HOME: then bash-completion finds the completions
# on its own (no `source` by hand), completing `mcds lock run --no` to
# `--nonblock`, and `man mcds` finds and renders the page with ~/.local/bin
# on PATH.
set -euo pipefail
cd "$(dirname "$0")/.."
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

# bash-completion's own loader, as an interactive shell would use it.
completed=$(bash -c '
  source /usr/share/bash-completion/bash_completion
  _comp_load mcds 2>/dev/null || __load_completion mcds
  complete -p mcds >&2
  COMP_WORDS=(mcds lock run --no); COMP_CWORD=3
  COMP_LINE="mcds lock run --no"; COMP_POINT=${#COMP_LINE}
  "$(complete -p mcds | sed -n "s/.*-F \([^ ]*\).*/\1/p")" mcds --no run
  printf "%s\n" "${COMPREPLY[@]}"')
echo "bash completes 'mcds lock run --no' to: $completed"
[ "$completed" = "--nonblock" ] || { echo "completion failed" >&2; exit 1; }

page=$(MANWIDTH=80 MANPAGER=cat man mcds-lock-run 2>&1)
echo "$page" | sed -n '1,4p'
echo "$page" | grep -q -- '--nonblock' || { echo "man mcds-lock-run lacks --nonblock" >&2; exit 1; }
MANWIDTH=80 MANPAGER=cat man mcds | grep -q 'Exit codes:' || { echo "man mcds lacks the exit codes" >&2; exit 1; }
echo "completions and man pages work from $prefix"
