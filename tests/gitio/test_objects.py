"""Object reads: libgit2 (pygit2, in-process) and `git cat-file --batch` give the same bytes for
every kind of name, the same None for what is missing, and both refuse (never fetch) what a
partial clone left on its remote."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from conftest import bare_remote, git
from strata_git.errors import GitFailed
from strata_git.gitio import git as gitio


@pytest.fixture(params=["cat-file", "libgit2"])
def reader(request, monkeypatch):
    """Repo.objects as the CLI reads (one-shot commands) or as a long-running server does."""
    pytest.importorskip("pygit2")
    monkeypatch.setattr(gitio, "_LIBGIT2", {})
    monkeypatch.setattr(gitio, "_KEEP", request.param == "libgit2")
    return request.param


@pytest.mark.slow
def test_both_readers_give_the_same_bytes_and_the_same_missing(mem: Path, reader: str):
    (mem / "active/notes").mkdir(parents=True)
    (mem / "active/notes/a b.md").write_bytes(b"---\ntitle: A\n---\nbody \xc3\xa9\r\n")
    git(mem, "add", "-A")
    git(mem, "commit", "-qm", "a", "--no-verify")
    blob = git(mem, "rev-parse", "HEAD:active/notes/a b.md").stdout.decode().strip()
    tree = git(mem, "rev-parse", "HEAD:active").stdout.decode().strip()
    repo = gitio.discover(str(mem))
    names = [blob, "HEAD:active/notes/a b.md", tree, "HEAD:active/notes/none.md", "0" * 40, "not-a-rev:x"]
    found = repo.objects(names)
    assert found[0] == found[1] == b"---\ntitle: A\n---\nbody \xc3\xa9\r\n"
    assert found[2] == git(mem, "cat-file", "tree", tree).stdout
    assert found[3:] == [None, None, None]
    assert (gitio._LIBGIT2 != {}) == (reader == "libgit2")


@pytest.mark.slow
def test_neither_reader_fetches_what_a_partial_clone_left_out(mem: Path, tmp_path: Path, reader: str):
    remote = bare_remote(tmp_path / "r.git")
    (mem / "active/big.md").write_text("# Big\n\nleft on the remote\n")
    git(mem, "add", "-A")
    git(mem, "commit", "-qm", "big", "--no-verify")
    git(mem, "push", "-q", str(remote), "HEAD:refs/heads/main")
    git(tmp_path, "clone", "-q", "--filter=blob:none", "--no-checkout", remote.as_uri(), "partial")
    blob = git(mem, "rev-parse", "HEAD:active/big.md").stdout.decode().strip()
    repo = gitio.discover(str(tmp_path / "partial"))
    with pytest.raises(GitFailed, match="promisor"):
        repo.objects([blob])
    present = subprocess.run(["git", "cat-file", "-e", blob], cwd=tmp_path / "partial",
                             env={**os.environ, "GIT_NO_LAZY_FETCH": "1"}, capture_output=True)
    assert present.returncode != 0  # still not here
    head = repo.head()
    assert repo.objects([head])[0].startswith(b"tree ")  # what it holds is read as ever


def test_bulk_reads_use_libgit2_even_in_a_one_shot_command(mem: Path, monkeypatch):
    pytest.importorskip("pygit2")
    monkeypatch.setattr(gitio, "_LIBGIT2", {})
    monkeypatch.setattr(gitio, "_KEEP", False)
    monkeypatch.setattr(gitio, "BULK", 3)
    repo = gitio.discover(str(mem))
    head = repo.head()
    assert repo.objects([head, head]) == repo.objects([head, head, head])[:2]  # 2: the CLI, 3: libgit2
    assert gitio._LIBGIT2 == {}  # a one-shot command does not keep the handle


@pytest.mark.parametrize("listed_up_to", [10**9, 0], ids=["listing the store", "asking libgit2"])
def test_what_a_partial_clone_lacks_is_told_alike_and_nothing_is_fetched(mem: Path, tmp_path: Path, monkeypatch,
                                                                          listed_up_to: int):
    from strata_git.gitio import partial
    from strata_git.ops import archive

    pytest.importorskip("pygit2")
    monkeypatch.setattr(partial, "LISTED_UP_TO", listed_up_to)
    monkeypatch.setattr(partial, "LISTED_PER_ASKED", 0 if listed_up_to == 0 else partial.LISTED_PER_ASKED)
    monkeypatch.setattr(gitio, "_LIBGIT2", {})
    remote = bare_remote(tmp_path / "r.git")
    for name, text in (("active/kept.md", "# Kept\n"), ("active/left.md", "# Left\n"), ("archive/old.md", "# Old\n")):
        (mem / name).parent.mkdir(parents=True, exist_ok=True)
        (mem / name).write_text(text)
    git(mem, "add", "-A")
    git(mem, "commit", "-qm", "three", "--no-verify")
    git(mem, "push", "-q", str(remote), "HEAD:refs/heads/main")
    git(tmp_path, "clone", "-q", "--filter=blob:none", "--no-checkout", remote.as_uri(), "partial")
    clone = tmp_path / "partial"
    kept, left, old = (git(mem, "rev-parse", f"HEAD:{n}").stdout.decode().strip()
                       for n in ("active/kept.md", "active/left.md", "archive/old.md"))
    git(clone, "fetch", "-q", "origin", kept)  # one blob brought down, the others left on the remote
    repo = gitio.discover(str(clone))
    unknown = "1" * 40
    assert partial.absent(repo, [kept, left, old, unknown]) == [left, old, unknown]
    assert repo.holds(kept) and not repo.holds(left) and not repo.holds(unknown)  # (asking fetches nothing)
    present = subprocess.run(["git", "cat-file", "-e", left], cwd=clone,
                             env={**os.environ, "GIT_NO_LAZY_FETCH": "1"}, capture_output=True)
    assert present.returncode != 0  # asking fetched nothing
    live = archive.live_blobs(repo)  # every blob outside archive/, none under it
    assert {kept, left} <= live and old not in live
