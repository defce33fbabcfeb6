"""Fixtures: real memcached processes on free loopback ports (each dies with
the test session, even if pytest is killed), and stores on them and on the
embedded store.

The tests import the *installed* mcds (scripts/check-python.sh installs the
wheel into a fresh venv and runs pytest from there). MCDS_TEST_SEED fixes
the seed of everything random; the seed is printed in the header and the
summary of every run.
"""

from __future__ import annotations

import ctypes
import itertools
import os
import random
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable, Iterator, List

import pytest

import mcds

#: The repository (for include/mcds.h, README.md and the generator).
REPO = Path(os.environ.get("MCDS_REPO") or Path(__file__).resolve().parents[3])

SEED = int(os.environ.get("MCDS_TEST_SEED") or random.SystemRandom().randrange(2**32))
# Key names of this run: distinct from other runs on a shared server.
RUN = f"py{SEED:08x}"
_names = itertools.count()


def unique(prefix: str) -> str:
    """A structure name no other test of this run uses."""
    return f"{RUN}-{prefix}-{next(_names)}"


def pytest_report_header(config: pytest.Config) -> List[str]:
    return [
        f"mcds {mcds.__version__} (libmcds {mcds.lib_version()}) from {Path(mcds.__file__).parent}",
        f"random seed: MCDS_TEST_SEED={SEED}",
    ]


def pytest_terminal_summary(terminalreporter, exitstatus, config):  # type: ignore[no-untyped-def]
    terminalreporter.write_line(f"mcds python tests: random seed MCDS_TEST_SEED={SEED}")


def _die_with_parent() -> None:
    # PR_SET_PDEATHSIG: the kernel kills memcached if pytest dies first.
    if sys.platform.startswith("linux"):
        ctypes.CDLL(None).prctl(1, signal.SIGKILL)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Memcached:
    """A memcached process on a free loopback port."""

    def __init__(self, *extra: str) -> None:
        # -s PATH: a unix socket instead of the network.
        self.unix = extra[extra.index("-s") + 1] if "-s" in extra else None
        for _ in range(10):
            self.port = _free_port()
            args = ["memcached", "-l", "127.0.0.1", "-p", str(self.port), "-U", "0", "-m", "64", "-t", "2", *extra]
            if os.geteuid() == 0:
                args += ["-u", "root"]  # memcached refuses to run as root without it
            self.proc = subprocess.Popen(
                args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                preexec_fn=_die_with_parent,
            )
            if self._ready():
                break
            self.stop()  # the port was taken meanwhile: try another
        else:
            raise RuntimeError("memcached did not start (is it installed?)")
        self.addr = f"127.0.0.1:{self.port}"

    def _ready(self) -> bool:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                return False
            try:
                if self.unix is not None:
                    with socket.socket(socket.AF_UNIX) as s:
                        s.settimeout(1)
                        s.connect(self.unix)
                else:
                    socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return True
            except OSError:
                time.sleep(0.02)
        return False

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


@pytest.fixture(scope="session")
def memcached() -> Iterator[Memcached]:
    """One memcached for the session (tests use distinct names)."""
    server = Memcached()
    yield server
    server.stop()


@pytest.fixture
def new_memcached() -> Iterator[Callable[..., Memcached]]:
    """Start a memcached of this test's own (stopped at its end)."""
    started: List[Memcached] = []

    def start(*extra: str) -> Memcached:
        server = Memcached(*extra)
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()


@pytest.fixture(params=["memory", "memcached"])
def store(request: pytest.FixtureRequest) -> Iterator[mcds.Store]:
    """Each test that takes it runs twice: on the embedded store and on memcached."""
    if request.param == "memory":
        s = mcds.Store.memory()
    else:
        s = mcds.Store.memcached(request.getfixturevalue("memcached").addr)
    yield s
    s.close()


@pytest.fixture
def mc_store(memcached: Memcached) -> Iterator[mcds.Store]:
    """A store on the session's memcached."""
    s = mcds.Store.memcached(memcached.addr)
    yield s
    s.close()


@pytest.fixture
def rng() -> random.Random:
    """A random generator seeded from MCDS_TEST_SEED (printed by the run)."""
    return random.Random(SEED)
