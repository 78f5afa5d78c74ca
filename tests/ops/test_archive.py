"""The archive tier against real remotes: a bare repository, and `git daemon` on 127.0.0.1.

archive -> verify -> prune -> fsck/gc clean -> smaller; prunes refused (remote lacks an
object, is unreachable, rejects the push, lacks the filter setting) with nothing lost;
the shadow index (fresh clone == original, incremental == full, damage -> rebuilt);
rehydration of 1 and 200 memories on a clone that never had them; remote down.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
from pathlib import Path

import pytest

from conftest import bare_remote, git, head, strata
from helpers.archive import DAY, T0, archived_blobs, body, held, seed_archive, shadow_rows


def objects_bytes(repo: Path) -> int:
    return sum(f.stat().st_size for f in (repo / ".git/objects").rglob("*") if f.is_file())


def missing(repo: Path) -> int:
    out = git(repo, "rev-list", "--objects", "--missing=print", "--all").stdout.decode().split()
    return sum(1 for line in out if line.startswith("?"))


@pytest.fixture
def setup(mem: Path, tmp_path: Path):
    remote = bare_remote(tmp_path / "remote.git")
    git(mem, "remote", "add", "origin", str(remote))
    vault = seed_archive(mem, 40)
    return vault, remote


@pytest.mark.slow
def test_archive_pushes_verifies_prunes_and_git_shrinks(setup, mem: Path):
    vault, remote = setup
    blobs = archived_blobs(mem)
    assert len(blobs) == 40 and (mem / "archive/notes/m0007.md").is_file()
    before = objects_bytes(mem)
    proc = strata(mem, "archive", "--json")
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert report["verified"] == report["pruned"] >= 40 and report["record"]
    assert not (mem / "archive").exists()  # out of the working tree
    assert objects_bytes(mem) < before and report["git_bytes_after"] < report["git_bytes_before"]
    assert all(not held(mem, b) for b in blobs.values())  # out of the object store
    assert all(held(remote, b) for b in blobs.values())  # and on the remote
    assert git(mem, "status", "--porcelain").stdout == b""
    fsck = git(mem, "fsck", check=False)
    assert fsck.returncode == 0 and b"missing" not in fsck.stdout + fsck.stderr
    holes = missing(mem)
    git(mem, "-c", "gc.auto=0", "gc", "-q")
    assert missing(mem) == holes  # gc did not download the pruned blobs again
    assert git(mem, "fsck", check=False).returncode == 0
    # The verification is recorded in git.
    record = git(mem, "log", "-1", "--format=%B", "refs/strata/archive/origin").stdout.decode()
    assert f"Strata-Verified-Commit: {head(mem)}" in record and "Strata-Verified-Objects:" in record
    # Archived memories stay listed and searchable.
    listed = json.loads(strata(mem, "list", "--tier", "archive", "--json").stdout)
    assert len(listed) == 40
    hits = json.loads(strata(mem, "search", "token0007", "--json").stdout)
    assert hits[0]["name"] == "notes/m0007" and hits[0]["tier"] == "archive" and hits[0]["blob"] == \
        blobs["archive/notes/m0007.md"]
    assert "Archive (40)" in (mem / "index.md").read_text()
    state = json.loads(strata(mem, "status", "--json").stdout)["archive"]
    assert state["pruned"] and state["memories"] == 40 and state["held_blobs"] == 0
    assert state["last_verified"].startswith("origin at ") and state["shadow_commit"] == head(mem)
    # A second run has nothing to verify or prune, and still succeeds.
    again = json.loads(strata(mem, "archive", "--json").stdout)
    assert again["pruned"] == 0 and again["missing_before"] >= 40


@pytest.mark.slow
def test_dry_run_changes_nothing(setup, mem: Path, tmp_path: Path):
    _, remote = setup
    before = objects_bytes(mem)
    proc = strata(mem, "archive", "--dry-run", "--json")
    assert proc.returncode == 0 and json.loads(proc.stdout)["pruned"] >= 40
    assert objects_bytes(mem) == before and (mem / "archive").is_dir()
    assert git(remote, "rev-parse", "-q", "--verify", "refs/heads/main", check=False).returncode != 0


def _nothing_pruned(mem: Path, before: int) -> None:
    assert (mem / "archive/notes/m0003.md").read_text() == body(3)
    assert objects_bytes(mem) >= before
    assert missing(mem) == 0
    assert git(mem, "config", "--get", "remote.origin.promisor", check=False).returncode != 0
    assert git(mem, "for-each-ref", "refs/strata/archive/").stdout == b""


@pytest.mark.slow
def test_prune_refused_when_the_remote_read_back_lacks_the_objects(setup, mem: Path, tmp_path: Path):
    # Pushes land in one repository, reads come from another that never got them (a mirror behind).
    vault, remote = setup
    stale = bare_remote(tmp_path / "stale.git")
    git(mem, "remote", "set-url", "origin", str(stale))
    git(mem, "remote", "set-url", "--push", "origin", str(remote))
    before = objects_bytes(mem)
    proc = strata(mem, "archive")
    assert proc.returncode == 1 and b"nothing was pruned" in proc.stderr, proc.stderr
    _nothing_pruned(mem, before)


@pytest.mark.slow
def test_prune_refused_when_the_remote_is_unreachable(setup, mem: Path, tmp_path: Path):
    git(mem, "remote", "set-url", "origin", str(tmp_path / "gone.git"))
    before = objects_bytes(mem)
    proc = strata(mem, "archive")
    assert proc.returncode == 1 and b"nothing was pruned" in proc.stderr and b"gone.git" in proc.stderr
    _nothing_pruned(mem, before)


@pytest.mark.slow
def test_prune_refused_when_the_remote_rejects_the_push(setup, mem: Path):
    _, remote = setup
    hook = remote / "hooks/pre-receive"
    hook.write_text("#!/bin/sh\necho 'quota exceeded' >&2\nexit 1\n")
    hook.chmod(0o755)
    before = objects_bytes(mem)
    proc = strata(mem, "archive")
    assert proc.returncode == 1 and b"nothing was pruned" in proc.stderr, proc.stderr
    _nothing_pruned(mem, before)


@pytest.mark.slow
def test_prune_refused_when_the_remote_moved_on_and_never_forces(setup, mem: Path, tmp_path: Path):
    _, remote = setup
    other = tmp_path / "other"
    git(mem, "push", "-q", "origin", "HEAD:main")
    git(tmp_path, "clone", "-q", str(remote), str(other))
    (other / "x.txt").write_text("x\n")
    git(other, "add", "x.txt")
    git(other, "-c", "core.hooksPath=/dev/null", "commit", "-q", "-m", "other machine")
    git(other, "push", "-q", "origin", "main")
    theirs = git(remote, "rev-parse", "main").stdout
    (mem / "y.txt").write_text("y\n")
    git(mem, "add", "y.txt")
    git(mem, "-c", "core.hooksPath=/dev/null", "commit", "-q", "-m", "this machine")
    before = objects_bytes(mem)
    proc = strata(mem, "archive")
    assert proc.returncode == 1 and b"never forced" in proc.stderr
    assert git(remote, "rev-parse", "main").stdout == theirs
    _nothing_pruned(mem, before)


def test_prune_refused_when_the_server_does_not_allow_filters(mem: Path, tmp_path: Path):
    remote = bare_remote(tmp_path / "plain.git", filter=False)
    git(mem, "remote", "add", "origin", str(remote))
    seed_archive(mem, 5)
    before = objects_bytes(mem)
    dry = strata(mem, "archive", "--dry-run")  # the dry run checks what the real run checks
    assert dry.returncode == 1 and b"does not offer filtered fetches" in dry.stderr
    proc = strata(mem, "archive")
    assert proc.returncode == 1 and b"uploadpack.allowFilter" in proc.stderr
    _nothing_pruned(mem, before)
    hint = proc.stderr.decode().split("hint: ", 1)[1]
    pasted = hint.split("`")[1]  # the hint is a command that works when pasted, in the remote's repository
    subprocess.run(pasted, shell=True, cwd=remote, check=True)
    assert strata(mem, "archive", "--dry-run").returncode == 0 and strata(mem, "archive").returncode == 0


def test_archive_refuses_uncommitted_changes_in_archive(setup, mem: Path):
    (mem / "archive/notes/m0001.md").write_text("changed by hand\n")
    proc = strata(mem, "archive")
    assert proc.returncode == 1 and b"uncommitted changes" in proc.stderr
    assert (mem / "archive/notes/m0001.md").read_text() == "changed by hand\n"


@pytest.mark.slow
def test_janitor_prunes_after_the_cycle_when_configured(mem: Path, tmp_path: Path):
    from strata_git.app.vault import Vault

    remote = bare_remote(tmp_path / "remote.git")
    git(mem, "remote", "add", "origin", str(remote))
    cfg = mem / ".strata/config.toml"
    cfg.write_text(cfg.read_text().replace("prune = false", "prune = true"))
    git(mem, "commit", "-q", "-m", "prune after cycles", "--", ".strata/config.toml")
    seed_archive(mem, 6)
    vault = Vault.open(str(mem))
    result = vault.janitor(now=T0 + 400 * DAY)
    assert result.archive and "error" not in result.archive, result.archive
    assert not (mem / "archive").exists() and all(not held(mem, b) for b in archived_blobs(mem).values())
    # With the remote gone, the cycle still runs and says why nothing was pruned.
    git(mem, "remote", "set-url", "origin", str(tmp_path / "gone.git"))
    result = vault.janitor(now=T0 + 401 * DAY)
    assert result.archive and "unreachable" in result.archive["error"]


# -- the shadow index ------------------------------------------------------------------------

@pytest.mark.slow
def test_reindex_on_a_fresh_clone_equals_the_original_without_fetching(setup, mem: Path, tmp_path: Path, daemon):
    vault, _ = setup
    assert strata(mem, "archive").returncode == 0
    served = bare_remote(daemon.base / "mem.git")
    git(mem, "push", "-q", str(served), "main", "refs/strata/shadow/*:refs/strata/shadow/*")  # what sync pushes
    original = shadow_rows(mem)
    entries = [r for r in original if len(r) == 10]  # then (term, rows, occurrences) of the full-text index
    assert len(entries) == 40 and all(r[2] for r in entries)  # each has the commit that archived it
    for url, where in ((str(tmp_path / "remote.git"), tmp_path / "clone1"), (daemon.url("mem.git"), tmp_path / "c2")):
        proc = strata(tmp_path, "clone", url, str(where), "--json")
        assert proc.returncode == 0, proc.stderr
        cloned = json.loads(proc.stdout)
        assert cloned["archived"] == 40 and cloned["archived_local"] == 0
        assert not (where / "archive").exists() and (where / "active/live/a1.md").is_file()
        assert all(not held(where, b) for b in archived_blobs(where).values())
        assert shadow_rows(where) == original
        assert strata(where, "reindex").returncode == 0
        assert shadow_rows(where) == original
        assert all(not held(where, b) for b in archived_blobs(where).values())  # reindex fetched nothing
        hits = json.loads(strata(where, "search", "meadow token0013", "--json").stdout)
        assert hits[0]["name"] == "notes/m0013"


@pytest.mark.slow
def test_incremental_update_equals_a_full_rebuild(mem: Path, tmp_path: Path):
    from strata_git.store import shadow

    vault = seed_archive(mem, 10)
    shadow.refresh(vault.repo)
    for i in range(10, 16):
        vault.write(f"notes/n{i}", body(i).encode())
    vault.janitor(now=T0 + 240 * DAY)
    vault.janitor(now=T0 + 400 * DAY)  # archives the new ones: one incremental step
    vault.recall(["notes/m0002", "notes/m0003"])  # two leave archive/
    assert shadow.refresh(vault.repo) in ("updated", "fresh")
    incremental = shadow_rows(mem)
    shadow.build(vault.repo, vault.repo.head())
    assert shadow_rows(mem) == incremental
    # the three live ones went stale and were archived too
    assert len([r for r in incremental if len(r) == 10]) == 10 + 6 + 3 - 2


@pytest.mark.parametrize("many", [False, True], ids=["paths asked by name", "from the trailers"])
def test_going_back_in_history_updates_the_rows_as_a_full_build_makes_them(mem: Path, monkeypatch, many: bool):
    """A reset or checkout back to an ancestor brings the rows back without a full build (one took
    minutes at a million archived): the paths that return get the commit that archived them."""
    from strata_git.store import shadow

    monkeypatch.setattr(shadow, "FROM_TRAILERS", 1 if many else 10**9)
    monkeypatch.setattr(shadow, "EXACT_UP_TO", 0 if many else 10**9)  # a few paths: asked by name
    vault = seed_archive(mem, 10)
    start = head(mem)
    for i in range(10, 14):
        vault.write(f"notes/n{i}", body(i).encode())
    vault.janitor(now=T0 + 240 * DAY)
    vault.janitor(now=T0 + 400 * DAY)
    archived = head(mem)
    vault.recall(["notes/m0002", "notes/n11"])
    assert shadow.refresh(vault.repo) in ("updated", "fresh")
    for back in (archived, start):  # the recalled two return; then the four archived later go
        git(mem, "reset", "-q", "--hard", back)
        assert shadow.refresh(vault.repo) == "updated"
        stepped = shadow_rows(mem)
        shadow.build(vault.repo, vault.repo.head())
        assert shadow_rows(mem) == stepped
    assert len([r for r in stepped if len(r) == 10]) == 10
    git(mem, "checkout", "-q", "--orphan", "other")  # no ancestor either way: built in full
    git(mem, "commit", "-q", "--no-verify", "-m", "unrelated")
    assert shadow.refresh(vault.repo) == "rebuilt"


@pytest.mark.slow
@pytest.mark.parametrize("damage", ["delete", "truncate", "garbage", "middle", "old-schema"])
def test_a_damaged_shadow_index_is_detected_and_rebuilt(setup, mem: Path, damage: str):
    from strata_git.store import shadow

    vault, _ = setup
    expected = [h.as_dict() for h in vault.search("copper token0004")]
    rows = shadow_rows(mem)
    path = Path(shadow.path(vault.repo))
    data = path.read_bytes()
    if damage == "delete":
        path.unlink()
    elif damage == "truncate":
        path.write_bytes(data[: len(data) // 3])
    elif damage == "garbage":
        path.write_bytes(os.urandom(len(data)))
    elif damage == "middle":
        path.write_bytes(data[:4096] + b"\xff" * (len(data) - 8192) + data[-4096:])
    else:
        db = sqlite3.connect(path)
        db.execute("PRAGMA user_version = 0")
        db.commit()
        db.close()
    assert [h.as_dict() for h in vault.search("copper token0004")] == expected
    assert shadow_rows(mem) == rows
    # A broken index never blocks a write.
    path.write_bytes(b"not a database")
    vault.write("still/works", b"# yes\n")
    assert [r for r in shadow_rows(mem) if len(r) == 10] == [r for r in rows if len(r) == 10]


# -- search ------------------------------------------------------------------------------------

HOSTILE = [
    '"', '""', "'", "\"unbalanced", "a\"b", "AND", "OR", "NOT", "a AND", "NOT a", "a OR OR b", "NEAR(a b)",
    "NEAR(", "a NEAR/3 b", "col:x", "title:secret", "-a", "a -b", "+a", "*", "a*", "^a", "(a", "a)", "((()))",
    "{a b}", "[a]", "a:b:c", ";", "'; DROP TABLE docs; --", "\\", "\0", "a\0b", "\x1b[2J", "%", "_", "   ",
    "", "...", "🦊🦊", "🔥 memory", "記憶", "记忆系统", "東京", "メモリ", "서울", "x" * 10_000,
    " ".join(["why did we choose the harbor design"] * 300), "∑∫√", "\u202eevil", "a\u200bb", "\ud800",
    "MATCH", "rank", "bm25(docs)", "SELECT * FROM entries", "don't", "O'Brien's café", "ab-cd_ef", "½ ²",
]


# Each case seeds its own archive (about half a second): the everyday run tries the first twelve.
@pytest.mark.parametrize("query", [q if i < 12 else pytest.param(q, marks=pytest.mark.slow)
                                   for i, q in enumerate(HOSTILE)], ids=range(len(HOSTILE)))
def test_any_query_is_valid(setup, query: str):
    vault, _ = setup
    hits = vault.search(query, limit=5)
    assert isinstance(hits, list) and len(hits) <= 5
    assert all(h.tier in ("active", "cooled", "archive") for h in hits)


@pytest.mark.slow
def test_hostile_queries_through_the_cli_are_json_not_errors(setup, mem: Path):
    for query in ['"', "NEAR(", "col:x", "a AND NOT", "x" * 10_000, "'; DROP TABLE docs; --", "-"]:
        proc = strata(mem, "search", "--json", "--", query)
        assert proc.returncode == 0, (query, proc.stderr)
        assert isinstance(json.loads(proc.stdout), list)


def test_chinese_and_japanese_find_their_memories(vault):
    vault.write("zh/memory", "# 记忆系统\n\n我们的记忆系统使用数据库。\n".encode())
    vault.write("ja/server", "# サーバー\n\n東京のサーバーで動いています。\n".encode())
    vault.write("ko/seoul", "# 서울\n\n서울 사무실 메모.\n".encode())
    assert vault.search("记忆")[0].name == "zh/memory"
    assert vault.search("数据库")[0].name == "zh/memory"
    assert vault.search("東京")[0].name == "ja/server"
    assert vault.search("サーバー")[0].name == "ja/server"
    assert vault.search("서울")[0].name == "ko/seoul"


def test_search_sees_uncommitted_changes_at_once(vault, mem: Path):
    vault.write("notes/x", b"# X\n\nabout pelicans\n")
    assert vault.search("pelicans")[0].name == "notes/x"
    (mem / "active/notes/x.md").write_text("# X\n\nabout flamingos now\n")
    assert vault.search("pelicans") == []
    assert vault.search("flamingos")[0].name == "notes/x"
    (mem / "active/notes/new.md").write_text("# New\n\nuncommitted albatross\n")
    assert vault.search("albatross")[0].name == "notes/new"
    (mem / "active/notes/new.md").unlink()
    assert vault.search("albatross") == []


def test_search_filters_and_ranks(setup):
    vault, _ = setup
    vault.write("live/glacier", b"---\ntype: decision\n---\n# Glacier decision\n\nWe chose the glacier plan.\n")
    hits = vault.search("glacier", limit=50)
    assert {h.tier for h in hits} == {"active", "archive"}
    assert [h.tier for h in vault.search("glacier", rank="cascade", limit=50)][0] == "active"
    assert all(h.tier == "archive" for h in vault.search("glacier", tier="archive"))
    assert [h.name for h in vault.search("glacier", type="decision")] == ["live/glacier"]
    assert len(vault.search("glacier", limit=2)) == 2
    for bad in ({"tier": "attic"}, {"limit": 0}, {"limit": 10**6}, {"rank": "random"}):
        with pytest.raises(Exception) as info:
            vault.search("x", **bad)
        assert type(info.value).__name__ == "BadName"


# -- rehydration -------------------------------------------------------------------------------

def _clone_pruned(setup, mem: Path, tmp_path: Path, daemon) -> Path:
    assert strata(mem, "archive").returncode == 0
    served = bare_remote(daemon.base / "mem.git")
    git(mem, "push", "-q", str(served), "main")
    where = tmp_path / "laptop"
    assert strata(tmp_path, "clone", daemon.url("mem.git"), str(where)).returncode == 0
    return where


@pytest.mark.slow
def test_rehydrate_one_on_a_clone_that_never_had_it(setup, mem: Path, tmp_path: Path, daemon):
    where = _clone_pruned(setup, mem, tmp_path, daemon)
    proc = strata(where, "read", "notes/m0011")  # reading an archived memory brings it back
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.decode() == body(11)
    assert (where / "active/notes/m0011.md").read_bytes() == body(11).encode()
    msg = git(where, "log", "-1", "--format=%B").stdout.decode()
    assert "Strata-Action: recall" in msg and '"from": "archive"' in msg
    assert git(where, "status", "--porcelain").stdout == b""
    assert git(where, "ls-tree", "HEAD", "archive/notes/m0011.md").stdout == b""
    assert [h["tier"] for h in json.loads(strata(where, "search", "token0011", "--json").stdout)][:1] == ["active"]
    assert git(where, "fsck", check=False).returncode == 0


@pytest.mark.slow
def test_rehydrate_200_in_one_batch_byte_identical(mem: Path, tmp_path: Path, daemon):
    remote = bare_remote(tmp_path / "remote.git")
    git(mem, "remote", "add", "origin", str(remote))
    seed_archive(mem, 200, active=1)
    where = _clone_pruned(None, mem, tmp_path, daemon)
    packs = len(list((where / ".git/objects/pack").glob("*.pack")))
    names = [f"notes/m{i:04d}" for i in range(200)]
    proc = strata(where, "recall", *names, "--json")
    assert proc.returncode == 0, proc.stderr
    assert len(json.loads(proc.stdout)) == 200
    assert len(list((where / ".git/objects/pack").glob("*.pack"))) == packs + 1  # one fetch for all 200
    for i in range(200):
        assert (where / f"active/notes/m{i:04d}.md").read_bytes() == body(i).encode()
    assert git(where, "rev-list", "--count", "HEAD~1..HEAD").stdout.strip() == b"1"
    assert git(where, "status", "--porcelain").stdout == b""


@pytest.mark.slow
def test_remote_down_during_rehydrate_leaves_nothing_partial(setup, mem: Path, tmp_path: Path, daemon):
    where = _clone_pruned(setup, mem, tmp_path, daemon)
    before = head(where)
    daemon.stop()
    proc = strata(where, "recall", "notes/m0005", "notes/m0006")
    assert proc.returncode == 1 and b"nothing was changed" in proc.stderr, proc.stderr
    assert head(where) == before
    assert not (where / "active/notes/m0005.md").exists() and not (where / "active/notes/m0006.md").exists()
    assert git(where, "status", "--porcelain").stdout == b""
    assert not list((where / ".git/strata").glob("janitor.journal*"))
    proc = strata(where, "read", "notes/m0005")
    assert proc.returncode == 1 and head(where) == before


@pytest.mark.slow
def test_recall_by_query_and_cooled_recall(setup, mem: Path):
    vault, _ = setup
    typo = strata(mem, "recall", "notes/m0100")  # a name that is not there is not a query
    assert typo.returncode == 1 and b"no memory named" in typo.stderr
    assert git(mem, "status", "--porcelain").stdout == b"" and not (mem / "active/notes/m0000.md").exists()
    proc = strata(mem, "recall", "--query", "saffron token0017", "--json")
    assert proc.returncode == 0, proc.stderr
    done = json.loads(proc.stdout)
    assert done[0]["name"] == "notes/m0017" and "best match" in done[0]["detail"]
    assert (mem / "active/notes/m0017.md").read_text() == body(17)
    assert strata(mem, "recall", "--query", "no such words anywhere zzzq").returncode == 1


def test_an_interrupted_recall_is_finished_by_the_next_command(setup, mem: Path, monkeypatch):
    from strata_git.ops import txn

    vault, _ = setup

    def killed(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(txn, "_finish", killed)
    with pytest.raises(KeyboardInterrupt):
        vault.recall("notes/m0009")
    monkeypatch.undo()
    assert (mem / ".git/strata/janitor.journal").exists()
    vault.recall("notes/m0010")  # recovers the first, then does its own
    assert (mem / "active/notes/m0009.md").read_text() == body(9)
    assert (mem / "active/notes/m0010.md").read_text() == body(10)
    assert not (mem / "archive/notes/m0009.md").exists()
    assert git(mem, "status", "--porcelain").stdout == b""


def test_edit_recall_flag_brings_a_cooled_memory_back(vault, mem: Path, tmp_path: Path):
    vault.write("c", b"# C\n\ncold\n")
    vault.janitor(now=T0 + 40 * DAY)
    assert (mem / "cooled/c.md").exists()
    editor = tmp_path / "ed.sh"
    editor.write_text("#!/bin/sh\necho 'warm again' >> \"$1\"\n")
    editor.chmod(0o755)
    proc = strata(mem, "edit", "--recall", "c", env={"EDITOR": str(editor)})
    assert proc.returncode == 0, proc.stderr
    assert (mem / "active/c.md").read_text().endswith("warm again\n")


@pytest.mark.slow
def test_hooks_bring_the_shadow_index_forward_after_a_pull(setup, mem: Path, tmp_path: Path):
    from strata_git.gitio.git import discover
    from strata_git.store import shadow

    vault, remote = setup
    git(mem, "push", "-q", "origin", "main")
    laptop = tmp_path / "laptop"
    assert strata(tmp_path, "clone", str(remote), str(laptop)).returncode == 0
    before = shadow.reflects(discover(str(laptop)))
    for i in range(3):  # the desktop writes, and its janitor archives them later
        vault.write(f"later/n{i}", body(100 + i).encode())
    vault.janitor(now=T0 + 240 * DAY)
    vault.janitor(now=T0 + 400 * DAY)
    assert strata(mem, "sync").returncode == 0  # the branch and the desktop's shadow records
    git(laptop, "pull", "-q", "--no-rebase", "origin", "main")  # post-merge hook, not a strata command
    after = shadow.reflects(discover(str(laptop)))
    assert after == head(laptop) != before
    # A plain pull brings the branch, not the records: the new memories are found by name so far.
    rows = {r[0]: r for r in shadow_rows(laptop) if len(r) == 10}
    assert [rows[f"archive/later/n{i}.md"][8] for i in range(3)] == ["name"] * 3
    assert strata(laptop, "sync").returncode == 0  # brings the records: those rows are upgraded
    assert shadow_rows(laptop) == shadow_rows(mem)


# -- what a review found ------------------------------------------------------------------------

@pytest.mark.slow
def test_a_remote_that_borrows_our_objects_is_refused(setup, mem: Path, tmp_path: Path):
    shared = tmp_path / "shared.git"
    git(tmp_path, "clone", "-q", "--bare", "--shared", str(mem), str(shared))
    for key in ("uploadpack.allowFilter", "uploadpack.allowAnySHA1InWant"):
        git(shared, "config", key, "true")
    git(mem, "remote", "set-url", "origin", str(shared))
    before = objects_bytes(mem)
    proc = strata(mem, "archive")
    assert proc.returncode == 1 and b"reads this clone's own objects" in proc.stderr, proc.stderr
    _nothing_pruned(mem, before)
    git(mem, "remote", "set-url", "origin", ".")
    proc = strata(mem, "archive")
    assert proc.returncode == 1 and b"reads this clone's own objects" in proc.stderr, proc.stderr


@pytest.mark.slow
def test_prune_keeps_objects_no_ref_reaches(setup, mem: Path, tmp_path: Path):
    other = tmp_path / "other"
    git(tmp_path, "init", "-q", "-b", "main", str(other))
    (other / "f.txt").write_text("fetched, never pushed anywhere\n")
    git(other, "add", "f.txt")
    git(other, "commit", "-q", "-m", "other")
    git(mem, "-c", "fetch.unpackLimit=1", "fetch", "-q", str(other), "main")  # lands in a pack, only FETCH_HEAD
    fetched = git(mem, "rev-parse", "FETCH_HEAD").stdout.decode().strip()
    assert strata(mem, "archive").returncode == 0
    assert held(mem, fetched) and held(mem, git(mem, "rev-parse", "FETCH_HEAD:f.txt").stdout.decode().strip())


@pytest.mark.slow
def test_archive_never_deletes_a_git_lock_it_did_not_make(setup, mem: Path):
    lock = mem / ".git/index.lock"
    lock.write_text("")  # a user's `git commit` waiting on its editor holds it without having it open
    before = objects_bytes(mem)
    proc = strata(mem, "archive")
    assert proc.returncode == 1 and b".git/index.lock exists" in proc.stderr
    assert lock.exists()
    _nothing_pruned(mem, before)


@pytest.mark.slow
def test_the_verification_record_pins_the_verified_commit_on_the_remote(setup, mem: Path):
    from strata_git.gitio.git import discover
    from strata_git.store.access import machine_id

    _, remote = setup
    assert strata(mem, "archive").returncode == 0
    pinned = f"refs/strata/archive/{machine_id(discover(str(mem)))}"
    record = git(remote, "rev-parse", pinned).stdout.decode().strip()
    parents = git(remote, "rev-list", "--parents", "-n1", record).stdout.decode().split()[1:]
    assert head(mem) in parents  # the verified commit: reachable from a ref on the remote for good
    assert record == git(mem, "rev-parse", "refs/strata/archive/origin").stdout.decode().strip()


@pytest.mark.slow
def test_a_janitor_killed_in_a_pruned_clone_is_recovered(setup, mem: Path, monkeypatch):
    from strata_git.ops import txn

    vault, _ = setup
    assert strata(mem, "archive").returncode == 0
    vault.write("late/x", body(500).encode())
    vault.janitor(now=T0 + 240 * DAY)  # cools everything live

    def killed(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(txn, "_finish", killed)
    with pytest.raises(KeyboardInterrupt):
        vault.janitor(now=T0 + 400 * DAY)  # archives them: HEAD moved, the working tree did not
    monkeypatch.undo()
    result = vault.janitor(now=T0 + 400 * DAY)
    assert result.recovered == "rolled forward"
    assert git(mem, "status", "--porcelain").stdout == b""
    assert not (mem / "archive").exists() and not (mem / "cooled/late/x.md").exists()
    assert git(mem, "ls-files", "-v", "archive/late/x.md").stdout.startswith(b"S ")
    assert strata(mem, "archive").returncode == 0


@pytest.mark.slow
def test_index_md_lists_the_pruned_archive_after_a_recall(setup, mem: Path):
    vault, _ = setup
    assert strata(mem, "archive").returncode == 0
    vault.recall(["notes/m0001", "notes/m0002", "notes/m0003"])
    text = (mem / "index.md").read_text()
    assert "## Archive (37)" in text and "- notes/: 37 memories" in text


def _index_md_from_scratch(repo: Path) -> str:
    """index.md as a refresh that rebuilds every folder writes it (the catalog told it reflects no tree)."""
    from strata_git.core import config
    from strata_git.gitio.git import discover
    from strata_git.store import catalog, index_md

    r = discover(str(repo))
    with catalog.connect(r) as db:
        catalog.set_meta(db, "tree", "")
    index_md.refresh(r, config.load(r.root, r.state_dir()).max_memory_bytes)
    return (repo / "index.md").read_text()


@pytest.mark.slow
def test_index_md_of_a_pruned_clone_follows_folder_by_folder_as_a_rebuild_writes_it(setup, mem: Path,
                                                                                    tmp_path: Path):
    """A pruned clone's index.md is brought forward by rebuilding only the folders that changed (the
    archive's from the shadow index): after a pull that archives, a recall, a janitor that archives
    here, a checkout, a commit without hooks and one refused, it is what a full rebuild writes."""
    vault, remote = setup
    assert strata(mem, "archive").returncode == 0
    laptop = tmp_path / "laptop"
    assert strata(tmp_path, "clone", str(remote), str(laptop)).returncode == 0
    assert not (laptop / "archive").exists()

    def same() -> str:
        text = (laptop / "index.md").read_text()
        assert text == _index_md_from_scratch(laptop)
        return text

    same()
    vault.write("top0", body(90).encode())  # archive/ itself, beside its folders
    for i in range(3):
        vault.write(f"later/n{i}", body(100 + i).encode())
    vault.janitor(now=T0 + 240 * DAY)
    vault.janitor(now=T0 + 400 * DAY)
    assert strata(mem, "sync").returncode == 0
    cloned = head(laptop)
    git(laptop, "pull", "-q", "--no-rebase", "origin", "main")  # post-merge
    text = same()  # the desktop's janitor archived the three live memories too
    assert "## Archive (47)" in text and "- (top level): 1 memories" in text and "- later/: 3 memories" in text
    assert strata(laptop, "recall", "notes/m0001", "later/n0", "top0").returncode == 0
    text = same()
    assert "## Archive (44)" in text and "(top level)" not in text.split("## Archive")[1]
    assert strata(laptop, "janitor", "--now", "+400d").returncode == 0  # cools what it recalled
    assert "## Cooled (3)" in same()
    assert strata(laptop, "janitor", "--now", "+800d").returncode == 0  # and archives it
    text = same()
    assert "## Archive (47)" in text and "- (top level): 1 memories" in text
    (laptop / "active/draft.md").write_text("# Draft\n\nNot committed.\n")  # carried by the checkout
    git(laptop, "checkout", "-q", cloned)  # post-checkout, to before the pull
    text = same()
    assert "- later/" not in text and "- `draft` · **Draft** · note · uncommitted" in text
    git(laptop, "checkout", "-q", "main")
    assert strata(laptop, "write", "mine/x", "-m", "A note of the laptop's.").returncode == 0
    edited = laptop / "active/mine/x.md"
    edited.write_text(edited.read_text() + "more\n")
    git(laptop, "commit", "-q", "--no-verify", "-am", "edit without hooks")  # post-commit only
    same()
    (laptop / "active/mine/bad.md").write_text("---\ntitle: [unclosed\n---\nx\n")
    git(laptop, "add", "active/mine/bad.md")
    assert git(laptop, "commit", "-q", "-m", "refused", check=False).returncode != 0
    git(laptop, "reset", "-q", "--hard")  # no hook: the next refresh sees the tree pre-commit left
    assert "bad" not in same()


@pytest.mark.slow
def test_clone_of_a_local_path_with_odd_characters(setup, mem: Path, tmp_path: Path):
    _, remote = setup
    git(mem, "push", "-q", "origin", "main")
    odd = tmp_path / "my remote %41.git"
    remote.rename(odd)
    proc = strata(tmp_path, "clone", str(odd), str(tmp_path / "c"))
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "c/active/live/a0.md").is_file()
