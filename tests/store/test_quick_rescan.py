"""A search's quick rescan takes a cooled folder whose listing is unchanged as the catalog has it
(catalog._Marks): whatever git, the janitor or a person does to cooled/ by adding, replacing,
moving or removing files and folders, the catalog a quick rescan leaves equals the files on disk;
only a file rewritten in place by hand in a folder settled for more than two seconds is missed,
and a full scan finds it."""

from __future__ import annotations

import os
import random
import shutil
import time
from pathlib import Path

from strata_git.gitio.git import discover
from strata_git.store import catalog, search

WORDS = ["amber", "basalt", "cobalt", "dune", "ember", "fjord", "garnet", "heath", "indigo", "jasper"]


def note(title: str, body: str) -> str:
    return f"---\ntitle: {title}\n---\n{body}\n"


def settle(root: Path, stamp: list[int]) -> None:
    """Date back every folder and file under cooled/ changed in the last few seconds, each to a
    time of its own well in the past: as if the change had happened long ago (a quick rescan does
    not trust a folder changed within two seconds)."""
    recent = time.time_ns() - 5 * 10**9
    for path in [root / "cooled", *(root / "cooled").rglob("*")]:
        if path.stat().st_mtime_ns > recent:
            stamp[0] += 1_000_000
            os.utime(path, ns=(stamp[0], stamp[0]), follow_symlinks=False)


def quick_rows(root: Path) -> dict[str, str]:
    """{path: title} of the cooled rows after a quick rescan (what every search runs)."""
    repo = discover(str(root))
    with catalog.connect(repo) as db:
        catalog.rescan(repo, db, tiers=catalog.SEARCHED, quick=True)
        return dict(db.execute("SELECT path, title FROM memories WHERE tier = 'cooled'").fetchall())


def on_disk(root: Path) -> dict[str, str]:
    found = {}
    for path in (root / "cooled").rglob("*.md"):
        title = path.read_text(encoding="utf-8").split("\n")[1].removeprefix("title: ")
        found[path.relative_to(root).as_posix()] = title
    return found


def test_a_quick_rescan_ends_where_the_files_are_through_every_change_git_or_a_person_makes(mem: Path) -> None:
    rng = random.Random(7)
    stamp = [time.time_ns() - 10**12]
    folders = ["cooled/projects", "cooled/projects/2025-01", "cooled/notes", "cooled/people/team"]
    made = 0
    for step in range(60):
        existing = sorted((mem / "cooled").rglob("*.md"))
        dirs = sorted(p for p in (mem / "cooled").rglob("*") if p.is_dir())
        action = rng.choice(["add", "add", "replace", "remove", "rmtree", "rename", "nest"]) if existing else "add"
        if action == "add":
            folder = mem / rng.choice(folders)
            folder.mkdir(parents=True, exist_ok=True)
            made += 1
            (folder / f"m{made}.md").write_text(note(f"t{made}", f"{rng.choice(WORDS)} w{made}"), encoding="utf-8")
        elif action == "replace":  # as git and most editors write a file: a new file in its place
            path = rng.choice(existing)
            tmp = path.with_name(".strata-tmp-x")
            tmp.write_text(note(f"r{step}", f"{rng.choice(WORDS)} replaced {step}"), encoding="utf-8")
            os.replace(tmp, path)
        elif action == "remove":
            rng.choice(existing).unlink()
        elif action == "rmtree" and dirs:
            shutil.rmtree(rng.choice(dirs))
        elif action == "rename" and dirs:
            src = rng.choice(dirs)
            src.rename(src.with_name(src.name + f"-{step}"))
        elif action == "nest" and dirs:
            inner = rng.choice(dirs) / f"n{step}"
            inner.mkdir()
            made += 1
            (inner / f"m{made}.md").write_text(note(f"t{made}", f"nested w{made}"), encoding="utf-8")
        settle(mem, stamp)
        assert quick_rows(mem) == on_disk(mem), f"step {step}: {action}"
    repo = discover(str(mem))
    with catalog.connect(repo) as db:  # the marks of folders gone are forgotten
        marked = {p for (p,) in db.execute("SELECT path FROM folders")}
    assert marked == {p.relative_to(mem).as_posix() for p in [mem / "cooled", *(mem / "cooled").rglob("*")]
                      if p.is_dir()}


