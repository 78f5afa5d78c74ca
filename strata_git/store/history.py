"""When each memory last changed, from commit history (never the file system's mtime).

One `git log` pass over active/ and cooled/ (where content changes: archive/ is read-only)
gives, for every memory name, the commit time of the last commit that touched it, skipping
git-strata's own migration commits (those carrying a `Strata-Move` trailer: a move does not make
a memory young) and merge commits: every commit of every line merged in counts at its own time,
so a sync's merge (which only combines changes made on two machines, or keeps an edit in
active/) makes nothing young, and every machine computes the same times from the same HEAD. The
result is kept in a table under the git directory with the commit it reflects and brought
forward incrementally (a commit writes the rows it changed; a reader looks up only the names it
needs); a rewritten history rebuilds it.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
from collections.abc import Collection, Iterable, Iterator
from typing import NamedTuple

from strata_git.core import contract, heap, untrusted
from strata_git.core.names import SUFFIX, split_path
from strata_git.errors import StrataError
from strata_git.gitio.git import Repo

CACHE_VERSION = 5  # a SQLite table of (name, time) and the commit it reflects
_FORMAT = f"--format=%x01%H %ct {contract.log_field(contract.MOVE, '%x1e')}"


def _scan(repo: Repo, revs: str, times: dict[str, int], skipped: list[str], names: Iterable[str] | None = None) -> None:
    # Only active/ and cooled/: a memory's content changes there (archive/ is read-only; the commit
    # hook refuses any other change, and the janitor's moves there carry a Strata-Move trailer and
    # make nothing young), and git then never diffs archive/'s trees, which grow with every memory
    # archived (at 200,000 archived: 13.2 s -> 5.4 s). --full-history: every commit that touched
    # them, on every line merged in, not git's simplified history.
    tiers = ("active", "cooled")
    spec = list(tiers) if names is None else [f"{tier}/{n}" for n in sorted(names) for tier in tiers]
    # (names as they are: git-strata's git runs with GIT_LITERAL_PATHSPECS). Read as git writes it:
    # at a million archived, all of history is 156 MB that git takes 15 s to write and Python about
    # as long to read, side by side on two cores.
    out = repo.items("log", "--no-renames", "--name-only", "-z", "--no-merges", "--full-history", _FORMAT, revs,
                     "--", *spec)
    # Newest first, but commits of two machines can be dated out of order: keep the latest time.
    for item in out:
        header, _, paths = item.decode("utf-8", "surrogateescape").partition("\0")
        commit, _, rest = header.partition(" ")
        stamp, _, trailers = rest.partition(" ")
        when = untrusted.stamp(stamp)
        if when is None:  # a date no clock gives: the commit's changes are not counted at all
            skipped.append(f"commit {commit[:12]}: its date ({stamp[:24]}) is not between 1970 and 9999; "
                           "its changes are not counted for aging")
            continue
        moved = _moved(commit, trailers, skipped)
        for path in paths.lstrip("\n").split("\0"):
            where = split_path(path)
            if where and where[1] not in moved and times.get(where[1], -1) < when:
                times[where[1]] = when


def _moved(commit: str, trailers: str, skipped: list[str]) -> set[str]:
    """The names (with .md) a commit's valid `Strata-Move` records moved: a move does not make a
    memory young. A trailer that is not a move record (a hand-written commit) moves nothing, and
    the commit's changes count as edits."""
    moved: set[str] = set()
    for value in filter(None, (t.strip() for t in trailers.split("\x1e"))):
        found = untrusted.move(value)
        if found is None:
            skipped.append(f"commit {commit[:12]}: a {contract.MOVE} trailer that is not a move record; "
                           "its changes count as edits")
            continue
        moved.add(found["name"] + SUFFIX)
        for key in ("from", "to"):  # older janitor commits named the paths
            where = split_path(found[key])
            if where:
                moved.add(where[1])
    return moved


_SCHEMA = """
CREATE TABLE changed (name BLOB PRIMARY KEY, time INTEGER NOT NULL) WITHOUT ROWID;
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
"""
_UPSERT = ("INSERT INTO changed VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET time = excluded.time "
           "WHERE excluded.time > changed.time")  # commits of two machines can be dated out of order
_ALL_ABOVE = 50_000  # names looked up at once past which reading every row is quicker


def _key(name: str) -> bytes:
    return name.encode("utf-8", "surrogateescape")  # (a name from history may hold any bytes)


