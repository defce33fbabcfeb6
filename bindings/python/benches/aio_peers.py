"""mcds.aio against aiomcache, in one run: counter increments per second at 1
and 64 concurrent tasks, medians over interleaved rounds, with ratios.

    python bindings/python/benches/aio_peers.py [--rounds 7] [--ops 2000]

Needs mcds (the wheel) and aiomcache installed, and memcached on PATH; a
memcached of its own is started on a free loopback port and dies with the
run. As root it holds the VM in its fast timing mode for the run (the CPUs'
idle states limited to polling through /dev/cpu_dma_latency, as the Rust
``peers`` bench does; PEERS_IDLE=1 leaves them alone), and it prints the
mode it met, measured from a raw socket's round trips.

Both clients increment one counter with memcached's incr: aiomcache speaks
the text protocol over asyncio streams (``pool_size`` connections, default
2, as aiomcache's own default); mcds.aio runs each call on a worker thread
of its pool (64 threads by default) on the store's shared connections.
"""

from __future__ import annotations

import argparse
import asyncio
import ctypes
import os
import signal
import socket
import statistics
import subprocess
import sys
import time
from typing import Awaitable, Callable, Dict, List

import aiomcache

import mcds
import mcds.aio


def die_with_parent() -> None:
    ctypes.CDLL(None).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


def start_memcached() -> "tuple[subprocess.Popen[bytes], int]":
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    args = ["memcached", "-l", "127.0.0.1", "-p", str(port), "-U", "0", "-m", "64", "-t", "2"]
    if os.geteuid() == 0:
        args += ["-u", "root"]
    proc = subprocess.Popen(args, preexec_fn=die_with_parent)
    for _ in range(500):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return proc, port
        except OSError:
            time.sleep(0.01)
    raise SystemExit("memcached did not start")


def hold_fast_mode() -> object:
    if os.environ.get("PEERS_IDLE"):
        print("CPU idle states: left to the VM ($PEERS_IDLE)")
        return None
    try:
        f = open("/dev/cpu_dma_latency", "wb", buffering=0)
        f.write((0).to_bytes(4, sys.byteorder))
        print("CPU idle states: polling only for the run (/dev/cpu_dma_latency held at 0)")
        return f
    except OSError as e:
        print(f"CPU idle states: left to the VM ({e}): rounds may switch modes")
        return None


def raw_round_trips(port: int, n: int = 2000) -> float:
    """A raw socket's incr round trips per second: the floor, and the mode."""
    with socket.create_connection(("127.0.0.1", port)) as s:
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        s.sendall(b"set rawbench 0 0 1\r\n0\r\n")
        s.recv(100)
        started = time.perf_counter()
        for _ in range(n):
            s.sendall(b"incr rawbench 1\r\n")
            s.recv(100)
        return n / (time.perf_counter() - started)


async def rate(tasks: int, ops: int, op: Callable[[], Awaitable[object]]) -> float:
    """Ops per second of ``tasks`` tasks doing ``ops`` ops in all."""
    each = ops // tasks

    async def worker() -> None:
        for _ in range(each):
            await op()

    started = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(tasks)))
    return each * tasks / (time.perf_counter() - started)


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--ops", type=int, default=2000, help="ops per arm and round")
    args = parser.parse_args()
    hold = hold_fast_mode()
    proc, port = start_memcached()
    try:
        store = mcds.aio.Store(f"127.0.0.1:{port}")
        counter = store.counter("aio-bench")
        client = aiomcache.Client("127.0.0.1", port)
        await client.set(b"aiomcache-bench", b"0")
        arms: Dict[str, Callable[[], Awaitable[object]]] = {
            "mcds.aio": lambda: counter.incr(1),
            "aiomcache": lambda: client.incr(b"aiomcache-bench", 1),
        }
        samples: Dict[str, List[float]] = {}
        raw: List[float] = []
        for _ in range(2):  # warm-up: connections, threads
            for op in arms.values():
                await rate(64, 640, op)
        for r in range(args.rounds):
            raw.append(raw_round_trips(port))
            # Interleaved, and the order turned every round.
            order = [(t, name) for t in (1, 64) for name in arms]
            if r % 2:
                order.reverse()
            for tasks, name in order:
                ops = args.ops if tasks == 1 else max(args.ops, 64 * 50)
                samples.setdefault(f"{name}, {tasks} task{'s' if tasks > 1 else ''}", []).append(
                    await rate(tasks, ops, arms[name])
                )
        rtt = 1e6 / statistics.median(raw)
        fast = sum(1 for x in raw if 1e6 / x < 25)
        mode = ("fast mode (CPUs busy, ~7.5 µs round trips)" if fast * 3 >= 2 * len(raw)
                else "slow mode (CPUs idle, ~60 µs round trips)" if fast * 3 <= len(raw) else "mixed modes")
        print(f"mode: a raw socket's median incr round trip is {rtt:.1f} µs: {mode}; "
              f"{fast} of {len(raw)} rounds under 25 µs")
        print(f"python {sys.version.split()[0]}, mcds {mcds.__version__}, aiomcache {aiomcache.__version__}, "
              f"{args.rounds} interleaved rounds, medians")
        print()
        print("| tasks | mcds.aio ops/s | aiomcache ops/s | mcds.aio / aiomcache |")
        print("|---|---|---|---|")
        for tasks in (1, 64):
            label = f"{tasks} task{'s' if tasks > 1 else ''}"
            ours = statistics.median(samples[f"mcds.aio, {label}"])
            theirs = statistics.median(samples[f"aiomcache, {label}"])
            print(f"| {tasks} | {ours:,.0f} | {theirs:,.0f} | {ours / theirs:.2f}x |")
        assert await counter.get() > 0
        await client.close()
    finally:
        proc.kill()
        proc.wait()
        if hold is not None:
            hold.close()  # type: ignore[attr-defined]


if __name__ == "__main__":
    asyncio.run(main())
