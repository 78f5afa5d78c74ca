"""HEAD moved by txn (a sync's fast-forward, the janitor's moves) over files whose stat data in
git's index is stale: touched since git last looked, their bytes unchanged. `read-tree -m -u`
refuses such a file ("not uptodate") without writing anything, so txn tries it first and
refreshes the stat data only after a refusal; either way the index, the working tree and HEAD
must end up agreeing, with nothing lost."""

from __future__ import annotations

import os
from pathlib import Path

from conftest import git
from strata_git.core import contract
from strata_git.gitio.git import discover
from strata_git.ops import txn


def _commit(mem: Path, files: dict[str, str], message: str) -> str:
    for rel, text in files.items():
        (mem / rel).parent.mkdir(parents=True, exist_ok=True)
        (mem / rel).write_text(text)
    git(mem, "add", "--", *files)
    git(mem, "-c", "core.hooksPath=/dev/null", "commit", "-q", "-m", message)
    return git(mem, "rev-parse", "HEAD").stdout.decode().strip()


def _touch(mem: Path, rels: list[str]) -> None:
    for rel in rels:
        st = os.stat(mem / rel)
        os.utime(mem / rel, ns=(st.st_atime_ns, st.st_mtime_ns + 7_000_000_000))


def _stale(mem: Path, rel: str) -> bool:
    """Whether git's index holds stat data for `rel` that the file no longer has (asked without
    letting git write a refreshed index)."""
    out = git(mem, "diff-files", "--name-only", "--", rel).stdout.decode().split()
    return rel in out


def _clean(mem: Path) -> str:
    return git(mem, "status", "--porcelain", "--untracked-files=all").stdout.decode()


def test_a_fast_forward_over_touched_files_brings_the_new_bytes(mem: Path):
    paths = [f"active/notes/n{i}.md" for i in range(3)]
    old = _commit(mem, {p: f"# N{i}\n\nfirst\n" for i, p in enumerate(paths)}, "first")
    new = _commit(mem, {p: f"# N{i}\n\nsecond\n" for i, p in enumerate(paths)}, "second")
    git(mem, "-c", "core.hooksPath=/dev/null", "reset", "-q", "--hard", old)
    _touch(mem, paths[:2])
    assert _stale(mem, paths[0])
    txn.advance(discover(str(mem)), old, new, paths, "test: fast-forward")
    assert git(mem, "rev-parse", "HEAD").stdout.decode().strip() == new
    assert [(mem / p).read_text().splitlines()[-1] for p in paths] == ["second"] * 3
    assert _clean(mem) == ""
    assert not (mem / ".git" / "strata" / contract.JOURNAL).exists()


def test_the_janitors_move_of_a_touched_file_moves_it(mem: Path):
    repo = discover(str(mem))
    old = _commit(mem, {"active/notes/cold.md": "# Cold\n\nold news\n", "active/notes/warm.md": "# Warm\n"}, "two")
    _touch(mem, ["active/notes/cold.md", "active/notes/warm.md"])
    assert _stale(mem, "active/notes/cold.md")
    new = txn.move(repo, old, [("active/notes/cold.md", "cooled/notes/cold.md")], lambda entries: "strata: cool 1\n",
                   {}, "test: cool")
    assert git(mem, "rev-parse", "HEAD").stdout.decode().strip() == new
    assert not (mem / "active/notes/cold.md").exists()
    assert (mem / "cooled/notes/cold.md").read_text() == "# Cold\n\nold news\n"
    assert (mem / "active/notes/warm.md").read_text() == "# Warm\n"
    assert _clean(mem) == ""