def _open(path: str) -> sqlite3.Connection:
    """The store, made empty if new or of another version. Autocommit: transactions are explicit."""
    from strata_git.store import catalog

    db = sqlite3.connect(path, timeout=catalog.lock_wait(10), isolation_level=None)
    try:
        if db.execute("PRAGMA user_version").fetchone()[0] != CACHE_VERSION:
            db.execute("BEGIN IMMEDIATE")
            if db.execute("PRAGMA user_version").fetchone()[0] != CACHE_VERSION:  # (another process may have)
                for table in ("changed", "meta"):
                    db.execute(f"DROP TABLE IF EXISTS {table}")
                db.executescript(_SCHEMA.replace("CREATE TABLE", "CREATE TABLE IF NOT EXISTS")
                                 + f"PRAGMA user_version = {CACHE_VERSION};")
                for old in contract.LEGACY_STATE:
                    with contextlib.suppress(FileNotFoundError):
                        os.unlink(os.path.join(os.path.dirname(path), old))
            if db.in_transaction:
                db.execute("COMMIT")
        db.execute("PRAGMA synchronous = OFF")  # a cache: a power cut costs at most a rebuild
    except BaseException:
        db.close()
        raise
    return db


def _meta(db: sqlite3.Connection) -> tuple[str | None, list[str]]:
    """(the commit the table reflects, the warnings its history gave), or (None, []) when unknown."""
    found = dict(db.execute("SELECT key, value FROM meta").fetchall())
    head, skipped = found.get("head"), None
    with contextlib.suppress(ValueError):
        skipped = json.loads(found.get("skipped", ""))
    if not (isinstance(head, str) and isinstance(skipped, list) and all(isinstance(s, str) for s in skipped)):
        return None, []
    return head, skipped


# Names edited since a commit that a step back to it looks up in history by name. git matches every
# path of every commit it diffs against each name's pathspecs, so past a few dozen names one read of
# all of history costs less (at a million archived, 20,725 commits: 5 names 1.4 s, 50 names 11.7 s,
# 100 names 35 s, 300 names 206 s; all of history 15 s of git and about as long to read it in).
BACK_UP_TO = 25


def _back(repo: Repo, db: sqlite3.Connection, head: str, at: Head, skipped: list[str]) -> list[str] | None:
    """Take the table back from `head` to its ancestor `at` (a reset or checkout back): only the
    names edited since `at` change, each to its last change in the history of `at` (gone if none).
    The warnings without those the commits since `at` gave; None when the names are too many to
    look up by name."""
    edited: dict[str, int] = {}
    since: list[str] = []
    _scan(repo, f"{at.commit}..{head}", edited, since)
    if len(edited) > BACK_UP_TO:
        return None
    before: dict[str, int] = {}
    if edited:
        _scan(repo, at.commit, before, [], edited)
    db.executemany("DELETE FROM changed WHERE name = ?", ((_key(n),) for n in edited))
    db.executemany(_UPSERT, ((_key(name), when) for name, when in before.items()))
    return [w for w in skipped if w not in since]


def _forward(repo: Repo, db: sqlite3.Connection, at: Head) -> list[str]:
    """Bring the table to `at` (one writer at a time); the warnings history gave."""
    head, skipped = _meta(db)
    if head == at.commit:
        return skipped
    db.execute("BEGIN IMMEDIATE")
    try:
        head, skipped = _meta(db)  # (another process may have brought it forward meanwhile)
        if head != at.commit:
            times: dict[str, int] = {}
            # In the common case the table is one commit behind: no ancestry check needed.
            if head and (head in at.parents[:1] or repo.ok("merge-base", "--is-ancestor", head, at.commit)):
                _scan(repo, f"{head}..{at.commit}", times, skipped)
            elif head and repo.ok("merge-base", "--is-ancestor", at.commit, head) \
                    and (back := _back(repo, db, head, at, skipped)) is not None:
                skipped = back
            else:  # new, or history was rewritten: read it all again
                db.execute("DELETE FROM changed")
                skipped = []
                _scan(repo, at.commit, times, skipped)
            skipped = skipped[-untrusted.MAX_WARNINGS:]
            db.executemany(_UPSERT, ((_key(name), when) for name, when in times.items()))
            db.executemany("INSERT OR REPLACE INTO meta VALUES (?, ?)",
                           (("head", at.commit), ("skipped", json.dumps(skipped))))
        db.execute("COMMIT")
    except BaseException:
        db.execute("ROLLBACK")
        raise
    return skipped


