"""The shadow index: what is in archive/, searchable without its content.

One row per memory under archive/ at HEAD (path, blob id, the commit that archived it,
title, type, tags, size, preview) in the catalog's `archived` table, and its terms in the
catalog's one full-text table beside the live memories', so that search ranks every tier
on one scale. It is built from history alone: each archived blob's shadow record (see
records.py) gives every term with its count, so an archived memory is indexed exactly as
it was live, on any clone, without its content. Where no record is found, an older
archive commit's `Strata-Shadow` trailer (32 keywords and a preview) is used, and failing
that the memory's name alone: the same on every clone. `git strata reindex` upgrades both
to full records.

The index records the commit and the set of shadow refs it reflects. Behind HEAD, it is
brought forward from `git diff-tree` of archive/; new records (a sync, a reindex
elsewhere) upgrade the rows that lacked one; anything else (first use, history
rewritten) rebuilds the archive rows in one transaction. It is derived state.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sqlite3
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import NamedTuple

from strata_git.core import contract, entries, heap, names, textindex
from strata_git.gitio import git
from strata_git.gitio.git import Repo
from strata_git.store import catalog, records, tally, toplists

VERSION = "8"  # of how rows are made from records: another value rebuilds them
MAX_WARNINGS = 20


class Row(NamedTuple):
    path: str
    blob: str
    commit: str
    title: str
    type: str
    tags: tuple[str, ...]
    size: int
    preview: str
    source: str = "name"  # "record" (full), "trailer" (an old archive commit's keywords) or "name"
    project: str = ""  # the project its record names (core/projects.py)

    @property
    def name(self) -> str:
        return self.path.partition("/")[2][: -len(names.SUFFIX)]


# -- where rows come from ------------------------------------------------------------------

CHUNK = 20_000  # archived memories made into rows at a time (about 40 MB of records and tokens)

def _archived(repo: Repo, commit: str) -> dict[str, str]:
    """{path: blob id} of every memory under archive/ at `commit` (no blob is read)."""
    return {path: e.oid for path, e in repo.ls_tree(commit, "archive", full_tree=True).items()
            if e.type == "blob" and path.endswith(names.SUFFIX) and names.split_path(path)}


def _legacy(repo: Repo, revs: list[str], blobs: set[str], walk: bool = True) -> dict[str, tuple[str, dict]]:
    """{blob id: (commit, trailer record)} from archive commits that carry `Strata-Shadow`
    trailers (before records moved beside history), the newest commit winning."""
    if not blobs or not revs:
        return {}
    field = f"%(trailers:key={contract.LEGACY_SHADOW},valueonly,unfold,separator=%x1e)"
    out = repo.git("log", *(() if walk else ("--no-walk=unsorted",)), "--no-renames",
                   contract.grep(contract.LEGACY_SHADOW), f"--format=%x01%H%x00{field}", *revs, "--")
    found: dict[str, tuple[str, dict]] = {}
    for item in out.decode("utf-8", "replace").split("\x01")[1:]:
        commit, _, values = item.partition("\0")
        for value in values.strip().split("\x1e"):
            if not value.startswith('{"b":"') or value[6:46] not in blobs or value[6:46] in found:
                continue
            try:
                rec = json.loads(value)
            except ValueError:
                continue
            if isinstance(rec, dict):
                found[value[6:46]] = (commit, rec)
    return found


def _text(rec: dict, key: str, limit: int) -> str:
    value = rec.get(key)
    return entries.clean(value)[:limit] if isinstance(value, str) else ""


def _from_legacy(path: str, blob: str, commit: str, rec: dict) -> tuple[Row, Counter[str]]:
    """A row from an old trailer: its keywords and preview are all there is of the body."""
    tags = tuple(entries.clean(t) for t in rec.get("g", ()) if isinstance(t, str))[:records.MAX_TAGS] \
        if isinstance(rec.get("g"), list) else ()
    size = rec["s"] if type(rec.get("s")) is int and 0 <= rec["s"] < 1 << 40 else 0
    preview = _text(rec, "p", 400)
    body = Counter(textindex.tokens(_text(rec, "k", 100_000) + " " + preview))
    return Row(path, blob, commit, _text(rec, "t", 400), _text(rec, "y", 64) or "note", tags, size, preview,
               "trailer"), body


def _from_record(path: str, rec: records.Record, commit: str) -> tuple[Row, Mapping[str, int]]:
    return Row(path, rec.blob, commit, rec.title, rec.type, rec.tags, rec.size, rec.preview, "record", rec.project), \
        rec.counts  # (read, never changed: a million archived rows are made without a copy each)


def _bound(repo: Repo, archived: dict[str, str], commits: dict[str, str]) -> dict[str, str]:
    """{blob: record id} as the commit that archived each path names it (Strata-Record trailers):
    a janitor commit names the record of every blob it archives; older ones name none."""
    wanted = sorted({c for c in commits.values() if c})
    if not wanted:
        return {}
    field = contract.log_field(contract.RECORD, "%x1e")
    out = repo.git("log", "--no-walk=unsorted", "--stdin", "--no-renames", f"--format=%x01%H%x00{field}",
                   input="\n".join(wanted).encode())
    named: dict[str, dict[str, str]] = {}
    for item in out.decode("utf-8", "replace").split("\x01")[1:]:
        commit, _, values = item.partition("\0")
        pairs = (value.split() for value in values.split("\x1e"))
        named[commit] = {p[0]: p[1] for p in pairs
                         if len(p) == 2 and records.OID.fullmatch(p[0]) and records.OID.fullmatch(p[1])}
    return {blob: named[commits[path]][blob] for path, blob in archived.items()
            if blob in named.get(commits.get(path, ""), {})}


def _choice(repo: Repo, archived: dict[str, str], commits: dict[str, str]) -> records.Choice:
    from strata_git.core import config
    from strata_git.errors import BadConfig

    try:
        limit = config.load(repo.root, repo.state_dir()).max_memory_bytes
    except BadConfig:
        limit = config.Config().max_memory_bytes
    return records.Choice(bound=_bound(repo, archived, commits), limit=limit)


Columns = tuple[str, str, str]  # (title, tags, body) as the full-text index holds a memory (textindex.document)


def _made(repo: Repo, archived: dict[str, str], head: str, refs: dict[str, str],
          commits: dict[str, str] | None = None, warnings: list[str] | None = None
          ) -> Iterator[list[tuple[Row, Columns]]]:
    """Rows with their full-text columns for {path: blob}, from records, else old trailers, else
    the name, in parts of at most CHUNK: a million archived memories' records never sit in memory
    at once (the notes are listed once; each part reads its own). A large build reads the records
    of its parts and turns them into rows on other processes while the caller writes the rows
    made before (see _workers). Warnings go to `warnings`."""
    commits = commits or {}
    warnings = [] if warnings is None else warnings
    heads = sorted(set(refs.values()))
    choice = _choice(repo, archived, commits)
    items = sorted(archived.items())
    if len(archived) * len(heads) <= BY_PATH or not heads:  # few: each looked up by path in each ref
        for start in range(0, len(items), CHUNK):
            part = items[start:start + CHUNK]
            found, warned = records.find(repo, sorted({blob for _, blob in part}), heads, choice)
            warnings += warned
            yield _finish(repo, head, part, [_row(path, found.get(blob), commits) for path, blob in part], commits)
        return
    notes, own = records.candidates(repo, sorted(set(archived.values())), heads)

    def task(part: list[tuple[str, str]]) -> tuple:
        blobs = sorted({blob for _, blob in part})
        wanted = {b: notes[b] for b in blobs if b in notes}
        mine = frozenset(n for ns in wanted.values() for n in ns if n in own)
        bound = {b: choice.bound[b] for b in blobs if b in choice.bound}
        return (repo, part, wanted, choice._replace(bound=bound, own=mine),
                {path: commits[path] for path, _ in part if path in commits})

    workers = _workers(len(items))
    size = PART if workers else CHUNK
    parts = (items[start:start + size] for start in range(0, len(items), size))
    made = _on_processes(parts, task, workers) if workers else ((part, _part_rows(*task(part))) for part in parts)
    for part, (rows, warned) in made:
        warnings += warned
        yield _finish(repo, head, part, rows, commits)


def _on_processes(parts: Iterator[list[tuple[str, str]]], task: Callable[[list[tuple[str, str]]], tuple],
                  workers: int) -> Iterator[tuple[list[tuple[str, str]], tuple]]:
    """(part, _part_rows(*task(part))) for each of `parts` in order, made by `workers` forked
    processes while the caller takes the part before."""
    import gc
    import multiprocessing
    from collections import deque

    gc.freeze()  # the forked processes then never copy this one's objects by collecting them
    try:
        with multiprocessing.get_context("fork").Pool(workers, initializer=git.forked) as pool:
            pending: deque = deque()
            for part in parts:
                pending.append((part, pool.apply_async(_part_rows, task(part))))
                while len(pending) > workers:
                    done, result = pending.popleft()
                    yield done, result.get()
            while pending:
                done, result = pending.popleft()
                yield done, result.get()
    finally:
        gc.unfreeze()


BY_PATH = 4000  # (blob, ref) pairs up to which records are looked up by path rather than listed
PART = 5_000  # archived memories a process of a large build makes into rows at a time
PARALLEL_FROM = 40_000  # archived memories from which a build makes its rows on several processes


def _workers(count: int) -> int:
    """How many processes make the rows of `count` archived memories: none (this one does) unless
    the build is large and this process can fork (heap.forkable)."""
    return min(heap.forkable(), 4) if count >= PARALLEL_FROM else 0


def _part_rows(repo: Repo, part: list[tuple[str, str]], wanted: dict[str, list[str]], choice: records.Choice,
               commits: dict[str, str]) -> tuple[list[tuple[Row, Columns] | None], list[str]]:
    """([a row and its columns for each of `part` with a record, else None], warnings), the
    records of `wanted` ({blob: candidate note ids}) read here: another process can make them
    (it reads the records itself, so only their ids are handed to it and rows come back)."""
    found, warned = records.load(repo, wanted, choice)
    return [_row(path, found.get(blob), commits) for path, blob in part], warned


def _row(path: str, rec: records.Record | None, commits: dict[str, str]) -> tuple[Row, Columns] | None:
    if rec is None:
        return None
    row, body = _from_record(path, rec, commits.get(path, ""))
    return row, _columns(row, body)


def _finish(repo: Repo, head: str, part: list[tuple[str, str]], rows: list[tuple[Row, Columns] | None],
            commits: dict[str, str]) -> list[tuple[Row, Columns]]:
    """`rows` with those of `part` that had no record made from an old trailer, else from the name."""
    lacking = {blob for (_, blob), made in zip(part, rows, strict=True) if made is None}
    legacy = _legacy(repo, [head], lacking) if head and lacking else {}
    out = []
    for (path, blob), made in zip(part, rows, strict=True):
        if made is None:
            commit = commits.get(path, "")
            row, body = _from_legacy(path, blob, commit or legacy[blob][0], legacy[blob][1]) if blob in legacy \
                else (Row(path, blob, commit, "", "note", (), 0, "", "name"), Counter())
            made = row, _columns(row, body)
        out.append(made)
    return out


# -- writing rows ----------------------------------------------------------------------------

class Stale(Exception):
    """An archive row's indexed values can no longer be recomputed exactly: rebuild them all."""


