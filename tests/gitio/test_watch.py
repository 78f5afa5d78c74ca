"""A long-running process learns what changed from the kernel, and is exactly as fresh as a scan.

Every case a search must see at once (an in-place edit, a new file, a deletion, a new
folder, a moved folder, a tier folder that vanishes, another process rebuilding the
catalog, the kernel's queue overflowing) is checked against a vault that scans every time.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from strata_git.gitio import watch
from strata_git.store import catalog


def names(vault, query: str) -> list[str]:
    return sorted(h.name for h in vault.search(query, limit=50))


@pytest.fixture
def pair(vault, mem: Path):
    from strata_git.app.vault import Vault

    vault.write("projects/koda", b"# Koda\n\nThe launch uses heron.\n")
    watched = Vault.open(str(mem))
    watched.watch_files()
    assert names(watched, "heron") == ["projects/koda"]  # the first search scans and starts watching
    return watched, vault


WALKS: list[str] = []


@pytest.fixture(autouse=True)
def count_walks(monkeypatch):
    walk = catalog._walk
    monkeypatch.setattr(catalog, "_walk", lambda root, folder, *rest: (WALKS.append(folder), walk(root, folder, *rest)))
    WALKS.clear()


def same(pair, query: str, scans: bool = False) -> list[str]:
    """The watched vault's hits, checked against a scanning vault's; `scans`: whether the watched
    one had to fall back to a full scan."""
    watched, scanning = pair
    WALKS.clear()
    found = names(watched, query)
    assert bool(WALKS) == scans
    assert found == names(scanning, query)
    return found


def test_in_place_edits_new_files_and_deletions_are_seen_at_once(pair, mem: Path):
    path = mem / "active/projects/koda.md"
    with open(path, "r+b") as f:  # in place: the folder's mtime does not change
        f.seek(0, os.SEEK_END)
        f.write(b"Also falcon.\n")
    assert same(pair, "falcon") == ["projects/koda"]
    (mem / "active/projects/new.md").write_text("# New\n\nfalcon again\n")
    assert same(pair, "falcon") == ["projects/koda", "projects/new"]
    path.unlink()
    assert same(pair, "falcon") == ["projects/new"]


def test_new_moved_and_removed_folders_fall_back_to_a_full_scan(pair, mem: Path):
    folder = mem / "active/people/team"
    folder.mkdir(parents=True)
    (folder / "ana.md").write_text("# Ana\n\nowns the osprey service\n")
    assert same(pair, "osprey", scans=True) == ["people/team/ana"]
    (folder / "ben.md").write_text("# Ben\n\nosprey on call\n")  # watched since the scan
    assert same(pair, "osprey") == ["people/team/ana", "people/team/ben"]
    os.rename(mem / "active/people", mem / "active/staff")
    assert same(pair, "osprey", scans=True) == ["staff/team/ana", "staff/team/ben"]
    shutil.rmtree(mem / "active/staff")
    assert same(pair, "osprey", scans=True) == []


def test_a_catalog_rebuilt_by_another_process_is_scanned_again(pair, mem: Path):
    watched, _ = pair
    catalog.reset(watched.repo)
    assert same(pair, "heron", scans=True) == ["projects/koda"]


def test_a_queue_overflow_falls_back_to_a_full_scan(pair, mem: Path):
    watched, _ = pair
    (mem / "active/projects/x.md").write_text("# X\n\nkestrel\n")
    watched.watch._lost()  # what IN_Q_OVERFLOW leads to
    assert same(pair, "kestrel", scans=True) == ["projects/x"]


def test_without_inotify_every_search_scans(vault, mem: Path, monkeypatch):
    from strata_git.app.vault import Vault

    monkeypatch.setattr(watch, "INotify", None)
    watched = Vault.open(str(mem))
    watched.watch_files()
    vault.write("notes/a", b"# A\n\nmarten\n")
    assert names(watched, "marten") == ["notes/a"]
    (mem / "active/notes/a.md").write_text("# A\n\nstoat\n")
    assert names(watched, "stoat") == ["notes/a"] and names(watched, "marten") == []
