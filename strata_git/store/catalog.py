"""What memories are on disk, in which tier, with their title, type and tags.

The working tree is the truth: a file changed a moment ago is listed as it is
now (a search's quick rescan takes cooled/ by its folders' mtimes: see _Marks).
Parsed metadata is kept in an SQLite database under the git directory
(`catalog.sqlite`), keyed by path and checked against size, mtime and inode, so
a scan of thousands of memories parses only the files that changed, and a hook
that knows which files a commit touches updates just those rows. The database is
derived state: a different schema version or any corruption deletes and rebuilds
it. Symlinks and special files are never followed; they are reported as strays.

A reader that must answer at once (an agent hook) reads it inside `impatient()`: as it is,
waiting for another process's lock only until its deadline, and never creating, resetting or
rebuilding it (each raises errors.Unavailable instead).
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import stat
import time
import zlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING, NamedTuple

from strata_git.core import contract, heap, memory
from strata_git.core.entries import Entry, Scan, clean
from strata_git.core.memory import UNSAFE_TO_DISPLAY
from strata_git.core.names import SUFFIX, TIERS, refusal
from strata_git.errors import StrataError, Unavailable
from strata_git.gitio.git import Repo
from strata_git.store import toplists

if TYPE_CHECKING:
    from strata_git.gitio.watch import Watch

SCHEMA_VERSION = 11
# Deleting at least this many rows at once (a prune, a rebuild) compacts the full-text index:
# FTS5 otherwise keeps deleted rows' data in its segments until merges happen to reach them.
COMPACT_AFTER = 200
TAG_SEP = "\x1f"  # tags cannot contain control characters (memory.check_known_keys)
_ORDER = {tier: i for i, tier in enumerate(TIERS)}
# A read-only tier's folders as a quick rescan last listed them (see _Marks); a catalog made
# before the table gets it when a quick rescan first needs it.
_FOLDERS = ("CREATE TABLE IF NOT EXISTS folders (path TEXT PRIMARY KEY, mtime_ns INTEGER NOT NULL, "
            "ino INTEGER NOT NULL) WITHOUT ROWID;")
_SCHEMA = """
CREATE TABLE memories (
    path TEXT PRIMARY KEY, tier TEXT NOT NULL, folder TEXT NOT NULL, name TEXT NOT NULL,
    size INTEGER NOT NULL, mtime_ns INTEGER NOT NULL, ino INTEGER NOT NULL,
    title TEXT NOT NULL, type TEXT NOT NULL, tags TEXT NOT NULL, problem TEXT NOT NULL,
    frontmatter_hash TEXT NOT NULL, project TEXT NOT NULL, id INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX memories_by_folder ON memories (tier, folder);
CREATE INDEX memories_by_id ON memories (id);
-- What the shadow index knows of each memory under archive/ at HEAD (see shadow.py).
CREATE TABLE archived (
    id INTEGER PRIMARY KEY, path TEXT NOT NULL UNIQUE, blob TEXT NOT NULL, commit_id TEXT NOT NULL,
    title TEXT NOT NULL, type TEXT NOT NULL, tags TEXT NOT NULL, size INTEGER NOT NULL,
    preview TEXT NOT NULL, source TEXT NOT NULL, digest TEXT NOT NULL, project TEXT NOT NULL DEFAULT ''
);
CREATE TABLE sections (tier TEXT, folder TEXT, text TEXT NOT NULL, PRIMARY KEY (tier, folder)) WITHOUT ROWID;
CREATE TABLE frontmatter (hash TEXT PRIMARY KEY, meta TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE blob_types (oid TEXT PRIMARY KEY, type TEXT NOT NULL) WITHOUT ROWID;
-- One full-text table for every tier, so bm25's corpus statistics (memories, document
-- frequencies, lengths) cover all of them and an archived memory scores as it did live.
-- Contentless: it keeps no copy of any text (snippets come from the files and the records);
-- contentless_delete lets a row go by its id alone, since a changed file's old text is gone.
-- body is the first column: a posting in FTS5's first column needs no column marker (two bytes
-- of the six or so a posting costs); it holds nearly all of them.
CREATE VIRTUAL TABLE docs USING fts5(body, title, tags, content = '', tokenize = "unicode61 remove_diacritics 2");
-- A contentless row is removed by giving FTS5 back the exact values it indexed, so that its
-- counts (documents, lengths) stay exact; contentless_delete would remove rows by id alone but
-- never lowers those counts, and every edit would skew bm25. A live file's old text is gone
-- once it changes, so its indexed values are kept here, compressed (terms sorted and spelled
-- out compress about 4:1). An archived row's are recomputed from its record instead.
CREATE TABLE live_docs (id INTEGER PRIMARY KEY, cols BLOB NOT NULL);
CREATE VIRTUAL TABLE docs_vocab USING fts5vocab(docs, 'row');
""" + _FOLDERS + "".join(f"\n{statement};" for statement in toplists.SCHEMA)
SEARCHED = ("active", "cooled")  # indexed from disk; archive/ from its records, present or pruned


class _Patience(NamedTuple):
    until: float  # time.monotonic() by which the reader has to be done
    most: int  # memories it may read to bring the rows up to date


_PATIENCE: ContextVar[_Patience | None] = ContextVar("catalog_patience", default=None)
HOOK_READS = 200  # memories an impatient reader parses at most: about 0.4 s (2 cores, bench/hook_deadline.py)


@contextmanager
def impatient(until: float, most: int = HOOK_READS) -> Iterator[None]:
    """Within the block the catalog is read as it is and brought up to date in place, but another
    process's lock is waited for only until `until` (time.monotonic()), and a missing, unreadable or
    other-version file, or rows more than `most` memories behind, raise Unavailable instead of being
    created, reset or rebuilt here: that is left to a process with the time (the agent hooks)."""
    token = _PATIENCE.set(_Patience(until, most))
    try:
        yield
    finally:
        _PATIENCE.reset(token)


def hurried() -> bool:
    """Whether this reader is inside `impatient()`."""
    return _PATIENCE.get() is not None


def lock_wait(default: float) -> float:
    """Seconds a reader may wait for another process's SQLite lock: `default`, or inside
    `impatient()` what is left before its deadline."""
    patience = _PATIENCE.get()
    return default if patience is None else max(0.0, patience.until - time.monotonic() - 0.1)


def affordable(count: int, what: str) -> None:
    """Raise Unavailable inside `impatient()` when bringing `what` up to date means reading `count`
    memories, more than it allows."""
    patience = _PATIENCE.get()
    if patience is not None and count > patience.most:
        raise Unavailable(f"{what} is {count} memories behind, more than a hook reads in its time", rebuild=True)


def _open_as_is(path: str, patience: _Patience) -> sqlite3.Connection:
    """The catalog as it is (never created), waiting for a lock only until the deadline."""
    import urllib.parse

    if not os.path.isfile(path):
        raise Unavailable("the catalog is missing", rebuild=True)
    wait = max(0.0, patience.until - time.monotonic() - 0.1)  # given up just before: the reason is told
    try:
        db = sqlite3.connect(f"file:{urllib.parse.quote(path)}?mode=rw", uri=True, timeout=wait)
        version = db.execute("PRAGMA user_version").fetchone()[0]
    except sqlite3.DatabaseError as e:
        raise unavailable(e) from None
    if version != SCHEMA_VERSION:
        db.close()
        raise Unavailable("the catalog is being created" if version == 0 else
                          f"the catalog is of another version ({version}, not {SCHEMA_VERSION})", rebuild=True)
    return db


def unavailable(e: sqlite3.DatabaseError) -> Unavailable:
    """What an impatient reader is told instead of `e`."""
    if corrupt(e):
        return Unavailable(f"the catalog is unreadable ({e})", rebuild=True)
    if "locked" in str(e) or "busy" in str(e):
        return Unavailable("another process holds the catalog's lock (a reindex, a janitor, a capture or a "
                           "command bringing it up to date)")
    return Unavailable(f"the catalog cannot be read ({e})")


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
                set_meta(db, "born", os.urandom(8).hex())  # (what a watch checks: see watch.py)
            for old in contract.LEGACY_STATE:  # derived state of earlier versions, now held here
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(os.path.join(os.path.dirname(path), old))
    except BaseException:
        db.close()
        raise
    return db


def corrupt(e: sqlite3.DatabaseError) -> bool:
    """Whether an error means the file is broken (rebuild it) rather than busy, replaced or out of
    space: deleting the file under a process that holds its lock would break that process."""
    return not (isinstance(e, sqlite3.OperationalError)
                and any(word in str(e) for word in ("locked", "readonly", "disk is full", "disk I/O", "busy")))


def busy(e: sqlite3.DatabaseError) -> bool:
    """Whether an error means another process holds the lock (past the wait)."""
    return "locked" in str(e) or "busy" in str(e)


def again(e: sqlite3.DatabaseError, attempt: int, repo: Repo) -> bool:
    """After a failed transaction on the catalog: whether to run it again (True), having rebuilt
    a broken file or waited out a lock, or to raise (False). Two deferred transactions that both
    read and then both write deadlock, and SQLite answers one of them at once with "database is
    locked": that one runs again once the other is done. A lock is never a reason to delete the
    file under the process that holds it."""
    if corrupt(e):
        if attempt > 1:
            return False
        reset(repo)  # derived state: rebuilt rather than repaired
        return True
    if ("locked" in str(e) or "busy" in str(e)) and attempt < 6:
        import time

        time.sleep(0.05 * 2 ** attempt)
        return True
    return False


def reset(repo: Repo) -> None:
    """Delete the database (it is rebuilt from the working tree on next use)."""
    for suffix in ("", "-journal"):
        try:
            os.unlink(os.path.join(repo.state_dir(), contract.CATALOG + suffix))
        except FileNotFoundError:
            pass


@contextmanager
def connect(repo: Repo) -> Iterator[sqlite3.Connection]:
    """The catalog database in one transaction; rebuilt empty if missing, of another version or
    unreadable (inside `impatient()`: as it is, or Unavailable)."""
    path = os.path.join(repo.state_dir(), contract.CATALOG)
    patience = _PATIENCE.get()
    if patience is not None:
        with _as_is(path, patience) as db:
            yield db
        return
    for attempt in range(3):
        try:
            db = _open(path)
            break
        except sqlite3.DatabaseError as e:
            if corrupt(e):  # not a database, malformed, tables missing: rebuilt from the working tree
                reset(repo)
                db = _open(path)
                break
            # "readonly": another process replaced the file (a rebuild of another version) after
            # this one opened it: open the new one. A lock held past the timeout is raised.
            if "readonly" not in str(e) or attempt == 2:
                raise
    try:
        with db:
            yield db
    finally:
        db.close()


@contextmanager
def _as_is(path: str, patience: _Patience) -> Iterator[sqlite3.Connection]:
    db = _open_as_is(path, patience)
    try:
        with db:
            yield db
    except sqlite3.DatabaseError as e:  # a lock held past the deadline, or corruption a query found
        raise unavailable(e) from None
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


def _walk(root: str, folder: str, found: list[tuple[str, os.stat_result]], strays: list[str],
          into: Callable[[str, str, list[tuple[str, os.stat_result]], list[str]], None] | None = None) -> None:
    """The memory files under `folder` with their stat, and the strays (`into`: how to walk its
    subfolders, by default this way)."""
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
            (into or _walk)(root, f"{folder}/{name}", found, strays)
        elif name != contract.PLACEHOLDER and ".strata-tmp-" not in name:
            strays.append(f"{folder}/{name}")


# FTS5 keeps a transaction's changes in memory, in rowid order, and writes them out as a new segment
# of the index whenever a row comes in at a rowid no greater than the last one: rows written in
# any other order made a segment each (100 memories of a sync at 50,000 archived: 26-29 ms to
# index them and 10-11 ms to commit, against 3-4 and 3 ms in order), and more segments to merge.
# So every write to `docs` (here, in the shadow index, in a search as of a past commit) goes in
# ascending rowid order.


def allocate(db: sqlite3.Connection, count: int) -> int:
    """The first of `count` new full-text row ids. Ids are small and increasing so that FTS5's
    doclists (rowid deltas as varints) stay a byte or two a posting; a path hash took nine."""
    start = int(get_meta(db, "next_id") or 1)
    set_meta(db, "next_id", str(start + count))
    return start


def _describe(root: str, rel: str, limit: int, memo: memory.Memo, name_ok: bool = False
              ) -> tuple[tuple, tuple | None]:
    """((title, type, tags, problem, frontmatter hash, project) cleaned for display, the full-text
    row (title, tags, body) or None) of one file; `name_ok`: its name is known to be one `write`
    accepts. A description primed for these very bytes (`primer`) is taken as it is."""
    try:
        with open(os.path.join(root, rel), "rb") as f:
            raw = f.read(limit + 1)
    except OSError as e:
        return ("", "note", "", f"unreadable ({e.strerror})", "", ""), None
    primed = _PRIMED.pop((rel, limit, raw), None) if _PRIMED else None
    return primed or _described(rel, raw, limit, memo, name_ok)


def _described(rel: str, raw: bytes, limit: int, memo: memory.Memo, name_ok: bool) -> tuple[tuple, tuple | None]:
    """_describe() of a file's bytes `raw` (read up to limit + 1)."""
    from collections import Counter

    from strata_git.core import textindex

    name = rel.partition("/")[2][: -len(SUFFIX)]
    try:
        if len(raw) > limit:
            return ("", "note", "", f"over the {limit}-byte limit", "", ""), None
        mem = memory.parse(raw, rel, memo)
        title, tags = clean(mem.title), TAG_SEP.join(clean(t) for t in mem.tags)
        doc = textindex.document(title, mem.tags, mem.type, name, Counter(textindex.tokens(mem.body)))
        return (title, mem.type, tags, "" if name_ok else name_problem(rel), mem.frontmatter_hash, mem.project), doc
    except StrataError as e:  # indexed as its archive record would be: the whole text as body
        doc = textindex.document("", (), "note", name, Counter(textindex.tokens(raw.decode("utf-8", "replace"))))
        return ("", "note", "", clean(e.message), "", ""), doc


