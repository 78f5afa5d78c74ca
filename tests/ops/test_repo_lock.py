"""The repository lock (txn.locked): waiters are served in turn, the janitor waits for writes (but
is refused at once by another janitor), and every lock it takes dies with its holder.

Each waiter holds the queue lock (.git/strata/lock.queue) while it waits for the repository lock
(.git/strata/lock), so a newcomer cannot take the repository lock from under it. Nothing here
depends on how fast anything runs: who holds what is read from /proc/locks, and where a test
lets time pass it only gives the process it waits on a chance to misbehave.
"""

from __future__ import annotations

import fcntl
import os
import select
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from conftest import git, strata
from strata_git.core import contract
from strata_git.errors import Refused
from strata_git.gitio.git import discover
from strata_git.ops import txn

pytestmark = pytest.mark.skipif(not os.path.exists("/proc/locks"), reason="needs Linux /proc/locks")

# Takes the lock as git-strata does, appends its tag to `order` once it has it, then holds it.
HOLD = """
import sys, time
from strata_git.gitio.git import discover
from strata_git.ops import txn
root, wait, seconds, role, tag, order = sys.argv[1:7]
try:
    with txn.locked(discover(root), wait=float(wait), role=role or None):
        with open(order, "a") as f:
            f.write(tag)
        print("held", flush=True)
        time.sleep(float(seconds))
except Exception as e:
    print(f"refused: {e}", flush=True)
    sys.exit(1)
"""


def hold(root: Path, tag: str = "", *, wait: float = 60, seconds: float = 3600, role: str = "") -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", HOLD, str(root), str(wait), str(seconds), role, tag,
                             str(root / "order")], stdout=subprocess.PIPE, stdin=subprocess.DEVNULL)


def said(proc: subprocess.Popen, timeout: float = 60) -> str:
    """The next line `proc` prints ("" if it printed none within `timeout`)."""
    ready, _, _ = select.select([proc.stdout], [], [], timeout)
    return proc.stdout.readline().decode().strip() if ready else ""


def holders(root: Path, name: str) -> set[int]:
    """PIDs holding a flock on .git/strata/<name>, from /proc/locks (looking takes nothing)."""
    try:
        ino = (root / ".git/strata" / name).stat().st_ino
    except FileNotFoundError:
        return set()
    with open("/proc/locks") as f:
        rows = [line.split() for line in f]
    return {int(r[4]) for r in rows if r[1] == "FLOCK" and "->" not in r and r[5].split(":")[-1] == str(ino)}


def until(check, what: str, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, what
        time.sleep(0.01)


def kill(*procs: subprocess.Popen) -> None:
    for proc in procs:
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=60)


def order(root: Path) -> str:
    return (root / "order").read_text() if (root / "order").exists() else ""


@pytest.mark.slow
def test_a_waiter_in_the_queue_keeps_a_newcomer_out_though_the_lock_is_free(mem: Path):
    repo = discover(str(mem))
    fd = os.open(repo.state_dir() + "/" + contract.LOCK_QUEUE, os.O_RDWR | os.O_CREAT, 0o644)
    newcomer = None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # as a process waiting for the repository lock holds it
        assert not txn.held(repo)  # the repository lock itself is free
        with pytest.raises(Refused, match="another git-strata process"):
            with txn.locked(repo, wait=0):
                pass
        newcomer = hold(mem, "N", seconds=0)
        assert said(newcomer, timeout=1) == "" and newcomer.poll() is None, "it went past the queue"
    finally:
        os.close(fd)
    assert said(newcomer) == "held" and newcomer.wait(timeout=60) == 0
    assert order(mem) == "N"


@pytest.mark.slow
def test_a_queued_waiter_is_served_before_a_newcomer(mem: Path):
    writer = hold(mem, "W")
    assert said(writer) == "held"
    queued = hold(mem, "Q")
    until(lambda: queued.pid in holders(mem, contract.LOCK_QUEUE), "the second process never queued")
    newcomer = hold(mem, "N")
    try:
        assert said(newcomer, timeout=0.5) == ""  # a moment to try to overtake
        kill(writer)  # the holder dies: the kernel lets go of its lock
        assert said(queued) == "held"
        assert newcomer.poll() is None and order(mem) == "WQ"
        kill(queued)
        assert said(newcomer) == "held" and order(mem) == "WQN"
    finally:
        kill(writer, queued, newcomer)


def test_holders_killed_with_sigkill_release_the_lock_the_queue_and_the_role(mem: Path):
    writer = hold(mem, "W")
    assert said(writer) == "held"
    janitor = hold(mem, "J", role="janitor")
    try:
        until(lambda: janitor.pid in holders(mem, contract.LOCK_QUEUE) and janitor.pid in holders(mem, "lock.janitor"),
              "the janitor never queued")
        assert writer.pid in holders(mem, "lock")
        with pytest.raises(Refused, match=r"another git-strata process \(a janitor\)"):
            with txn.locked(discover(str(mem)), wait=0, role="janitor"):
                pass
    finally:
        kill(janitor, writer)  # the waiter first: else it could take the lock the writer let go of
    for name in ("lock", contract.LOCK_QUEUE, "lock.janitor"):
        assert not holders(mem, name), name
    with txn.locked(discover(str(mem)), wait=0, role="janitor") as recovered:
        assert recovered == ""
    assert order(mem) == "W"


def old_memory(mem: Path) -> None:
    (mem / "active/projects/a.md").write_bytes(b"# a\n")
    git(mem, "add", "active/projects/a.md")
    git(mem, "-c", "core.hooksPath=/dev/null", "commit", "-q", "-m", "a")


@pytest.mark.slow
def test_the_janitor_waits_for_a_write_holding_the_lock_and_then_runs(mem: Path):
    old_memory(mem)
    writer = hold(mem, "W", seconds=1)
    try:
        assert said(writer) == "held"
        proc = strata(mem, "janitor", "--now", "2027-01-01")
        out = (proc.stdout + proc.stderr).decode()
        assert proc.returncode == 0 and "cool 1" in out, out
        assert writer.wait(timeout=60) == 0  # the write ran its second out, not cut short
    finally:
        kill(writer)
    assert git(mem, "log", "-1", "--format=%s").stdout.decode().startswith("strata: cool 1")


@pytest.mark.slow
def test_a_janitor_is_refused_at_once_by_another_janitor_waiting_its_turn(mem: Path):
    old_memory(mem)
    writer = hold(mem, "W")
    assert said(writer) == "held"
    first = hold(mem, "J", role="janitor")
    try:
        until(lambda: first.pid in holders(mem, "lock.janitor"), "the first janitor never started")
        proc = strata(mem, "janitor", "--now", "2027-01-01")  # would wait 30 s for the writer
        out = (proc.stdout + proc.stderr).decode()
        assert proc.returncode == 1 and "another git-strata process (a janitor)" in out, out
        assert first.poll() is None and order(mem) == "W"
    finally:
        kill(writer, first)
    assert git(mem, "log", "-1", "--format=%s").stdout.decode().strip() == "a"


def test_threads_of_one_process_take_turns(mem: Path):
    """The MCP server and the watcher lock from threads: each open of the lock is its own flock."""
    repo = discover(str(mem))
    inside, most, errors = [0], [0], []
    guard = threading.Lock()

    def work() -> None:
        try:
            for _ in range(20):
                with txn.locked(repo, wait=60):
                    with guard:
                        inside[0] += 1
                        most[0] = max(most[0], inside[0])
                    time.sleep(0.001)
                    with guard:
                        inside[0] -= 1
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not errors and most[0] == 1
