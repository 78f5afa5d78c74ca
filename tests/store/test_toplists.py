"""A word in many memories is scored from its list (store/toplists.py), read best first and
stopped early: the same hits, scores and order as FTS5 scoring every memory the word is in,
whatever happened to the memories since the list was made (written, rewritten longer, forgotten,
cooled, archived and pruned, recalled)."""

from __future__ import annotations

import datetime
import os
import random
import sqlite3
import subprocess
from pathlib import Path

import pytest

from conftest import FIXED_DATE, bare_remote, git, strata
from strata_git.store import catalog, search, toplists

WORDS = [f"{a}{b}" for a in ("kal", "mir", "tov", "sen", "bru", "yat") for b in ("o", "en", "ix", "ar", "um")]
DAY = 86400
T0 = int(datetime.datetime.fromisoformat(FIXED_DATE).timestamp())


def text(rng: random.Random, long: bool = False) -> str:
    """A memory whose words follow a Zipf law over WORDS: the first few are in most memories."""
    weights = [1 / (rank + 1) for rank in range(len(WORDS))]
    body = rng.choices(WORDS, weights, k=rng.randint(60, 160) if long else rng.randint(3, 30))
    title = " ".join(rng.choices(WORDS[:12], k=rng.randint(1, 3)))
    return f"---\ntitle: {title}\ntags: [{rng.choice(WORDS)}]\n---\n# {title}\n\n{' '.join(body)}\n"


def queries(rng: random.Random) -> list[tuple[str, int, dict]]:
    """(query, limit, filters): a third of them filtered by project, type or tier."""
    filters = [{}, {}, {}, {"project": "koda"}, {"type": "decision"}, {"tier": "archive"}]
    return [(" ".join(rng.sample(WORDS[:20], rng.randint(1, 3))), rng.choice([1, 3, 10]), rng.choice(filters))
            for _ in range(36)]


def write(vault, name: str, rng: random.Random, long: bool = False) -> None:
    vault.write(name, text(rng, long).encode(), type=rng.choice(["note", "decision"]),
                project=rng.choice(["koda", "lamp", None]))


def answers(vault, asked: list[tuple[str, int]], monkeypatch) -> tuple[list, list, int]:
    """(each query's hits with the lists, the same from FTS5 alone, how many the lists answered)."""
    answered = []
    real = search._from_lists

    def counted(*args):
        found = real(*args)
        answered.append(found is not None)
        return found

    def hits() -> list:
        return [[(h.tier, h.name, h.score, h.coverage) for h in vault.search(q, limit=n, **filters)]
                for q, n, filters in asked]

    with monkeypatch.context() as m:
        m.setattr(search, "_from_lists", counted)
        listed = hits()
    with monkeypatch.context() as m:
        m.setattr(search, "_from_lists", lambda *args: None)
        exact = hits()
    return listed, exact, sum(answered)


def check_counts(vault) -> None:
    """Each list holds every memory its word is in, and knows how many: FTS5's own count."""
    with catalog.connect(vault.repo) as db:
        for term, (tid, _, rows) in toplists.listed(db).items():
            held = db.execute("SELECT count(*) FROM tops WHERE t = ?", (tid,)).fetchone()[0]
            assert rows == held == db.execute("SELECT doc FROM docs_vocab WHERE term = ?", (term,)).fetchone()[0]


@pytest.mark.parametrize("most_rows", [toplists.MAX_ROWS, 150])
def test_lists_answer_as_fts5_does_while_memories_are_written_rewritten_and_forgotten(vault, monkeypatch,
                                                                                      most_rows: int):
    monkeypatch.setattr(toplists, "LONG", 3)
    monkeypatch.setattr(toplists, "MAX_ROWS", most_rows)  # 150: lists dropped and made again all along
    rng = random.Random(most_rows)
    names = [f"notes/m{i:03d}" for i in range(40)]
    for name in names:
        write(vault, name, rng)
    asked = queries(rng)
    for step in range(5):
        listed, exact, answered = answers(vault, asked, monkeypatch)
        assert listed == exact, step
        assert answered >= len(asked) // 2, answered  # (the lists did answer)
        assert sum(map(len, exact)) > 100
        assert sum(len(hits) for hits, (_, _, filters) in zip(exact, asked, strict=True) if filters) > 20
        check_counts(vault)
        for name in rng.sample(names, 6):  # rewritten: longer ones raise the average length
            write(vault, name, rng, long=step % 2 == 0)
        for name in rng.sample(names, 3):
            vault.forget(name)
            names.remove(name)
        fresh = [f"notes/n{step}{i}" for i in range(4)]
        for name in fresh:
            write(vault, name, rng)
        names += fresh