def _lookup(db: sqlite3.Connection, names: Iterable[str] | None) -> dict[str, int]:
    if names is None or isinstance(names, Collection) and len(names) > _ALL_ABOVE:
        rows = db.execute("SELECT name, time FROM changed")
        every = {bytes(k).decode("utf-8", "surrogateescape"): t for k, t in rows}
        return every if names is None else {n: every[n] for n in names if n in every}
    found: dict[str, int] = {}
    keys = list(dict.fromkeys(map(_key, names)))
    for i in range(0, len(keys), 500):
        chunk = keys[i:i + 500]
        for key, when in db.execute(f"SELECT name, time FROM changed WHERE name IN ({','.join('?' * len(chunk))})",
                                    chunk):
            found[bytes(key).decode("utf-8", "surrogateescape")] = when
    return found


class Head(NamedTuple):
    commit: str
    tree: str
    parents: tuple[str, ...]


_HEADS: dict[str, Head] = {}  # commits asked about before (a commit's tree and parents never change)


def head(repo: Repo) -> Head | None:
    """HEAD's commit, tree and parents in one git call (None on an unborn branch); none for a
    commit `known` already described."""
    found = _HEADS.get(repo.head_quick() or "")
    if found is not None:
        return found
    out = repo.git("log", "-1", "--format=%H %T %P", "HEAD", "--", check=False).decode().split()
    return _kept(Head(out[0], out[1], tuple(out[2:]))) if len(out) >= 2 else None


def known(repo: Repo, commits: list[str]) -> dict[str, Head]:
    """{commit: Head} of `commits` (full ids), in one git call for those not asked about before."""
    asked = [c for c in dict.fromkeys(commits) if c not in _HEADS]
    if asked:
        out = repo.git("log", "--no-walk=unsorted", "--format=%H %T %P", *asked, "--").decode().splitlines()
        for line in out:
            parts = line.split()
            if len(parts) >= 2:
                _kept(Head(parts[0], parts[1], tuple(parts[2:])))
    return {c: _HEADS[c] for c in commits if c in _HEADS}


def _kept(found: Head) -> Head:
    if len(_HEADS) >= 1000:  # (a long-running server asks about many)
        _HEADS.clear()
    _HEADS[found.commit] = found
    return found


def ahead(repo: Repo, old: str, new: str) -> Iterator[None]:
    """Steps that bring the last-change table to `new` before HEAD moves there from `old` (a sync
    runs them while git checks its files out: txn.advance); describing both commits first. The
    table follows any commit, so it is right whether or not HEAD gets there."""
    try:
        at = known(repo, [old, new]).get(new)
        yield
        if at is not None:
            last_changed(repo, at, ())
    except (StrataError, sqlite3.Error):  # (then the refresh after the move does it, and says why)
        return


def last_changed(repo: Repo, at: Head | None, names: Iterable[str] | None = None) -> dict[str, int]:
    """{name: unix time of its last content change} for `names` (every name when None) in the history
    of `at`. Kept in a table under the git directory and brought forward by the commits since: a
    commit costs what it changed, not one row per memory ever written. A damaged table is rebuilt."""
    if at is None:
        return {}
    path = os.path.join(repo.state_dir(), contract.CHANGES)
    for attempt in range(1, 4):
        try:
            db = _open(path)
            try:
                with heap.held_off():  # (a new table reads every commit: two million moves at a million)
                    skipped = _forward(repo, db, at)
                found = _lookup(db, names)
            finally:
                db.close()
            break
        except sqlite3.DatabaseError as e:
            from strata_git.store import catalog

            if not catalog.corrupt(e) and catalog.hurried():  # an agent hook: told why, never kept waiting
                raise catalog.Unavailable("another process holds the last-change table's lock") from None
            if attempt == 3 or not catalog.corrupt(e):  # a lock held past the timeout is raised
                raise
            for suffix in ("", "-journal"):  # derived state: rebuilt rather than repaired
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(path + suffix)
    _report(skipped)
    return found


def scan(repo: Repo, commit: str, times: dict[str, int]) -> None:
    """`times` filled from the whole history of `commit`, without the table (which follows HEAD):
    what the times were then (`--as-of`)."""
    skipped: list[str] = []
    _scan(repo, commit, times, skipped)
    _report(skipped[-untrusted.MAX_WARNINGS:])


def _report(skipped: list[str]) -> None:
    for line in skipped:  # kept in the cache, so every command that reads history says so again
        where, _, what = line.partition(": ")
        untrusted.warn(where, what)
