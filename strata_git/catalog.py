"""What memories are on disk, in which tier, with their title, type and tags.

The working tree is the truth: a file changed a moment ago is listed as it is
now. Parsed metadata is kept in an SQLite database under the git directory
(`catalog.sqlite`), keyed by path and checked against size, mtime and inode, so
a scan of thousands of memories parses only the files that changed, and a hook
that knows which files a commit touches updates just those rows. The database is
derived state: a different schema version or any corruption deletes and rebuilds
it. Symlinks and special files are never followed; they are reported as strays.
"""

from __future__ import annotations

import json
import os
import sqlite3
import stat
from contextlib import contextmanager
from typing import NamedTuple
from collections.abc import Iterable, Iterator

from strata_git.errors import StrataError
from strata_git.memory import UNSAFE_TO_DISPLAY
from strata_git.git import Repo
from strata_git.names import SUFFIX, TIERS

SCHEMA_VERSION = 7
DB = "catalog.sqlite"
PLACEHOLDER = ".gitkeep"
TAG_SEP = "\x1f"  # tags cannot contain control characters (memory.check_known_keys)
_ORDER = {tier: i for i, tier in enumerate(TIERS)}
_SCHEMA = """
CREATE TABLE memories (
    path TEXT PRIMARY KEY, tier TEXT NOT NULL, folder TEXT NOT NULL, name TEXT NOT NULL,
    size INTEGER NOT NULL, mtime_ns INTEGER NOT NULL, ino INTEGER NOT NULL,
    title TEXT NOT NULL, type TEXT NOT NULL, tags TEXT NOT NULL, problem TEXT NOT NULL,
    frontmatter_hash TEXT NOT NULL
) WITHOUT ROWID;
CREATE INDEX memories_by_folder ON memories (tier, folder);
CREATE TABLE sections (tier TEXT, folder TEXT, text TEXT NOT NULL, PRIMARY KEY (tier, folder)) WITHOUT ROWID;
CREATE TABLE frontmatter (hash TEXT PRIMARY KEY, meta TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE blob_types (oid TEXT PRIMARY KEY, type TEXT NOT NULL) WITHOUT ROWID;
CREATE VIRTUAL TABLE docs USING fts5(path UNINDEXED, title, tags, body, tokenize = "unicode61 remove_diacritics 2");
CREATE VIRTUAL TABLE docs_vocab USING fts5vocab(docs, 'row');
"""
SEARCHED = ("active", "cooled")  # archive/ is searched through the shadow index, present or pruned


class Entry(NamedTuple):
    """One memory file as it is on disk (a NamedTuple: thousands are built per scan)."""

    tier: str
    name: str  # with the .md suffix
    size: int
    title: str = ""
    type: str = "note"
    tags: tuple[str, ...] = ()
    problem: str = ""

    @property
    def path(self) -> str:
        return f"{self.tier}/{self.name}"

    @property
    def folder(self) -> str:
        return self.name.rpartition("/")[0]

    def as_dict(self) -> dict:
        return {"tier": self.tier, "name": self.name[: -len(SUFFIX)], "path": self.path, "size": self.size,
                "title": self.title, "type": self.type, "tags": list(self.tags), "problem": self.problem}


class Scan(NamedTuple):
    entries: list[Entry]
    strays: list[str]  # non-memory files, links and special files inside tier folders


def clean(text: str) -> str:
    """Text safe to show on a terminal or in index.md: no control or direction-changing characters."""
    return UNSAFE_TO_DISPLAY.sub(" ", text).strip()


def _open(path: str) -> sqlite3.Connection:
    db = sqlite3.connect(path, timeout=10)
    try:
        if db.execute("PRAGMA user_version").fetchone()[0] != SCHEMA_VERSION:
            if db.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]:  # another version: start afresh
                db.close()
                os.unlink(path)
                db = sqlite3.connect(path, timeout=10)
            # auto_vacuum gives pages back to the file system: pruning the archive deletes most rows.
            db.executescript("PRAGMA auto_vacuum = FULL;" + _SCHEMA + f"PRAGMA user_version = {SCHEMA_VERSION};")
            with db:
                _changed(db)  # a new database is a new generation, never one a process has cached
    except BaseException:
        db.close()
        raise
    return db


def reset(repo: Repo) -> None:
    """Delete the database (it is rebuilt from the working tree on next use)."""
    for suffix in ("", "-journal"):
        try:
            os.unlink(os.path.join(repo.state_dir(), DB + suffix))
        except FileNotFoundError:
            pass


@contextmanager
def connect(repo: Repo) -> Iterator[sqlite3.Connection]:
    """The catalog database in one transaction; rebuilt empty if missing, of another version or unreadable."""
    try:
        db = _open(os.path.join(repo.state_dir(), DB))
    except sqlite3.DatabaseError:
        reset(repo)
        db = _open(os.path.join(repo.state_dir(), DB))
    try:
        with db:
            yield db
    finally:
        db.close()