def test_search_finds_what_came_into_a_settled_folder_and_not_what_left_it(mem: Path) -> None:
    stamp = [time.time_ns() - 10**12]
    folder = mem / "cooled" / "projects"
    folder.mkdir(parents=True)
    (folder / "old.md").write_text(note("old", "quartzite leaving"), encoding="utf-8")
    settle(mem, stamp)
    repo = discover(str(mem))
    assert [h.name for h in search.search(repo, "quartzite")] == ["projects/old"]
    (folder / "old.md").unlink()
    (folder / "new.md").write_text(note("new", "quartzite arriving"), encoding="utf-8")
    settle(mem, stamp)
    assert [h.name for h in search.search(repo, "quartzite")] == ["projects/new"]
    assert search.search(repo, "leaving") == []


def test_a_file_rewritten_in_place_is_seen_while_its_folder_is_recent_and_by_a_full_scan(mem: Path) -> None:
    stamp = [time.time_ns() - 10**12]
    folder = mem / "cooled" / "projects"
    folder.mkdir(parents=True)
    path = folder / "koda.md"
    path.write_text(note("before", "first"), encoding="utf-8")
    assert quick_rows(mem) == {"cooled/projects/koda.md": "before"}  # a folder this recent is listed each time
    with open(path, "r+", encoding="utf-8") as f:  # in place: the folder's mtime does not move
        f.write(note("during", "second"))
    assert quick_rows(mem) == {"cooled/projects/koda.md": "during"}
    settle(mem, stamp)
    quick_rows(mem)  # now recorded as settled
    with open(path, "r+", encoding="utf-8") as f:
        f.write(note("after!", "third"))
    os.utime(path, ns=(stamp[0] + 10**9, stamp[0] + 10**9))
    assert quick_rows(mem) == {"cooled/projects/koda.md": "during"}  # the one change a quick rescan misses
    repo = discover(str(mem))
    with catalog.connect(repo) as db:
        catalog.scan(repo, db)  # what index.md and `reindex` run
    assert quick_rows(mem) == {"cooled/projects/koda.md": "after!"}


def test_a_catalog_made_before_the_folder_marks_gets_them(mem: Path) -> None:
    (mem / "cooled" / "notes").mkdir(parents=True)
    (mem / "cooled" / "notes" / "a.md").write_text(note("a", "alpha"), encoding="utf-8")
    settle(mem, [time.time_ns() - 10**12])
    repo = discover(str(mem))
    with catalog.connect(repo) as db:
        db.execute("DROP TABLE IF EXISTS folders")
    assert quick_rows(mem) == {"cooled/notes/a.md": "a"}
    with catalog.connect(repo) as db:
        assert db.execute("SELECT count(*) FROM folders").fetchone()[0] == 2  # cooled, cooled/notes


def test_a_names_problem_stays_through_edits_and_a_healthy_name_is_not_checked_again(mem: Path, monkeypatch) -> None:
    """A row with no problem vouches for its name (a path's name does not change); a row with one
    has its name checked again whenever the file is read."""
    from conftest import git
    from strata_git.app.vault import Vault

    (mem / "active/notes").mkdir(parents=True, exist_ok=True)
    (mem / "active/notes/CON.md").write_text("# Bad\n\nfirst\n")
    (mem / "active/notes/good.md").write_text("# Good\n\nfirst\n")
    git(mem, "add", "-A")
    git(mem, "commit", "-q", "--no-verify", "-m", "by hand")
    vault = Vault.open(str(mem))
    problems = {e.name: e.problem for e in vault.list(tier="active")}
    assert "refuses" in problems["notes/CON.md"] and problems["notes/good.md"] == ""
    checked: list[str] = []
    real = catalog.name_problem
    monkeypatch.setattr(catalog, "name_problem", lambda rel: checked.append(rel) or real(rel))
    for name in ("CON", "good"):
        (mem / f"active/notes/{name}.md").write_text(f"# {name}\n\nsecond, and longer\n")
    problems = {e.name: e.problem for e in vault.list(tier="active")}
    assert "refuses" in problems["notes/CON.md"] and problems["notes/good.md"] == ""
    assert checked == ["active/notes/CON.md"]