def commit_at(repo: Path, when: int, message: str) -> None:
    env = {**os.environ, "GIT_AUTHOR_DATE": f"@{when} +0000", "GIT_COMMITTER_DATE": f"@{when} +0000",
           "STRATA_INTERNAL": "1"}
    git(repo, "add", "-A")
    subprocess.run(["git", "commit", "-q", "--no-verify", "-m", message], cwd=repo, env=env, check=True)


def test_lists_follow_memories_archived_pruned_and_recalled(tmp_path: Path, monkeypatch):
    from strata_git.app.init import init
    from strata_git.app.vault import Vault

    monkeypatch.setattr(toplists, "LONG", 3)
    rng = random.Random(5)
    root = tmp_path / "mem"
    init(str(root))
    names = [f"projects/p{i:03d}" for i in range(45)]
    for batch, age in ((names[0::3], 300), (names[1::3], 60), (names[2::3], 0)):
        for name in batch:
            path = root / "active" / f"{name}.md"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text(rng), encoding="utf-8")
        commit_at(root, T0 - age * DAY, f"batch {age}")
    git(root, "remote", "add", "origin", str(bare_remote(tmp_path / "remote.git")))
    vault = Vault.open(str(root))
    asked = queries(rng)
    listed, exact, _ = answers(vault, asked, monkeypatch)  # every list made while all are live
    assert listed == exact
    vault.janitor(now=T0 + DAY)
    vault.janitor(now=T0 + DAY)
    assert strata(root, "archive").returncode == 0
    assert {e.tier for e in vault.list()} == {"active", "cooled", "archive"} and not (root / "archive").exists()
    listed, exact, answered = answers(vault, asked, monkeypatch)
    assert listed == exact and answered >= len(asked) // 2
    assert any(tier == "archive" for hits in exact for tier, *_ in hits)
    check_counts(vault)
    archived = [e.name[: -len(".md")] for e in vault.list(tier="archive")]
    vault.recall(archived[:4])
    listed, exact, _ = answers(vault, asked, monkeypatch)
    assert listed == exact
    check_counts(vault)


def test_text_fts5_splits_elsewhere_than_at_its_spaces_is_counted_as_fts5_counts_it():
    db = sqlite3.connect(":memory:")
    db.execute("CREATE VIRTUAL TABLE docs USING fts5(body, title, tags, content = '', "
               "tokenize = \"unicode61 remove_diacritics 2\")")
    rows = [(i, "kalo", "", " ".join(["kalo", "miren"] * (i % 3 + 1))) for i in range(1, 8)]
    db.executemany("INSERT INTO docs (rowid, title, tags, body) VALUES (?,?,?,?)", rows)
    db.commit()
    assert toplists.stats(db) == (7, sum(1 + 2 * (i % 3 + 1) for i in range(1, 8)) / 7)
    found = toplists.best(db, [("kalo", 1.0)], {}, 3)
    assert found is not None and len(found) >= 3 and toplists.listed(db)["kalo"][2] == 7
    plain = (8, "kalo", "", "kalo miren")
    db.execute("INSERT INTO docs (rowid, title, tags, body) VALUES (?,?,?,?)", plain)
    toplists.added(db, [plain])
    assert toplists.listed(db)["kalo"][2] == 8
    split = (9, "kalo", "", "kalo naïve-ish")  # one word at its spaces, three to FTS5
    db.execute("INSERT INTO docs (rowid, title, tags, body) VALUES (?,?,?,?)", split)
    toplists.added(db, [split])
    tid = toplists.listed(db)["kalo"][0]
    assert toplists.listed(db)["kalo"][2] == 9
    assert db.execute("SELECT f, d FROM tops WHERE t = ? AND doc = 9", (tid,)).fetchone() == (6.0, 4)