# Descriptions made ahead by `primer`, by (path, limit, bytes): update() takes one only for the
# same bytes at the same path, so what it takes is what it would have made.
_PRIMED: dict[tuple[str, int, bytes], tuple[tuple, tuple | None]] = {}
PRIMED_MAX = 1000  # memories primed at most (a checkout's length of work, not a whole clone's)
PRIMED_BATCH = 100  # read from git at a time
PRIMED_BYTES = 16 << 20  # past this much kept, no more are read (a memory may be 1 MiB)
_PRIMED_FRONTMATTER: dict[str, dict] = {}  # what the primer parsed, written by the next update()


class _Learning:
    """memory.Memo that writes nothing to the catalog: what it validates waits in `learned` for
    whoever may write (the primer's connection must take no lock; a rescan's forked processes
    have none), and what it has not seen it asks `known`, if any."""

    def __init__(self, learned: dict[str, dict], known: memory.Memo | None = None) -> None:
        self.learned, self.known = learned, known

    def get(self, key: str) -> dict | None:
        return self.learned.get(key) or (self.known.get(key) if self.known else None)

    def put(self, key: str, meta: dict) -> None:
        self.learned[key] = meta


def primer(repo: Repo, commit: str, paths: list[str], limit: int, blobs: dict[str, str] | None = None
           ) -> Iterator[None]:
    """Describe the memories at `paths` as `commit` holds them, one a step, for the update() that
    follows a checkout of them (a sync runs the steps while git checks them out: txn.advance).
    `blobs`: {path: object id} at `commit` where the caller knows them; git then reads each by its
    id instead of walking `commit`'s trees to it (100 memories: 3.1 against 8.0 ms, bench/sync.py).
    Only reads: the catalog is not written, and nothing is locked between steps. Whatever fails
    leaves the rest for update() to describe as it always does."""
    _PRIMED.clear()
    _PRIMED_FRONTMATTER.clear()
    wanted = [p for p in dict.fromkeys(paths) if p.endswith(SUFFIX) and p.partition("/")[0] in ("active", "cooled")]
    wanted = wanted[:PRIMED_MAX]
    if not wanted:
        return
    try:
        path = os.path.join(repo.state_dir(), contract.CATALOG)
        quoted = path.replace("%", "%25").replace("?", "%3f").replace("#", "%23")  # (an URI's own characters)
        db = sqlite3.connect(f"file:{quoted}?mode=ro", uri=True, timeout=0.05)
    except (StrataError, sqlite3.Error, OSError):
        return
    try:
        if db.execute("PRAGMA user_version").fetchone()[0] != SCHEMA_VERSION:
            return
        healthy = _healthy(db, wanted)
        memo = _Learning(_PRIMED_FRONTMATTER, FrontmatterMemo(db))
        held = 0  # bytes kept for update() to compare: at most PRIMED_BYTES (and a batch)
        for start in range(0, len(wanted), PRIMED_BATCH):
            batch = wanted[start:start + PRIMED_BATCH]
            contents = repo.objects([(blobs or {}).get(p) or f"{commit}:{p}" for p in batch])
            yield
            for rel, raw in zip(batch, contents, strict=True):
                if raw is not None:
                    raw = raw[:limit + 1]
                    _PRIMED[(rel, limit, raw)] = _described(rel, raw, limit, memo, rel in healthy)
                    held += len(raw)
                    yield
            if held > PRIMED_BYTES:
                return
    except (StrataError, sqlite3.Error):
        return
    finally:
        db.close()


