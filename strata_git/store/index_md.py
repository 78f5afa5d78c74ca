"""index.md, the router an agent reads first.

It is generated from the working tree and commit history, ignored by git (so two
machines can never conflict over it) and rewritten by every git-strata command
that changes memory and by the hooks: pre-commit writes it for the commit being
made (the post-commit shim then has nothing left to do), post-checkout,
post-merge and post-rewrite after git moved HEAD. It is written only when its
content changes.
"""

from __future__ import annotations

import os
from collections import defaultdict
from collections.abc import Callable
from typing import TYPE_CHECKING, Literal, overload

from strata_git.core import contract, names
from strata_git.core.entries import Entry, Scan, clean, shown
from strata_git.gitio.git import Repo

if TYPE_CHECKING:
    import sqlite3

    from strata_git.store.history import Head

# Under the state folder: "<tree> <parent>" of the commit the pre-commit hook wrote index.md for.


class _Days(dict[int | None, str | None]):
    """Unix time -> YYYY-MM-DD (UTC), memoized: 5,000 entries share a few hundred days (None: a
    time no date shows)."""

    def __missing__(self, stamp: int | None) -> str | None:
        day = "uncommitted" if stamp is None else contract.day(stamp)
        self[stamp] = day
        return day


def _shown(folder: str) -> str:
    return f"{shown(folder)}/" if folder else "(top level)"


_Times = Callable[[list[Entry]], dict[str, int]]  # entries -> their last changes at HEAD


def _line(entry: Entry, day: str | None) -> str:
    name = shown(names.display(entry.name))  # a line break in a name must not forge a line here
    if entry.problem:
        return f"- `{name}` · INVALID: {entry.problem} · {day}"
    tags = " · " + " ".join(f"#{t}" for t in entry.tags) if entry.tags else ""
    return f"- `{name}` · **{entry.title or name}** · {entry.type}{tags} · {day}"


def section(tier: str, folder: str, members: list[Entry], times: dict[str, int], days: _Days,
            root: str | None = None) -> str:
    """An active folder's heading and one line per memory; a cooled or archive folder's summary line,
    and under it one line per memory that has a summary (made when it cooled)."""
    if tier == "active":
        return "\n".join([f"### {_shown(folder)}", *(_line(e, days[times.get(e.name)]) for e in members)])
    stamps = [times[e.name] for e in members if e.name in times]
    latest = f", last changed {days[max(stamps)]}" if stamps else ""
    line = f"- {_shown(folder)}: {len(members)} memories, {sum(e.size for e in members)} bytes{latest}"
    return "\n".join([line, *_summaries(root, members, times)])


SUMMARY_LINES = 10  # per folder: the most recently changed memories that have a summary


def _summaries(root: str | None, members: list[Entry], times: dict[str, int]) -> list[str]:
    from strata_git.store import summary

    if root is None or not os.path.isdir(os.path.join(root, contract.SUMMARIES)):
        return []
    lines: list[str] = []
    more = 0
    for e in sorted(members, key=lambda e: (-times.get(e.name, 0), e.name)):
        if not os.path.isfile(os.path.join(root, summary.path(e.name))):
            continue
        if len(lines) == SUMMARY_LINES:
            more += 1
            continue
        lines.append(f"  - `{names.display(e.name)}`: {clean(summary.gist(summary.read(root, e.name) or ''))[:160]}")
    return lines + ([f"  - and {more} more summaries: `git strata read NAME --summary`"] if more else [])


def assemble(sections: list[tuple[str, str, str]], counts: dict[str, int]) -> str:
    """index.md from (tier, folder, text) sections."""
    by_tier: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for tier, folder, text in sections:
        by_tier[tier].append((_shown(folder), text))
    out = ["# Memory index", "", contract.INDEX_MD_MARKER, "",
           "Read a memory with `git strata read NAME`; list them all with `git strata list`.", "",
           f"## Active ({counts.get('active', 0)})"]
    for _, text in sorted(by_tier["active"]):
        out += ["", text]
    for tier, note in (("cooled", "read-only; `git strata recall NAME` brings one back"),
                       ("archive", "kept out of the way; `git strata recall NAME` brings one back")):
        out += ["", f"## {tier.capitalize()} ({counts.get(tier, 0)}): {note}"]
        out += [text for _, text in sorted(by_tier[tier])]
    return "\n".join(out) + "\n"


def _sections(entries: list[Entry], times: dict[str, int], root: str | None = None) -> list[tuple[str, str, str]]:
    groups: dict[tuple[str, str], list[Entry]] = defaultdict(list)
    for entry in entries:
        groups[(entry.tier, entry.folder)].append(entry)
    days = _Days()
    return [(tier, folder, section(tier, folder, members, times, days, root))
            for (tier, folder), members in groups.items()]


def _counts(entries: list[Entry]) -> dict[str, int]:
    counts: dict[str, int] = defaultdict(int)
    for entry in entries:
        counts[entry.tier] += 1
    return counts


