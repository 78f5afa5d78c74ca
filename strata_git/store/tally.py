"""What `git strata status` says of the archive, counted once and then kept along with its rows.

At a million archived memories, counting the rows, checking their names and asking which of their
blobs the clone holds took 7-9 s on every status. Now:

- the counts, the names' own problems (names.Spellings) and the archived blobs the packs hold are
  counted the first time and kept in the catalog, with the state of the rows they describe
  (generation());
- every write to the rows (shadow.py: a janitor's batch, a recall, records a sync brought) brings
  what is kept along in the writer's own transaction (changed()): a lookup or two for each row it
  writes, not a count of a million. A full rebuild, or rows an older version wrote without marking
  them, leave nothing kept: the next status counts again;
- the live names are looked up among the archived ones by an index of SQLite's lower(path), which
  is an ASCII name's collision key (names.collision_key); the non-ASCII ones are in the Spellings;
- the blobs held are those the packs held (while the packs are the same: a pack's name is the
  hash of what it holds) and the loose objects that are archived blobs, looked up each time by an
  index of the blob ids (a clone keeps some hundreds or thousands of loose objects).

What is kept is derived state like the rest of the catalog: deleted with it, and counted again
whenever the rows or packs it names are not the ones there are.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections import Counter
from collections.abc import Sequence
from typing import NamedTuple

from strata_git.core import names
from strata_git.gitio import partial
from strata_git.gitio.git import Repo
from strata_git.store import catalog

KEPT = "archive_tally"  # the meta key the tally is kept under
GENERATION = "shadow_generation"  # the archive rows' state, marked anew by every write to them
MARKED = "shadow_marked"  # the rows' recorded state (_state) when this version last wrote them
PREFIX = "archive/"
# Made the first time status needs them (a million rows: about a second each), then kept current
# by SQLite with every row written, by any process.
INDEXES = ("CREATE INDEX IF NOT EXISTS archived_by_key ON archived (lower(path))",
           "CREATE INDEX IF NOT EXISTS archived_by_blob ON archived (blob)")


class Tally(NamedTuple):
    generation: str  # the rows' state it was counted from
    rows: int  # archived memories
    size: int  # their bytes
    blobs: int  # their blobs, each once
    sources: dict[str, int]  # rows made from a record, a trailer or a name only
    spellings: names.Spellings
    packs: list[str] | None  # the packs the blobs held were counted from (None: not counted)
    packed: int  # archived blobs those packs hold and no loose object duplicates


Row = tuple[str, str, int, str]  # an archive row as counted: (path, blob, size, source)


def _state(db: sqlite3.Connection) -> str:
    return " ".join(catalog.get_meta(db, k) for k in ("shadow_version", "shadow_commit", "shadow_refs"))


def is_marked(db: sqlite3.Connection) -> bool:
    """Whether the rows' recorded state is one this version wrote (and marked)."""
    return bool(catalog.get_meta(db, GENERATION)) and catalog.get_meta(db, MARKED) == _state(db)


def marked(db: sqlite3.Connection, anew: bool) -> None:
    """Record that this version brought the rows to the state the shadow index just recorded;
    `anew`: the state they were in was not one it marked (an older version wrote the rows), so
    nothing kept for them stands."""
    if anew:
        catalog.set_meta(db, GENERATION, os.urandom(8).hex())
    catalog.set_meta(db, MARKED, _state(db))


def generation(db: sqlite3.Connection) -> str:
    """The archive rows' state as changed() last marked it (the caller holds no transaction). A
    version before the mark wrote rows without it: then the rows are marked anew here. "" when the
    catalog's lock is held elsewhere: then nothing is kept, and nothing kept is trusted."""
    if not is_marked(db):
        try:
            marked(db, anew=True)
            db.commit()
        except sqlite3.OperationalError as e:
            if not catalog.busy(e):
                raise
            db.rollback()
            return ""
    return catalog.get_meta(db, GENERATION)


def changed(repo: Repo, db: sqlite3.Connection, added: list[Row] | None, removed: Sequence[Row] = ()) -> None:
    """Mark the archive rows as changed, in the transaction that changed them (after it did):
    `added` and `removed` rows (None: all of them replaced). A tally kept for the rows as they were
    is brought along, so that status's next run does not count a million rows for a janitor's
    batch (nothing is committed here: it is the writer's transaction)."""
    before = catalog.get_meta(db, GENERATION) if catalog.get_meta(db, MARKED) == _state(db) else ""
    now = os.urandom(8).hex()
    catalog.set_meta(db, GENERATION, now)
    kept = _load(catalog.get_meta(db, KEPT)) if before and added is not None else None
    if kept is not None and kept.generation == before:
        catalog.set_meta(db, KEPT, _dump(_moved(repo, db, kept._replace(generation=now), added or [], removed)))