def _columns(r: Row, body: Mapping[str, int]) -> tuple[str, str, str]:
    return textindex.document(r.title, r.tags, r.type, r.name, body)


def _digest(cols: tuple[str, str, str]) -> str:
    return hashlib.blake2b("\0".join(cols).encode("utf-8"), digest_size=8).hexdigest()


def _insert(repo: Repo, db: sqlite3.Connection, made: list[tuple[Row, Columns]]) -> None:
    cols = [c for _, c in made]
    first = catalog.allocate(db, len(made))
    values = [(first + i, r.path, r.blob, r.commit, r.title, r.type, catalog.TAG_SEP.join(r.tags),
               r.size, r.preview, r.source, _digest(c), r.project)
              for i, ((r, _), c) in enumerate(zip(made, cols, strict=True))]
    replaced = _tallied(db, [v[1] for v in values])
    db.executemany("INSERT OR REPLACE INTO archived VALUES (?,?,?,?,?,?,?,?,?,?,?,?)", values)
    tally.changed(repo, db, [(v[1], v[2], v[7], v[9]) for v in values], replaced)
    docs = [(v[0], *c) for v, c in zip(values, cols, strict=True)]
    db.executemany("INSERT INTO docs (rowid, title, tags, body) VALUES (?,?,?,?)", docs)
    toplists.added(db, docs)