def write(root: str, text: str) -> bool:
    """Write index.md if its content changed; True when it was written. Never through a link:
    an index.md (or anything else) that a pull planted as a symlink is replaced, not followed."""
    from strata_git.gitio import safefs

    data = text.encode("utf-8")
    found = safefs.kind(root, contract.INDEX_MD)
    if found == "file" and os.path.getsize(os.path.join(root, contract.INDEX_MD)) == len(data) \
            and safefs.read(root, contract.INDEX_MD, len(data)) == data:
        from strata_git.gitio import procs

        # A writer killed mid-write left its temporary file; with nothing new to write, no write
        # would sweep it, and it would sit untracked in the work tree until index.md next changed.
        procs.sweep(root, contract.temp_prefix(contract.INDEX_MD))
        return False
    if found not in (None, "file"):
        safefs.remove(root, contract.INDEX_MD)
    safefs.write(root, contract.INDEX_MD, data, durable=False)
    return True


def _full(repo: Repo, db: sqlite3.Connection, times: _Times, max_bytes: int) -> Scan:
    from strata_git.store import catalog

    scan, pruned = _listed(repo, catalog.scan(repo, db, max_bytes), db)
    catalog.set_meta(db, "pruned_archive", str(pruned))
    sections = _sections(scan.entries, times(scan.entries), repo.root)
    db.execute("DELETE FROM sections")
    db.executemany("INSERT INTO sections VALUES (?,?,?)", sections)
    write(repo.root, assemble(sections, _counts(scan.entries)))
    return scan


def _listed(repo: Repo, scan: Scan, db: sqlite3.Connection) -> tuple[Scan, int]:
    """`scan` (the working tree's memories) with a pruned clone's archived memories that are not in
    the working tree added from the shadow index, in tier and name order; how many were added."""
    from strata_git.gitio import partial
    from strata_git.store import shadow

    if not partial.is_pruned(repo):
        return scan, 0
    on_disk = {e.name for e in scan.entries if e.tier == "archive"}
    pruned = [e for e in shadow.listing(repo, db) if e.name not in on_disk]
    if not pruned:
        return scan, 0
    order = {"active": 0, "cooled": 1, "archive": 2}
    return scan._replace(entries=sorted([*scan.entries, *pruned], key=lambda e: (order[e.tier], e.name))), len(pruned)


def _archived_in(repo: Repo, db: sqlite3.Connection, folders: set[str]) -> dict[tuple[str, str], list[Entry]]:
    """A pruned clone's archive folders, each with its memories from the shadow index (brought to
    HEAD first) and any that are on disk besides; the count of archived memories not on disk is
    kept for index.md's heading."""
    from strata_git.store import catalog, shadow

    shadow.refresh_in(repo, db)
    found = {}
    for folder in folders:
        on_disk = catalog.entries(db, "archive", folder)
        held = {e.name for e in on_disk}
        members = [*on_disk, *(e for e in shadow.in_folder(db, folder) if e.name not in held)]
        found[("archive", folder)] = sorted(members, key=lambda e: e.name)
    catalog.set_meta(db, "pruned_archive", str(pruned_count(db)))
    return found


def pruned_count(db: sqlite3.Connection) -> int:
    """How many archived memories the shadow index has that are not on disk: the rows' count kept
    by tally.py less those on disk, else counted (100 ms at a million archived, for every recall)."""
    from strata_git.store import tally

    rows = tally.kept_rows(db)
    if rows is None:
        return int(db.execute("SELECT count(*) FROM archived WHERE path NOT IN "
                              "(SELECT path FROM memories WHERE tier = 'archive')").fetchone()[0])
    return rows - int(db.execute("SELECT count(*) FROM memories WHERE tier = 'archive' AND path IN "
                                 "(SELECT path FROM archived)").fetchone()[0])


def _incremental(repo: Repo, db: sqlite3.Connection, times: _Times, paths: list[str], max_bytes: int,
                 touched: set[tuple[str, str]] | None = None) -> None:
    """Rebuild the sections of the folders that `paths` (and `touched`) are in; the rest stay as
    they are. A pruned clone's archive folders are read from the shadow index, one by one."""
    from strata_git.gitio import partial
    from strata_git.store import catalog

    days = _Days()
    where = catalog.update(repo, db, paths, max_bytes) | (touched or set())
    archive = {folder for tier, folder in where if tier == "archive"}
    pruned = bool(archive) and partial.is_pruned(repo)
    folders = {w: catalog.entries(db, *w) for w in where if not (pruned and w[0] == "archive")}
    if pruned:
        folders |= _archived_in(repo, db, archive)
    known = times([e for members in folders.values() for e in members])
    for (tier, folder), members in folders.items():
        if members:
            db.execute("INSERT OR REPLACE INTO sections VALUES (?,?,?)",
                       (tier, folder, section(tier, folder, members, known, days, repo.root)))
        else:
            db.execute("DELETE FROM sections WHERE tier = ? AND folder = ?", (tier, folder))
    counts = dict(db.execute("SELECT tier, count(*) FROM memories GROUP BY tier").fetchall())
    counts["archive"] = counts.get("archive", 0) + int(catalog.get_meta(db, "pruned_archive") or 0)
    write(repo.root, assemble(db.execute("SELECT tier, folder, text FROM sections").fetchall(), counts))


