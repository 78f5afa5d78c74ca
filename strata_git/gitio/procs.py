"""What a killed process leaves behind, and how to tell it from what a live one holds.

git cannot tell a stale lock file from a live one, and git-strata's own temporary files and
scratch folders carry their writer's pid: these helpers decide, from /proc and the process
table, when such a file is safe to delete. Everything that clears leftovers asks here.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable

from strata_git.errors import Refused
from strata_git.gitio.git import Repo


def alive(pid: object) -> bool:
    """Whether a process with this id exists (one of another user counts: it is not ours to judge)."""
    if not isinstance(pid, int):
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return not _zombie(pid)


def _zombie(pid: int) -> bool:
    """A killed process nobody has reaped yet (a container whose init does not wait for orphans
    keeps them for good): it answers signals but holds no file and writes nothing more."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
    except OSError:
        return False  # no /proc (or gone since): the signal's answer stands
    return stat[stat.rfind(b")") + 2:][:1] in (b"Z", b"X")  # the state follows the command's ")"


def open_by_anyone(path: str) -> bool | None:
    """Whether a running process has `path` open (None where /proc cannot tell)."""
    if not os.path.isdir("/proc/self/fd"):
        return None
    target = os.path.realpath(path)
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            fds = os.listdir(f"/proc/{pid}/fd")
        except OSError:
            continue
        for fd in fds:
            try:
                if os.readlink(f"/proc/{pid}/fd/{fd}") == target:
                    return True
            except OSError:
                continue
    return False


def git_running_in(root: str) -> bool | None:
    """Whether a git process works in `root` (its working folder is there): one may hold a lock file
    there without having it open, as `git commit` does while its pre-commit hook runs. None where
    /proc cannot tell."""
    if not os.path.isdir("/proc/self"):
        return None
    top = os.path.realpath(root)
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/comm", encoding="utf-8", errors="replace") as f:
                if f.read().strip() != "git":
                    continue
            cwd = os.readlink(f"/proc/{pid}/cwd")
        except OSError:
            continue
        if cwd == top or cwd.startswith(top + os.sep):
            return True
    return False


def clear_stale_lock(repo: Repo, lock: str, owner_alive: Callable[[], bool] = lambda: False,
                     made_by: float | None = None) -> None:
    """Delete a git lock file left by a killed process: only when its owner is dead, the lock is
    no newer than `made_by` (the killed run's last journal write plus a few seconds: a later lock
    belongs to a git command started since), and, watched for a moment, no process has it open and
    no git process works in the repository (`git commit` keeps index.lock closed while its
    pre-commit hook runs: deleting it then loses the index that commit writes). Otherwise a running
    git holds it: refuse, to try again later."""
    quiet = 0  # consecutive looks at the lock with nobody holding it open
    for _ in range(30):  # a git killed with its caller may take a moment to let go of it
        if not os.path.exists(lock):
            return
        if made_by is not None and os.stat(lock).st_mtime > made_by:
            break
        in_use = open_by_anyone(lock)
        if in_use is None:  # no /proc to ask: only a lock untouched for a minute counts as stale
            in_use = time.time() - os.stat(lock).st_mtime < 60
        in_use = in_use or bool(git_running_in(repo.root))
        quiet = 0 if in_use or owner_alive() else quiet + 1
        if quiet == 3:
            os.unlink(lock)
            return
        time.sleep(0.1)
    raise Refused(f"another git process holds {os.path.relpath(lock, repo.root)}",
                  "wait for it to finish, then try again")


def sweep(folder: str, prefix: str, dir_fd: int | None = None) -> None:
    """Delete the entries of `folder` named `<prefix><pid>-...` whose pid no longer exists:
    what a writer killed mid-way left (a file, or a scratch folder)."""
    for name in os.listdir(dir_fd if dir_fd is not None else folder):
        pid = name[len(prefix):].split("-", 1)[0] if name.startswith(prefix) else ""
        if not pid.isdigit() or alive(int(pid)):
            continue  # alive (or another user's process): not ours to touch
        try:
            if dir_fd is not None:
                os.unlink(name, dir_fd=dir_fd)
            else:
                path = os.path.join(folder, name)
                if os.path.isdir(path) and not os.path.islink(path):
                    import shutil  # here: the commit hook's path sweeps files only

                    shutil.rmtree(path, ignore_errors=True)
                else:
                    os.unlink(path)
        except FileNotFoundError:
            pass
