"""Hermetic real-git fixtures: every test gets its own HOME, no system or global git
config, fixed identities and dates, and no GIT_* variables from the outside."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from helpers.smarthttp import SmartHttp

BIN = Path(sys.executable).parent
FIXED_DATE = "2026-11-01T12:00:00+00:00"
# The random kill and fuzz loops run fewer rounds by default, to keep the whole suite
# within CI's ten minutes on two cores; STRATA_DEEP=1 runs them all (before a release, or after
# touching the janitor, archive or what reads other machines' history).
DEEP = os.environ.get("STRATA_DEEP") == "1"


def _hermetic_env(home: Path, set_env, del_env) -> None:
    """No system or global git config, fixed identities and dates, no GIT_* variables from outside."""
    for key in list(os.environ):
        if key.startswith(("GIT_", "STRATA_")) and key != "STRATA_SEED" or key in ("EDITOR", "VISUAL"):
            del_env(key)
    set_env("HOME", str(home))
    set_env("XDG_CONFIG_HOME", str(home / ".config"))
    set_env("GIT_CONFIG_NOSYSTEM", "1")
    set_env("GIT_CONFIG_GLOBAL", str(home / ".gitconfig"))
    for role in ("AUTHOR", "COMMITTER"):
        set_env(f"GIT_{role}_NAME", "Test User")
        set_env(f"GIT_{role}_EMAIL", "test@example.invalid")
        set_env(f"GIT_{role}_DATE", FIXED_DATE)
    set_env("PATH", f"{BIN}{os.pathsep}{os.environ['PATH']}")
    set_env("LC_ALL", "C.UTF-8")


@pytest.fixture(scope="session")
def shared_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One per-user cache for the whole session: it holds only what is rebuilt from installed
    packages (detect-secrets' rules, ~100 ms to read), keyed by their files."""
    return tmp_path_factory.mktemp("cache")


@pytest.fixture(autouse=True)
def hermetic(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, shared_cache: Path) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    _hermetic_env(home, monkeypatch.setenv, monkeypatch.delenv)
    monkeypatch.setenv("XDG_CACHE_HOME", str(shared_cache))
    return home


def git(cwd: Path, *args: str, check: bool = True, input: bytes | None = None) -> subprocess.CompletedProcess:
    proc = subprocess.run(["git", *args], cwd=cwd, capture_output=True, input=input)
    if check and proc.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed: {proc.stderr.decode()}")
    return proc


def strata(cwd: Path, *args: str, input: bytes | None = None, env: dict | None = None) -> subprocess.CompletedProcess:
    """Run the installed console script, as a user would."""
    full_env = {**os.environ, **(env or {})}
    return subprocess.run([str(BIN / "git-strata"), *args], cwd=cwd, capture_output=True,
                          input=input if input is not None else b"", env=full_env, timeout=120)


@pytest.fixture(scope="session")
def initialized(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One memory repository made by `git strata init` in the tests' environment, once per test
    process: `mem` copies it (init costs about 60 ms, a copy about 3 ms)."""
    from strata_git.app.init import init

    base = tmp_path_factory.mktemp("initialized")
    (base / "home").mkdir()
    with pytest.MonkeyPatch.context() as mp:
        _hermetic_env(base / "home", mp.setenv, mp.delenv)
        init(str(base / "mem"))
    return base / "mem"


@pytest.fixture
def mem(tmp_path: Path, initialized: Path) -> Path:
    """A freshly initialized memory repository: a copy of `initialized`, so it is exactly what
    init makes (commit ids included: identities and dates are fixed), in this test's own folder.
    Copies get new inodes, so git and the catalog see every file as possibly changed and check
    it again, as they would after any copy."""
    root = tmp_path / "mem"
    shutil.copytree(initialized, root, symlinks=True)
    return root


@pytest.fixture
def vault(mem: Path):
    from strata_git.app.vault import Vault

    return Vault.open(str(mem))


def head(cwd: Path) -> str:
    return git(cwd, "rev-parse", "HEAD").stdout.decode().strip()


def commit_count(cwd: Path) -> int:
    return int(git(cwd, "rev-list", "--count", "HEAD").stdout.decode())


def bare_remote(path: Path, filter: bool = True) -> Path:
    """A bare repository configured as the archive remote needs (see docs/archive.md)."""
    git(path.parent, "init", "-q", "--bare", "-b", "main", str(path))
    if filter:
        git(path, "config", "uploadpack.allowFilter", "true")
        git(path, "config", "uploadpack.allowAnySHA1InWant", "true")
    return path


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Daemon:
    """`git daemon` on 127.0.0.1 serving `base` (a real network transport), stopped by the test."""

    def __init__(self, base: Path) -> None:
        import time

        self.base = base
        self.port = free_port()
        self.proc = subprocess.Popen(
            ["git", "daemon", "--reuseaddr", f"--base-path={base}", "--export-all", "--enable=receive-pack",
             "--listen=127.0.0.1", f"--port={self.port}", str(base)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(200):
            if self._listening():
                break
            time.sleep(0.05)

    def _listening(self) -> bool:
        import socket

        with socket.socket() as s:
            return s.connect_ex(("127.0.0.1", self.port)) == 0

    def url(self, name: str) -> str:
        return f"git://127.0.0.1:{self.port}/{name}"

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(timeout=10)


def _serving(base: Path, server: type[Daemon] | type[SmartHttp]):
    """A server of the bare repositories under `base` (made here), stopped after the test."""
    base.mkdir()
    running = server(base)
    yield running
    running.stop()


@pytest.fixture
def smart_http(tmp_path: Path):
    yield from _serving(tmp_path / "served-http", SmartHttp)


@pytest.fixture
def daemon(tmp_path: Path):
    yield from _serving(tmp_path / "served", Daemon)
