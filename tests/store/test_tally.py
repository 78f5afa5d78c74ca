"""status counts the archive once for each state of its rows (store/tally.py): what it keeps is
used while the rows and packs it was counted from stand, and counted again when they change,
whoever changed them. Real pruned clones over `git daemon`; the reference is git's own answer."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from conftest import bare_remote, git, strata
from helpers.archive import archived_blobs, body, held, notes_committed, pruned_over_daemon, seed_archive


def _status(where: Path) -> dict:
    proc = strata(where, "status", "--json")
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def _held_by_git(where: Path) -> int:
    return sum(held(where, blob) for blob in set(archived_blobs(where).values()))


def _kept(where: Path) -> tuple[dict, str]:
    from strata_git.gitio.git import discover
    from strata_git.store import catalog, tally

    with catalog.connect(discover(str(where))) as db:
        return json.loads(catalog.get_meta(db, tally.KEPT) or "{}"), tally.generation(db)


@pytest.fixture
def pruned(mem: Path, tmp_path: Path, daemon) -> Path:
    return pruned_over_daemon(mem, tmp_path, daemon, 30)


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


def _pruned_counted(where: Path) -> tuple[int | None, int, int]:
    """(the rows' count kept, index_md's count of archived memories not on disk, the same counted)."""
    from strata_git.gitio.git import discover
    from strata_git.store import catalog, index_md, tally

    with catalog.connect(discover(str(where))) as db:
        counted = db.execute("SELECT count(*) FROM archived WHERE path NOT IN "
                             "(SELECT path FROM memories WHERE tier = 'archive')").fetchone()[0]
        return tally.kept_rows(db), index_md.pruned_count(db), counted


def test_index_md_counts_the_archive_not_on_disk_from_what_is_kept(pruned: Path):
    """A recall's index.md took its count of archived memories not on disk from a count of every
    row (100 ms at a million); it takes the rows' count status keeps, where one is kept."""
    assert _pruned_counted(pruned) == (30, 30, 30)  # (the clone counted and kept them)
    assert strata(pruned, "recall", "notes/m0003").returncode == 0
    assert _pruned_counted(pruned) == (29, 29, 29)
    heading = [line for line in (pruned / "index.md").read_text().splitlines() if line.startswith("## Archive")]
    assert heading and heading[0].startswith("## Archive (29)")
    assert strata(pruned, "reindex").returncode == 0  # every row written anew: nothing kept for them
    kept, found, counted = _pruned_counted(pruned)
    assert kept is None and found == counted == 29
    assert heading == [line for line in (pruned / "index.md").read_text().splitlines() if line.startswith("## Archive")]
    subprocess.run(["git", "checkout", "-q", "--", "archive/notes/m0004.md"], cwd=pruned, check=False,
                   env={**os.environ, "GIT_NO_LAZY_FETCH": "0"})  # one archived memory on disk again
    _status(pruned)  # counted and kept again
    kept, found, counted = _pruned_counted(pruned)
    assert kept == 29 and found == counted


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
    with catalog.connect(discover(str(pruned))) as db:  # again, and then this version brings the rows on
        db.execute("DELETE FROM archived WHERE path = 'archive/notes/m0005.md'")
        catalog.set_meta(db, "shadow_refs", "written by an older version, again")
    assert strata(pruned, "write", "projects/after", input=b"# after\n").returncode == 0  # (no archive row)
    assert _status(pruned)["tiers"]["archive"]["memories"] == 28


def test_a_linked_worktree_counts_the_blobs_of_its_repository_s_store(pruned: Path, tmp_path: Path):
    from strata_git.gitio import partial
    from strata_git.gitio.git import discover

    git(pruned, "worktree", "add", "-q", str(tmp_path / "wt"))
    main, linked = discover(str(pruned)), discover(str(tmp_path / "wt"))
    assert linked.git_dir != main.git_dir
    assert partial.objects(linked) == partial.objects(main) == str(pruned / ".git/objects")
    assert partial.packs(linked) == partial.packs(main) and partial.packs(main)
    assert partial.loose(linked) == partial.loose(main)


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