def _fts5(path: str = ":memory:") -> sqlite3.Connection:
    db = sqlite3.connect(path)
    db.execute(f"CREATE VIRTUAL TABLE IF NOT EXISTS docs USING fts5(body, title, tags, content = '', "
               f"tokenize = '{toplists.TOKENIZE}')")
    return db


def _add(db: sqlite3.Connection, rows: list[tuple]) -> None:
    db.executemany("INSERT INTO docs (rowid, title, tags, body) VALUES (?,?,?,?)", rows)
    toplists.added(db, rows)
    db.commit()  # (FTS5 writes its averages when a transaction commits)


def test_a_list_made_when_memories_were_shorter_still_finds_the_best_first():
    """Longer memories since a list was made raise the average length, and a long memory down the
    list can now outscore the short ones above it: the bound on what lies further down grows
    with the average, so it is still read."""
    db = _fts5()
    _add(db, [(i, "", "", "kalo x") for i in range(1, 41)] + [(41, "", "", "kalo " * 5 + "y " * 35)])
    assert toplists.best(db, [("kalo", 1.0)], {}, 1)[0].doc != 41  # short memories first, for now
    _add(db, [(i, "", "", "z " * 200) for i in range(100, 150)])
    fts5 = [d for (d,) in db.execute("SELECT rowid FROM docs WHERE docs MATCH 'kalo' "
                                     "ORDER BY bm25(docs, 1.0, 5.0, 3.0) LIMIT 3")]
    found = sorted(toplists.best(db, [("kalo", 1.0)], {}, 3), key=lambda s: -s.score)
    assert fts5[0] == 41 and [s.doc for s in found][:1] == [41]
    idf = -db.execute("SELECT bm25(docs, 1.0, 5.0, 3.0) FROM docs WHERE docs MATCH 'kalo' AND rowid = 41"
                      ).fetchone()[0] / found[0].score
    assert idf > 0 and all(abs(s.score * idf + r) < 1e-9 for s, (r,) in zip(found, db.execute(
        "SELECT bm25(docs, 1.0, 5.0, 3.0) FROM docs WHERE docs MATCH 'kalo' ORDER BY bm25(docs, 1.0, 5.0, 3.0) "
        "LIMIT 3"), strict=False))


def test_the_lists_use_the_catalogs_tokenizer():
    assert f'tokenize = "{toplists.TOKENIZE}"' in catalog._SCHEMA


def test_a_word_fts5_folds_into_a_listed_one_joins_and_leaves_its_list():
    """FTS5 holds "café" as "cafe" (and "a\u0305b" as two words): text that is not ASCII is counted
    by FTS5's own tokenizer, so the list stays every memory FTS5 finds the word in."""
    db = _fts5()
    _add(db, [(i, "", "", "cafe latte") for i in range(1, 11)])
    toplists.best(db, [("cafe", 1.0)], {}, 3)
    assert toplists.listed(db)["cafe"][2] == 10
    accented = [(11, "", "", "café café crème"), (12, "", "", "a\u0305cafe b\u0305 naïve")]
    _add(db, accented)
    db.execute("CREATE VIRTUAL TABLE IF NOT EXISTS docs_vocab USING fts5vocab(docs, 'row')")
    held = db.execute("SELECT doc FROM docs_vocab WHERE term = 'cafe'").fetchone()[0]
    assert toplists.listed(db)["cafe"][2] == held == 12
    best = sorted(toplists.best(db, [("cafe", 1.0)], {}, 1), key=lambda s: -s.score)
    assert best[0].doc == 11  # twice, in a short memory
    db.execute("INSERT INTO docs (docs, rowid, title, tags, body) VALUES ('delete', ?, ?, ?, ?)", accented[0])
    toplists.removed(db, [accented[0]])
    assert toplists.listed(db)["cafe"][2] == 11
    assert 11 not in {s.doc for s in toplists.best(db, [("cafe", 1.0)], {}, 20)}