def name_problem(rel: str) -> str:
    """"" for a memory whose name `write` accepts; else what is wrong and how to fix it (a name
    that came in through plain git or a sync: the janitor leaves it where it is)."""
    why = refusal(rel.partition("/")[2])
    return clean(f"its name is one git-strata refuses ({why}); rename it with `git mv` and commit") if why else ""


def _row(root: str, rel: str, info: os.stat_result, limit: int, memo: memory.Memo, name_ok: bool = False
         ) -> tuple[tuple, tuple | None]:
    tier, _, name = rel.partition("/")
    described, doc = _describe(root, rel, limit, memo, name_ok)
    return (rel, tier, name.rpartition("/")[0], name, info.st_size, info.st_mtime_ns, info.st_ino,
            *described, 0), (doc if tier in SEARCHED else None)


PARALLEL_FROM = 4_000  # files a rescan describes from which forked processes share the work
PART = 500  # files a process describes at a time


def _rows(root: str, stale: list[tuple[str, os.stat_result]], limit: int, memo: memory.Memo,
          healthy: set[str]) -> list[tuple[tuple, tuple | None]]:
    """_row() of each of the `stale` files, in order. Many (a new clone's live memories, a first
    scan) are read and described on forked processes (heap.forkable), each with a memo of its own
    whose frontmatter this one keeps after: reading, YAML and words take about half a millisecond
    a memory, all of it on one core otherwise."""
    workers = min(heap.forkable(), 4) if len(stale) >= PARALLEL_FROM else 0
    if not workers:
        return [_row(root, rel, info, limit, memo, rel in healthy) for rel, info in stale]
    import multiprocessing

    from strata_git.gitio import git

    parts = [stale[start:start + PART] for start in range(0, len(stale), PART)]
    with multiprocessing.get_context("fork").Pool(workers, initializer=git.forked) as pool:
        made = pool.starmap(_part_rows, [(root, part, limit, {rel for rel, _ in part} & healthy) for part in parts])
    rows: list[tuple[tuple, tuple | None]] = []
    for part_rows, learned in made:
        rows += part_rows
        for key, meta in learned.items():
            memo.put(key, meta)
    return rows