def _tallied(db: sqlite3.Connection, paths: list[str]) -> list[tuple[str, str, int, str]]:
    """(path, blob, size, source) of the rows at `paths`: what an insert there replaces."""
    return list(catalog.among(db, "SELECT path, blob, size, source FROM archived WHERE path IN ({})", paths))


def _delete(repo: Repo, db: sqlite3.Connection, paths: list[str]) -> None:
    """Remove archive rows, giving FTS5 back exactly what each indexed (recomputed from its record,
    trailer or name, and checked against the digest kept at insert). Raises Stale if one cannot be."""
    found = [db.execute(f"SELECT {_COLUMNS}, digest, id FROM archived WHERE path = ?", (p,)).fetchone() for p in paths]
    rows = {r[0]: (_as_row(r[:10]), r[10], r[11]) for r in found if r}
    if not rows:
        return
    chosen = {p: r.blob for p, (r, _, _) in rows.items() if r.source == "record"}
    full, _ = records.find(repo, sorted(set(chosen.values())), None,
                           _choice(repo, chosen, {p: rows[p][0].commit for p in chosen}))
    legacy = _legacy(repo, sorted({r.commit for r, _, _ in rows.values() if r.source == "trailer"}),
                     {r.blob for r, _, _ in rows.values() if r.source == "trailer"}, walk=False)
    for path, (row, digest, row_id) in sorted(rows.items(), key=lambda item: item[1][2]):  # (rowid order: see catalog)
        if row.source == "record" and row.blob in full:
            body = _from_record(path, full[row.blob], row.commit)[1]
        elif row.source == "trailer" and row.blob in legacy:
            body = _from_legacy(path, row.blob, *legacy[row.blob])[1]
        elif row.source == "name":
            body = Counter()
        else:
            raise Stale(path)
        cols = _columns(row, body)
        if _digest(cols) != digest:
            raise Stale(path)
        db.execute("INSERT INTO docs (docs, rowid, title, tags, body) VALUES ('delete', ?, ?, ?, ?)",
                   (row_id, *cols))
        toplists.removed(db, [(row_id, *cols)])
        db.execute("DELETE FROM archived WHERE path = ?", (path,))
    tally.changed(repo, db, [], [(p, r.blob, r.size, r.source) for p, (r, _, _) in rows.items()])