def _moved(repo: Repo, db: sqlite3.Connection, t: Tally, added: Sequence[Row], removed: Sequence[Row]) -> Tally:
    """`t` with `added` and `removed` counted in (the rows as they are now in `db`)."""
    _indexed(db)
    size, sources = t.size, Counter(t.sources)
    for _, _, length, source in removed:
        size, sources[source] = size - length, sources[source] - 1
    for _, _, length, source in added:
        size, sources[source] = size + length, sources[source] + 1
    rows = t.rows + len(added) - len(removed)
    delta = Counter(b for _, b, _, _ in added)
    delta.subtract(b for _, b, _, _ in removed)
    blobs, packed = t.blobs, t.packed
    packs = partial.packs(repo) if t.packs is not None else None
    if packs is not None and t.packs is not None and set(t.packs) <= set(packs):
        packs = tuple(t.packs)  # (what packs added since hold, held() reads from their indexes)
    came, went = [], []
    for blob, d in delta.items():
        if d:
            now = db.execute("SELECT count(*) FROM archived WHERE blob = ?", (blob,)).fetchone()[0]
            if now and not now - d:
                came.append(blob)
            elif not now and now - d:
                went.append(blob)
    blobs += len(came) - len(went)
    held = partial.in_packs(repo, came + went, packs) if packs is not None and list(packs) == t.packs else None
    if held is None:
        packs = None  # (the packs changed, or cannot be read: status counts the blobs held again)
    else:
        packed += len(held.intersection(came)) - len(held.intersection(went))
    s = t.spellings
    names_out = {p[len(PREFIX):] for p, _, _, _ in removed}
    names_in = {p[len(PREFIX):] for p, _, _, _ in added}
    odd = {k: [n for n in group if n not in names_out] for k, group in s.odd.items()}
    for name in sorted(names_in):
        if not name.isascii():
            odd.setdefault(names.collision_key(name), []).append(name)
    odd = {k: sorted(set(group)) for k, group in odd.items() if group}
    mixed = sorted({*(n for n in s.mixed if n not in names_out), *(n for n in names_in if names.mixed_scripts(n))})
    keys = {names.collision_key(n) for n in names_in | names_out}
    twice = [g for g in s.twice if names.collision_key(g[0]) not in keys]
    plain = named(db, sorted(k for k in keys if k.isascii()))
    for key in keys:
        group = sorted({*plain.get(key, ()), *odd.get(key, ())})
        if len(group) > 1:
            twice.append(group)
    return t._replace(rows=rows, size=size, blobs=blobs, sources={k: v for k, v in sources.items() if v},
                      spellings=names.Spellings(mixed, sorted(twice), odd),
                      packs=None if packs is None else list(packs), packed=packed)


def _strs(value: object) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def _load(text: str) -> Tally | None:
    """What is kept, or None when it is not a tally as _dump writes it (derived state: counted again)."""
    try:
        d = json.loads(text)
        t = Tally(d["generation"], d["rows"], d["size"], d["blobs"], d["sources"],
                  names.Spellings(d["mixed"], d["twice"], d["odd"]), d["packs"], d["packed"])
    except (ValueError, KeyError, TypeError):
        return None
    s = t.spellings
    ints = (t.rows, t.size, t.blobs, t.packed, *(t.sources.values() if isinstance(t.sources, dict) else ("",)))
    good = (isinstance(t.generation, str) and all(type(v) is int for v in ints) and _strs(list(t.sources))
            and (t.packs is None or _strs(t.packs)) and _strs(s.mixed) and isinstance(s.twice, list)
            and all(_strs(g) and g for g in s.twice) and isinstance(s.odd, dict)
            and all(isinstance(k, str) and _strs(g) for k, g in s.odd.items()))
    return t if good else None


def _dump(t: Tally) -> str:
    s = t.spellings
    return json.dumps({**t._asdict(), "spellings": None, "mixed": s.mixed, "twice": s.twice, "odd": s.odd})


def _keep(db: sqlite3.Connection, t: Tally) -> None:
    """Keep `t` unless the rows changed since it was counted (it would describe rows gone), or
    another process holds the catalog's lock (kept by a later status, then)."""
    if not t.generation or generation(db) != t.generation:
        return
    try:
        catalog.set_meta(db, KEPT, _dump(t))
        db.commit()
    except sqlite3.OperationalError as e:
        if not catalog.busy(e):
            raise
        db.rollback()