def _part_rows(root: str, part: list[tuple[str, os.stat_result]], limit: int, healthy: set[str]
               ) -> tuple[list[tuple[tuple, tuple | None]], dict[str, dict]]:
    learned: dict[str, dict] = {}
    memo = _Learning(learned)
    return [_row(root, rel, info, limit, memo, rel in healthy) for rel, info in part], learned


def _upsert(db: sqlite3.Connection, rows: list[tuple[tuple, tuple | None]]) -> None:
    """Write rows (their id: the path's existing one, else a new one) and their full-text values."""
    held = _ids(db, [row[0] for row, _ in rows])
    _forget_docs(db, [row[0] for row, _ in rows], held)
    fresh = iter(range(allocate(db, sum(1 for row, _ in rows if row[0] not in held)), 1 << 62))
    rows = [((*row[:-1], held[row[0]] if row[0] in held else next(fresh)), doc) for row, doc in rows]
    db.executemany("INSERT OR REPLACE INTO memories VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)", (row for row, _ in rows))
    docs = sorted((row[-1], *doc) for row, doc in rows if doc is not None)  # (in rowid order: see above allocate())
    db.executemany("INSERT INTO docs (rowid, title, tags, body) VALUES (?,?,?,?)", docs)
    toplists.added(db, docs)
    db.executemany("INSERT INTO live_docs VALUES (?, ?)", ((d[0], pack(d[1:])) for d in docs))


