"""The only module that runs git.

git is always called with an argv list, `--` before paths, literal pathspecs and
STRATA_INTERNAL=1 in its environment, so git-strata's own hook shims exit at once
when git-strata itself is the caller (no recursion). Failures become GitFailed
carrying git's own last line.
"""

from __future__ import annotations

import os
import subprocess
from typing import NamedTuple

from strata_git.errors import GitFailed, NotFound

TIMEOUT = 300


def _env(extra: dict[str, str] | None = None) -> dict[str, str]:
    env = dict(os.environ)
    env["STRATA_INTERNAL"] = "1"
    env["GIT_LITERAL_PATHSPECS"] = "1"
    env.pop("GIT_PREFIX", None)
    if extra:
        env.update(extra)
    return env


def run(args: list[str], cwd: str, *, input: bytes | None = None, check: bool = True,
        env: dict[str, str] | None = None) -> subprocess.CompletedProcess[bytes]:
    try:
        proc = subprocess.run(["git", *args], cwd=cwd, input=input, capture_output=True,
                              stdin=None if input is not None else subprocess.DEVNULL,
                              env=_env(env), timeout=TIMEOUT)
    except FileNotFoundError:
        raise GitFailed("git is not installed or not on PATH", "install git 2.39 or newer") from None
    except subprocess.TimeoutExpired:
        raise GitFailed(f"git {args[0]} did not finish in {TIMEOUT} s", "check for a hung hook or remote") from None
    if check and proc.returncode != 0:
        lines = proc.stderr.decode("utf-8", "replace").strip().splitlines() or [f"exit code {proc.returncode}"]
        raise GitFailed(f"git {args[0]} failed: {lines[-1]}", "run the same git command by hand to see the details")
    return proc


class Repo(NamedTuple):
    """A git work tree: its top folder and its git directory."""

    root: str
    git_dir: str

    def git(self, *args: str, input: bytes | None = None, check: bool = True,
            env: dict[str, str] | None = None) -> bytes:
        return run(list(args), self.root, input=input, check=check, env=env).stdout

    def ok(self, *args: str) -> bool:
        return run(list(args), self.root, check=False).returncode == 0

    def state_dir(self) -> str:
        """Per-clone derived state (caches, access records, locks); never committed."""
        path = os.path.join(self.git_dir, "strata")
        os.makedirs(path, exist_ok=True)
        return path

    def head(self) -> str | None:
        proc = run(["rev-parse", "-q", "--verify", "HEAD^{commit}"], self.root, check=False)
        return proc.stdout.decode().strip() if proc.returncode == 0 else None


def discover(path: str = ".") -> Repo:
    """The repository containing `path`; NotFound outside any work tree."""
    if not os.path.isdir(path):
        raise NotFound(f"{path}: no such folder", "give the folder of a memory repository")
    proc = run(["rev-parse", "--show-toplevel", "--absolute-git-dir"], path, check=False)
    if proc.returncode != 0:
        raise NotFound(f"{os.path.abspath(path)} is not inside a git repository",
                       "run `git strata init` to make it a memory repository")
    root, git_dir = proc.stdout.decode().splitlines()[:2]
    return Repo(root=root, git_dir=git_dir)
