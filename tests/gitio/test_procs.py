"""Telling a killed writer's leftovers from a live one's, with real processes."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from strata_git.core import contract
from strata_git.gitio import procs


def test_a_running_process_is_alive_and_a_reaped_one_is_not():
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        assert procs.alive(child.pid)
    finally:
        child.kill()
        child.wait()
    assert not procs.alive(child.pid)


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs /proc to see a zombie")
def test_a_killed_process_nobody_reaped_counts_as_dead(tmp_path: Path):
    """A container whose init never waits for orphans keeps killed writers as zombies: their
    temporary files must still be swept."""
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        leftover = tmp_path / f"{contract.temp_prefix('index.md')}{child.pid}-abcdef"
        leftover.write_bytes(b"half")
        os.kill(child.pid, signal.SIGKILL)
        for _ in range(200):  # until the kernel has made it a zombie (not reaped: no wait yet)
            with open(f"/proc/{child.pid}/stat", "rb") as f:
                if f.read().rsplit(b")", 1)[1].split()[0] == b"Z":
                    break
            time.sleep(0.01)
        assert not procs.alive(child.pid)
        procs.sweep(str(tmp_path), contract.temp_prefix("index.md"))
        assert not leftover.exists()
    finally:
        child.wait()


def test_a_live_writers_temporary_file_is_kept(tmp_path: Path):
    leftover = tmp_path / f"{contract.temp_prefix('index.md')}{os.getpid()}-abcdef"
    leftover.write_bytes(b"mid-write")
    procs.sweep(str(tmp_path), contract.temp_prefix("index.md"))
    assert leftover.exists()
