"""status counts the archive once for each state of its rows (store/tally.py): what it keeps is
used while the rows and packs it was counted from stand, and counted again when they change,
whoever changed them. Real pruned clones over `git daemon`; the reference is git's own answer."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from conftest import bare_remote, git, strata
from helpers.archive import archived_blobs, body, held, seed_archive


def _status(where: Path) -> dict:
    proc = strata(where, "status", "--json")
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def _held_by_git(where: Path) -> int:
    return sum(held(where, blob) for blob in set(archived_blobs(where).values()))


def _kept(where: Path) -> tuple[dict, str]:
    from strata_git.gitio.git import discover
    from strata_git.store import catalog, shadow, tally

    with catalog.connect(discover(str(where))) as db:
        return json.loads(catalog.get_meta(db, tally.KEPT) or "{}"), shadow.generation(db)


@pytest.fixture
def pruned(mem: Path, tmp_path: Path, daemon) -> Path:
    git(mem, "remote", "add", "origin", str(bare_remote(tmp_path / "remote.git")))
    seed_archive(mem, 30)
    assert strata(mem, "archive").returncode == 0
    git(mem, "push", "-q", str(bare_remote(daemon.base / "mem.git")), "main")
    where = tmp_path / "laptop"
    assert strata(tmp_path, "clone", daemon.url("mem.git"), str(where)).returncode == 0
    return where


@pytest.mark.slow
def test_status_counts_the_archive_once_and_follows_the_object_store(pruned: Path):
    from strata_git.gitio.git import discover
    from strata_git.ops import archive

    first = _status(pruned)
    assert first["archive"]["memories"] == 30 and first["tiers"]["archive"]["memories"] == 30
    assert first["archive"]["held_blobs"] == _held_by_git(pruned) == 0
    kept, generation = _kept(pruned)
    assert kept["generation"] == generation and kept["rows"] == 30 and kept["packs"] is not None
    assert _status(pruned) == first  # (from what was kept)

    for i in (3, 4):  # an archived memory's very bytes written here again: a loose object with its id
        subprocess.run(["git", "hash-object", "-w", "--stdin"], cwd=pruned, input=body(i).encode(), check=True)
    assert _held_by_git(pruned) == 2
    assert _status(pruned)["archive"]["held_blobs"] == 2
    assert _kept(pruned)[0]["packs"] == kept["packs"]  # the packs are the same: the loose ones were looked up

    subprocess.run(["git", "-c", "gc.auto=0", "repack", "-a", "-d", "-q"], cwd=pruned, check=True)
    assert _kept(pruned)[0]["packs"] != sorted(p.name for p in (pruned / ".git/objects/pack").glob("*.pack"))
    assert _status(pruned)["archive"]["held_blobs"] == _held_by_git(pruned) == 2
    blobs = sorted(b for b in set(archived_blobs(pruned).values()) if not held(pruned, b))
    archive.fetch_blobs_from(discover(str(pruned)), "origin", blobs[:3])  # (a pack of their own)
    assert _status(pruned)["archive"]["held_blobs"] == _held_by_git(pruned) == 5
    after = _status(pruned)
    assert {k: v for k, v in after.items() if k != "archive"} == {k: v for k, v in first.items() if k != "archive"}


@pytest.mark.slow
def test_status_counts_again_when_the_rows_change(pruned: Path):
    _status(pruned)
    assert strata(pruned, "recall", "notes/m0003").returncode == 0  # (out of the archive: a row goes)
    after = _status(pruned)
    assert after["archive"]["memories"] == after["tiers"]["archive"]["memories"] == 29
    assert after["tiers"]["active"]["memories"] == 4


def test_rows_an_older_version_wrote_are_counted_again(pruned: Path):
    """A version before the mark writes rows and their state without marking them: the kept count
    is not taken for them."""
    from strata_git.gitio.git import discover
    from strata_git.store import catalog, tally

    assert _status(pruned)["archive"]["memories"] == 30
    with catalog.connect(discover(str(pruned))) as db:  # what an older version's update would leave
        db.execute("DELETE FROM archived WHERE path = 'archive/notes/m0004.md'")
        catalog.set_meta(db, "shadow_refs", "written by an older version")
    with catalog.connect(discover(str(pruned))) as db:
        assert tally.tally(db).rows == 29


def test_a_clone_counts_the_blobs_a_server_sent_anyway_as_status_does(mem: Path, tmp_path: Path):
    """A server without uploadpack.allowFilter sends every blob: the clone says how many archived
    ones came down, counted as status counts them, and status's first run takes that count."""
    from strata_git.ops import clone

    git(mem, "remote", "add", "origin", str(bare_remote(tmp_path / "remote.git")))
    seed_archive(mem, 12)
    assert strata(mem, "archive").returncode == 0
    unfiltered = bare_remote(tmp_path / "unfiltered.git", filter=False)
    git(mem, "push", "-q", str(unfiltered), "main", "refs/strata/*:refs/strata/*")
    done = clone.clone(unfiltered.as_uri(), str(tmp_path / "laptop"))
    assert done.archived == 12 and done.archived_local == _held_by_git(tmp_path / "laptop") == 12
    assert "ignores --filter" in done.warning
    kept, generation = _kept(tmp_path / "laptop")
    assert kept["generation"] == generation and kept["packs"] is not None
    assert _status(tmp_path / "laptop")["archive"]["held_blobs"] == 12