def kept_rows(db: sqlite3.Connection) -> int | None:
    """How many archive rows there are, as kept with the rows as they are now (see tally()); None
    when nothing kept describes them (nothing is counted here, nor marked)."""
    if not is_marked(db):
        return None
    kept = _load(catalog.get_meta(db, KEPT))
    return kept.rows if kept is not None and kept.generation == catalog.get_meta(db, GENERATION) else None


def tally(db: sqlite3.Connection) -> Tally:
    """The archive rows counted (the caller brought them to HEAD: shadow.refresh_in), from what
    is kept when it was counted from these very rows."""
    state = generation(db)
    kept = _load(catalog.get_meta(db, KEPT))
    if kept is not None and kept.generation == state:
        return kept
    found, size, blobs, sources = [], 0, set(), Counter[str]()
    for name, blob, length, source in db.execute("SELECT substr(path, ?), blob, size, source FROM archived",
                                                 (len(PREFIX) + 1,)):
        found.append(name)
        blobs.add(blob)
        size += length
        sources[source] += 1
    t = Tally(state, len(found), size, len(blobs), dict(sources), names.spellings(found), None, 0)
    _keep(db, t)
    return t


def _indexed(db: sqlite3.Connection) -> None:
    """The indexes made if missing: kept at once outside a transaction, else with the writer's.
    Outside one, another process holding the lock leaves them to a later run (the lookups then
    read the rows; slower, the same answers)."""
    for statement in INDEXES:
        try:
            db.execute(statement)
        except sqlite3.OperationalError as e:
            if db.in_transaction or not catalog.busy(e):
                raise


def named(db: sqlite3.Connection, keys: list[str]) -> dict[str, list[str]]:
    """{collision key: the archived ASCII names with it} for those of `keys` (ASCII) any has."""
    _indexed(db)
    found: dict[str, list[str]] = {}
    for (path,) in catalog.among(db, "SELECT path FROM archived WHERE lower(path) IN ({})", [PREFIX + k for k in keys]):
        name = path[len(PREFIX):]
        if name.isascii():  # (a non-ASCII name's key is not SQLite's lower(): Spellings.odd has it)
            found.setdefault(name.lower(), []).append(name)
    return found


def on_disk(db: sqlite3.Connection, present: set[str]) -> tuple[int, int]:
    """(rows, bytes) of the archived memories named in `present` (checked out, so listed as files)."""
    sizes = [n for (n,) in catalog.among(db, "SELECT size FROM archived WHERE path IN ({})",
                                         [PREFIX + n for n in sorted(present)])]
    return len(sizes), sum(sizes)


def _archived(db: sqlite3.Connection, ids: list[str]) -> set[str]:
    """Those of `ids` that are an archived memory's blob."""
    _indexed(db)
    return {b for (b,) in catalog.among(db, "SELECT blob FROM archived WHERE blob IN ({})", ids)}


def held(repo: Repo, db: sqlite3.Connection, t: Tally) -> int:
    """How many of the archived memories' blobs this clone holds: those the packs `t` was counted
    from held, those packs added since hold (a recall's, a sync's), and the loose objects that are
    archived blobs no pack holds. Counted from the whole store when the packs are not those (a
    repack) or the store cannot be read from here, and kept for the packs there are."""
    packs = partial.packs(repo)
    if packs is not None and t.packs is not None and set(t.packs) <= set(packs):
        packed, one = t.packed, db.execute("SELECT blob FROM archived LIMIT 1").fetchone()
        for name in sorted(set(packs) - set(t.packs)):  # (a fetch added it: the others are as they were)
            ids = partial.pack_ids(repo, name, len(one[0]) // 2) if one else []
            mine = _archived(db, ids) if ids is not None else set()
            before = partial.in_packs(repo, sorted(mine), t.packs) if ids is not None else None
            if before is None:
                break
            packed += len(mine - before)
        else:
            loose = partial.loose(repo)
            mine = _archived(db, loose) if loose is not None else set()
            in_packs = partial.in_packs(repo, sorted(mine)) if loose is not None else None
            if in_packs is not None:
                if packs != tuple(t.packs):
                    _keep(db, t._replace(packs=list(packs), packed=packed))
                return packed + len(mine - in_packs)
    blobs = list({b for (b,) in db.execute("SELECT blob FROM archived")})
    loose = partial.loose(repo)  # (listed before and after the count: one that changed between is not kept)
    count = partial.held_among(repo, blobs)
    if packs is None or loose is None or partial.packs(repo) != packs or partial.loose(repo) != loose:
        return count
    mine = set(loose).intersection(blobs)
    in_packs = partial.in_packs(repo, sorted(mine))
    if in_packs is not None:
        _keep(db, t._replace(packs=list(packs), packed=count - len(mine - in_packs)))
    return count