def _refs_state(refs: dict[str, str]) -> str:
    return hashlib.sha1(json.dumps(sorted(refs.items())).encode()).hexdigest()


def _set_state(db: sqlite3.Connection, head: str, refs: dict[str, str], warnings: list[str] | None) -> None:
    anew = not tally.is_marked(db)  # (rows an older version wrote: what is kept for them is not theirs)
    catalog.set_meta(db, "shadow_commit", head)
    catalog.set_meta(db, "shadow_refs", _refs_state(refs))
    catalog.set_meta(db, "shadow_version", VERSION)
    tally.marked(db, anew)
    if warnings is not None:
        catalog.set_meta(db, "shadow_warnings", json.dumps(warnings[:MAX_WARNINGS]))


# A Strata-Move trailer's destination and name (compact JSON, as contract.trailer_value writes it; a
# value these do not read vouches for nothing, and the commit's change is read instead).
_TO = re.compile(r'"to":\s*"(archive(?:/[^"\\]*)?)"')
_NAME = re.compile(r'"name":\s*"([^"\\]+)"')


def _archived_at(move: str) -> str | None:
    """Where a Strata-Move trailer's value puts its memory in archive/: `"to"` names the tier (and
    `"name"` the memory) or, as older versions wrote it, the path; None for any other move."""
    to = _TO.search(move)
    if not to:
        return None
    if to.group(1) != "archive":
        return to.group(1)
    name = _NAME.search(move)
    return f"archive/{name.group(1)}{names.SUFFIX}" if name else None


_MOVE_LINE = f"{contract.MOVE}: "  # a line of a commit message that names a move
_RECORD_LINE = f"{contract.RECORD}: "  # and one that names the record of a blob it archives
# Paths from which _commits takes the janitor's trailers instead of reading every change: below it,
# one `git log` costs less than three and libgit2's import (~60 ms), as when a cycle archives a few.
FROM_TRAILERS = 2000


