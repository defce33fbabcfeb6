#!/usr/bin/env bash
# The PHP extension under php-fpm, as a site runs it: Debian's php-fpm8.2
# with a config of its own (a scratch directory, a free loopback port,
# pm = static with 4 workers, clear_env left at its default, yes), its
# store from the ini setting mcds.servers (php_admin_value, as a pool sets
# it) on a real memcached on a free loopback port, and persistent stores
# (Mcds\Store::fromConfig('fpm-check')). Driven with cgi-fcgi (libfcgi-bin):
#
#   1. 200 requests, 8 at a time: each increments a counter once and runs a
#      section under an mcds lock that counts overlaps. The counter must end
#      at exactly 200 (read back from memcached by php-cli, so the workers
#      did use it), the overlaps at 0, every response be "ok", and
#      memcached's total_connections grow by at most workers x 2 (libmcds's
#      connections per server): the workers keep their stores across
#      requests.
#   2. 20 requests without a persistent id: each opens connections of its
#      own (the count above is not met by accident).
#   3. A request whose store has no servers configured says so (an
#      Mcds\InvalidArgumentException), MCDS_SERVERS in the check's
#      environment notwithstanding: clear_env dropped it.
#   4. php-fpm's log holds no error, warning or crash, shutdown included.
#
#   scripts/check-php-fpm.sh              build (scripts/build-php-ext.sh), then check
#   scripts/check-php-fpm.sh --no-build   check bindings/php/modules/mcds.so as built
#
# Every process it starts dies with it (setpriv --pdeathsig; php-fpm's
# workers through a watchdog, as they are the master's children). Needs
# php-fpm, libfcgi-bin, memcached, php-cli, util-linux (scripts/test.sh
# installs them).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
if [ "${1:-}" != "--no-build" ]; then scripts/build-php-ext.sh; fi
ext="$root/bindings/php/modules/mcds.so"
[ -f "$ext" ] || { echo "$ext not built: run scripts/build-php-ext.sh" >&2; exit 1; }
# Debian's binary is php-fpm<version>, in /usr/sbin (not on every user's PATH).
php_version=$(php -r 'echo PHP_MAJOR_VERSION, ".", PHP_MINOR_VERSION;')
fpm=$(PATH="$PATH:/usr/sbin" command -v "php-fpm$php_version" || PATH="$PATH:/usr/sbin" command -v php-fpm || true)
[ -n "$fpm" ] || { echo "php-fpm not found (apt-get install php-fpm)" >&2; exit 1; }
command -v cgi-fcgi >/dev/null || { echo "cgi-fcgi not found (apt-get install libfcgi-bin)" >&2; exit 1; }

workers=4
requests=200
concurrency=8
conns_per_server=2 # libmcds's default (mcds-memcached's DEFAULT_CONNECTIONS)

tmp=$(mktemp -d)
pids=()
cleanup() {
  local status=$?
  # php-fpm first (SIGQUIT: a graceful stop, workers included), then the rest.
  if [ -n "${fpm_pid:-}" ] && kill -0 "$fpm_pid" 2>/dev/null; then
    kill -QUIT "$fpm_pid" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$fpm_pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$fpm_pid" 2>/dev/null || true
  fi
  # The watchdog: TERM, which it traps (a KILL would be reported as a crash).
  if [ -n "${watchdog:-}" ]; then kill -TERM "$watchdog" 2>/dev/null || true; fi
  for pid in "${pids[@]}"; do kill -KILL "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$tmp"
  exit "$status"
}
trap cleanup EXIT
fail() { echo "check-php-fpm: FAILED: $*" >&2; [ -f "$tmp/fpm.log" ] && sed 's/^/  fpm.log: /' "$tmp/fpm.log" >&2; exit 1; }

