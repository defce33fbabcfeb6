#!/usr/bin/env bash
# The event log's write rate from 4 writer processes, in a release build:
# for chunks of 60 s (slices of 250 ms) and of an hour (slices of 3.5 s),
# on one memcached with 1 MiB items, 5 rounds of 3 s each, interleaved.
# Every round reads the log back and fails unless every acknowledged event
# is there exactly once. Prints each round's rate and the medians.
#
#   scripts/bench-eventlog-writers.sh [ROUNDS]
#
# The rate is the sum over the 4 writers of the puts each had acknowledged
# over the time from its first put to its last reply. Writers, memcached
# and the machine's other work share its cores: on 2 cores, a figure
# depends on what else runs (see the guide's note on the VM's two timing
# modes).
set -euo pipefail
cd "$(dirname "$0")/.."
rounds="${1:-5}"
cargo build --quiet --release -p mcds-stress --bin mcds-stress-worker
worker="${CARGO_TARGET_DIR:-target}/release/mcds-stress-worker"
user=()
if [ "$(id -u)" = 0 ]; then user=(-u root); fi
rates_60=()
rates_3600=()
for round in $(seq 1 "$rounds"); do
    for chunk in 60 3600; do
        port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
        memcached "${user[@]}" -l 127.0.0.1 -p "$port" -U 0 -m 1024 &
        server=$!
        trap 'kill $server 2>/dev/null || true' EXIT
        for _ in $(seq 50); do
            (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
            sleep 0.1
        done
        out=$(mktemp)
        for id in 1 2 3 4; do
            "$worker" "127.0.0.1:$port" events ev "$id" 3000 1048576 "$chunk" >>"$out" &
        done
        wait $(jobs -p | grep -v "^$server$")
        rate=$(awk '{ r += $4 * 1000 / $6 } END { printf "%.0f", r }' "$out")
        puts=$(awk '{ printf "%s:%s ", $2, $4 }' "$out")
        # shellcheck disable=SC2086
        check=$("$worker" "127.0.0.1:$port" events-check ev 1048576 "$chunk" $puts)
        echo "round $round, chunks of $chunk s: $rate events/s; $check"
        if [ "$chunk" = 60 ]; then rates_60+=("$rate"); else rates_3600+=("$rate"); fi
        kill "$server"
        wait "$server" 2>/dev/null || true
        trap - EXIT
        rm -f "$out"
    done
done
median() { printf '%s\n' "$@" | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
echo "median of $rounds rounds, 4 writer processes: chunks of 60 s $(median "${rates_60[@]}") events/s; chunks of an hour $(median "${rates_3600[@]}") events/s"
