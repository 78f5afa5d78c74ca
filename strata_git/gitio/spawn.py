"""git started with os.posix_spawn, for what runs before the subprocess module is loaded.

Importing subprocess costs about 9 ms on the machines measured (signal, threading, selectors,
locale); a sync's fetch is started before any of that is loaded (ops/sync/launch.py), and this
module needs nothing but os. `start` runs git in a folder (`git -C`), with git-strata's own
environment (`env`, which git.py uses for every git it runs), and gives back a `Spawned`: the part
of subprocess.Popen that git.finish and a sync round use, so the round takes it as it would take
a Popen.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence


DISCOVER = ["rev-parse", "--show-toplevel", "--absolute-git-dir"]  # what git.discover() asks git, from the folder


def env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """The environment every git git-strata runs gets."""
    found = dict(os.environ)
    found["STRATA_INTERNAL"] = "1"  # git-strata's hook shims exit at once: no recursion
    found["GIT_LITERAL_PATHSPECS"] = "1"
    # `git status` would otherwise take index.lock to write back refreshed stat data: a process
    # killed then (a janitor while planning) would leave a lock that blocks everyone.
    found["GIT_OPTIONAL_LOCKS"] = "0"
    # In a pruned clone, git would quietly download an archived blob whenever a command touched
    # one (a rename check, a checkout): git-strata fetches explicitly, in batches, or not at all.
    found["GIT_NO_LAZY_FETCH"] = "1"
    found.pop("GIT_PREFIX", None)
    if extra:
        found.update(extra)
    return found


class Spawned:
    """A git `start`ed: its output read through pipes, its end through waitpid."""

    def __init__(self, args: list[str], pid: int, stdout: int | None, stderr: int) -> None:
        self.args = args
        self.pid = pid
        self.returncode: int | None = None
        self._fds = {"stdout": stdout, "stderr": stderr}

    def poll(self) -> int | None:
        if self.returncode is None:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode

    def wait(self) -> int:
        if self.returncode is None:
            self.returncode = os.waitstatus_to_exitcode(os.waitpid(self.pid, 0)[1])
        return self.returncode

    def kill(self) -> None:
        if self.poll() is None:
            os.kill(self.pid, 9)  # SIGKILL (the signal module is not loaded for it)

    def communicate(self, timeout: float | None = None) -> tuple[bytes | None, bytes]:
        """(what git wrote to stdout, or None where it went to /dev/null; its stderr), once it has
        ended; subprocess.TimeoutExpired after `timeout` seconds, as Popen raises it."""
        import select
        import time

        fds = {fd: name for name, fd in self._fds.items() if fd is not None}
        out: dict[str, list[bytes]] = {name: [] for name in fds.values()}
        end = None if timeout is None else time.monotonic() + timeout
        while fds:
            left = None if end is None else end - time.monotonic()
            if left is not None and left <= 0:
                import subprocess

                raise subprocess.TimeoutExpired(self.args, timeout or 0)
            ready, _, _ = select.select(list(fds), [], [], left)
            for fd in ready:
                chunk = os.read(fd, 1 << 16)
                if chunk:
                    out[fds[fd]].append(chunk)
                else:
                    os.close(fd)
                    self._fds[fds.pop(fd)] = None
        self.wait()
        stdout = b"".join(out["stdout"]) if "stdout" in out else None
        return stdout, b"".join(out.get("stderr", []))


def head_branch(git_dir: str) -> str | None:
    """The branch HEAD names, read from the file (no git process); None for a detached HEAD and
    wherever the file cannot say (a reftable's HEAD names `.invalid`): ask git then."""
    try:
        with open(os.path.join(git_dir, "HEAD"), encoding="utf-8") as f:
            value = f.read().strip()
    except (OSError, UnicodeDecodeError):
        return None
    branch = value[len("ref: refs/heads/"):] if value.startswith("ref: refs/heads/") else ""
    return branch if branch and branch != ".invalid" else None


def start(args: Sequence[str], cwd: str, stdout: bool = False) -> Spawned:
    """`git -C cwd ARGS` started: stdin from /dev/null, stdout to a pipe (`stdout`) or /dev/null,
    stderr to a pipe. OSError if it cannot be started."""
    argv = ["git", "-C", cwd, *args]
    read_err, write_err = os.pipe()
    read_out, write_out = os.pipe() if stdout else (None, None)
    actions = [(os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
               (os.POSIX_SPAWN_DUP2, write_err, 2), (os.POSIX_SPAWN_CLOSE, read_err)]
    if write_out is not None and read_out is not None:
        actions += [(os.POSIX_SPAWN_DUP2, write_out, 1), (os.POSIX_SPAWN_CLOSE, read_out)]
    else:
        actions.append((os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0))
    try:
        pid = os.posix_spawnp("git", argv, env(), file_actions=actions)
    except BaseException:
        for fd in (read_err, read_out):
            if fd is not None:
                os.close(fd)
        raise
    finally:
        for fd in (write_err, write_out):
            if fd is not None:
                os.close(fd)
    return Spawned(argv, pid, read_out, read_err)
