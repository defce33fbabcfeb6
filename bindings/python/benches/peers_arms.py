"""The Python arms of the ``peers`` bench (``cargo bench -p mcds-benches
--bench peers``): mcds's ``Counter.incr`` and pylibmc's ``incr`` (a C
client, libmemcached), each run on the bench's own memcached, in the
bench's interleaved rounds, so that the Python row is in the same table
as every other.

    python peers_arms.py HOST:PORT

The bench starts it with the address of its memcached. The script opens
both clients, prints ``ready``, then reads one request a line from
stdin, ``<arm> <ops>`` (``mcds`` or ``pylibmc``), runs that many
sequential increments of one counter, and answers with the nanoseconds
they took. It ends when stdin closes.

Needs the ``mcds`` wheel installed and pylibmc (Debian: python3-pylibmc):
``scripts/bench-python-env.sh`` makes such an interpreter.
"""

from __future__ import annotations

import sys
import time
from typing import Callable, Dict


def main() -> None:
    addr = sys.argv[1]
    import mcds
    import pylibmc

    counter = mcds.Store.memcached(addr).counter("py-peers")
    client = pylibmc.Client([addr], binary=False)
    client.set("py-pylibmc", "0")

    def mcds_arm(ops: int) -> None:
        incr = counter.incr
        for _ in range(ops):
            incr(1)

    def pylibmc_arm(ops: int) -> None:
        incr = client.incr
        for _ in range(ops):
            incr("py-pylibmc", 1)

    arms: Dict[str, Callable[[int], None]] = {"mcds": mcds_arm, "pylibmc": pylibmc_arm}
    print("ready", flush=True)
    for line in sys.stdin:
        name, ops = line.split()
        started = time.perf_counter_ns()
        arms[name](int(ops))
        print(time.perf_counter_ns() - started, flush=True)


if __name__ == "__main__":
    main()