def test_what_is_kept_follows_every_write_to_the_rows_as_a_fresh_count_would(mem: Path):
    """Random batches of rows added, replaced and removed, each marked by changed() in its own
    transaction, as shadow.py writes them: what is kept then equals what counting the rows again
    gives, names and blobs held included (some of the blobs are in a pack, some loose, some absent)."""
    import random

    from strata_git.gitio.git import discover
    from strata_git.store import catalog, tally

    for i in range(6):
        (mem / f"active/projects/p{i}.md").write_text(f"# p{i}\n")
        git(mem, "add", "-A")
        git(mem, "commit", "-q", "-m", f"p{i}")
        if i == 2:
            git(mem, "repack", "-a", "-d", "-q")
    real = git(mem, "rev-list", "--objects", "--all").stdout.decode().split()
    loose = [subprocess.run(["git", "hash-object", "-w", "--stdin"], cwd=mem, input=f"loose {n}\n".encode(),
                            capture_output=True, check=True).stdout.decode().strip() for n in range(6)]
    blobs = [o for o in real if len(o) == 40][:12] + loose + [f"{n:040x}" for n in range(1, 9)]
    spellings = ["notes/Koda.md", "notes/koda.md", "notes/k\u043eda.md", "caf\u00e9.md", "cafe\u0301.md",
                 "CAF\u00c9.md", "\uff2boda.md", "koda.md", "Koda.md", "x/\u0391lpha-a.md", "deep/a/b.md",
                 "Deep/A/b.md"]
    pool = spellings + [f"bulk/m{n:03d}.md" for n in range(60)]
    repo = discover(str(mem))
    rng = random.Random(5)

    def fresh(db) -> tuple:
        t = tally.tally(db)
        return t.rows, t.size, t.blobs, t.sources, t.spellings, tally.held(repo, db, t)

    with catalog.connect(repo) as db:
        db.execute("DELETE FROM archived")
        catalog.set_meta(db, "shadow_commit", "c0")
        db.commit()
        tally.held(repo, db, tally.tally(db))  # (counted and kept, the packs with it)
        for step in range(40):
            if step == 15:  # the loose blobs packed into a pack of their own, the others kept (no -a)
                git(mem, "repack", "-d", "-q")
            rows = {p: (b, n, s) for p, b, n, s in db.execute("SELECT path, blob, size, source FROM archived")}
            going = rng.sample(sorted(rows), min(len(rows), rng.randrange(4)))
            coming = {f"archive/{n}": (rng.choice(blobs), rng.randrange(1, 999), rng.choice(["record", "name"]))
                      for n in rng.sample(pool, rng.randrange(6))}
            db.execute("BEGIN")
            removed = [(p, *rows[p]) for p in going]
            db.executemany("DELETE FROM archived WHERE path = ?", [(p,) for p in going])
            tally.changed(repo, db, [], removed)
            replaced = [(p, *rows[p]) for p in coming if p in rows and p not in going]
            db.executemany("INSERT OR REPLACE INTO archived VALUES (?, ?, ?, '', '', '', '', ?, '', ?, '', '')",
                           [(1000 * step + j, p, b, n, s) for j, (p, (b, n, s)) in enumerate(coming.items())])
            tally.changed(repo, db, [(p, *v) for p, v in coming.items()], replaced)
            db.commit()
            kept = tally.tally(db)
            assert kept.packs is not None  # (brought along, not counted again)
            brought = (kept.rows, kept.size, kept.blobs, kept.sources, kept.spellings, tally.held(repo, db, kept))
            catalog.set_meta(db, tally.KEPT, "")
            db.commit()
            assert brought == fresh(db), step
    assert len(rows) > 10


@pytest.mark.slow
def test_a_janitor_s_archive_batch_brings_what_status_keeps_along(pruned: Path):

    from helpers.archive import DAY, T0
    from strata_git.app.vault import Vault
    from strata_git.gitio.git import discover
    from strata_git.store import catalog, tally

    first = _status(pruned)
    notes_committed(pruned, {f"n{i:04d}": body(100 + i) for i in range(8)})
    vault = Vault.open(str(pruned))
    vault.janitor(now=T0 + 40 * DAY)
    vault.janitor(now=T0 + 200 * DAY)
    with catalog.connect(discover(str(pruned))) as db:
        kept = tally._load(catalog.get_meta(db, tally.KEPT))
        assert kept is not None and kept.generation == tally.generation(db)  # brought along, not dropped
    after = _status(pruned)
    assert after["tiers"]["archive"]["memories"] == len(archived_blobs(pruned)) >= first["archive"]["memories"] + 8
    assert after["archive"]["held_blobs"] == _held_by_git(pruned) >= 8  # (archived here, not pruned yet)
    with catalog.connect(discover(str(pruned))) as db:
        catalog.set_meta(db, tally.KEPT, "")
    assert _status(pruned) == after  # (counted again from the rows: the same)


def test_the_blobs_held_are_counted_from_the_pack_indexes_as_git_lists_them(mem: Path, monkeypatch):
    """Many ids are looked up in the packs' indexes and the loose objects' names, read whole:
    the count is the one git's listing gives, ids packed, loose, in two packs or absent alike."""
    from strata_git.gitio import partial
    from strata_git.gitio.git import discover

    for i in range(4):
        (mem / f"active/projects/p{i}.md").write_text(f"# p{i}\n")
        git(mem, "add", "-A")
        git(mem, "commit", "-q", "-m", f"p{i}")
        if i in (1, 2):
            git(mem, "repack", "-d", "-q")  # (two packs, then objects left loose)
    loose = [subprocess.run(["git", "hash-object", "-w", "--stdin"], cwd=mem, input=f"loose {n}\n".encode(),
                            capture_output=True, check=True).stdout.decode().strip() for n in range(3)]
    real = git(mem, "rev-list", "--objects", "--all").stdout.decode().split()
    ids = sorted({o for o in real if len(o) == 40} | set(loose) | {f"{n:040x}" for n in range(1, 6)})
    repo = discover(str(mem))
    assert len(partial.packs(repo) or ()) >= 2 and partial.loose(repo)
    expected = len(ids) - len(partial.absent(repo, ids))
    assert expected == len(ids) - 5
    monkeypatch.setattr(partial, "LISTED_UP_TO", 0)  # (the indexes read, as at a million)
    assert partial.held_among(repo, ids) == expected
    assert partial.held_among(repo, loose[:1] + ids[:1]) == 1  # (one loose, one absent)
    assert partial.held_among(repo, []) == 0
