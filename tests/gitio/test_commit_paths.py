"""Repo.commit(paths) does what `git commit -- PATHS` does, on real repositories: exactly those
paths as the working tree has them, nothing else the user staged, and no commit over a conflict."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import git
from strata_git.errors import GitFailed
from strata_git.gitio.git import Repo

ID = ["-c", "user.name=T", "-c", "user.email=t@e.invalid"]


@pytest.fixture
def repo(tmp_path: Path, monkeypatch) -> Repo:
    root = tmp_path / "r"
    git(tmp_path, "init", "-q", "-b", "main", str(root))
    for name in ("a.md", "b.md", "c.md"):
        (root / name).write_text(f"{name} one\n")
    git(root, "add", "-A")
    git(root, *ID, "commit", "-qm", "base")
    for key, value in (("NAME", "T"), ("EMAIL", "t@e.invalid")):
        monkeypatch.setenv(f"GIT_AUTHOR_{key}", value)
        monkeypatch.setenv(f"GIT_COMMITTER_{key}", value)
    return Repo(str(root), str(root / ".git"))


def _show(repo: Repo, rev: str, path: str) -> bytes:
    return git(Path(repo.root), "show", f"{rev}:{path}", check=False).stdout


def test_only_the_paths_as_the_working_tree_has_them(repo: Repo):
    root = Path(repo.root)
    (root / "a.md").write_text("a.md two\n")  # changed, not staged: committed all the same
    (root / "b.md").write_text("b.md two\n")
    git(root, "add", "b.md")  # the user's own staged change: not in this commit, still staged
    (root / "c.md").unlink()  # deleted in the working tree
    (root / "new.md").write_text("new\n")
    git(root, "add", "new.md")
    new = repo.commit(["a.md", "c.md", "new.md"], "strata: test", "Strata-Action: test")
    assert new == repo.head()
    assert _show(repo, "HEAD", "a.md") == b"a.md two\n" and _show(repo, "HEAD", "new.md") == b"new\n"
    assert _show(repo, "HEAD", "b.md") == b"b.md one\n" and _show(repo, "HEAD", "c.md") == b""
    message = git(root, "log", "-1", "--format=%B").stdout.decode()
    assert message == "strata: test\n\nStrata-Action: test\n\n"
    assert git(root, "log", "-1", "--format=%an %P").stdout.decode().startswith("T ")
    assert git(root, "diff", "--cached", "--name-only").stdout == b"b.md\n"
    assert git(root, "reflog", "-1", "--format=%gs").stdout.decode().strip() == "commit: strata: test"


def test_a_conflicted_path_is_never_committed(repo: Repo):
    root = Path(repo.root)
    git(root, "checkout", "-q", "-b", "other")
    (root / "a.md").write_text("theirs\n")
    git(root, *ID, "commit", "-qam", "theirs")
    git(root, "checkout", "-q", "main")
    (root / "a.md").write_text("ours\n")
    git(root, *ID, "commit", "-qam", "ours")
    git(root, *ID, "merge", "-q", "other", check=False)  # leaves a.md unmerged
    before = repo.head()
    with pytest.raises(GitFailed):
        repo.commit(["a.md"], "strata: test", "Strata-Action: test")
    assert repo.head() == before


def test_nothing_to_commit_is_refused_as_git_refuses_it(repo: Repo):
    before = repo.head()
    with pytest.raises(GitFailed):
        repo.commit(["a.md"], "strata: test", "Strata-Action: test")
    assert repo.head() == before