source "$root/scripts/lib/memcached.sh" # free_port, start_memcached
wait_port() { # wait_port PORT PID: until something listens on 127.0.0.1:PORT (or PID died)
  for _ in $(seq 100); do
    if php -r 'exit(@stream_socket_client("tcp://127.0.0.1:'"$1"'", $e, $s, 0.2) ? 0 : 1);'; then return 0; fi
    kill -0 "$2" 2>/dev/null || return 1
    sleep 0.05
  done
  return 1
}

# memcached: a real one, on a free loopback port.
start_memcached || fail "memcached did not start"
pids+=("$mc_pid")
mc_stat() { # mc_stat NAME: one value of memcached's stats (this connection counts in total_connections)
  php -r '$s = stream_socket_client("tcp://127.0.0.1:'"$mc_port"'", $e, $m, 2); fwrite($s, "stats\r\nquit\r\n");
    while (($l = fgets($s)) !== false) { if (preg_match("/^STAT '"$1"' (\\d+)/", $l, $x)) { echo $x[1]; exit(0); } } exit(1);'
}

# The scripts the requests run.
mkdir -p "$tmp/www"
cat >"$tmp/www/count.php" <<'PHP'
<?php
// One request: the counter once, then a section under the lock that counts overlaps.
$store = Mcds\Store::fromConfig($_GET['persistent'] === '1' ? 'fpm-check' : null);
$run = $_GET['run'];
$n = $store->counter("$run-requests")->incr();
$inside = $store->counter("$run-inside");
$store->lock("$run-lock", ttl: 10)->synchronized(function () use ($store, $inside, $run) {
    if ($inside->incr() !== 1) {
        $store->counter("$run-overlaps")->incr();
    }
    usleep(1000);
    $inside->decr();
});
echo 'ok pid=', getmypid(), ' n=', $n, ' persistent=', var_export($store->isPersistent(), true), "\n";
PHP
cat >"$tmp/www/totals.php" <<'PHP'
<?php
$store = Mcds\Store::fromConfig('fpm-check');
$run = $_GET['run'];
echo 'total=', $store->counter("$run-requests")->get(), ' overlaps=', $store->counter("$run-overlaps")->get(), "\n";
PHP
cat >"$tmp/www/unconfigured.php" <<'PHP'
<?php
echo 'env MCDS_SERVERS=', var_export(getenv('MCDS_SERVERS', true), true), "\n";
try {
    Mcds\Store::fromConfig();
    echo "a store without configured servers\n";
} catch (Mcds\InvalidArgumentException $e) {
    echo 'refused: ', $e->getMessage(), "\n";
}
PHP

# One FastCGI request: fcgi SCRIPT QUERY (the body, headers stripped, on stdout).
cat >"$tmp/fcgi" <<'SH'
#!/bin/sh
# fcgi PORT DIR SCRIPT QUERY
exec env -i REQUEST_METHOD=GET SCRIPT_FILENAME="$2/$3" SCRIPT_NAME="/$3" REQUEST_URI="/$3?$4" \
  QUERY_STRING="$4" SERVER_PROTOCOL=HTTP/1.1 GATEWAY_INTERFACE=CGI/1.1 REMOTE_ADDR=127.0.0.1 \
  SERVER_NAME=localhost SERVER_PORT=80 setpriv --pdeathsig KILL cgi-fcgi -bind -connect "127.0.0.1:$1"
SH
chmod +x "$tmp/fcgi"

# php-fpm: its own config; clear_env not set (its default: yes).
run_as=""
root_flag=()
if [ "$(id -u)" -eq 0 ]; then run_as=$'user = root\ngroup = root'; root_flag=(-R); fi
for try in 1 2 3; do
  fpm_port=$(free_port)
  bare_port=$(free_port)
  cat >"$tmp/fpm.conf" <<CONF
[global]
pid = $tmp/fpm.pid
error_log = $tmp/fpm.log
log_level = notice
daemonize = no

[check]
$run_as
listen = 127.0.0.1:$fpm_port
listen.allowed_clients = 127.0.0.1
pm = static
pm.max_children = $workers
catch_workers_output = yes
decorate_workers_output = no
php_admin_value[mcds.servers] = 127.0.0.1:$mc_port
php_admin_flag[log_errors] = on
php_admin_value[error_log] = $tmp/php-errors.log
php_admin_value[error_reporting] = E_ALL
php_admin_flag[display_errors] = off

