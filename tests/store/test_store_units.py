"""The store layer called in process on a real repository: shadow records, access records, the
last-changed times from history and the extractive summary (no console script started)."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
from pathlib import Path

from conftest import git
from strata_git.core import contract, untrusted
from strata_git.gitio.git import Repo, discover
from strata_git.store import access, history, records, summary

MEMO = b"---\ntitle: Koda auth\ntype: decision\ntags: [auth, koda]\n---\nPasskeys and magic links, passkeys first.\n"
BLOB = "ab" * 20


def test_a_record_reads_back_what_it_was_made_from():
    made = records.make(MEMO, BLOB)
    rec = records.parse(made, BLOB)
    assert isinstance(rec, records.Record)
    assert (rec.size, rec.title, rec.type, rec.tags) == (len(MEMO), "Koda auth", "decision", ("auth", "koda"))
    assert rec.counts["passkeys"] == 2 and rec.counts["magic"] == 1


def test_a_record_keeps_only_the_most_frequent_words_when_capped():
    rec = records.parse(records.make(MEMO, BLOB, cap=1), BLOB)
    assert isinstance(rec, records.Record) and rec.counts == {"passkeys": 2}


def test_a_record_that_lies_is_refused_with_a_reason():
    good = json.loads(records.make(MEMO, BLOB))
    cases = {
        "not JSON": b"{nope",
        "another blob": json.dumps({**good, "b": "cd" * 20}).encode(),
        "a size as text": json.dumps({**good, "s": "99"}).encode(),
        "more words than the blob holds": json.dumps({**good, "s": 10, "w": "x:999999"}).encode(),
        "a token twice": json.dumps({**good, "w": "a a"}).encode(),
        "too large for the memory limit": records.make(MEMO, BLOB),
    }
    for case, raw in cases.items():
        limit = 10 if case == "too large for the memory limit" else 1 << 40
        found = records.parse(raw, BLOB, limit)
        assert isinstance(found, str) and found, case
    assert records.parse(None, BLOB) == "its content is missing here"


def _repo(tmp_path: Path) -> Repo:
    root = tmp_path / "m"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    return discover(str(root))


def test_access_records_survive_a_torn_line_and_skip_a_bad_one(tmp_path: Path):
    repo = _repo(tmp_path)
    access.record(repo, "a", "active", "cli", now=1_700_000_000)
    log = os.path.join(repo.state_dir(), contract.ACCESS_LOG)
    with open(log, "a", encoding="utf-8") as f:
        f.write('{"t": 1e300, "name": "b"}\n')  # a time no date shows: skipped, with a warning
        f.write('{"t": 1700000001, "name": "torn')  # a crash mid-append
    access.record(repo, "c", "cooled", "mcp", now=1_700_000_002)
    untrusted.drain()
    found = access.read_all(repo)
    assert [(r["name"], r["t"]) for r in found] == [("a", 1_700_000_000), ("c", 1_700_000_002)]
    assert any("access record(s) with a bad time" in w for w in untrusted.drain())
    assert access.reads_by_name(repo) == {"a.md": [1_700_000_000], "c.md": [1_700_000_002]}


def _commit_at(root: Path, day: int, files: dict[str, str]) -> None:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    git(root, "add", "-A")
    stamp = f"@{day} +0000"
    env = {**os.environ, "GIT_COMMITTER_DATE": stamp, "GIT_AUTHOR_DATE": stamp}
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@x", "commit", "-q", "-m", str(day)],
                   cwd=root, env=env, check=True)


def test_last_changed_is_the_last_commit_that_touched_each_memory(tmp_path: Path):
    repo = _repo(tmp_path)
    root = Path(repo.root)
    for name, day in (("a", 1_700_000_000), ("b", 1_700_086_400), ("a", 1_700_172_800)):
        _commit_at(root, day, {f"active/{name}.md": f"# {name} {day}\n"})
    times = history.last_changed(repo, history.head(repo))
    assert times == {"a.md": 1_700_172_800, "b.md": 1_700_086_400}
    store = os.path.join(repo.state_dir(), contract.CHANGES)
    assert history.last_changed(repo, history.head(repo)) == times  # read back from the table
    assert history.last_changed(repo, history.head(repo), ["b.md", "never.md"]) == {"b.md": 1_700_086_400}
    with open(store, "rb") as f:
        whole = f.read()
    for damaged in (whole[:-300], b"\0" * len(whole), b"not a database at all" * 300, b""):
        with open(store, "wb") as f:
            f.write(damaged)
        assert history.last_changed(repo, history.head(repo)) == times  # history read again, never a crash
    db = sqlite3.connect(store)
    with db:
        db.execute("UPDATE meta SET value = '[1, 2' WHERE key = 'skipped'")  # a torn value: read again
        db.execute("DELETE FROM changed")
    db.close()
    assert history.last_changed(repo, history.head(repo)) == times


def test_the_last_change_table_is_brought_forward_by_the_new_commits_alone(tmp_path: Path):
    repo = _repo(tmp_path)
    root = Path(repo.root)
    _commit_at(root, 1_700_000_000, {"active/a.md": "# a\n", "active/b.md": "# b\n"})
    assert history.last_changed(repo, history.head(repo)) == {"a.md": 1_700_000_000, "b.md": 1_700_000_000}
    store = os.path.join(repo.state_dir(), contract.CHANGES)
    db = sqlite3.connect(store)
    with db:  # a row the new commit does not touch: kept as it is, so it was not read from history again
        db.execute("UPDATE changed SET time = 5 WHERE name = CAST('b.md' AS BLOB)")
    db.close()
    _commit_at(root, 1_700_000_100, {"active/a.md": "# a again\n"})
    assert history.last_changed(repo, history.head(repo)) == {"a.md": 1_700_000_100, "b.md": 5}
    # An older date on a newer commit (clocks of two machines): the later time stands.
    _commit_at(root, 1_600_000_000, {"active/a.md": "# a once more\n"})
    assert history.last_changed(repo, history.head(repo), ["a.md"]) == {"a.md": 1_700_000_100}
    _commit_at(root, 1_700_000_200, {"active/new.md": "# new\n"})
    assert history.last_changed(repo, history.head(repo), ["new.md"]) == {"new.md": 1_700_000_200}
    # Back to an ancestor (a reset): the names edited since are looked up again, by name, as of it;
    # one made since is gone, and the row nothing since touched is kept as it is.
    git(root, "reset", "-q", "--hard", "HEAD~3")
    assert history.last_changed(repo, history.head(repo)) == {"a.md": 1_700_000_000, "b.md": 5}
    # History rewritten (the table's commit is no ancestor): read again from the start.
    _commit_at(root, 1_700_000_300, {"active/b.md": "# b again\n"})
    git(root, "commit", "-q", "--amend", "-m", "amended")
    amended = int(git(root, "log", "-1", "--format=%ct").stdout)
    assert history.last_changed(repo, history.head(repo)) == {"a.md": 1_700_000_000, "b.md": amended}


def test_a_step_back_over_many_edited_names_reads_history_again_from_the_start(tmp_path: Path):
    """Looking names up in history one pathspec each costs git more per name than one read of all
    of it past history.BACK_UP_TO names (300 names at a million archived: 206 s, against 33 s)."""
    repo = _repo(tmp_path)
    root = Path(repo.root)
    many = [f"n{i:02}" for i in range(history.BACK_UP_TO + 1)]
    _commit_at(root, 1_700_000_000, {"active/kept.md": "# kept\n", **{f"active/{n}.md": "# n\n" for n in many}})
    _commit_at(root, 1_700_000_100, {f"active/{n}.md": "# n again\n" for n in many})
    first = history.last_changed(repo, history.head(repo))
    assert first == {"kept.md": 1_700_000_000, **{f"{n}.md": 1_700_000_100 for n in many}}
    store = os.path.join(repo.state_dir(), contract.CHANGES)
    db = sqlite3.connect(store)
    with db:  # a row no commit since touched: only a read from the start puts it right
        db.execute("UPDATE changed SET time = 5 WHERE name = CAST('kept.md' AS BLOB)")
    db.close()
    git(root, "reset", "-q", "--hard", "HEAD~1")
    assert history.last_changed(repo, history.head(repo)) == {"kept.md": 1_700_000_000,
                                                              **{f"{n}.md": 1_700_000_000 for n in many}}


def test_the_last_change_table_keeps_any_name(tmp_path: Path):
    repo = _repo(tmp_path)
    root = Path(repo.root)
    names = ["plain.md", "with space/é.md", "tab\there.md"]
    _commit_at(root, 1_700_000_000, {f"active/{n}": "# x\n" for n in names})
    raw = b"active/\xff-not-utf8.md"  # a name that is no UTF-8, as another machine may push
    blob = subprocess.run(["git", "hash-object", "-w", "--stdin"], cwd=root, input=b"# y\n", capture_output=True,
                          check=True).stdout.strip()
    subprocess.run(["git", "update-index", "--add", "--cacheinfo", f"100644,{blob.decode()}," + raw.decode("latin-1")],
                   cwd=root, check=True, env={**os.environ, "LC_ALL": "C"})
    stamp = "@1700000500 +0000"
    env = {**os.environ, "GIT_COMMITTER_DATE": stamp, "GIT_AUTHOR_DATE": stamp}
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@x", "commit", "-q", "-m", "raw"],
                   cwd=root, env=env, check=True)
    times = history.last_changed(repo, history.head(repo))
    assert {n: times.get(n) for n in names} == dict.fromkeys(names, 1_700_000_000)
    odd = [n for n in times if n not in names]
    assert len(odd) == 1 and times[odd[0]] == 1_700_000_500
    assert history.last_changed(repo, history.head(repo), odd) == {odd[0]: 1_700_000_500}


def test_the_extractive_summary_keeps_the_opening_of_the_body():
    text = summary.extractive(MEMO, "active/decisions/koda-auth.md")
    assert "Passkeys and magic links" in text and "title:" not in text
    assert summary.gist(text)


def test_a_bulk_load_leaves_the_full_text_index_as_it_was(tmp_path: Path):
    """A full build writes larger segments and merges them less often; after it, in the same
    transaction, FTS5 is set back to its defaults, whether the build ended or failed."""
    from strata_git.store import catalog

    db = catalog._open(str(tmp_path / "catalog.sqlite"))

    def settings() -> dict:
        return dict(db.execute("SELECT k, v FROM docs_config WHERE k IN ('automerge', 'hashsize')"))

    with catalog.bulk(db):
        assert settings() == {"automerge": 16, "hashsize": 16 * 1024 * 1024}
        db.execute("INSERT INTO docs (rowid, title, tags, body) VALUES (1, 'a', 'b', 'c')")
    assert settings() == {"automerge": 4, "hashsize": 1024 * 1024}
    try:
        with catalog.bulk(db):
            raise RuntimeError("a build that fails")
    except RuntimeError:
        pass
    assert settings() == {"automerge": 4, "hashsize": 1024 * 1024}
    assert db.execute("SELECT count(*) FROM docs WHERE docs MATCH 'c'").fetchone() == (1,)


def test_the_cycle_collector_is_held_off_in_a_bulk_job_and_resumes_after(mem: Path, monkeypatch):
    """Off within a shadow build (and any bulk job), on again after it, even after a failure;
    nested, the outer block decides; a process that had it off keeps it off."""
    import gc

    from strata_git.core import heap
    from strata_git.gitio.git import discover
    from strata_git.store import shadow

    seen = []
    real = shadow._build_in

    def watched(*args: object) -> int:
        seen.append(gc.isenabled())
        return real(*args)

    monkeypatch.setattr(shadow, "_build_in", watched)
    repo = discover(str(mem))
    assert gc.isenabled()
    shadow.build(repo, repo.head())
    assert seen == [False] and gc.isenabled()
    with heap.held_off():
        with heap.held_off():
            pass
        assert not gc.isenabled()
    assert gc.isenabled()
    try:
        with heap.held_off():
            raise RuntimeError("a job that fails")
    except RuntimeError:
        pass
    assert gc.isenabled()
    gc.disable()
    try:
        with heap.held_off():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()
