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
    monkeypatch.setattr(git, "TIMEOUT", 0.0005)
    with pytest.raises(GitFailed, match=r"git status did not finish in 0.0005 s"):
        git.run(["status"], str(tmp_path))
    assert git.run(["-c", "core.askPass=true", "ls-remote", str(remote)], str(tmp_path)).returncode == 0
    monkeypatch.setattr(git, "TRANSFER_TIMEOUT", 0.0005)
    with pytest.raises(GitFailed, match=r"git ls-remote did not finish in 0.0005 s"):
        git.run(["ls-remote", str(remote)], str(tmp_path))