def _since(repo: Repo, tree: str, at: str) -> list[str] | None:
    """The memory paths that differ between `tree` (what the catalog reflects) and HEAD's tree
    `at`; None when `tree` cannot be compared (not recorded, or no longer held: asked without
    fetching what a partial clone lacks)."""
    from strata_git.errors import GitFailed

    if tree == at:
        return []
    if not tree or not repo.holds(tree):
        return None
    try:
        return [c.path for c in repo.diff_tree(tree, at, *names.TIERS)]
    except GitFailed:
        return None


def _stamp(repo: Repo, value: str | None) -> None:
    """What the post-commit shim checks: "<tree> <parent>" of the commit pre-commit wrote index.md
    for. Any other refresh removes it, so it can vouch for nothing it did not see."""
    path = os.path.join(repo.state_dir(), contract.INDEX_MD_TREE)
    if value is None:
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass
        return
    with open(path, "w", encoding="utf-8") as f:
        f.write(value + "\n")


@overload
def refresh(repo: Repo, max_bytes: int, commit: None = None, moved: None = None,
            listed: Literal[True] = True, pruned: bool = True) -> Scan: ...
@overload
def refresh(repo: Repo, max_bytes: int, commit: tuple[list[str], int, str] | None = None,
            moved: tuple[list[str], str] | None = None, listed: bool = True, pruned: bool = True) -> Scan | None: ...
def refresh(repo: Repo, max_bytes: int, commit: tuple[list[str], int, str] | None = None,
            moved: tuple[list[str], str] | None = None, listed: bool = True, pruned: bool = True) -> Scan | None:
    """Regenerate index.md from the working tree and history.

    By default the working tree is rescanned (only files whose size, mtime or inode changed are
    read again), the folders that changed since the catalog's tree are rebuilt, and the Scan of
    every memory returned (`listed=False`: nothing returned, and a pruned clone's archive is not
    listed whole; `pruned=False`: only the working tree's memories are).
    `commit` is (paths, time, tree) of a commit in progress (the pre-commit hook):
    if the catalog reflects HEAD's tree, only those files and their folders are
    re-examined, dated by the commit, and the catalog then reflects `tree`.
    `moved` is (paths, tree) after git-strata's own commit (the janitor's) took the
    working tree from `tree` to HEAD by changing only `paths`.
    When the catalog reflects a tree that can no longer be compared (or none), every folder is
    rebuilt. A pruned clone's archive folders come from the shadow index, only the changed ones.
    """
    import sqlite3

    from strata_git.core.names import split_path
    from strata_git.store import catalog, history

    at = history.head(repo)
    committed = dict.fromkeys((where[1] for where in map(split_path, commit[0]) if where), commit[1]) \
        if commit else {}

    def times(entries: list[Entry]) -> dict[str, int]:
        """The entries' last changes at HEAD; the commit in progress dates what it changes."""
        return history.last_changed(repo, at, [e.name for e in entries if e.name not in committed]) | committed
    reflects = commit[2] if commit else (at.tree if at else "")
    _stamp(repo, None)  # vouch for nothing until this refresh has succeeded
    scan: Scan | None = None
    for attempt in range(1, 7):
        try:
            with catalog.connect(repo) as db:
                scan = _bring(repo, db, times, max_bytes, at, commit, moved, listed, pruned)
                if scan is not None and not pruned:  # (a rebuild of every folder listed them)
                    scan = scan._replace(entries=catalog.entries(db))
                catalog.set_meta(db, "tree", reflects)
            break
        except sqlite3.DatabaseError as e:
            if not catalog.again(e, attempt, repo):
                raise
    if commit:
        _stamp(repo, f"{commit[2]} {at.commit}" if at else commit[2])
    return scan


def _bring(repo: Repo, db: sqlite3.Connection, times: _Times, max_bytes: int, at: Head | None,
           commit: tuple[list[str], int, str] | None, moved: tuple[list[str], str] | None, listed: bool,
           pruned: bool) -> Scan | None:
    """refresh()'s work in one transaction of the catalog."""
    from strata_git.store import catalog

    known = catalog.get_meta(db, "tree")
    if commit or moved:
        base, paths = (at.tree if at else None, commit[0]) if commit else (moved[1], moved[0]) if moved else (None, [])
        # the paths git changed behind git-strata's back (a commit without hooks) join the commit's
        since = _since(repo, known, base) if base else None
        if since is None:
            return _full(repo, db, times, max_bytes)
        _incremental(repo, db, times, [*paths, *since], max_bytes)
        return None
    since = _since(repo, known, at.tree) if at else None
    if since is None:
        return _full(repo, db, times, max_bytes)
    touched: set[tuple[str, str]] = set()
    strays = catalog.rescan(repo, db, max_bytes, touched=touched)
    _incremental(repo, db, times, since, max_bytes, touched)
    if not listed:
        return None
    scan = Scan(catalog.entries(db), sorted(strays))
    return _listed(repo, scan, db)[0] if pruned else scan
