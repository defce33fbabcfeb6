"""The README's Python example, run as written: on the embedded store and on
memcached, from the installed package."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from conftest import REPO


def readme_example() -> str:
    text = (REPO / "README.md").read_text()
    section = text.split("## Using mcds from C, PHP and Python", 1)[1].split("\n## ", 1)[0]
    match = re.search(r"^```python\n(.*?)^```$", section, re.M | re.S)
    assert match, "no ```python block in the README's section 'Using mcds from C, PHP and Python'"
    return match.group(1)


def run(script: Path, *args: str) -> str:
    out = subprocess.run([sys.executable, str(script), *args], capture_output=True, text=True, timeout=60, cwd="/")
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_the_example_is_ten_lines() -> None:
    assert len(readme_example().splitlines()) <= 10


def test_the_example_runs_on_the_embedded_store(tmp_path: Path) -> None:
    script = tmp_path / "example.py"
    script.write_text(readme_example())
    assert run(script) == "hits = 1\nrefused: MCDS_INVALID_KEY\n"


def test_the_example_runs_on_memcached(tmp_path: Path, new_memcached) -> None:  # type: ignore[no-untyped-def]
    server = new_memcached()
    script = tmp_path / "example.py"
    script.write_text(readme_example())
    assert run(script, server.addr) == "hits = 1\nrefused: MCDS_INVALID_KEY\n"
    assert run(script, server.addr).startswith("hits = 2\n"), "the count lives in memcached"