def _commits(repo: Repo, revs: str, archived: dict[str, str]) -> dict[str, str]:
    """{path: the commit that last brought it under archive/} for the paths of `archived` ({path:
    its blob at the tip}): the newest commit of `git log revs -- archive` whose change adds or
    modifies the path.

    A janitor commit's change is not read: it rewrites folders of the archive, and git would read
    and compare each of them again at each such commit (148 s of a clone at a million). Its
    `Strata-Move:` and `Strata-Record:` lines (all of them, trailers or not: squashed cycles keep
    theirs in the body) say what it archived instead, and vouch for a path where they agree with
    each other and with the commit: the newest Strata-Move that names the path, a Strata-Record of
    the same commit for the blob the path holds at the tip, and the path's folder changed by the
    commit (looked up by name; the folder's own tree, however large, is not read). Every commit
    without such lines has its change read as before, so an edit by hand still counts, and a
    commit so found must hold the blob at the tip. Anything else is found by reading every change.

    Not the commit reading every change names: a janitor commit replayed by a rebase onto one that
    archived the same memory (it names the memory and its blob, and changed its folder: the row
    names it, the other one archived the same blob), and a commit with `Strata-Move:` lines that
    also changes an archived file no such line ever named (the row names the commit that changed
    it before)."""
    if len(archived) < FROM_TRAILERS:
        return _commits_read(repo, revs, list(archived)) if archived else {}
    order: dict[str, int] = {}  # commit: its place in the walk, newest first
    walk: list[str] = []  # and the other way round
    found: dict[str, int] = {}  # path: the place of the commit that brought it
    doubtful: dict[str, int] = {}  # path: where its newest Strata-Move names another version of it
    # Each commit's id, then its message: split at NUL, which git keeps out of messages (any other
    # byte, \x01 too, can be in one, and would let a message pass for another commit; a message
    # with NUL, written with plumbing, shows as a bad id, and then every change is read).
    for item in repo.items("log", "--no-merges", "--format=%x00%H%n%B", revs, "--", "archive", sep=b"\0"):
        commit, _, message = item.decode("utf-8", "surrogateescape").partition("\n")
        if not records.OID.fullmatch(commit) or commit in order:  # (a message with NUL, written by hand)
            return _commits_read(repo, revs, list(archived))
        at = order[commit] = len(walk)
        walk.append(commit)
        if _MOVE_LINE not in message:
            continue
        lines = message.split("\n")  # every line git --grep finds, in the trailers or not
        blobs = {line[len(_RECORD_LINE):].split(" ", 1)[0] for line in lines if line.startswith(_RECORD_LINE)}
        for line in lines:
            path = _archived_at(line) if line.startswith(_MOVE_LINE) else None
            if path in archived and path not in found and path not in doubtful:
                if archived[path] in blobs:
                    found[path] = at
                else:
                    doubtful[path] = at
    folders = sorted({(walk[at], os.path.dirname(p)) for p, at in found.items()})
    unchanged = {pair for pair, (now, before) in zip(folders, repo.entries_at(folders), strict=True) if now == before}
    for path in [p for p, at in found.items() if (walk[at], os.path.dirname(p)) in unchanged]:
        doubtful[path] = found.pop(path)  # its folder is as the commit's parent had it: no move of it there
    changes = repo.items("log", "--no-merges", "--no-renames", "--diff-filter=AM", "--name-only", "-z",
                         "--format=%x01%H", "--invert-grep", f"--grep=^{_MOVE_LINE}", revs, "--", "archive")
    read: set[str] = set()  # paths whose commit is one whose change was read
    for item in changes:
        commit, _, files = item.decode("utf-8", "surrogateescape").partition("\0")
        at = order.get(commit, -1)
        for path in files.strip("\n").split("\0"):
            if path in archived and 0 <= at < found.get(path, len(walk)):
                found[path] = at
                read.add(path)
    for path, at in doubtful.items():
        if at < found.get(path, len(walk)):
            found.pop(path, None)  # its newest archiving brought another version, and nothing read since
    checked = sorted((found[p], p) for p in read if p in found)
    for (_, path), (now, _) in zip(checked, repo.entries_at([(walk[at], p) for at, p in checked]), strict=True):
        if now != archived[path]:
            del found[path]  # changed again since, by a commit whose change was not read
    unsure = [p for p in archived if p not in found]
    commits = {p: walk[at] for p, at in found.items()}
    del found
    commits.update(_commits_read(repo, revs, unsure) if unsure else {})
    return commits


