"""What the read-only commands report: `status` and the boot `context` (`stats` is stats.py).

Both bring index.md and the catalog up to date first, so what they say is the working tree
as it is now.
"""

from __future__ import annotations

import datetime
import sqlite3
from collections.abc import Callable
from typing import Any, NamedTuple

from strata_git.app import serve
from strata_git.core import context as boot
from strata_git.core import contract, names, untrusted
from strata_git.core.config import Config
from strata_git.core.entries import Entry
from strata_git.gitio import partial, safefs
from strata_git.gitio.git import Repo
from strata_git.ops import hookshims
from strata_git.ops.sync import conflicts
from strata_git.store import access, captures, catalog, history, index_md, shadow, tally


class ArchiveState(NamedTuple):
    pruned: bool  # archived blobs are pruned from this clone (a partial clone)
    memories: int  # archived memories in the shadow index
    held_blobs: int  # of their blobs, those held here
    last_verified: str | None  # "REMOTE at DATE" of the newest verification on a remote
    shadow_commit: str  # the commit the shadow index reflects ("" if none)
    indexed_from: dict[str, int]  # archived memories indexed from a record, a trailer, or a name only


class SyncState(NamedTuple):
    remote: str
    url: str  # "" when no git remote has that name
    ahead: int | None  # commits ahead of / behind the remote as of the last fetch; None: never fetched
    behind: int | None


class Status(NamedTuple):
    root: str
    branch: str
    head: str | None
    tiers: dict[str, dict[str, int]]
    hooks: dict[str, str]
    config: dict
    uncommitted: list[str]
    problems: list[str]
    daemon: int | None  # pid of `git strata serve` for this repository
    archive: ArchiveState
    conflicts: list[conflicts.OpenConflict]  # open conflict copies a sync left
    sync: SyncState
    derived: dict[str, int]  # bytes of each derived-state file under .git/strata (all rebuildable)

    def as_dict(self) -> dict[str, Any]:
        return {**self._asdict(), "archive": self.archive._asdict(), "sync": self.sync._asdict(),
                "conflicts": [c.as_dict() for c in self.conflicts]}


def context(repo: Repo, cfg: Config, budget: int | None = None, type: str | None = None,
            standing_only: bool = False, active_only: bool = False, project: str | None = None) -> boot.Context:
    """The boot context (see core/context.py): rejections, decisions, recent memories, the router;
    `project`'s first when given.
    It brings index.md and the whole catalog up to date first; `active_only` (the agent hook, at
    every session start) looks at active/ alone, the only tier the context shows."""
    budget = boot.check_budget(boot.DEFAULT_BUDGET if budget is None else budget)
    if active_only:
        with catalog.connect(repo) as db:
            catalog.rescan(repo, db, cfg.max_memory_bytes, ("active",))
            entries = catalog.entries(db, "active")  # (not the 50,000 archived rows: ~0.3 s)
            entries += [e for e in catalog.entries(db, "cooled") if e.type in ("decision", "rejection")]  # standing
    else:  # (the context shows active and cooled memories: a pruned archive's are not listed)
        entries = index_md.refresh(repo, cfg.max_memory_bytes, pruned=False).entries
    times = history.last_changed(repo, history.head(repo), [e.name for e in entries])

    def read(entry: Entry) -> str:
        return safefs.read(repo.root, entry.path, cfg.max_memory_bytes).decode("utf-8", "replace")

    reads = {name: max(stamps) for name, stamps in access.reads_by_name(repo).items()}
    return boot.build(entries, times, read, repo.head(), budget, type, standing_only, project, reads)


def status(repo: Repo, cfg: Config) -> Status:
    scan = index_md.refresh(repo, cfg.max_memory_bytes, pruned=False)  # the working tree's memories
    tiers = {t: {"memories": 0, "bytes": 0} for t in names.TIERS}
    for entry in scan.entries:
        tiers[entry.tier]["memories"] += 1
        tiers[entry.tier]["bytes"] += entry.size
    problems = [f"{e.path}: {e.problem}" for e in scan.entries if e.problem]
    problems += [f"{p}: not a memory (only .md files belong in tier folders)" for p in scan.strays]
    with catalog.connect(repo) as db:
        shadow.refresh_in(repo, db)
        db.commit()  # (the archive rows brought to HEAD, and kept: what follows holds no lock while git runs)
        counted = tally.tally(db)
        if partial.is_pruned(repo):  # a pruned archive's memories, counted from the rows
            present = {e.name for e in scan.entries if e.tier == "archive"}
            rows, size = tally.on_disk(db, present)
            tiers["archive"]["memories"] += counted.rows - rows
            tiers["archive"]["bytes"] += counted.size - size
            problems += _checked_names(db, scan.entries, counted.spellings, present)
        else:
            problems += name_problems(scan.entries)
        archive_state = _archive_state(repo, db, counted)
    uncommitted = [path for _, path in repo.status(*names.TIERS)]
    problems += shadow.warnings(repo)
    problems += captures.problems(repo)  # agent sessions whose last capture failed
    access.read_all(repo)  # for its warnings: a record another machine wrote that cannot be read
    problems += untrusted.warnings()  # what history and other machines sent that could not be read
    problems += cfg.ignored  # weakening values in the shared config, not applied
    branch = repo.git("symbolic-ref", "-q", "--short", "HEAD", check=False).decode().strip()
    active = [e.name for e in scan.entries if e.tier == "active"]
    return Status(root=repo.root, branch=branch or "(detached)", head=repo.head(), tiers=tiers,
                  hooks=hookshims.state(repo), config=cfg.as_dict(), uncommitted=uncommitted, problems=problems,
                  daemon=serve.running(repo), archive=archive_state,
                  conflicts=conflicts.open_conflicts(repo.root, active, _tracked_copies(repo)),
                  sync=_sync_state(repo, cfg, branch), derived=catalog.derived_sizes(repo))