def test_a_list_another_process_made_meanwhile_is_taken_not_made_again(tmp_path: Path):
    path = str(tmp_path / "c.sqlite")
    first, second = _fts5(path), _fts5(path)
    _add(first, [(i, "", "", "kalo miren") for i in range(1, 9)])
    made = toplists._make(first, "kalo", toplists.stats(first).avgdl, set())
    assert not first.in_transaction  # committed at once: no write lock held through the search
    assert toplists._make(second, "kalo", toplists.stats(second).avgdl, set()) == made
    assert second.execute("SELECT count(*) FROM top_terms").fetchone()[0] == 1


def test_the_shadow_index_asks_git_again_when_head_moved_past_the_commands_commit(tmp_path: Path):
    """follow_head's shortcut (the paths a command changed) holds only while HEAD is the commit the
    command made: an archived memory removed by a later commit still leaves the shadow index."""
    from strata_git.app.init import init
    from strata_git.app.vault import Vault
    from strata_git.store import shadow

    rng = random.Random(9)
    root = tmp_path / "mem"
    init(str(root))
    for i in range(6):
        (root / "active/notes").mkdir(parents=True, exist_ok=True)
        (root / f"active/notes/n{i}.md").write_text(text(rng), encoding="utf-8")
    commit_at(root, T0 - 300 * DAY, "old")
    vault = Vault.open(str(root))
    vault.janitor(now=T0 + DAY)
    vault.janitor(now=T0 + DAY)
    gone = sorted(p.relative_to(root).as_posix() for p in (root / "archive").rglob("*.md"))[0]
    since = git(root, "rev-parse", "HEAD").stdout.decode().strip()
    shadow.refresh(vault.repo)
    (root / "active/notes").mkdir(parents=True, exist_ok=True)
    (root / "active/notes/new.md").write_text("# New\n", encoding="utf-8")
    commit_at(root, T0 + 2 * DAY, "the command's commit")
    to = git(root, "rev-parse", "HEAD").stdout.decode().strip()
    git(root, "rm", "-q", gone)
    commit_at(root, T0 + 2 * DAY, "another, right after")
    with catalog.connect(vault.repo) as db:
        assert shadow.refresh_in(vault.repo, db, (since, to, ["active/notes/new.md"])) == "updated"
        assert db.execute("SELECT count(*) FROM archived WHERE path = ?", (gone,)).fetchone()[0] == 0


def test_a_search_as_of_a_past_commit_counts_the_words_of_its_versions(vault, monkeypatch):
    """An as-of search indexes past versions for the query alone (rolled back after): they go
    through the lists too, since a listed word's count comes from its list."""
    monkeypatch.setattr(toplists, "LONG", 3)
    for i in range(12):
        vault.write(f"notes/k{i:02d}", f"# K{i}\n\nkalo miren {'tovo ' * (i % 3)}\n".encode())
    past = git(Path(vault.repo.root), "rev-parse", "HEAD").stdout.decode().strip()
    for i in range(8):
        vault.write(f"notes/k{i:02d}", f"# K{i}\n\nsenar tovo\n".encode())
    asked = ["kalo", "kalo tovo", "miren"]
    for q in asked:
        vault.search(q)
        vault.search(q)  # (the lists made)
    with catalog.connect(vault.repo) as db:
        assert {"kalo", "miren"} <= set(toplists.listed(db))
    listed = [[(h.name, h.score) for h in vault.search(q, as_of=past)] for q in asked]
    with catalog.connect(vault.repo) as db:
        toplists.clear(db)
    exact = [[(h.name, h.score) for h in vault.search(q, as_of=past)] for q in asked]
    assert listed == exact and all(len(hits) >= 10 for hits in exact[:1])
