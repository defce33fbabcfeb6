# shellcheck shell=bash
# A real memcached for the scripts that check an install or a binding
# (check-python.sh, check-php-fpm.sh, check-pecl.sh and the README's C
# example). Source it from the repository root.
#
#   free_port               prints a free loopback TCP port
#   start_memcached [ARG..] starts `memcached -l 127.0.0.1 -p <free port>
#                           -U 0 -m 16 [ARG..]` (`-u root` as root, which
#                           memcached needs), dying with this shell
#                           (setpriv --pdeathsig KILL), and waits until it
#                           accepts connections; sets mc_pid, mc_port and
#                           mc_addr. Tries 3 ports (one may be taken in
#                           between); fails if none starts.

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

start_memcached() {
  local as_root=() try
  [ "$(id -u)" -eq 0 ] && as_root=(-u root)
  for try in 1 2 3; do
    mc_port=$(free_port)
    mc_addr="127.0.0.1:$mc_port"
    setpriv --pdeathsig KILL memcached "${as_root[@]}" -l 127.0.0.1 -p "$mc_port" -U 0 -m 16 "$@" >/dev/null 2>&1 &
    mc_pid=$!
    for _ in $(seq 100); do
      (exec 3<>"/dev/tcp/127.0.0.1/$mc_port") 2>/dev/null && return 0
      kill -0 "$mc_pid" 2>/dev/null || break
      sleep 0.05
    done
    kill -KILL "$mc_pid" 2>/dev/null || true
    wait "$mc_pid" 2>/dev/null || true
  done
  mc_pid=""
  echo "memcached did not start on a free loopback port (3 tries)" >&2
  return 1
}