def _checked_names(db: sqlite3.Connection, entries: list[Entry], archived: names.Spellings,
                   present: set[str]) -> list[str]:
    """name_problems() of the working tree's memories and a pruned archive (its names not among
    `present`, those checked out), from the archive's tally: no name of a million read here."""
    def mine(groups: dict[str, list[str]]) -> dict[str, list[str]]:
        kept = {k: [n for n in group if n not in present] for k, group in groups.items()}
        return {k: group for k, group in kept.items() if group}

    return checked_names(entries, names.Spellings([n for n in archived.mixed if n not in present], archived.twice,
                                                  mine(archived.odd)),
                         lambda keys: mine(tally.named(db, keys)))


def name_problems(entries: list, pruned: list[str] | None = None) -> list[str]:
    """Names that mean more than one memory, or look like another: what plain git or a sync can
    bring in that `write` would never make. Each line says how to fix it. `pruned`: the names of a
    pruned archive's memories that `entries` lacks, checked alike without an Entry for each."""
    found = pruned or []
    by_key: dict[str, list[str]] = {}
    for name in (n for n in found if n.isascii()):
        by_key.setdefault(name.lower(), []).append(name)
    return checked_names(entries, names.spellings(found),
                         lambda keys: {k: by_key[k] for k in keys if k in by_key})


def checked_names(entries: list, archived: names.Spellings,
                  ascii_named: Callable[[list[str]], dict[str, list[str]]]) -> list[str]:
    """name_problems() of `entries` and an archive whose names are not among them, given as its
    Spellings and `ascii_named(keys)`: {key: its ASCII names} for those of `keys` any has."""
    found: list[str] = []
    paths: dict[str, list[str]] = {}
    for e in entries:
        paths.setdefault(e.name, []).append(e.path)
    keys: dict[str, list[str]] = {}  # collision key -> the entries' names with it, in their order
    for name in paths:
        keys.setdefault(names.collision_key(name), []).append(name)
    theirs = ascii_named([k for k in keys if k.isascii()])
    theirs = {k: [*theirs.get(k, ()), *archived.odd.get(k, ())] for k in keys if k in theirs or k in archived.odd}
    for key, named in theirs.items():
        for name in set(named).intersection(keys[key]):
            paths[name].append(names.tier_path("archive", name))
    odd = [(e.path, e.name) for e in entries if not e.name.isascii()]
    odd += [(names.tier_path("archive", n), n) for n in archived.mixed]
    for path, name in sorted(odd, key=lambda pn: (names.TIERS.index(pn[0].partition("/")[0]), pn[1])):
        scripts = names.mixed_scripts(name)
        if scripts:
            found.append(f"{path}: its name mixes {' and '.join(s.title() for s in scripts)} letters, so it can look "
                         "exactly like another name; rename it with `git mv` if that was not meant")
    for name, where in paths.items():
        if len(where) > 1:
            found.append(f"{names.display(name)}: in more than one tier ({', '.join(where)}); a name reaches only the "
                         "first, and the janitor moves neither; keep one and `git rm` the others (history keeps them)")
    spelled = {key: {*named, *theirs.get(key, ())} for key, named in keys.items()}
    for group in archived.twice:
        spelled.setdefault(names.collision_key(group[0]), set(group))
    for spellings in spelled.values():
        if len(spellings) > 1:
            found.append(f"{', '.join(sorted(names.display(n) for n in spellings))}: names that differ only by case or "
                         "accents (one file on macOS and Windows), which the janitor does not move; rename all but "
                         "one with `git mv`")
    return found


def _tracked_copies(repo: Repo) -> list[str]:
    """Tracked files outside the tiers that look like conflict copies (`PATH.conflict-<hex>`)."""
    out, _ = repo.tracked()
    return [p for p in out if contract.looks_like_copy(p) and not names.split_path(p)]


def _sync_state(repo: Repo, cfg: Config, branch: str) -> SyncState:
    from strata_git.gitio import git

    remote = cfg.sync_remote
    url = git.shown_url(repo.git("remote", "get-url", remote, check=False).decode("utf-8", "replace").strip())
    tracking = f"refs/remotes/{remote}/{branch}"
    found = repo.git("rev-list", "--left-right", "--count", f"HEAD...{tracking}", check=False).split()
    if not branch or len(found) != 2:
        return SyncState(remote, url, None, None)
    return SyncState(remote, url, ahead=int(found[0]), behind=int(found[1]))


def _archive_state(repo: Repo, db: sqlite3.Connection, counted: tally.Tally) -> ArchiveState:
    verified = repo.git("for-each-ref", "--format=%(refname:lstrip=3) %(objectname)",
                        contract.VERIFIED_REFS).decode().split("\n")
    last = None
    for line in filter(None, verified):
        remote, commit = line.split(" ", 1)
        stamp = untrusted.stamp(repo.git("log", "-1", "--format=%ct", commit).decode())
        if stamp is None:
            untrusted.warn(f"{contract.VERIFIED_REFS}{remote}", "its commit's date is not between 1970 and 9999")
        elif last is None or stamp > last[1]:
            last = (remote, stamp)
    when = (f"{last[0]} at {datetime.datetime.fromtimestamp(last[1], datetime.UTC):%Y-%m-%d %H:%M} UTC"
            if last else None)
    return ArchiveState(pruned=partial.is_pruned(repo), memories=counted.blobs,
                        held_blobs=tally.held(repo, db, counted), last_verified=when,
                        shadow_commit=shadow.reflects_in(db),
                        indexed_from={s: counted.sources.get(s, 0) for s in ("record", "trailer", "name")})
