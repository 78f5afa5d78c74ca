"""`git strata serve`: the janitor on a schedule, one per repository.

The daemon holds an flock on `<git dir>/strata/serve.lock` for its whole life (the kernel
drops it when the process dies, so a crash never leaves a stale "running"), writes its pid
beside it, and appends one JSON line per cycle to `serve.log`. The first cycle is a dry run
unless `live`; SIGTERM and SIGINT stop it after the step in progress.
"""

from __future__ import annotations

import fcntl
import json
import os
import signal
import time
from collections.abc import Callable
from typing import Any

from strata_git.core import contract
from strata_git.errors import Refused, StrataError
from strata_git.gitio.git import Repo, use_libgit2

LOCK, PID, LOG = contract.SERVE_LOCK, contract.SERVE_PID, contract.SERVE_LOG


def parse_interval(text: str) -> int:
    """Seconds from `90`, `30s`, `15m`, `2h` or `1d`."""
    units = {"s": 1, "m": 60, "h": 3600, "d": 86400}
    value = text.strip().lower()
    try:
        seconds = int(value[:-1]) * units[value[-1]] if value[-1:] in units else int(value)
    except (ValueError, KeyError):
        raise StrataError(f"cannot read the interval {text!r}", "use seconds or a unit: 30s, 15m, 2h, 1d") from None
    if seconds < 1:
        raise StrataError(f"the interval {text!r} is too short", "use at least 1 second")
    return seconds


def running(repo: Repo) -> int | None:
    """The pid of this repository's daemon, or None."""
    fd = os.open(os.path.join(repo.state_dir(), LOCK), os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        try:
            with open(os.path.join(repo.state_dir(), PID), encoding="ascii") as f:
                return int(f.read().strip() or 0) or -1
        except (OSError, ValueError):
            return -1
    finally:
        os.close(fd)  # closing releases the lock if we took it
    return None


def stop(repo: Repo, wait: float = 30.0) -> int | None:
    """Ask the daemon to stop (SIGTERM) and wait for it; its pid, or None if none ran."""
    pid = running(repo)
    if pid is None:
        return None
    if pid > 0:
        os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + wait
    while running(repo) is not None:
        if time.monotonic() > deadline:
            raise Refused(f"the daemon (pid {pid}) did not stop within {wait:.0f} s", f"kill {pid}")
        time.sleep(0.1)
    return pid


def _log(repo: Repo, entry: dict) -> None:
    with open(os.path.join(repo.state_dir(), LOG), "a", encoding="utf-8") as f:
        f.write(json.dumps(entry, ensure_ascii=False) + "\n")


def serve(repo: Repo, cycle: Callable[[bool], dict], interval: int, live: bool, once: bool,
          say: Callable[[str], None] = lambda _: None) -> int:
    """Run cycles until stopped; the number of cycles run. `cycle(dry_run)` does one."""
    fd = os.open(os.path.join(repo.state_dir(), LOCK), os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        raise Refused("a git-strata daemon already runs for this repository",
                      "see `git strata status`; stop it with `git strata serve --stop`") from None
    stopping = []
    use_libgit2()  # cycle after cycle: objects are read in-process (see Repo.objects)

    def on_signal(signum: int, _frame: object) -> None:
        stopping.append(signum)

    previous = {s: signal.signal(s, on_signal) for s in (signal.SIGTERM, signal.SIGINT)}
    with open(os.path.join(repo.state_dir(), PID), "w", encoding="ascii") as f:
        f.write(f"{os.getpid()}\n")
    cycles = 0
    try:
        while not stopping:
            dry = cycles == 0 and not live
            entry: dict[str, Any] = {"time": int(time.time()), "dry_run": dry}
            try:
                entry |= cycle(dry)
            except StrataError as e:  # a busy repository or a refusal: log it, try again next cycle
                entry |= {"error": e.message}
            _log(repo, entry)
            say(f"{'dry run' if dry else 'cycle'}: {entry.get('summary') or entry.get('error')}")
            cycles += 1
            if once:
                break
            deadline = time.monotonic() + interval
            while not stopping and time.monotonic() < deadline:
                time.sleep(min(0.2, max(0.0, deadline - time.monotonic())))
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
        try:
            os.unlink(os.path.join(repo.state_dir(), PID))
        except FileNotFoundError:
            pass
        os.close(fd)
    return cycles