def _healthy(db: sqlite3.Connection, paths: list[str]) -> set[str]:
    """Those of `paths` whose row has no problem: their names are ones `write` accepts (a name's
    check, a secret scan among others, is 0.1 ms; a path's name does not change)."""
    return {p for (p,) in among(db, "SELECT path FROM memories WHERE problem = '' AND path IN ({})", paths)}


def among(db: sqlite3.Connection, query: str, values: Sequence[object]) -> Iterator[tuple]:
    """The rows `query` gives for `values`, its `{}` standing for the list in `IN ({})`: asked
    for 500 at a time (SQLite binds at most 32,766 values to a statement, older builds 999)."""
    for start in range(0, len(values), 500):
        chunk = values[start:start + 500]
        yield from db.execute(query.format(",".join("?" * len(chunk))), chunk)


def _ids(db: sqlite3.Connection, paths: list[str]) -> dict[str, int]:
    return dict(among(db, "SELECT path, id FROM memories WHERE path IN ({})", paths))


def pack(cols: tuple[str, ...]) -> bytes:
    return zlib.compress("\0".join(cols).encode("utf-8"))


def unpack(data: bytes) -> tuple[str, ...]:
    return tuple(zlib.decompress(data).decode("utf-8").split("\0"))


def _forget_docs(db: sqlite3.Connection, paths: Iterable[str], held: dict[str, int] | None = None) -> None:
    """Take these paths' rows out of the full-text index (archive/'s rows there are the shadow
    index's: files under archive/ are never indexed from disk, so they have no live_docs row)."""
    paths = list(paths)
    ids = list((held if held is not None else _ids(db, paths)).values())
    kept = sorted(among(db, "SELECT id, cols FROM live_docs WHERE id IN ({})", ids))
    gone = [(i, *unpack(cols)) for i, cols in kept]  # (in rowid order: see above allocate())
    db.executemany("INSERT INTO docs (docs, rowid, title, tags, body) VALUES ('delete', ?, ?, ?, ?)", gone)
    toplists.removed(db, gone)
    db.executemany("DELETE FROM live_docs WHERE id = ?", ((i,) for i, _ in kept))


