"""The shadow index: what is in archive/, searchable without its content.

An SQLite FTS5 database under the git directory (`shadow.sqlite`, never committed)
with one row per archived memory: name, path, blob id, the commit that archived it,
title, type, tags, size, keywords (indexed, not stored) and a short preview. It is built from commit
history alone, so a clone that never had an archived blob builds the same index as
the machine that archived it: when the janitor archives a memory, its commit carries
one `Strata-Shadow` trailer per memory (blob id, title, type, tags, size, its 32
most frequent terms, a 160-character preview). A memory moved to archive/ without
such a record (by hand) is indexed by its name alone, the same way everywhere.

The database records the commit it reflects. Behind HEAD, it is brought forward
from `git diff-tree` of archive/ and the new commits' records; a full build (first
use, other schema, corruption, history rewritten) is written to a temporary file
and renamed into place. It is derived state: it can be deleted at any time.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from typing import NamedTuple

from strata_git import names, textindex
from strata_git.git import Repo

DB = "shadow.sqlite"
VERSION = 5
TRAILER = "Strata-Shadow"
KEYWORDS = 32  # terms recorded per archived memory, most frequent first
_SCHEMA = f"""
CREATE TABLE entries (
    id INTEGER PRIMARY KEY, path TEXT NOT NULL UNIQUE, blob TEXT NOT NULL, commit_id TEXT NOT NULL,
    title TEXT NOT NULL, type TEXT NOT NULL, tags TEXT NOT NULL, size INTEGER NOT NULL,
    preview TEXT NOT NULL
);
-- Contentless: the index holds no copy of the text. To delete a row, what it indexed is
-- recomputed from its entry and its record in history (the keywords are not stored twice).
-- (detail = column would be smaller, but bm25 then scores 0.)
CREATE VIRTUAL TABLE terms USING fts5(title, tags, body, content = '', tokenize = "unicode61 remove_diacritics 2");
CREATE VIRTUAL TABLE vocab USING fts5vocab(terms, 'row');
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
PRAGMA user_version = {VERSION};
"""


class Row(NamedTuple):
    path: str
    blob: str
    commit: str
    title: str
    type: str
    tags: tuple[str, ...]
    size: int
    preview: str
    keywords: str

    @property
    def name(self) -> str:
        return self.path.partition("/")[2][: -len(names.SUFFIX)]


def record(raw: bytes, name: str, blob: str) -> dict:
    """What an archive commit says about one memory: enough to find it without its content."""
    from strata_git import catalog, memory
    from strata_git.errors import StrataError

    try:
        mem = memory.parse(raw, name)
        title, type_, tags, body = mem.title, mem.type, list(mem.tags), mem.body
    except StrataError:
        title, type_, tags, body = "", "note", [], raw.decode("utf-8", "replace")
    return {"b": blob, "n": names.display(name), "t": catalog.clean(title)[:200], "y": type_,
            "g": [catalog.clean(t) for t in tags][:20], "s": len(raw),
            "k": " ".join(textindex.keywords(f"{title}\n{body}", KEYWORDS)), "p": catalog.clean(textindex.preview(body))}


def trailer(rec: dict) -> str:
    return f"{TRAILER}: {json.dumps(rec, ensure_ascii=False, separators=(',', ':'))}"


def _parse_records(out: bytes, blobs: set[str] | None = None) -> Iterator[tuple[str, dict]]:
    """(commit, record) pairs from `git log` output in the format _records() asks for; with
    `blobs`, only the records of those blobs (the others are not even parsed)."""
    for item in out.decode("utf-8", "replace").split("\x01")[1:]:
        commit, _, values = item.partition("\0")
        for value in values.strip().split("\x1e"):
            # Records begin {"b":"<blob id>" (git-strata writes them so); anything else is not one.
            if not value.startswith('{"b":"') or (blobs is not None and value[6:46] not in blobs):
                continue
            try:
                rec = json.loads(value)
            except ValueError:
                continue
            if isinstance(rec, dict) and isinstance(rec.get("b"), str):
                yield commit, rec


def _records(repo: Repo, revs: list[str]) -> dict:
    """{(name, blob id) or blob id: (commit, record)} from the archive records in `revs`, the
    newest commit winning."""
    out = repo.git("log", "--no-renames", f"--grep=^{TRAILER}: ",
                   f"--format=%x01%H%x00%(trailers:key={TRAILER},valueonly,unfold,separator=%x1e)", *revs, "--")
    found: dict = {}
    for commit, rec in _parse_records(out):
        found.setdefault((rec.get("n"), rec["b"]), (commit, rec))  # this memory's own record
        found.setdefault(rec["b"], (commit, rec))  # the same content archived under another name
    return found


def _find(records: dict, path: str, blob: str, exact: bool = False) -> tuple[str, dict] | None:
    """The record for `path` holding `blob`: its own if there is one, else (unless `exact`) any
    record of that blob."""
    own = records.get((names.display(path.partition("/")[2]), blob))
    return own if own is not None or exact else records.get(blob)


def _row(path: str, blob: str, found: tuple[str, dict] | None) -> Row:
    if found is None:  # archived without a record: findable by its name, the same on every clone
        name = path.partition("/")[2][: -len(names.SUFFIX)]
        return Row(path, blob, "", "", "note", (), 0, "", textindex.indexed(name.replace("/", " ")))
    commit, rec = found

    def text(key: str) -> str:
        return rec[key] if isinstance(rec.get(key), str) else ""

    tags = tuple(t for t in rec.get("g", ()) if isinstance(t, str)) if isinstance(rec.get("g"), list) else ()
    size = rec["s"] if isinstance(rec.get("s"), int) else 0
    return Row(path, blob, commit, text("t"), text("y") or "note", tags, size, text("p"), text("k"))


def _archived(repo: Repo, commit: str) -> dict[str, str]:
    """{path: blob id} of every memory under archive/ at `commit` (no blob is read)."""
    out = repo.git("ls-tree", "-r", "-z", "--full-tree", commit, "--", "archive")
    found = {}
    for item in out.decode("utf-8", "surrogateescape").split("\0"):
        if item:
            meta, path = item.split("\t", 1)
            _, kind, oid = meta.split(" ")
            if kind == "blob" and path.endswith(names.SUFFIX) and names.split_path(path):
                found[path] = oid
    return found


def _indexed(path: str, title: str, type_: str, tags: str, preview: str, keywords: str) -> tuple[str, str, str]:
    """(title, tags, body) as the full-text index holds them for one entry."""
    name = path.partition("/")[2][: -len(names.SUFFIX)]
    return (textindex.indexed(title), textindex.indexed(tags.replace("\x1f", " ") + " " + type_),
            textindex.indexed(name.replace("/", " ")) + " " + keywords + " " + textindex.indexed(preview))


def _insert(db: sqlite3.Connection, rows: list[Row]) -> None:
    from strata_git.catalog import doc_id

    values = [(doc_id(r.path), r.path, r.blob, r.commit, r.title, r.type, "\x1f".join(r.tags), r.size, r.preview)
              for r in rows]
    db.executemany("INSERT INTO entries VALUES (?,?,?,?,?,?,?,?,?)", values)
    db.executemany("INSERT INTO terms (rowid, title, tags, body) VALUES (?,?,?,?)",
                   ((v[0], *_indexed(v[1], v[4], v[5], v[6], v[8], r.keywords)) for v, r in zip(values, rows,
                                                                                             strict=True)))


def _delete(repo: Repo, db: sqlite3.Connection, paths: list[str]) -> None:
    found = [db.execute("SELECT id, path, blob, commit_id, title, type, tags, preview FROM entries WHERE path = ?",
                        (p,)).fetchone() for p in paths]
    found = [row for row in found if row]
    commits = sorted({row[3] for row in found if row[3]})
    records: dict[tuple, dict] = {}
    if commits:
        out = repo.git("log", "--no-walk=unsorted", f"--format=%x01%H%x00%(trailers:key={TRAILER},valueonly,unfold,"
                       "separator=%x1e)", "--stdin", input="".join(f"{c}\n" for c in commits).encode())
        for commit, rec in _parse_records(out, {row[2] for row in found}):
            records.setdefault((commit, rec.get("n"), rec["b"]), rec)
            records.setdefault((commit, rec["b"]), rec)
    for row_id, p, blob, commit, title, type_, tags, preview in found:
        # What _insert indexed for it: the same record (the commit is the one it came from).
        rec = records.get((commit, names.display(p.partition("/")[2]), blob)) or records.get((commit, blob))
        keywords = _row(p, blob, (commit, rec) if rec else None).keywords
        db.execute("INSERT INTO terms (terms, rowid, title, tags, body) VALUES ('delete', ?, ?, ?, ?)",
                   (row_id, *_indexed(p, title, type_, tags, preview, keywords)))
        db.execute("DELETE FROM entries WHERE id = ?", (row_id,))


def path(repo: Repo) -> str:
    return os.path.join(repo.state_dir(), DB)


def build(repo: Repo, commit: str | None) -> int:
    """Build the whole index for `commit` into a temporary file and swap it in; the row count."""
    final = path(repo)
    from strata_git.migrate import _alive

    for name in os.listdir(repo.state_dir()):  # temporary files of builds that were killed
        pid = name[len(DB) + 5:].split("-")[0] if name.startswith(DB + ".tmp-") else ""
        if pid.isdigit() and not _alive(int(pid)):
            os.unlink(os.path.join(repo.state_dir(), name))
    tmp = f"{final}.tmp-{os.getpid()}-{os.urandom(4).hex()}"
    try:
        db = sqlite3.connect(tmp)
        try:
            db.executescript(_SCHEMA)
            rows: list[Row] = []
            if commit:
                archived = _archived(repo, commit)
                records = _records(repo, [commit]) if archived else {}
                rows = [_row(p, b, _find(records, p, b)) for p, b in sorted(archived.items())]
            with db:
                _insert(db, rows)
                db.execute("INSERT INTO meta VALUES ('commit', ?)", (commit or "",))
        finally:
            db.close()
        os.replace(tmp, final)
        return len(rows)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def _reflects(db: sqlite3.Connection) -> str:
    if db.execute("PRAGMA user_version").fetchone()[0] != VERSION:
        raise sqlite3.DatabaseError("another schema version")
    row = db.execute("SELECT value FROM meta WHERE key = 'commit'").fetchone()
    if row is None:
        raise sqlite3.DatabaseError("no commit recorded")
    return row[0]


def _forward(repo: Repo, db: sqlite3.Connection, old: str, new: str) -> bool:
    """Bring the index from `old` to `new` in place; False when only a full build can."""
    if not old or not repo.ok("merge-base", "--is-ancestor", old, new):
        return False
    out = repo.git("diff-tree", "-r", "-z", "--no-renames", old, new, "--", "archive")
    fields = out.decode("utf-8", "surrogateescape").split("\0")
    gone, added = [], {}
    for meta, changed in zip(fields[0::2], fields[1::2], strict=False):
        parts = meta.lstrip(":").split(" ")
        if len(parts) < 5 or not changed.endswith(names.SUFFIX) or not names.split_path(changed):
            continue
        gone.append(changed)
        if parts[4] != "D" and parts[1] != "160000":
            added[changed] = parts[3]
    records = _records(repo, [f"{old}..{new}"]) if added else {}
    if any(_find(records, p, b, exact=True) is None for p, b in added.items()):
        return False  # its record may be older than `old` (or absent): the full build looks everywhere
    _delete(repo, db, gone)
    _insert(db, [_row(p, b, _find(records, p, b)) for p, b in sorted(added.items())])
    db.execute("INSERT OR REPLACE INTO meta VALUES ('commit', ?)", (new,))
    return True


def refresh(repo: Repo) -> str:
    """Bring the index to HEAD: 'fresh', 'updated' or 'rebuilt'."""
    head = repo.head_quick() or ""
    try:
        db = sqlite3.connect(f"file:{path(repo)}?mode=rw", uri=True, timeout=10, isolation_level=None)
    except sqlite3.OperationalError:
        build(repo, head)
        return "rebuilt"
    try:
        if _reflects(db) == head:
            return "fresh"
        db.execute("BEGIN IMMEDIATE")  # one process brings it forward; the others then find it fresh
        try:
            old = _reflects(db)
            if old == head:
                db.execute("COMMIT")
                return "fresh"
            if _forward(repo, db, old, head):
                db.execute("COMMIT")
                return "updated"
        except BaseException:
            db.execute("ROLLBACK")
            raise
        db.execute("ROLLBACK")
    except sqlite3.DatabaseError:
        pass  # corrupt, truncated or of another version: rebuilt below
    finally:
        db.close()
    build(repo, head)
    return "rebuilt"


@contextmanager
def connect(repo: Repo) -> Iterator[sqlite3.Connection]:
    """The index, fresh for HEAD (rebuilt if it cannot be read)."""
    refresh(repo)
    db = sqlite3.connect(f"file:{path(repo)}?mode=ro", uri=True, timeout=10)
    try:
        yield db
    finally:
        db.close()


def rows(db: sqlite3.Connection) -> list[tuple]:
    """Every entry in path order, then every indexed term with its counts (what two equal indexes share)."""
    entries = db.execute("SELECT path, blob, commit_id, title, type, tags, size, preview FROM entries "
                         "ORDER BY path").fetchall()
    # What the full-text index holds: every term with the number of rows and occurrences.
    return entries + db.execute("SELECT term, doc, cnt FROM vocab ORDER BY term").fetchall()


def reflects(repo: Repo) -> str:
    """The commit the index was built for ("" if it cannot be read)."""
    try:
        db = sqlite3.connect(f"file:{path(repo)}?mode=ro", uri=True)
        try:
            return _reflects(db)
        finally:
            db.close()
    except sqlite3.DatabaseError:
        return ""


def all_rows(repo: Repo) -> list[Row]:
    """Every archived memory the index holds, in path order (keywords left out)."""
    with connect(repo) as db:
        return [Row(r[0], r[1], r[2], r[3], r[4], tuple(r[5].split("\x1f")) if r[5] else (), r[6], r[7], "")
                for r in db.execute("SELECT path, blob, commit_id, title, type, tags, size, preview FROM entries "
                                    "ORDER BY path")]


def lookup(repo: Repo, paths: list[str]) -> dict[str, Row]:
    """{path: Row} for archived paths the index holds."""
    with connect(repo) as db:
        found = {}
        for p in paths:
            r = db.execute("SELECT path, blob, commit_id, title, type, tags, size, preview FROM entries "
                           "WHERE path = ?", (p,)).fetchone()
            if r:
                found[p] = Row(r[0], r[1], r[2], r[3], r[4], tuple(r[5].split("\x1f")) if r[5] else (), r[6], r[7], "")
        return found
