"""A local git command that hangs is stopped after git.TIMEOUT; a transfer (clone, fetch, push,
ls-remote) may take up to git.TRANSFER_TIMEOUT, since a large memory's records take minutes."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import bare_remote
from strata_git.errors import GitFailed
from strata_git.gitio import git


def test_a_transfer_is_given_longer_than_a_local_command(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    remote = bare_remote(tmp_path / "remote.git")
    monkeypatch.setattr(git, "TIMEOUT", 0.2)  # (a command that surely outlasts it: a fast failure is no timeout)
    with pytest.raises(GitFailed, match=r"git sleepy did not finish in 0.2 s"):
        git.run(["-c", "alias.sleepy=!sleep 5", "sleepy"], str(tmp_path))
    slow = "--upload-pack=sleep 0.6; git-upload-pack"  # outlasts TIMEOUT: only a transfer's time lets it finish
    assert git.run(["-c", "core.askPass=true", "ls-remote", slow, str(remote)], str(tmp_path)).returncode == 0
    monkeypatch.setattr(git, "TRANSFER_TIMEOUT", 0.2)
    with pytest.raises(GitFailed, match=r"git ls-remote did not finish in 0.2 s"):
        git.run(["ls-remote", "--upload-pack=sleep 5;", str(remote)], str(tmp_path))
