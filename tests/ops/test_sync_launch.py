"""launch.py: a sync's fetch started before the command is loaded, and gitio/spawn.py, which
starts git without the subprocess module.

The launch takes only what early.py remembered of the config while the config's files are as
they were, fetches only from a remote the clone's git config names, and hands the round exactly
what early.py would have read before the fetch; anywhere it cannot, it starts nothing.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from conftest import bare_remote, git
from strata_git.app.vault import Vault
from strata_git.gitio import spawn
from strata_git.ops.sync import early, launch
from strata_git.store import records


@pytest.fixture
def here(tmp_path: Path, mem: Path, monkeypatch: pytest.MonkeyPatch) -> Vault:
    """A memory repository that synced with `origin` once, the way the command line starts a
    fetch (so the remote the config names is remembered), and the folder the tests stand in."""
    git(mem, "remote", "add", "origin", str(bare_remote(tmp_path / "mem.git")))
    vault = Vault.open(str(mem))
    vault.write("projects/koda", b"# Koda\n\nfirst\n")
    vault.sync()
    early.start(str(mem), None)
    assert early._started is not None
    early.stop()
    monkeypatch.chdir(mem)
    yield vault
    launch._seen = None
    early.stop()


def _launched(argv: list[str]) -> launch.Seen | None:
    launch.begin(argv)
    seen, launch._seen = launch._seen, None
    return seen


def test_git_started_without_subprocess_gives_its_output_and_its_end(tmp_path: Path):
    proc = spawn.start(["rev-parse", "--absolute-git-dir"], str(tmp_path), stdout=True)
    out, err = proc.communicate(10)
    assert proc.returncode == 128 and out == b"" and b"not a git repository" in err
    git(tmp_path, "init", "-q")
    proc = spawn.start(["rev-parse", "--absolute-git-dir"], str(tmp_path), stdout=True)
    assert proc.communicate(10)[0] == f"{tmp_path}/.git\n".encode() and proc.poll() == 0
    git(tmp_path, "config", "alias.wait", "!sleep 30")
    proc = spawn.start(["wait"], str(tmp_path))
    with pytest.raises(subprocess.TimeoutExpired):
        proc.communicate(0.3)
    proc.kill()
    assert proc.wait() != 0


def test_the_round_gets_what_it_would_have_read_before_the_fetch(here: Vault):
    root = Path(here.repo.root)
    head = git(root, "rev-parse", "HEAD").stdout.decode().strip()
    for ref in ("refs/strata/shadow/aaaa", "refs/strata-remotes/origin/shadow/bbbb", "refs/strata/shadow/cc/dd"):
        git(root, "update-ref", ref, head)
    git(root, "pack-refs", "--all")  # packed, and one written loose after
    git(root, "update-ref", "refs/strata-remotes/origin/shadow/eeee", head)
    before = (git(root, "rev-parse", "refs/remotes/origin/main").stdout.decode().strip(), records.refs(here.repo))
    seen = _launched([])
    assert seen is not None and seen.proc is not None and seen.remote == "origin"
    early.adopt(seen)
    started = early._started
    assert started is not None and (started.tracking, started.shadow) == before
    assert len(before[1]) == 3  # (cc/dd is no machine's ref)
    assert started.where.remote == "origin" and started.where.url.endswith("mem.git")
    assert early.take(here.repo, early.fetch_args("origin", here.repo.git_dir)) is started
    assert started.proc.communicate(60)[1] == b"" and started.proc.returncode == 0


@pytest.mark.parametrize("case", ["a remote git does not name", "arguments it does not take", "the remote renamed",
                                  "the config changed", "a detached HEAD", "not a memory repository"])
def test_nothing_is_fetched_where_the_launch_cannot_know_the_remote(here: Vault, case: str, tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch):
    root = Path(here.repo.root)
    argv: list[str] = []
    if case == "a remote git does not name":
        argv = ["--remote", "nosuch"]
    elif case == "arguments it does not take":
        argv = ["--json", "--bogus"]
    elif case == "the remote renamed":
        git(root, "remote", "rename", "origin", "upstream")
    elif case == "the config changed":
        with open(root / ".strata" / "config.toml", "a", encoding="utf-8") as f:
            f.write('\n[sync]\nremote = "upstream"\n')
        git(root, "remote", "add", "upstream", str(tmp_path / "mem.git"))
    elif case == "a detached HEAD":
        git(root, "checkout", "-q", "--detach")
    else:
        git(tmp_path, "init", "-q", "-b", "main", "plain")
        git(tmp_path / "plain", "remote", "add", "origin", str(tmp_path / "mem.git"))
        monkeypatch.chdir(tmp_path / "plain")
    seen = _launched(argv)
    assert seen is None or seen.proc is None, case
    assert launch.remembered(str(root), here.repo.git_dir) == (None if case == "the config changed" else "origin")


def test_a_remote_named_on_the_command_line_is_fetched_when_git_names_it(here: Vault, tmp_path: Path):
    git(Path(here.repo.root), "remote", "add", "second", str(tmp_path / "mem.git"))
    seen = _launched(["--remote", "second", "--dry-run"])
    assert seen is not None and seen.remote == "second" and seen.proc is not None
    assert seen.proc.communicate(60)[1] == b"" and seen.proc.returncode == 0