def reinsert_live(db: sqlite3.Connection) -> None:
    """Index the live rows again from what live_docs keeps (after a 'delete-all', which drops the
    word lists: toplists.clear)."""
    kept = db.execute("SELECT id, cols FROM live_docs ORDER BY id").fetchall()
    db.executemany("INSERT INTO docs (rowid, title, tags, body) VALUES (?,?,?,?)", ((i, *unpack(c)) for i, c in kept))


_ENTRY = "SELECT tier, name, size, title, type, tags, problem, project FROM memories"


def _entry(t: str, n: str, s: int, ti: str, k: str, g: str, p: str, j: str) -> Entry:
    return Entry(t, n, s, ti, k, tuple(g.split(TAG_SEP)) if g else (), p, j)


def entries(db: sqlite3.Connection, tier: str | None = None, folder: str | None = None) -> list[Entry]:
    """Entries from the database, sorted by tier then name; optionally one tier, or one folder of it."""
    query = _ENTRY
    args: tuple = ()
    if tier is not None:
        query, args = query + " WHERE tier = ?", (tier,)
        if folder is not None:
            query, args = query + " AND folder = ?", (tier, folder)
    found = [_entry(*row) for row in db.execute(query, args)]
    found.sort(key=lambda e: (_ORDER[e.tier], e.name))
    return found


def entries_at(db: sqlite3.Connection, paths: Iterable[str]) -> dict[str, Entry]:
    """{path: Entry} of those `paths` (tier/name.md) the catalog holds."""
    found = {}
    for path in paths:
        row = db.execute(_ENTRY + " WHERE path = ?", (path,)).fetchone()
        if row:
            found[path] = _entry(*row)
    return found


def scan(repo: Repo, db: sqlite3.Connection, limit: int = 1024 * 1024) -> Scan:
    """Walk the whole working tree, bring the database in line, return every memory."""
    strays = rescan(repo, db, limit)
    return Scan(entries(db), sorted(strays))


def rescan(repo: Repo, db: sqlite3.Connection, limit: int = 1024 * 1024, tiers: tuple[str, ...] = TIERS,
           watch: Watch | None = None, quick: bool = False, touched: set[tuple[str, str]] | None = None) -> list[str]:
    """Bring the rows of `tiers` in line with the working tree (re-reading only files whose
    size, mtime or inode changed); the strays found. `touched` (without a watch) gets the (tier,
    folder) of each memory added, changed or gone. With a `watch` on exactly those tiers, only
    the paths the kernel reported are re-examined when it can tell (strays are then not listed).
    `quick` (a search): a read-only tier's folder whose listing is as the last quick rescan saw it
    is taken as it is (see _Marks), and the strays in such folders are not listed again."""
    if watch is not None:
        born = get_meta(db, "born")
        changed = watch.take(born)
        if changed is not None:
            if changed:
                update(repo, db, changed, limit)
            return []
        rescanned = rescan(repo, db, limit, tiers, quick=quick)
        watch.scanned(born)
        return rescanned
    found: list[tuple[str, os.stat_result]] = []
    strays: list[str] = []
    marked = [t for t in tiers if quick and t in READ_ONLY]
    walk = _Marks(db, marked) if marked else None
    for tier in tiers:
        if os.path.islink(os.path.join(repo.root, tier)):
            strays.append(tier)  # a tier folder that is a link is never followed
        elif walk is not None and tier in marked:
            walk.walk(repo.root, tier, found, strays)
        else:
            _walk(repo.root, tier, found, strays)
    known = _known(db, tiers) if walk is None else walk.known(db, [t for t in tiers if t not in marked])
    memo = FrontmatterMemo(db)
    stale = [(rel, info) for rel, info in found if known.get(rel) != (info.st_size, info.st_mtime_ns, info.st_ino)]
    affordable(len(stale), "the catalog")
    healthy = _healthy(db, [rel for rel, _ in stale])
    rows = _rows(repo.root, stale, limit, memo, healthy)
    gone = known.keys() - {rel for rel, _ in found} if len(found) != len(known) or rows else set()
    if walk is not None:
        gone |= walk.vanished(db)
        walk.record(db)
    if not rows and not gone:
        return strays
    if touched is not None:
        for rel in [*(rel for rel, _ in stale), *gone]:
            tier, _, name = rel.partition("/")
            touched.add((tier, name.rpartition("/")[0]))
    _upsert(db, rows)
    _forget_docs(db, gone)
    db.executemany("DELETE FROM memories WHERE path = ?", ((p,) for p in gone))
    if len(gone) >= COMPACT_AFTER:
        compact(db)
    # keep the memo to the frontmatter that memories on disk still use
    db.execute("DELETE FROM frontmatter WHERE hash NOT IN (SELECT frontmatter_hash FROM memories)")
    _changed(db)
    return strays