; A pool that sets no mcds.servers.
[bare]
$run_as
listen = 127.0.0.1:$bare_port
listen.allowed_clients = 127.0.0.1
pm = static
pm.max_children = 1
catch_workers_output = yes
decorate_workers_output = no
php_admin_flag[log_errors] = on
php_admin_value[error_reporting] = E_ALL
php_admin_flag[display_errors] = off
CONF
  : >"$tmp/fpm.log"
  # MCDS_SERVERS points at a dead port: a worker that saw it (clear_env off) fails check 3.
  MCDS_SERVERS="127.0.0.1:$(free_port)" setsid setpriv --pdeathsig KILL \
    "$fpm" -F -y "$tmp/fpm.conf" "${root_flag[@]}" -d extension="$ext" >"$tmp/fpm.out" 2>&1 &
  fpm_pid=$!
  if wait_port "$fpm_port" "$fpm_pid" && wait_port "$bare_port" "$fpm_pid"; then break; fi
  kill -KILL "$fpm_pid" 2>/dev/null || true
  wait "$fpm_pid" 2>/dev/null || true
  fpm_pid=""
  [ "$try" -lt 3 ] || fail "php-fpm did not start: $(cat "$tmp/fpm.out")"
done
# The workers are the master's children, not this script's: a watchdog that
# dies with this script (even by SIGKILL) takes php-fpm's whole process
# group (setsid above) with it.
setpriv --pdeathsig TERM bash -c 'trap "kill -KILL -- -'"$fpm_pid"' 2>/dev/null; exit 0" TERM; while kill -0 '"$fpm_pid"' 2>/dev/null; do sleep 0.2; done' &
watchdog=$!

# A request's body; what php-fpm sends on the FastCGI stderr stream (PHP's
# errors, when a pool logs none) goes to fcgi-stderr, which must stay empty.
request() { "$tmp/fcgi" "$fpm_port" "$tmp/www" "$@" 2>>"$tmp/fcgi-stderr" | tr -d '\r' | sed '1,/^$/d'; }

run="fpm-$$-$(date +%s)"
started=$(date +%s.%N)
connections_before=$(mc_stat total_connections)
mkdir "$tmp/out"
seq "$requests" | setpriv --pdeathsig KILL xargs -P "$concurrency" -I{} \
  sh -c '"$0" "$1" "$2" count.php "run='"$run"'&persistent=1" >"$3/{}" 2>>"$3.stderr"' "$tmp/fcgi" "$fpm_port" "$tmp/www" "$tmp/out"
