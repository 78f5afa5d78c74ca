"""The package a user installs: a wheel and an sdist built with `python -m build`, installed from
the wheel by pipx, by `uv tool` and into a fresh venv; in each, `git strata --help` opens the man page, `git
strata help search` prints the page itself, and a real command runs."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent.parent
pytestmark = pytest.mark.slow


def _build(tmp: Path) -> Path:
    out, source = tmp / "dist", tmp / "source" / "git-strata"
    # A copy: the build writes build/ and *.egg-info into its source.
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(".git", ".venv", "build", "dist", "*.egg-info",
                                                                 "__pycache__", ".*_cache", "corpus"))
    subprocess.run([sys.executable, "-m", "build", "--outdir", str(out), str(source)], check=True, capture_output=True)
    return out


def _env(bin_dir: Path, home: Path) -> dict[str, str]:
    return {"PATH": f"{bin_dir}{os.pathsep}/usr/bin{os.pathsep}/bin", "HOME": str(home), "MANPAGER": "cat",
            "MANWIDTH": "80", "GIT_CONFIG_NOSYSTEM": "1", "GIT_AUTHOR_NAME": "T", "GIT_AUTHOR_EMAIL": "t@example.com",
            "GIT_COMMITTER_NAME": "T", "GIT_COMMITTER_EMAIL": "t@example.com", "LC_ALL": "C.UTF-8"}


def _works(env: dict[str, str], where: Path) -> None:
    where.mkdir(parents=True, exist_ok=True)
    run = lambda *a: subprocess.run(a, cwd=where, env=env, capture_output=True, timeout=120)  # noqa: E731
    if shutil.which("man"):
        page = run("git", "strata", "--help")
        assert page.returncode == 0 and b"git-strata - an AI agent" in page.stdout.replace(b"\xe2\x80\x90", b"-"), \
            page.stderr
    own = run("git", "strata", "help", "search")
    assert own.returncode == 0 and own.stdout.startswith(b"NAME\n    git-strata-search")
    assert run("git", "strata", "init", "mem").returncode == 0
    assert run("git", "-C", "mem", "strata", "write", "notes/x", "-m", "the zebrafish hatch in May").returncode == 0
    found = run("git", "-C", "mem", "strata", "search", "zebrafish")
    assert found.returncode == 0 and b"notes/x" in found.stdout


def test_the_built_wheel_installs_with_pipx_uv_tool_and_pip_and_works(tmp_path: Path):
    """One test, one build (the slowest step): each installer then gets the same wheel."""
    dist = _build(tmp_path)
    wheel = next(dist.glob("git_strata-*.whl"))
    names = subprocess.run([sys.executable, "-m", "zipfile", "-l", str(wheel)], capture_output=True,
                           check=True).stdout.decode()
    for page in ("git-strata.1", "git-strata-search.1"):
        assert f".data/data/share/man/man1/{page}" in names
    assert next(dist.glob("git_strata-*.tar.gz"))

    home = tmp_path / "pipx-home"  # pipx, as a user's ~/.local
    bin_dir, man_dir = home / ".local" / "bin", home / ".local" / "share" / "man"
    env = {**os.environ, "PIPX_HOME": str(home / "pipx"), "PIPX_BIN_DIR": str(bin_dir), "PIPX_MAN_DIR": str(man_dir)}
    subprocess.run([sys.executable, "-m", "pipx", "install", str(wheel)], env=env, check=True, capture_output=True,
                   timeout=600)
    assert (man_dir / "man1" / "git-strata.1").exists()
    _works(_env(bin_dir, home), tmp_path / "with-pipx")

    uv, home = Path(sys.executable).parent / "uv", tmp_path / "uv-home"  # uv tool, with the README's MANPATH
    env = {**os.environ, "UV_TOOL_DIR": str(home / "tools"), "UV_TOOL_BIN_DIR": str(home / "bin"),
           "UV_CACHE_DIR": str(tmp_path / "uv-cache")}
    subprocess.run([str(uv), "tool", "install", str(wheel)], env=env, check=True, capture_output=True, timeout=600)
    tool_dir = subprocess.run([str(uv), "tool", "dir"], env=env, check=True, capture_output=True, text=True).stdout
    man = Path(tool_dir.strip()) / "git-strata" / "share" / "man"
    assert (man / "man1" / "git-strata.1").exists()
    _works({**_env(home / "bin", home), "MANPATH": f"{man}:"}, tmp_path / "with-uv")

    target = tmp_path / "venv"  # a fresh venv and pip
    venv.create(target, with_pip=True)
    subprocess.run([str(target / "bin" / "pip"), "install", "-q", str(wheel)], check=True, capture_output=True,
                   timeout=600)
    _works(_env(target / "bin", tmp_path), tmp_path / "with-pip")