READ_ONLY = ("cooled",)  # tiers whose files change only as git and the janitor change them
SETTLED_NS = 2 * 10**9  # a folder changed this recently may change again within its timestamp's tick
MANY_FOLDERS = 64  # listed again by a quick rescan: past this, one query for the tier's rows beats one each


class _Marks:
    """A quick rescan of read-only tiers. Their files are never edited there (the pre-commit
    check refuses it); git and the janitor add, replace and remove them, and each of those changes
    the folder's modification time. So a folder whose mtime and inode are those this walk last
    recorded holds the files it held then, as the catalog has them: its files are not looked at
    again (at a million archived, with 25,000 cooled, that is most of a search's time). A folder
    changed within SETTLED_NS of the walk is recorded as not to be trusted: a change in the same
    tick of the clock would not move its mtime. The one change this misses: a cooled file
    rewritten in place by hand (not by git, not by an editor that replaces the file), which is
    searched as it was until its folder changes or a full scan (`git strata status`, `reindex`)."""

    def __init__(self, db: sqlite3.Connection, tiers: list[str]) -> None:
        self.tiers = tiers
        try:
            rows = db.execute("SELECT path, mtime_ns, ino FROM folders").fetchall()
        except sqlite3.OperationalError:  # a catalog made before the table: every folder is listed
            db.execute(_FOLDERS)
            rows = []
        self.recorded = {path: (mtime, ino) for path, mtime, ino in rows}
        self.children: dict[str, list[str]] = {}
        for path in self.recorded:
            self.children.setdefault(path.rpartition("/")[0], []).append(path)
        self.kept: set[str] = set()  # folders taken as recorded
        self.listed: dict[str, tuple[int, int]] = {}  # folders listed again: their mark now
        self.now = time.time_ns()

    def walk(self, root: str, folder: str, found: list[tuple[str, os.stat_result]], strays: list[str]) -> None:
        try:
            info = os.lstat(os.path.join(root, folder))
        except OSError:
            return
        if not stat.S_ISDIR(info.st_mode):
            return
        mark = (info.st_mtime_ns, info.st_ino)
        if self.recorded.get(folder) == mark:
            self.kept.add(folder)
            for child in self.children.get(folder, ()):
                self.walk(root, child, found, strays)
            return
        self.listed[folder] = mark if info.st_mtime_ns < self.now - SETTLED_NS else (-1, info.st_ino)
        _walk(root, folder, found, strays, self.walk)

    def known(self, db: sqlite3.Connection, others: list[str]) -> dict[str, tuple[int, int, int]]:
        """{path: (size, mtime, inode)} of the rows to check: the other tiers', and those in the
        folders listed again."""
        known = dict(_known(db, tuple(others))) if others else {}
        listed = {self._split(f) for f in self.listed}
        if len(listed) > MANY_FOLDERS:
            for tier in self.tiers:
                rows = db.execute("SELECT path, size, mtime_ns, ino, folder FROM memories WHERE tier = ?", (tier,))
                known.update((p, (s, m, i)) for p, s, m, i, folder in rows if (tier, folder) in listed)
        else:
            for tier, folder in listed:
                rows = db.execute("SELECT path, size, mtime_ns, ino FROM memories WHERE tier = ? AND folder = ?",
                                  (tier, folder))
                known.update((p, (s, m, i)) for p, s, m, i in rows)
        return known

    def vanished(self, db: sqlite3.Connection) -> set[str]:
        """Paths of the rows in folders this walk no longer found."""
        seen = {self._split(f) for f in (*self.kept, *self.listed)}
        gone: set[str] = set()
        for tier in self.tiers:
            for (folder,) in db.execute("SELECT DISTINCT folder FROM memories WHERE tier = ?", (tier,)).fetchall():
                if (tier, folder) not in seen:
                    gone.update(p for (p,) in db.execute("SELECT path FROM memories WHERE tier = ? AND folder = ?",
                                                         (tier, folder)))
        return gone

    def record(self, db: sqlite3.Connection) -> None:
        """Keep the marks of the folders listed again; forget those of folders gone."""
        gone = self.recorded.keys() - self.kept - self.listed.keys()
        db.executemany("DELETE FROM folders WHERE path = ?", ((p,) for p in gone))
        db.executemany("INSERT OR REPLACE INTO folders VALUES (?, ?, ?)",
                       ((p, m, i) for p, (m, i) in self.listed.items() if self.recorded.get(p) != (m, i)))

    @staticmethod
    def _split(folder: str) -> tuple[str, str]:
        """(tier, folder in the memories table) of a folder path: `cooled/a/b` -> (cooled, a/b)."""
        tier, _, rest = folder.partition("/")
        return tier, rest


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
    for key, meta in _PRIMED_FRONTMATTER.items():  # what a primer learned, kept now
        memo.put(key, meta)
    _PRIMED_FRONTMATTER.clear()
    paths = list(dict.fromkeys(paths))  # (each once: a path twice would make two rows)
    healthy = _healthy(db, paths)
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
            rows.append(_row(repo.root, rel, info, limit, memo, rel in healthy))
        else:
            _forget_docs(db, [rel])
            db.execute("DELETE FROM memories WHERE path = ?", (rel,))
    _PRIMED.clear()  # (what it did not take is of no further use)
    _upsert(db, rows)
    _changed(db)
    return touched


