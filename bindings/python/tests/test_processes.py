"""Several processes on one memcached: exact counts, mutual exclusion."""

from __future__ import annotations

import multiprocessing
import queue
import time
from typing import Any, Callable, List

import mcds_workers
from conftest import Memcached, unique

import mcds

PROCESSES = 4


def run_processes(target: Callable[..., None], *args: Any) -> List[Any]:
    """Run ``target(*args, results)`` in PROCESSES spawned processes; return
    what each put on ``results``. Every process is gone when this returns."""
    # spawn: each child imports mcds afresh and makes its own store (a store
    # inherited through fork works too: see test_fork.py).
    ctx = multiprocessing.get_context("spawn")
    results = ctx.Queue()
    procs = [ctx.Process(target=target, args=(*args, results), daemon=True) for _ in range(PROCESSES)]
    try:
        for p in procs:
            p.start()
        got: List[Any] = []
        deadline = time.monotonic() + 120
        while len(got) < len(procs):
            try:
                got.append(results.get(timeout=0.5))
            except queue.Empty:
                failed = [p.exitcode for p in procs if p.exitcode not in (None, 0)]
                assert not failed, f"a process failed (exit codes {failed}); see its stderr"
                assert time.monotonic() < deadline, "the processes did not finish in 120 s"
        for p in procs:
            p.join(30)
            assert p.exitcode == 0, f"process {p.pid} exited with {p.exitcode}"
        return got
    finally:
        for p in procs:
            if p.is_alive():
                p.kill()
                p.join()


def test_processes_increment_one_counter_exactly(memcached: Memcached) -> None:
    name, n = unique("procs"), 2500
    pids = run_processes(mcds_workers.increment, memcached.addr, name, n)
    assert len(set(pids)) == PROCESSES
    assert mcds.Store.memcached(memcached.addr).counter(name).get() == PROCESSES * n


def test_lock_excludes_other_processes(memcached: Memcached, tmp_path) -> None:  # type: ignore[no-untyped-def]
    name, n = unique("proc-mutex"), 20
    path = tmp_path / "shared"
    path.write_text("0")
    overlaps = run_processes(mcds_workers.locked_increments, memcached.addr, name, str(path), n)
    assert overlaps == [0] * PROCESSES
    assert int(path.read_text()) == PROCESSES * n, "no lost update: one holder at a time"


def test_fencing_tokens_are_unique_across_processes(memcached: Memcached) -> None:
    name, n = unique("proc-fence"), 25
    per_process = run_processes(mcds_workers.fencing_tokens, memcached.addr, name, n)
    every = [t for tokens in per_process for t in tokens]
    assert len(every) == PROCESSES * n == len(set(every)), "no token handed out twice"
    assert all(tokens == sorted(tokens) for tokens in per_process), "increasing for each holder"
