#!/usr/bin/env bash
# Run the fuzz targets with cargo-fuzz (libFuzzer), on a fresh checkout.
#
#   scripts/fuzz.sh                 every target, 300 s each
#   scripts/fuzz.sh set_text 60     one target, 60 s
#   scripts/fuzz.sh --list          the targets
#
# Each run reads the committed seeds (fuzz/seeds/<target>/) and grows its own
# corpus in fuzz/corpus/<target>/ (created here, not committed). A crash
# leaves its input in fuzz/artifacts/<target>/: copy it to
# fuzz/regressions/<target>/ so that `cargo test -p mcds-fuzz --test
# fuzz_regressions` replays it on every ./scripts/test.sh run.
#
# Needs the nightly toolchain (`rustup toolchain install nightly`) and
# cargo-fuzz (`cargo install cargo-fuzz`); this script says so if either is
# missing rather than failing halfway.
set -euo pipefail
cd "$(dirname "$0")/../fuzz"

targets() { for f in fuzz_targets/*.rs; do basename "$f" .rs; done; }

if [ "${1:-}" = "--list" ]; then
  targets
  exit 0
fi
if ! rustup toolchain list 2>/dev/null | grep -q '^nightly'; then
  echo "fuzz.sh: the nightly toolchain is needed: rustup toolchain install nightly" >&2
  exit 2
fi
if ! cargo +nightly fuzz --help >/dev/null 2>&1; then
  echo "fuzz.sh: cargo-fuzz is needed: cargo install cargo-fuzz" >&2
  exit 2
fi

seconds="${2:-300}"
if [ $# -ge 1 ]; then
  if [ ! -f "fuzz_targets/$1.rs" ]; then
    echo "fuzz.sh: no target '$1'; the targets are: $(targets | tr '\n' ' ')" >&2
    exit 2
  fi
  run=("$1")
else
  mapfile -t run < <(targets)
fi

for target in "${run[@]}"; do
  mkdir -p "corpus/$target"
  echo "==> $target for ${seconds} s"
  cargo +nightly fuzz run "$target" "corpus/$target" "seeds/$target" -- -max_total_time="$seconds"
done
