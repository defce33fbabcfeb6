"""mcds's Python ``Counter.incr`` against pylibmc (libmemcached, a C
client) and pymemcache (pure Python, when installed), on one memcached
started here, in interleaved rounds; medians of throughput and the
ratios mcds / peer (above 1: mcds is faster). Not a test: nothing is
asserted.

    python bindings/python/benches/sync_peers.py [ROUNDS] [OPS]

Needs the ``mcds`` wheel installed (scripts/build-python-wheel.sh) and
pylibmc (Debian: python3-pylibmc, in a venv made with
``--system-site-packages``); memcached from PATH.
"""

from __future__ import annotations

import os
import socket
import statistics
import subprocess
import sys
import time
from typing import Callable, Dict, List


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_memcached() -> "tuple[subprocess.Popen[bytes], str]":
    port = free_port()
    command = ["memcached", "-l", "127.0.0.1", "-p", str(port), "-U", "0", "-t", "2"]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        command += ["-u", "root"]  # memcached refuses to run as root without it
    proc = subprocess.Popen(command)
    for _ in range(200):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.1).close()
            return proc, f"127.0.0.1:{port}"
        except OSError:
            time.sleep(0.01)
    proc.kill()
    raise RuntimeError("memcached did not start")


def main() -> None:
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 21
    ops = int(sys.argv[2]) if len(sys.argv) > 2 else 2_000
    import mcds

    proc, addr = start_memcached()
    try:
        arms: Dict[str, Callable[[], None]] = {}
        store = mcds.Store.memcached(addr)
        counter = store.counter("peers")

        def mcds_incr() -> None:
            incr = counter.incr
            for _ in range(ops):
                incr(1)

        arms["mcds Counter.incr"] = mcds_incr
        import pylibmc

        client = pylibmc.Client([addr], binary=False)
        client.set("pylibmc", "0")

        def pylibmc_incr() -> None:
            incr = client.incr
            for _ in range(ops):
                incr("pylibmc", 1)

        arms["pylibmc incr"] = pylibmc_incr
        try:
            from pymemcache.client.base import Client as PyMemcache

            host, port = addr.rsplit(":", 1)
            pm = PyMemcache((host, int(port)))
            pm.set("pymemcache", "0")

            def pymemcache_incr() -> None:
                incr = pm.incr
                for _ in range(ops):
                    incr("pymemcache", 1)

            arms["pymemcache incr"] = pymemcache_incr
        except ImportError:
            pass
        samples: Dict[str, List[float]] = {name: [] for name in arms}
        names = list(arms)
        for r in range(rounds):
            # The order rotates from round to round.
            for name in names[r % len(names):] + names[: r % len(names)]:
                started = time.perf_counter()
                arms[name]()
                samples[name].append(ops / (time.perf_counter() - started))
        medians = {name: statistics.median(s) for name, s in samples.items()}
        print(f"{rounds} interleaved rounds of {ops} sequential increments, Python {sys.version.split()[0]}")
        for name, rate in medians.items():
            print(f"  {name:22} {rate:12,.0f} ops/s")
        ours = medians["mcds Counter.incr"]
        for name, rate in medians.items():
            if name != "mcds Counter.incr":
                print(f"  mcds / {name}: {ours / rate:.2f}x")
    finally:
        proc.kill()
        proc.wait()


if __name__ == "__main__":
    main()