class FrontmatterMemo:
    """memory.Memo over the catalog: frontmatter texts this clone has validated, by hash."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db

    def get(self, key: str) -> dict | None:
        row = self.db.execute("SELECT meta FROM frontmatter WHERE hash = ?", (key,)).fetchone()
        return json.loads(row[0]) if row else None

    def put(self, key: str, meta: dict) -> None:
        self.db.execute("INSERT OR REPLACE INTO frontmatter VALUES (?, ?)", (key, json.dumps(meta)))


def _walk(root: str, folder: str, found: list[tuple[str, os.stat_result]], strays: list[str]) -> None:
    try:
        items = list(os.scandir(os.path.join(root, folder)))
    except (FileNotFoundError, NotADirectoryError):
        return
    for item in items:  # the hot loop of every search: the common case (a memory file) first
        name = item.name
        if not name.isprintable() and UNSAFE_TO_DISPLAY.search(name):  # could forge index.md lines
            strays.append(f"{folder}/{name}".encode("unicode_escape").decode("ascii"))
        elif name.endswith(SUFFIX) and name[0] != "." and item.is_file(follow_symlinks=False):
            try:
                found.append((f"{folder}/{name}", item.stat(follow_symlinks=False)))
            except FileNotFoundError:  # moved away (by the janitor, say) since the folder was listed
                continue
        elif item.is_dir(follow_symlinks=False):
            _walk(root, f"{folder}/{name}", found, strays)
        elif name != PLACEHOLDER and ".strata-tmp-" not in name:
            strays.append(f"{folder}/{name}")


def doc_id(path: str) -> int:
    """The full-text row of a path: a stable 63-bit hash (FTS5 rows are found by rowid only)."""
    import hashlib

    return int.from_bytes(hashlib.blake2b(path.encode("utf-8", "surrogateescape"), digest_size=8).digest()) >> 1


def _describe(root: str, rel: str, limit: int, memo: FrontmatterMemo) -> tuple[tuple, tuple | None]:
    """((title, type, tags, problem, frontmatter hash) cleaned for display, the full-text
    row (title, tags, body) or None) of one file."""
    from strata_git import memory, textindex

    raw = b""
    try:
        with open(os.path.join(root, rel), "rb") as f:
            raw = f.read(limit + 1)
        if len(raw) > limit:
            return ("", "note", "", f"over the {limit}-byte limit", ""), None
        mem = memory.parse(raw, rel, memo)
        title, tags = clean(mem.title), TAG_SEP.join(clean(t) for t in mem.tags)
        doc = (textindex.indexed(title), textindex.indexed(" ".join(mem.tags) + " " + mem.type),
               textindex.indexed(rel.partition("/")[2][: -len(SUFFIX)] + " " + mem.body))
        return (title, mem.type, tags, "", mem.frontmatter_hash), doc
    except StrataError as e:
        return ("", "note", "", clean(e.message), ""), ("", "", textindex.indexed(raw.decode("utf-8", "replace")))
    except OSError as e:
        return ("", "note", "", f"unreadable ({e.strerror})", ""), None


def _row(root: str, rel: str, info: os.stat_result, limit: int, memo: FrontmatterMemo) -> tuple[tuple, tuple | None]:
    tier, _, name = rel.partition("/")
    described, doc = _describe(root, rel, limit, memo)
    return (rel, tier, name.rpartition("/")[0], name, info.st_size, info.st_mtime_ns, info.st_ino,
            *described), (doc if tier in SEARCHED else None)


def _upsert(db: sqlite3.Connection, rows: list[tuple[tuple, tuple | None]]) -> None:
    db.executemany("INSERT OR REPLACE INTO memories VALUES (?,?,?,?,?,?,?,?,?,?,?,?)", (row for row, _ in rows))
    _forget_docs(db, [row[0] for row, _ in rows])
    db.executemany("INSERT INTO docs (rowid, path, title, tags, body) VALUES (?,?,?,?,?)",
                   ((doc_id(row[0]), row[0], *doc) for row, doc in rows if doc is not None))


def _forget_docs(db: sqlite3.Connection, paths: Iterable[str]) -> None:
    db.executemany("DELETE FROM docs WHERE rowid = ?", ((doc_id(p),) for p in paths))


def entries(db: sqlite3.Connection, tier: str | None = None, folder: str | None = None) -> list[Entry]:
    """Entries from the database, sorted by tier then name; optionally one folder."""
    query = "SELECT tier, name, size, title, type, tags, problem FROM memories"
    args: tuple = ()
    if tier is not None:
        query, args = query + " WHERE tier = ? AND folder = ?", (tier, folder)
    found = [Entry(t, n, s, ti, k, tuple(g.split(TAG_SEP)) if g else (), p)
             for t, n, s, ti, k, g, p in db.execute(query, args)]
    found.sort(key=lambda e: (_ORDER[e.tier], e.name))
    return found


def scan(repo: Repo, db: sqlite3.Connection, limit: int = 1024 * 1024) -> Scan:
    """Walk the whole working tree, bring the database in line, return every memory."""
    strays = sync(repo, db, limit)
    return Scan(entries(db), sorted(strays))


def sync(repo: Repo, db: sqlite3.Connection, limit: int = 1024 * 1024, tiers: tuple[str, ...] = TIERS) -> list[str]:
    """Bring the rows of `tiers` in line with the working tree (re-reading only files whose
    size, mtime or inode changed); the strays found."""
    found: list[tuple[str, os.stat_result]] = []
    strays: list[str] = []
    for tier in tiers:
        if os.path.islink(os.path.join(repo.root, tier)):
            strays.append(tier)  # a tier folder that is a link is never followed
        else:
            _walk(repo.root, tier, found, strays)
    known = _known(db, tiers)
    memo = FrontmatterMemo(db)
    changed = [_row(repo.root, rel, info, limit, memo) for rel, info in found
               if known.get(rel) != (info.st_size, info.st_mtime_ns, info.st_ino)]
    gone = known.keys() - {rel for rel, _ in found} if len(found) != len(known) or changed else set()
    if not changed and not gone:
        return strays
    _upsert(db, changed)
    db.executemany("DELETE FROM memories WHERE path = ?", ((p,) for p in gone))
    _forget_docs(db, gone)
    # keep the memo to the frontmatter that memories on disk still use
    db.execute("DELETE FROM frontmatter WHERE hash NOT IN (SELECT frontmatter_hash FROM memories)")
    _changed(db)
    return strays


# {(database, tiers): (generation, {path: (size, mtime, inode)})}: a process that searches again
# and again (the API, a server) skips reading thousands of rows while nobody changed them.
_KNOWN: dict[tuple[str, tuple[str, ...]], tuple[str, dict[str, tuple[int, int, int]]]] = {}


def _known(db: sqlite3.Connection, tiers: tuple[str, ...]) -> dict[str, tuple[int, int, int]]:
    key = (db.execute("PRAGMA database_list").fetchone()[2], tiers)
    generation = get_meta(db, "generation")
    if not generation:
        _changed(db)
        generation = get_meta(db, "generation")
    cached = _KNOWN.get(key)
    if cached and cached[0] == generation:
        return cached[1]
    marks = ",".join("?" * len(tiers))
    known = {path: (size, mtime, ino) for path, size, mtime, ino
             in db.execute(f"SELECT path, size, mtime_ns, ino FROM memories WHERE tier IN ({marks})", tiers)}
    _KNOWN.clear()
    _KNOWN[key] = (generation, known)
    return known


def _changed(db: sqlite3.Connection) -> None:
    """Mark the rows as changed (what _known() checks before trusting its copy)."""
    set_meta(db, "generation", os.urandom(8).hex())


def update(repo: Repo, db: sqlite3.Connection, paths: Iterable[str], limit: int = 1024 * 1024) -> set[tuple[str, str]]:
    """Re-examine only `paths` (a hook knows what a commit touches); the (tier, folder)s touched."""
    touched, rows, memo = set(), [], FrontmatterMemo(db)
    for rel in paths:
        tier, _, name = rel.partition("/")
        if tier not in _ORDER or not name:
            continue
        touched.add((tier, name.rpartition("/")[0]))
        try:
            info = os.lstat(os.path.join(repo.root, rel))
        except OSError:
            info = None
        if info is not None and stat.S_ISREG(info.st_mode) and name.endswith(SUFFIX):
            rows.append(_row(repo.root, rel, info, limit, memo))
        else:
            db.execute("DELETE FROM memories WHERE path = ?", (rel,))
            _forget_docs(db, [rel])
    _upsert(db, rows)
    _changed(db)
    return touched


def blob_types(db: sqlite3.Connection, oids: list[str]) -> dict[str, str]:
    """{blob id: memory type} already known (a blob's content, so its type, never changes)."""
    found = {}
    for start in range(0, len(oids), 500):
        chunk = oids[start:start + 500]
        found.update(db.execute(f"SELECT oid, type FROM blob_types WHERE oid IN ({','.join('?' * len(chunk))})",
                                chunk).fetchall())
    return found


def remember_blob_types(db: sqlite3.Connection, types: dict[str, str]) -> None:
    db.executemany("INSERT OR REPLACE INTO blob_types VALUES (?, ?)", types.items())


def get_meta(db: sqlite3.Connection, key: str) -> str:
    row = db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    return row[0] if row else ""


def set_meta(db: sqlite3.Connection, key: str, value: str) -> None:
    db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, value))
