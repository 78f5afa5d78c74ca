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


@pytest.mark.slow  # clear_stale_lock watches the lock for 3 s before it refuses
@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs /proc to see what a process works in")
def test_the_index_lock_of_a_commit_waiting_on_its_hook_is_never_taken_for_a_stale_one(tmp_path: Path):
    """`git commit` keeps index.lock closed while its pre-commit hook runs, so nobody has it open;
    a janitor recovering from a killed cycle must still leave it, or the commit loses its index."""
    from conftest import git
    from strata_git.errors import Refused
    from strata_git.gitio.git import discover

    root = tmp_path / "repo"
    git(tmp_path, "init", "-q", str(root))
    hook = root / ".git/hooks/pre-commit"
    started, release = tmp_path / "hook-started", tmp_path / "release"
    hook.write_text(f"#!/bin/sh\ntouch '{started}'\nwhile [ ! -e '{release}' ]; do sleep 0.05; done\n")
    hook.chmod(0o755)
    (root / "a.md").write_text("# a\n")
    git(root, "add", "a.md")
    commit = subprocess.Popen(["git", "commit", "-q", "-m", "a", "--", "a.md"], cwd=root,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        for _ in range(500):
            if started.exists():
                break
            time.sleep(0.01)
        lock = root / ".git/index.lock"
        assert lock.exists() and not procs.open_by_anyone(str(lock))  # held, and closed
        assert procs.git_running_in(str(root))
        with pytest.raises(Refused):
            procs.clear_stale_lock(discover(str(root)), str(lock), made_by=time.time() + 10)
        assert lock.exists()
    finally:
        release.touch()
        _, err = commit.communicate(timeout=30)
    assert commit.returncode == 0, err.decode()
    assert not procs.git_running_in(str(root))
    assert git(root, "status", "--porcelain").stdout == b""