def _commits_read(repo: Repo, revs: str, paths: list[str], exact: bool = False) -> dict[str, str]:
    """_commits for `paths` from every commit's change, janitor commits' too. `exact`: git looks at
    those paths alone, not at every change under archive/ (a few paths over a long history: git
    then never lists a janitor commit's thousands of moves)."""
    wanted, found = set(paths), {}
    changes = repo.items("log", "--no-renames", "--diff-filter=AM", "--name-only", "-z", "--format=%x01%H", revs,
                         "--", *(sorted(wanted) if exact else ["archive"]))
    for item in changes:  # (read as git walks: once every path is found, git is stopped)
        commit, _, files = item.decode("utf-8", "surrogateescape").partition("\0")
        for p in files.split("\0"):
            p = p.strip("\n")
            if p in wanted and p not in found:
                found[p] = commit
        if len(found) == len(wanted):
            changes.close()
            break
    return found


def from_history(repo: Repo, head: str) -> tuple[dict[str, str], dict[str, str]]:
    """What a build of `head` reads from history: ({path: blob} under archive/, {path: the commit
    that archived it}). A caller waiting on something else (a clone, on its records) reads it
    meanwhile and hands it to build()."""
    with heap.held_off():
        archived = _archived(repo, head)
        return archived, _commits(repo, head, archived)


def build_in(repo: Repo, db: sqlite3.Connection, head: str, refs: dict[str, str] | None = None,
             progress: Callable[[int, int], None] | None = None,
             known: tuple[dict[str, str], dict[str, str]] | None = None) -> int:
    """Replace every archive row with rows for `head` (inside the caller's transaction). The
    full-text table is emptied and the live rows put back from what live_docs keeps: cheaper
    than recomputing each archived row's values to delete it, and it leaves no deleted data.
    `progress(done, total)` is told after each part; `known` is from_history(repo, head)."""
    with heap.held_off():
        return _build_in(repo, db, head, refs, progress, known)


def _build_in(repo: Repo, db: sqlite3.Connection, head: str, refs: dict[str, str] | None,
              progress: Callable[[int, int], None] | None, known: tuple[dict[str, str], dict[str, str]] | None) -> int:
    refs = records.refs(repo) if refs is None else refs
    archived = (known[0] if known else _archived(repo, head)) if head else {}
    catalog.affordable(len(archived), "the shadow index")
    warnings: list[str] = []
    db.execute("INSERT INTO docs (docs) VALUES ('delete-all')")
    toplists.clear(db)
    db.execute("DELETE FROM archived")
    tally.changed(repo, db, None)
    catalog.reinsert_live(db)
    commits = (known[1] if known else _commits(repo, head, archived)) if head else {}
    done = 0
    with catalog.bulk(db):
        for made in _made(repo, archived, head, refs, commits, warnings):
            _insert(repo, db, made)
            done += len(made)
            if progress:
                progress(done, len(archived))
    catalog.compact(db)
    _set_state(db, head, refs, warnings)
    return len(archived)


def build(repo: Repo, commit: str | None, progress: Callable[[int, int], None] | None = None,
          known: tuple[dict[str, str], dict[str, str]] | None = None) -> int:
    """Rebuild the archive rows for `commit`; how many there are (see build_in)."""
    with catalog.connect(repo) as db:
        db.execute("BEGIN IMMEDIATE")
        return build_in(repo, db, commit or "", progress=progress, known=known)


EXACT_UP_TO = 500  # paths coming back by a step back in history that git is asked about by name