def blob_types(db: sqlite3.Connection, oids: list[str]) -> dict[str, str]:
    """{blob id: memory type} already known (a blob's content, so its type, never changes)."""
    return dict(among(db, "SELECT oid, type FROM blob_types WHERE oid IN ({})", oids))


def remember_blob_types(db: sqlite3.Connection, types: dict[str, str]) -> None:
    db.executemany("INSERT OR REPLACE INTO blob_types VALUES (?, ?)", types.items())


def get_meta(db: sqlite3.Connection, key: str) -> str:
    row = db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    return row[0] if row else ""


def set_meta(db: sqlite3.Connection, key: str, value: str) -> None:
    db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, value))


def compact(db: sqlite3.Connection) -> None:
    """Merge the full-text index into one segment, dropping what deleted rows left behind."""
    db.execute("INSERT INTO docs (docs) VALUES ('optimize')")


# FTS5's own defaults (fts5_config.c), which every write but a bulk load keeps: a term list held
# in memory up to `hashsize` bytes before it is written as a segment, and segments merged once
# `automerge` of them are at one level.
_FTS_DEFAULTS = {"hashsize": 1024 * 1024, "automerge": 4}
_FTS_BULK = {"hashsize": 16 * 1024 * 1024, "automerge": 16}


@contextmanager
def bulk(db: sqlite3.Connection) -> Iterator[None]:
    """Within the block (inside the caller's transaction, which then ends with compact()), the
    full-text index writes larger segments and merges them less often: a million rows' inserts
    and merge took 24.7 s against 47.2 s on their own, a rebuild over an old index's rows 62.6 s
    against 97.8 s (docs/benchmarks.md). FTS5's defaults are set back after,
    in the same transaction, so nothing of it outlives the block. An SQLite whose FTS5 does not
    know the settings loads as it always did."""
    def put(values: dict[str, int]) -> None:
        for key, value in values.items():
            db.execute("INSERT INTO docs (docs, rank) VALUES (?, ?)", (key, value))

    try:
        put(_FTS_BULK)
    except sqlite3.OperationalError:
        yield
        return
    try:
        yield
    finally:
        put(_FTS_DEFAULTS)


def derived_sizes(repo: Repo) -> dict[str, int]:
    """{file: bytes} of the derived state under .git/strata (SQLite journals and temporary files
    included), largest first: what `reindex` or deleting the folder's files would rebuild."""
    found = {}
    for item in os.scandir(repo.state_dir()):
        if item.is_file(follow_symlinks=False):
            found[item.name] = item.stat(follow_symlinks=False).st_size
    return dict(sorted(found.items(), key=lambda kv: (-kv[1], kv[0])))
