"""Trees edited in place give exactly the tree git makes through an index, on real repositories."""

from __future__ import annotations

import os
import random
from pathlib import Path

import pytest

from conftest import git
from strata_git.errors import GitFailed
from strata_git.gitio import trees
from strata_git.gitio.git import Repo

ODD = ["plain.md", "with space.md", 'quote".md', "back\\slash.md", "tab\there.md", "é-accent.md",
       "a.md", "a-b.md", "a", "a.b", "z", "0.md"]


def _repo(tmp_path: Path, files: dict[str, bytes]) -> tuple[Repo, str]:
    root = tmp_path / "r"
    git(tmp_path, "init", "-q", str(root))
    for path, data in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_bytes(data)
    git(root, "add", "-A")
    git(root, "-c", "user.name=T", "-c", "user.email=t@e.invalid", "commit", "-qm", "base")
    repo = Repo(str(root), str(root / ".git"))
    return repo, repo.git("rev-parse", "HEAD^{tree}").decode().strip()


def _through_an_index(repo: Repo, tree: str, changes: dict[str, tuple[str, str] | None], tmp: Path) -> str:
    env = {"GIT_INDEX_FILE": str(tmp / "scratch.index")}
    repo.git("read-tree", tree, env=env)
    lines = [f"{m} {o}\t{p}\0" if new else f"0 {'0' * 40}\t{p}\0"
             for p, new in changes.items() for m, o in [new or ("", "")]]
    repo.git("update-index", "-z", "--index-info", input="".join(lines).encode("utf-8", "surrogateescape"), env=env)
    tree = repo.git("write-tree", "--missing-ok", env=env).decode().strip()
    os.unlink(env["GIT_INDEX_FILE"])
    return tree


def test_random_moves_make_the_tree_an_index_makes(tmp_path: Path):
    rng = random.Random(7)
    files = {f"{tier}/{folder}/{name}": f"{tier} {folder} {name}".encode()
             for tier in ("active", "archive") for folder in ("p1", "p1/deep", "p 2", "x.y") for name in ODD}
    files["top.md"] = b"top"
    repo, tree = _repo(tmp_path, files)
    held = trees.entries(repo, tree, list(files))
    assert set(held) == set(files)
    for round_ in range(30):
        paths = sorted(held)
        changes: dict[str, tuple[str, str] | None] = {}
        for src in rng.sample(paths, rng.randint(1, 8)):
            dst = rng.choice([src.replace("active/", "cooled/", 1), src.replace("active/", "archive/", 1),
                              f"cooled/new{round_}/{src.rsplit('/', 1)[-1]}", src])
            changes[src] = None
            changes[dst] = held[src]
        if rng.random() < 0.3:
            changes[f"active/brand/new {round_}.md"] = ("100644", repo.store(b"new %d" % round_))
        expected = _through_an_index(repo, tree, changes, tmp_path)
        assert trees.edit(repo, tree, changes) == expected
        tree = expected
        held = {p: e for p, e in trees.entries(repo, tree, list(held) + list(changes)).items()}
    assert repo.git("cat-file", "-t", tree).strip() == b"tree"
    assert repo.ok("fsck", "--strict")


def test_a_folder_left_empty_goes_and_a_deep_new_one_appears(tmp_path: Path):
    repo, tree = _repo(tmp_path, {"archive/only/one.md": b"x", "active/a.md": b"a"})
    blob = trees.entries(repo, tree, ["archive/only/one.md"])["archive/only/one.md"]
    new = trees.edit(repo, tree, {"archive/only/one.md": None, "active/n/e/w/one.md": blob})
    listed = repo.git("ls-tree", "-r", "--name-only", new).decode().split()
    assert listed == ["active/a.md", "active/n/e/w/one.md"]
    assert trees.edit(repo, tree, {}) == tree


def test_a_file_in_the_way_of_a_folder_is_refused(tmp_path: Path):
    repo, tree = _repo(tmp_path, {"active/a.md": b"a", "active/f/b.md": b"b"})
    blob = ("100644", repo.store(b"z"))
    with pytest.raises(GitFailed, match="a file stands there"):
        trees.edit(repo, tree, {"active/a.md/x.md": blob})
    with pytest.raises(GitFailed, match="a folder stands there"):
        trees.edit(repo, tree, {"active/f": blob})


def test_blobs_this_clone_does_not_hold_may_be_named(tmp_path: Path):
    """A pruned clone's archived blobs are promised by its remote: a tree may name them."""
    repo, tree = _repo(tmp_path, {"active/a.md": b"a"})
    absent = ("100644", "1" * 40)
    new = trees.edit(repo, tree, {"archive/gone.md": absent})
    assert trees.entries(repo, new, ["archive/gone.md"]) == {"archive/gone.md": absent}


def test_a_file_and_a_folder_of_one_name_may_swap_places(tmp_path: Path):
    repo, tree = _repo(tmp_path, {"active/a": b"file a", "active/f/b.md": b"b"})
    blob = ("100644", repo.store(b"z"))
    into_folder = trees.edit(repo, tree, {"active/a": None, "active/a/x.md": blob})
    assert into_folder == _through_an_index(repo, tree, {"active/a": None, "active/a/x.md": blob}, tmp_path)
    into_file = trees.edit(repo, tree, {"active/f/b.md": None, "active/f": blob})
    assert repo.git("ls-tree", "-r", "--name-only", into_file).decode().split() == ["active/a", "active/f"]
    with pytest.raises(GitFailed, match="a folder stands there"):  # the folder keeps a file: never dropped
        trees.edit(repo, tree, {"active/f": blob, "active/f/c.md": blob})