def _forward(repo: Repo, db: sqlite3.Connection, old: str, new: str, refs: dict[str, str],
             moved: tuple[str, str, list[str]] | None = None) -> bool:
    """Bring the rows from `old` to `new` where one is an ancestor of the other (a commit, a pull,
    or a reset or checkout back in history); False when only a full build can (a rebase).
    `moved` is (since, to, paths) from the command that moved HEAD from `since` to `to`, changing
    `paths` alone: where the rows were at `since` and HEAD is still `to`, git is asked neither."""
    if not old:
        return False
    if moved is not None and moved[0] == old and moved[1] == new:
        revs = f"{old}..{new}"
        changes = repo.diff_tree(old, new, "archive") if any(p.startswith("archive/") for p in moved[2]) else []
    elif repo.ok("merge-base", "--is-ancestor", old, new):
        revs = f"{old}..{new}"
        changes = repo.diff_tree(old, new, "archive")
    elif repo.ok("merge-base", "--is-ancestor", new, old):
        revs = new  # back: a path that returns was brought by a commit `new` reaches, however old
        changes = repo.diff_tree(old, new, "archive")
    else:
        return False
    gone, added = [], {}
    for c in changes:
        if not c.path.endswith(names.SUFFIX) or not names.split_path(c.path):
            continue
        gone.append(c.path)
        if c.status != "D" and c.new_mode != "160000":
            added[c.path] = c.new_oid
    catalog.affordable(len(added), "the shadow index")
    warnings: list[str] = []
    _delete(repo, db, gone)
    if not added:
        commits = {}
    elif revs == new and len(added) <= EXACT_UP_TO:  # back: the whole history, for a few paths
        commits = _commits_read(repo, revs, list(added), exact=True)
    else:
        commits = _commits(repo, revs, added)
    for made in _made(repo, added, new, refs, commits, warnings):
        _insert(repo, db, made)
    if len(gone) >= catalog.COMPACT_AFTER:
        catalog.compact(db)
    _set_state(db, new, refs, warnings or None)
    return True


def _upgrade(repo: Repo, db: sqlite3.Connection, head: str, refs: dict[str, str]) -> None:
    """New records arrived (a sync, a reindex): rebuild the rows that lacked one, and list the
    records that disagree with the one chosen (a blob with more than one candidate)."""
    rows = db.execute("SELECT path, blob, commit_id, source FROM archived").fetchall()
    lacking = {p: b for p, b, _, source in rows if source != "record"}
    commits = {p: c for p, _, c, _ in rows}
    catalog.affordable(len(lacking), "the shadow index")
    warnings: list[str] = []
    for made in _made(repo, lacking, head, refs, {p: commits[p] for p in lacking}, warnings) if lacking else ():
        better = [(r, body) for r, body in made if r.source == "record"]
        _delete(repo, db, [r.path for r, _ in better])
        _insert(repo, db, better)
    several = {b for b, notes in records.listing(repo, sorted(set(refs.values()))).items() if len(notes) > 1}
    disputed = {p: b for p, b, _, source in rows if b in several and p not in lacking}
    if disputed:
        warnings += records.find(repo, sorted(set(disputed.values())), sorted(set(refs.values())),
                                 _choice(repo, disputed, {p: commits[p] for p in disputed}))[1]
    _set_state(db, head, refs, warnings)


def refresh(repo: Repo, moved: tuple[str, str, list[str]] | None = None) -> str:
    """Bring the archive rows to HEAD and to the records this clone knows: 'fresh', 'updated' or
    'rebuilt'. `moved`: see _forward."""
    with catalog.connect(repo) as db:
        return refresh_in(repo, db, moved)


def refresh_in(repo: Repo, db: sqlite3.Connection, moved: tuple[str, str, list[str]] | None = None) -> str:
    head = repo.head_quick() or ""
    refs = records.refs(repo)
    if (catalog.get_meta(db, "shadow_commit"), catalog.get_meta(db, "shadow_refs"),
            catalog.get_meta(db, "shadow_version")) == (head, _refs_state(refs), VERSION):
        return "fresh"
    if not db.in_transaction:
        db.execute("BEGIN IMMEDIATE")  # one process brings it forward; the others then find it fresh
    at = catalog.get_meta(db, "shadow_commit")
    try:
        if catalog.get_meta(db, "shadow_version") != VERSION or (
                at != head and not _forward(repo, db, at, head, refs, moved)):
            build_in(repo, db, head, refs)
            return "rebuilt"
        if catalog.get_meta(db, "shadow_refs") != _refs_state(refs):
            _upgrade(repo, db, head, refs)
    except Stale:  # (a record that changed or vanished under a row): the rows so far are replaced
        build_in(repo, db, head, refs)
        return "rebuilt"
    return "updated"


@contextmanager
def connect(repo: Repo) -> Iterator[sqlite3.Connection]:
    """The catalog with the archive rows fresh for HEAD."""
    with catalog.connect(repo) as db:
        refresh_in(repo, db)
        yield db


