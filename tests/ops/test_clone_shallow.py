"""`git strata clone` fetches only the last commit of each shadow ref (its tree holds every record
the ref ever had): the clone is shallow at those commits alone, its memory branch keeps all its
history, and records that arrive later, its own pushes and its own records all work as before."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import bare_remote, git, strata
from helpers.archive import DAY, T0, archived_blobs, body, seed_archive, shadow_rows


def _commits(repo: Path, ref: str) -> int:
    return int(git(repo, "rev-list", "--count", ref).stdout.decode())


def test_a_clone_holds_each_shadow_refs_last_commit_and_every_record(mem: Path, tmp_path: Path):
    remote = bare_remote(tmp_path / "remote.git")
    git(mem, "remote", "add", "origin", str(remote))
    vault = seed_archive(mem, 12)
    for i in range(12, 20):  # a second janitor run: a second commit of records on the same ref
        vault.write(f"later/n{i}", body(i).encode())
    vault.janitor(now=T0 + 240 * DAY)
    vault.janitor(now=T0 + 400 * DAY)
    assert strata(mem, "sync").returncode == 0
    (ref,) = git(mem, "for-each-ref", "--format=%(refname)", "refs/strata/shadow/").stdout.decode().split()
    assert _commits(mem, ref) >= 2

    laptop = tmp_path / "laptop"
    proc = strata(tmp_path, "clone", str(remote), str(laptop), "--json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["archived"] == len(archived_blobs(mem)) >= 20
    theirs = ref.replace("refs/strata/shadow/", "refs/strata-remotes/origin/shadow/")
    tip = git(mem, "rev-parse", ref).stdout.decode().strip()
    assert git(laptop, "rev-parse", theirs).stdout.decode().strip() == tip
    assert _commits(laptop, theirs) == 1
    assert (laptop / ".git/shallow").read_text().split() == [tip]  # nothing else is cut short
    assert _commits(laptop, "HEAD") == _commits(mem, "HEAD")
    assert shadow_rows(laptop) == shadow_rows(mem)  # every record, from the one tree

    # The desktop archives more: a sync brings the new commit of records on top of the cut.
    for i in range(20, 24):
        vault.write(f"more/n{i}", body(i).encode())
    vault.janitor(now=T0 + 440 * DAY)
    vault.janitor(now=T0 + 600 * DAY)
    assert strata(mem, "sync").returncode == 0
    assert strata(laptop, "sync").returncode == 0
    assert _commits(laptop, theirs) == 2
    assert shadow_rows(laptop) == shadow_rows(mem)
    hits = json.loads(strata(laptop, "search", "token0022", "--json").stdout)
    assert hits and hits[0]["name"] == "more/n22"

    # The laptop's own work and its own records go up, and the desktop takes them in.
    for i in range(30, 33):
        assert strata(laptop, "write", f"laptop/n{i}", "-m", body(i)).returncode == 0
    assert strata(laptop, "janitor", "--now", "+700d").returncode == 0
    assert strata(laptop, "janitor", "--now", "+900d").returncode == 0
    (own,) = git(laptop, "for-each-ref", "--format=%(refname)", "refs/strata/shadow/").stdout.decode().split()
    assert strata(laptop, "sync").returncode == 0
    assert strata(mem, "sync").returncode == 0
    there = own.replace("refs/strata/shadow/", "refs/strata-remotes/origin/shadow/")
    assert git(mem, "rev-parse", there).stdout == git(laptop, "rev-parse", own).stdout
    assert shadow_rows(laptop) == shadow_rows(mem)
    assert git(laptop, "fsck", "--no-dangling").returncode == 0
    assert json.loads(strata(laptop, "status", "--json").stdout)["problems"] == []
    scanned = strata(laptop, "scan", "--json")  # walks every ref's history, the cut ones too
    assert scanned.returncode == 0, scanned.stdout + scanned.stderr


def test_a_clone_says_each_step_and_counts_the_archive_it_indexes(mem: Path, tmp_path: Path):
    from strata_git.ops import clone

    remote = bare_remote(tmp_path / "remote.git")
    git(mem, "remote", "add", "origin", str(remote))
    seed_archive(mem, 12)
    assert strata(mem, "sync").returncode == 0
    steps: list[str] = []
    counts: list[tuple[int, int]] = []
    done = clone.clone(str(remote), str(tmp_path / "laptop"), steps.append, lambda n, of: counts.append((n, of)))
    assert [s.split(" ")[0] for s in steps] == ["cloning", "fetching", "fetching", "indexing", "indexing"]
    assert "archive" in steps[3] and "index.md" in steps[4]
    assert counts and counts[-1] == (done.archived, done.archived) == (12, 12)


def test_the_last_change_table_a_clone_makes_beside_its_history_read_is_the_one_history_gives(mem: Path,
                                                                                              tmp_path: Path):
    """`git strata clone` (one thread: it may fork) makes the last-change table in a process of its
    own while it reads the archive's paths: the table, and index.md, are what one made from
    nothing in this process gives."""
    import os

    from strata_git.core import contract
    from strata_git.gitio.git import discover
    from strata_git.store import history, index_md

    remote = bare_remote(tmp_path / "remote.git")
    git(mem, "remote", "add", "origin", str(remote))
    vault = seed_archive(mem, 12)
    vault.write("notes/late", b"# Late\n\nwritten after the janitor ran\n")
    assert strata(mem, "sync").returncode == 0
    laptop = tmp_path / "laptop"
    assert strata(tmp_path, "clone", str(remote), str(laptop)).returncode == 0
    repo = discover(str(laptop))
    table = os.path.join(repo.state_dir(), contract.CHANGES)
    assert os.path.exists(table)
    at = history.head(repo)
    made, index = history.last_changed(repo, at), (laptop / "index.md").read_text()
    os.unlink(table)
    assert made and history.last_changed(repo, at) == made
    assert made == history.last_changed(discover(str(mem)), history.head(discover(str(mem))))
    index_md.refresh(repo, 1 << 20)
    assert (laptop / "index.md").read_text() == index