connections_after=$(mc_stat total_connections)
elapsed=$(awk -v a="$started" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }')
ok=$(cat "$tmp/out"/* | tr -d '\r' | grep -c '^ok pid=.* persistent=true$' || true)
worker_pids=$(cat "$tmp/out"/* | tr -d '\r' | sed -n 's/^ok pid=\([0-9]*\) .*/\1/p' | sort -u | wc -l)
totals=$(request totals.php "run=$run")
total=$(echo "$totals" | sed -n 's/^total=\([0-9]*\) .*/\1/p')
overlaps=$(echo "$totals" | sed -n 's/.* overlaps=\([0-9]*\)$/\1/p')
# Read back from memcached by php-cli: the workers' store was that server.
direct=$(php -d extension="$ext" -r 'echo Mcds\Store::memcached($argv[1])->counter($argv[2])->get();' \
  "127.0.0.1:$mc_port" "$run-requests")
opened=$((connections_after - connections_before - 1)) # the stats connection of "after" counts
bound=$((workers * conns_per_server))
echo "php-fpm ($workers workers, pm = static, clear_env = yes), persistent stores (fromConfig('fpm-check')):"
echo "  requests: $requests ($concurrency at a time, ${elapsed}s), ok responses: $ok, worker pids seen: $worker_pids"
echo "  counter total: $total (read back from memcached by php-cli: $direct), lock overlaps: $overlaps"
echo "  memcached total_connections: before $connections_before, after $connections_after: $opened opened (bound: $workers workers x $conns_per_server per server = $bound)"
[ "$ok" -eq "$requests" ] || fail "$ok of $requests requests answered ok: $(cat "$tmp/out"/* | tr -d '\r' | grep -v '^ok' | head -n 20)"
[ "$worker_pids" -le "$workers" ] || fail "responses came from $worker_pids processes, more than the $workers workers"
[ "$total" = "$requests" ] || fail "the counter ended at '$total', not $requests"
[ "$direct" = "$requests" ] || fail "memcached holds '$direct' for the counter, not $requests"
[ "$overlaps" = 0 ] || fail "the lock section overlapped $overlaps times"
[ "$opened" -le "$bound" ] || fail "the workers opened $opened connections, more than $bound: stores were not kept across requests"

# Without a persistent id every request opens its own connections.
plain=20
before=$(mc_stat total_connections)
for i in $(seq "$plain"); do request count.php "run=$run-plain&persistent=0" >>"$tmp/plain.out"; done
after=$(mc_stat total_connections)
plain_opened=$((after - before - 1))
plain_ok=$(tr -d '\r' <"$tmp/plain.out" | grep -c '^ok pid=.* persistent=false$' || true)
echo "  without a persistent id: $plain requests ($plain_ok ok) opened $plain_opened connections"
[ "$plain_ok" -eq "$plain" ] || fail "requests without a persistent id: $(cat "$tmp/plain.out")"
[ "$plain_opened" -ge "$plain" ] || fail "$plain requests without a persistent id opened only $plain_opened connections"

# The pool without mcds.servers: a clear exception, not the embedded store
# (and clear_env dropped MCDS_SERVERS, which php-fpm was started with).
unconfigured=$("$tmp/fcgi" "$bare_port" "$tmp/www" unconfigured.php "" 2>>"$tmp/fcgi-stderr" | tr -d '\r' | sed '1,/^$/d')
echo "  a pool without mcds.servers: $(echo "$unconfigured" | head -n 1); $(echo "$unconfigured" | tail -n 1 | cut -c1-100)..."
echo "$unconfigured" | grep -q "^env MCDS_SERVERS=false$" || fail "the workers see MCDS_SERVERS: $unconfigured"
echo "$unconfigured" | grep -q "^refused: Mcds\\\\Store::fromConfig(): no store is configured" || fail "with no servers configured: $unconfigured"

# A graceful stop (MSHUTDOWN frees the persistent stores), then the log.
kill -QUIT "$fpm_pid"
for _ in $(seq 100); do kill -0 "$fpm_pid" 2>/dev/null || break; sleep 0.05; done
if kill -0 "$fpm_pid" 2>/dev/null; then fail "php-fpm did not stop on SIGQUIT"; fi
wait "$fpm_pid" 2>/dev/null || true
fpm_pid=""
grep -q 'exiting, bye-bye' "$tmp/fpm.log" || fail "php-fpm did not log its exit"
if grep -E -i 'warning|error|alert|fatal|exited on signal|deprecated|said into std' "$tmp/fpm.log" >&2; then
  fail "php-fpm's log has the errors above"
fi
# PHP's own log (the check pool's error_log), and the FastCGI stderr streams.
cat "$tmp/php-errors.log" "$tmp/out.stderr" "$tmp/fcgi-stderr" >"$tmp/all-errors" 2>/dev/null || true
if [ -s "$tmp/all-errors" ]; then sed 's/^/  /' "$tmp/all-errors" >&2; fail "PHP reported the errors above"; fi
echo "  php-fpm log: $(wc -l <"$tmp/fpm.log") lines, PHP's error log and FastCGI stderr empty: no error or warning; stopped cleanly"
echo "check-php-fpm: ok"