def rows(db: sqlite3.Connection) -> list[tuple]:
    """Every archive row in path order, then every indexed term with its counts (what two equal
    indexes share: live memories' terms are in the same table, so compare clones alike)."""
    entries = db.execute(f"SELECT {_COLUMNS} FROM archived ORDER BY path").fetchall()
    return entries + db.execute("SELECT term, doc, cnt FROM docs_vocab ORDER BY term").fetchall()


def reflects(repo: Repo) -> str:
    """The commit the archive rows were built for ("" if they cannot be read)."""
    try:
        with catalog.connect(repo) as db:
            return reflects_in(db)
    except sqlite3.DatabaseError:
        return ""


def reflects_in(db: sqlite3.Connection) -> str:
    """reflects() through a catalog connection the caller holds."""
    return catalog.get_meta(db, "shadow_commit") if catalog.get_meta(db, "shadow_version") == VERSION else ""


def warnings(repo: Repo) -> list[str]:
    """Records the last build or update skipped, one line each (shown by `status`)."""
    with catalog.connect(repo) as db:
        try:
            found = json.loads(catalog.get_meta(db, "shadow_warnings") or "[]")
        except ValueError:
            return []
    return [w for w in found if isinstance(w, str)] if isinstance(found, list) else []


def _tags(text: str) -> tuple[str, ...]:
    return tuple(text.split(catalog.TAG_SEP)) if text else ()


def _as_row(r: tuple) -> Row:
    r = tuple(r)
    return Row(r[0], r[1], r[2], r[3], r[4], _tags(r[5]), r[6], r[7], r[8], r[9])


_COLUMNS = "path, blob, commit_id, title, type, tags, size, preview, source, project"


def all_rows(repo: Repo, db: sqlite3.Connection | None = None) -> list[Row]:
    """Every archived memory the index holds, in path order (through `db` when the caller has the
    catalog open: a second connection would wait on the first one's transaction)."""
    if db is not None:
        refresh_in(repo, db)
        return [_as_row(r) for r in db.execute(f"SELECT {_COLUMNS} FROM archived ORDER BY path")]
    with catalog.connect(repo) as own:
        return all_rows(repo, own)


def listing(repo: Repo, db: sqlite3.Connection) -> list[entries.Entry]:
    """Every archived memory the index holds as a listing's Entry, in path order, the index brought
    to HEAD first: what index.md lists of a pruned archive (straight from the rows, without a Row
    for each: a million of them at a million archived)."""
    refresh_in(repo, db)
    return [entries.Entry("archive", path.partition("/")[2], size, title, kind, _tags(tags), project=project)
            for path, size, title, kind, tags, project
            in db.execute("SELECT path, size, title, type, tags, project FROM archived ORDER BY path")]


def in_folder(db: sqlite3.Connection, folder: str) -> list[entries.Entry]:
    """The archived memories directly in `folder` ("" for archive/ itself, not its subfolders) as
    listing() gives them, from the rows as they are (the caller brings them to HEAD): what one
    folder's line in index.md counts, without a row for every other archived memory."""
    prefix = f"archive/{folder}/" if folder else "archive/"
    return [entries.Entry("archive", path.partition("/")[2], size, title, kind, _tags(tags), project=project)
            for path, size, title, kind, tags, project in db.execute(
                "SELECT path, size, title, type, tags, project FROM archived WHERE path >= ? AND path < ? "
                "AND instr(substr(path, ?), '/') = 0 ORDER BY path", (prefix, prefix[:-1] + "0", len(prefix) + 1))]


def lookup(repo: Repo, paths: list[str]) -> dict[str, Row]:
    """{path: Row} for archived paths the index holds."""
    with connect(repo) as db:
        return lookup_in(db, paths)


def lookup_in(db: sqlite3.Connection, paths: list[str]) -> dict[str, Row]:
    """lookup() through a catalog connection the caller holds (and keeps current)."""
    found = {}
    for p in paths:
        r = db.execute(f"SELECT {_COLUMNS} FROM archived WHERE path = ?", (p,)).fetchone()
        if r:
            found[p] = _as_row(r)
    return found


def path(repo: Repo) -> str:
    """The file the shadow index lives in (the catalog's)."""
    return os.path.join(repo.state_dir(), contract.CATALOG)
