"""Which objects a clone holds, read from its packs' indexes and loose objects (gitio/packindex.py):
checked against git's own listing of the store in real pruned clones, against libgit2's answer,
and on indexes it must not read."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import git
from helpers.archive import archived_blobs, body, held, pruned_over_daemon


def _listed(where: Path) -> set[str]:
    """Every object id the store holds, as git lists it."""
    return set(git(where, "cat-file", "--batch-all-objects", "--batch-check=%(objectname)").stdout.decode().split())


@pytest.fixture
def pruned(mem: Path, tmp_path: Path, daemon) -> Path:
    return pruned_over_daemon(mem, tmp_path, daemon, 12)


def test_held_is_what_git_lists_in_a_pruned_clone_loose_and_packed(pruned: Path):
    import pygit2

    from strata_git.gitio import packindex

    for i in (3, 4):  # two archived memories' very bytes written here again: loose objects
        subprocess.run(["git", "hash-object", "-w", "--stdin"], cwd=pruned, input=body(i).encode(), check=True)
    listed = _listed(pruned)
    archived = set(archived_blobs(pruned).values())
    assert len(archived) == 12 and 0 < len(archived & listed) < len(archived)  # most left on the remote
    packed = {p.name for p in (pruned / ".git/objects/pack").glob("*.pack")}
    assert len(packed) >= 2
    asked = sorted(listed | archived)
    found = packindex.held(str(pruned / ".git"), asked)
    assert found == listed & set(asked)
    assert found == {oid for oid in asked if held(pruned, oid)}  # git asked one by one, never fetching
    odb = pygit2.Repository(str(pruned / ".git")).odb
    assert found == {oid for oid in asked if odb.exists(oid)}  # libgit2's answer
    assert _listed(pruned) == listed  # nothing was fetched


def test_held_skips_ids_that_are_not_ids_and_says_none_where_it_cannot_tell(pruned: Path, tmp_path: Path):
    from strata_git.gitio import packindex

    git_dir = str(pruned / ".git")
    one = sorted(_listed(pruned))[0]
    bad = [one.upper(), one[:39], one + "0", "z" * 40, "", None, 7, "../" * 13 + "x"]
    assert packindex.held(git_dir, [one, *bad]) == {one}  # type: ignore[list-item]

    copy = tmp_path / "copy"
    shutil.copytree(pruned, copy, symlinks=True)
    index = next((copy / ".git/objects/pack").glob("*.idx"))
    data = index.read_bytes()
    for broken in (b"\0\0\0\0" + data[4:], data[:4] + b"\0\0\0\3" + data[8:], data[:-30], data[:100], data + data):
        index.write_bytes(broken)
        assert packindex.held(str(copy / ".git"), [one, "0" * 40]) is None  # another version, cut short
    index.write_bytes(data)
    assert packindex.held(str(copy / ".git"), [one]) == {one}

    (copy / ".git/objects/info").mkdir(exist_ok=True)
    (copy / ".git/objects/info/alternates").write_text(str(pruned / ".git/objects") + "\n")
    assert packindex.held(str(copy / ".git"), [one]) is None  # a store that borrows from another
    os.remove(copy / ".git/objects/info/alternates")
    os.environ["GIT_OBJECT_DIRECTORY"] = str(copy / ".git/objects")
    try:
        assert packindex.held(str(copy / ".git"), [one]) is None
    finally:
        del os.environ["GIT_OBJECT_DIRECTORY"]


def test_held_reads_a_sha256_repository_s_indexes_and_a_linked_worktree_s_store(tmp_path: Path):
    from strata_git.gitio import packindex

    repo = tmp_path / "sha256"
    git(tmp_path, "init", "-q", "--object-format=sha256", str(repo))
    for i in range(5):
        (repo / f"f{i}.md").write_text(f"# {i}\n")
        git(repo, "add", "-A")
        git(repo, "commit", "-qm", f"c{i}")
        if i == 2:
            git(repo, "repack", "-q", "-d")  # one pack, then loose objects beside it
    listed = _listed(repo)
    assert all(len(oid) == 64 for oid in listed)
    other = "ab" * 32
    assert packindex.held(str(repo / ".git"), [*listed, other]) == listed
    assert packindex.held(str(repo / ".git"), [oid[:40] for oid in listed]) is None  # SHA-1 ids: cannot tell

    git(repo, "worktree", "add", "-q", str(tmp_path / "wt"))
    linked = git(tmp_path / "wt", "rev-parse", "--absolute-git-dir").stdout.decode().strip()
    assert linked != str(repo / ".git")
    assert packindex.held(linked, [*listed, other]) == listed


def test_repo_held_answers_for_a_pruned_clone_without_loading_libgit2(pruned: Path):
    """Repo.held answers from the indexes first: libgit2's import (about 50 ms) is left to stores
    the indexes cannot tell about."""
    from strata_git.gitio import git as gitio

    repo = gitio.discover(str(pruned))
    archived = sorted(set(archived_blobs(pruned).values()))
    assert repo.held(archived) == {oid for oid in archived if held(pruned, oid)}
    probe = subprocess.run(
        [sys.executable, "-c", "import sys; from strata_git.gitio import git; r = git.discover(sys.argv[1]); "
         "r.held(sys.argv[2:]); print('pygit2' in sys.modules)", str(pruned), *archived],
        capture_output=True, text=True, check=True)
    assert probe.stdout.strip() == "False"
