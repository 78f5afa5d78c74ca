"""What `git strata status` says of the archive, counted once for each state of its rows.

At a million archived memories, counting the rows, checking their names and asking which of their
blobs the clone holds took 5-7 s on every status, though none of it changes until the janitor
archives or a sync brings archive records. Now:

- the counts, the names' own problems (names.Spellings) and the blobs the packs hold are counted
  once for each state of the archive rows (shadow.generation(): every write to them marks a new
  one) and kept in the catalog, beside the rows they were counted from;
- the live names are looked up among the archived ones by an index of SQLite's lower(path), which
  is an ASCII name's collision key (names.collision_key); the non-ASCII ones are in the Spellings;
- the blobs held are those the packs held when counted (while the packs are the same: their names
  are hashes of what they hold) and the loose objects that are archived blobs, looked up each time
  by an index of the blob ids (a clone keeps some hundreds or thousands of loose objects).

What is kept is derived state like the rest of the catalog: deleted with it, and counted again
whenever the rows or the packs it was counted from are not the ones it names.
"""

from __future__ import annotations

import json
import sqlite3
from collections import Counter
from typing import NamedTuple

from strata_git.core import names
from strata_git.gitio import partial
from strata_git.gitio.git import Repo
from strata_git.store import catalog, shadow

KEPT = "archive_tally"  # the meta key the tally is kept under
PREFIX = "archive/"
# Made the first time status needs them (a million rows: about a second each), then kept current
# by SQLite with every row written, by any process.
INDEXES = ("CREATE INDEX IF NOT EXISTS archived_by_key ON archived (lower(path))",
           "CREATE INDEX IF NOT EXISTS archived_by_blob ON archived (blob)")
BATCH = 500  # values bound in one IN (...) at most


class Tally(NamedTuple):
    generation: str  # the rows' state it was counted from
    rows: int  # archived memories
    size: int  # their bytes
    blobs: int  # their blobs, each once
    sources: dict[str, int]  # rows made from a record, a trailer or a name only
    spellings: names.Spellings
    packs: list[str] | None  # the packs the blobs held were counted from (None: not counted)
    packed: int  # archived blobs those packs hold and no loose object duplicates


def _load(text: str) -> Tally | None:
    try:
        d = json.loads(text)
        return Tally(d["generation"], d["rows"], d["size"], d["blobs"], d["sources"],
                     names.Spellings(d["mixed"], d["twice"], d["odd"]), d["packs"], d["packed"])
    except (ValueError, KeyError, TypeError):
        return None


def _keep(db: sqlite3.Connection, t: Tally) -> None:
    """Keep `t` unless the rows changed since it was counted (it would describe rows gone)."""
    if shadow.generation(db) != t.generation:
        return
    s = t.spellings
    catalog.set_meta(db, KEPT, json.dumps({**t._asdict(), "spellings": None, "mixed": s.mixed, "twice": s.twice,
                                           "odd": s.odd}))
    db.commit()


def tally(db: sqlite3.Connection) -> Tally:
    """The archive rows counted (the caller brought them to HEAD: shadow.refresh_in), from what
    is kept when it was counted from these very rows."""
    generation = shadow.generation(db)
    kept = _load(catalog.get_meta(db, KEPT))
    if kept is not None and kept.generation == generation:
        return kept
    found, size, blobs, sources = [], 0, set(), Counter[str]()
    for name, blob, length, source in db.execute("SELECT substr(path, ?), blob, size, source FROM archived",
                                                 (len(PREFIX) + 1,)):
        found.append(name)
        blobs.add(blob)
        size += length
        sources[source] += 1
    t = Tally(generation, len(found), size, len(blobs), dict(sources), names.spellings(found), None, 0)
    _keep(db, t)
    return t


def _indexed(db: sqlite3.Connection) -> None:
    for statement in INDEXES:
        db.execute(statement)
    db.commit()


def named(db: sqlite3.Connection, keys: list[str]) -> dict[str, list[str]]:
    """{collision key: the archived ASCII names with it} for those of `keys` (ASCII) any has."""
    _indexed(db)
    found: dict[str, list[str]] = {}
    for start in range(0, len(keys), BATCH):
        chunk = [PREFIX + k for k in keys[start:start + BATCH]]
        for (path,) in db.execute(f"SELECT path FROM archived WHERE lower(path) IN ({','.join('?' * len(chunk))})",
                                  chunk):
            name = path[len(PREFIX):]
            if name.isascii():  # (a non-ASCII name's key is not SQLite's lower(): Spellings.odd has it)
                found.setdefault(name.lower(), []).append(name)
    return found


def on_disk(db: sqlite3.Connection, present: set[str]) -> tuple[int, int]:
    """(rows, bytes) of the archived memories named in `present` (checked out, so listed as files)."""
    rows = size = 0
    wanted = sorted(present)
    for start in range(0, len(wanted), BATCH):
        chunk = [PREFIX + n for n in wanted[start:start + BATCH]]
        for (length,) in db.execute(f"SELECT size FROM archived WHERE path IN ({','.join('?' * len(chunk))})", chunk):
            rows, size = rows + 1, size + length
    return rows, size


def _archived(db: sqlite3.Connection, ids: list[str]) -> set[str]:
    """Those of `ids` that are an archived memory's blob."""
    _indexed(db)
    found: set[str] = set()
    for start in range(0, len(ids), BATCH):
        chunk = ids[start:start + BATCH]
        found.update(b for (b,) in db.execute(
            f"SELECT blob FROM archived WHERE blob IN ({','.join('?' * len(chunk))})", chunk))
    return found


def held(repo: Repo, db: sqlite3.Connection, t: Tally) -> int:
    """How many of the archived memories' blobs this clone holds: those the packs held when `t`
    was counted from these packs, and the loose objects that are archived blobs no pack holds."""
    packs = partial.packs(repo)
    if packs is not None and t.packs == list(packs):
        loose = _archived(db, partial.loose(repo))
        in_packs = partial.in_packs(repo, sorted(loose))
        if in_packs is not None:
            return t.packed + len(loose - in_packs)
    blobs = list({b for (b,) in db.execute("SELECT blob FROM archived")})
    count = len(blobs) - len(partial.absent(repo, blobs))
    if packs is None or partial.packs(repo) != packs:
        return count  # (the packs changed while they were read: nothing is kept of them)
    loose = set(partial.loose(repo)).intersection(blobs)
    in_packs = partial.in_packs(repo, sorted(loose))
    if in_packs is not None:
        _keep(db, t._replace(packs=list(packs), packed=count - len(loose - in_packs)))
    return count
