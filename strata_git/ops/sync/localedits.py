"""Sync's first step: commit the uncommitted edits in active/ that pass the hooks' checks.

Everything is checked in one guard pass (the pre-commit hook's checks); a file the checks
refuse is left exactly as it is and reported. Files outside active/ are never committed
here, and neither is a mass deletion (more than MASS_DELETE files, or a tenth of active/):
that is for a person to commit. A marker names the process while it is inside `git commit`,
so that the index.lock a kill leaves there can be told from a live one.
"""

from __future__ import annotations

import os

from strata_git.core import contract, names
from strata_git.core.config import Config
from strata_git.gitio.git import Repo, run
from strata_git.ops import txn
from strata_git.ops.sync import merge


def status(repo: Repo) -> list[tuple[str, str]]:
    """(status code, path) of every uncommitted change, untracked and ignored files included (an
    untracked or ignored folder may be listed whole, as "folder/")."""
    return repo.status(untracked="all", ignored="matching")


def _changes(repo: Repo, edits: list[tuple[str, str]]) -> list:
    """guard.Change of each edit, the files hashed into the object store with one git call."""
    from strata_git.ops import guard

    found, files = {}, []
    for code, path in edits:
        full = os.path.join(repo.root, path)
        if not os.path.lexists(full):
            found[path] = guard.Change("D", path, "000000", merge.ZERO)
        elif os.path.islink(full) or not os.path.isfile(full):
            found[path] = guard.Change("A", path, "120000", merge.ZERO)  # refused: only files are memories
        else:
            st = os.lstat(full)
            found[path] = guard.Change("A" if code == "??" or code[0] == "A" else "M", path,
                                       "100755" if st.st_mode & 0o111 else "100644", "", st.st_size)
            files.append(path)
    if files:
        oids = repo.git("hash-object", "-w", "--no-filters", "--stdin-paths",
                        input="".join(f"{p}\n" for p in files).encode("utf-8", "surrogateescape")).decode().split()
        for path, oid in zip(files, oids, strict=True):
            found[path] = found[path]._replace(oid=oid)
    return [found[path] for _, path in edits]


MASS_DELETE = 20  # more deletions than this (and than a tenth of active/) are not committed by sync


def _collisions(paths: list[str]) -> list[list[str]]:
    """Groups of tier paths whose memory names, or whose folders' names, differ only by case or accents."""
    by_name: dict[str, list[str]] = {}
    by_folder: dict[str, dict[str, list[str]]] = {}
    for path in paths:
        where = names.split_path(path)
        if not where:
            continue
        if where[1].endswith(names.SUFFIX):
            by_name.setdefault(names.collision_key(where[1]), []).append(path)
        for folder in names.folders(where[1]):
            by_folder.setdefault(names.collision_key(folder), {}).setdefault(folder, []).append(path)
    groups = [sorted(group) for group in by_name.values() if len(group) > 1]
    groups += [sorted(p for members in spellings.values() for p in members)
               for spellings in by_folder.values() if len(spellings) > 1]
    return groups


def commit_local(repo: Repo, cfg: Config, dry_run: bool, listed: list[tuple[str, str]]
                 ) -> tuple[list[str], list[dict]]:
    """Commit the uncommitted edits in active/ (from `listed`, see status()) that pass the hooks'
    checks; (committed, left)."""
    edits = [(code, path) for code, path in listed if code != "!!" and path.startswith("active/")
             and not path.endswith("/") and "\n" not in path]
    if not edits or dry_run:
        if not edits and not dry_run and _kept(repo):
            _write_kept(repo, {})  # nothing is kept uncommitted any more
        return [path for _, path in edits], []
    if run(["var", "GIT_AUTHOR_IDENT"], repo.root, check=False).returncode != 0:
        return [], [{"path": p, "reason": "git does not know who you are, so it cannot commit"} for _, p in edits]
    from strata_git.ops import guard, locate
    from strata_git.store import allowlist

    changes = _changes(repo, edits)
    allow = allowlist.load(repo)
    added = {c.path for c in changes if c.status == "A"}
    staged = sorted(set(locate.tracked(repo, sorted(added))) | added)
    blobs = dict(zip((c.oid for c in changes if c.status != "D" and c.oid),
                     repo.objects([c.oid for c in changes if c.status != "D" and c.oid]), strict=True))
    def read(oid: str) -> bytes:
        return blobs.get(oid) or b""

    refused: dict[str, str] = {}
    for change in changes:  # each file's own problems (names that collide are checked below, once)
        found = guard.problems([change], [], read, cfg, allow=allow)
        if found:
            refused[change.path] = str(found[0])
    for group in _collisions(staged):
        for path in sorted(set(group) & added):
            refused.setdefault(path, f"{' and '.join(group)}: names that differ only by case or accents collide")
    rest = [c for c in changes if c.path not in refused]
    everything = guard.problems(rest, [p for p in staged if p not in refused], read, cfg, allow=allow)
    if everything:  # a problem the checks above did not tie to one file: commit nothing rather than guess
        refused.update({c.path: str(everything[0]) for c in rest})
    deletions = [c for c in changes if c.status == "D" and c.path not in refused]
    if len(deletions) > max(MASS_DELETE, sum(1 for p in staged if p.startswith("active/")) // 10):
        for c in deletions:  # a circuit breaker: deleting this much is for a person to commit
            refused[c.path] = (f"sync does not commit {len(deletions)} deletions at once; if they are meant, "
                               "commit them yourself (`git commit -a`)")
    good = [c for c in changes if c.path not in refused]
    left = [{"path": path, "reason": reason} for path, reason in refused.items()]
    good = _divert_stale(repo, good, blobs, left, {path for _, path in edits})
    if good:
        new = [c.path for c in good if c.status == "A"]
        with txn.marked(repo, contract.SYNC_COMMITTING):
            paths = [c.path for c in good]
            # restore=False: these are a person's edits; a failed commit leaves them as they are.
            txn.commit(repo, paths, lambda: repo.git("add", "--", *new) if new else None,
                       f"strata: sync commits {len(paths)} local edit{'s' if len(paths) != 1 else ''}",
                       {contract.SYNC: "uncommitted edits in active/, committed before syncing"}, restore=False)
    return [c.path for c in good], left


def provenance(repo: Repo, commit: str) -> dict[str, str]:
    """Where a conflict copy came from: this machine, the commit, the time."""
    import socket
    import time

    from strata_git.store import access

    return {"from": f"{socket.gethostname()} ({access.machine_id(repo)})", "commit": commit,
            "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}


def remember_kept(repo: Repo, bases: dict[str, str]) -> None:
    """Record the blob each kept edit was based on (see _divert_stale)."""
    if bases:
        _write_kept(repo, _kept(repo) | bases)


def _write_kept(repo: Repo, kept: dict[str, str]) -> None:
    import json

    path = os.path.join(repo.state_dir(), contract.SYNC_KEPT)
    with open(path + ".tmp", "w", encoding="utf-8") as f:
        json.dump(kept, f)
    os.replace(path + ".tmp", path)


def _kept(repo: Repo) -> dict[str, str]:
    import json

    try:
        with open(os.path.join(repo.state_dir(), contract.SYNC_KEPT), encoding="utf-8") as f:
            found = json.load(f)
        return found if isinstance(found, dict) else {}
    except (OSError, ValueError):
        return {}


def _divert_stale(repo: Repo, good: list, blobs: dict[str, bytes | None], left: list[dict],
                  edited: set[str]) -> list:
    """An edit a sync kept uncommitted while the remote changed the same file is based on an older
    version: committed in place it would silently undo the remote's change. It is committed beside
    instead, as a conflict copy, and the file is put back to HEAD's version (its bytes are in the copy)."""
    kept = _kept(repo)
    if not kept:
        return good
    from strata_git.gitio import safefs

    stale = [c.path for c in good if c.path in kept]
    head = repo.tree_entries("HEAD", stale) if stale else {}  # {path: (mode, blob)}
    result = []
    for c in good:
        if c.path not in kept or head.get(c.path, ("", ""))[1] == kept[c.path]:
            result.append(c)
            continue
        if c.status == "D":  # deleted here, changed there: the change wins, the deletion waits
            left.append({"path": c.path, "reason": "deleted here but changed on another machine since: not "
                         "committed (restore it with `git checkout HEAD -- " + c.path + "`)"})
            continue
        width, copy = 8, merge.copy_path(merge.Version(c.path, c.mode, c.oid), c.oid[:8])
        while os.path.lexists(os.path.join(repo.root, copy)) or repo.in_head(copy):
            width += 1
            copy = merge.copy_path(merge.Version(c.path, c.mode, c.oid), c.oid[:width])
        raw = blobs.get(c.oid) or b""
        where = names.split_path(c.path)
        assert where is not None  # kept edits are memories (a path outside the tiers failed here before too)
        name = where[1]
        marked = merge.with_provenance(raw, {"of": name[: -len(names.SUFFIX)],
                                             **provenance(repo, repo.head() or "")}) or raw
        safefs.write(repo.root, copy, marked)
        repo.git("checkout", "HEAD", "--", c.path)
        oid = repo.git("hash-object", "-w", "--", copy).decode().strip()
        result.append(c._replace(status="A", path=copy, oid=oid, size=len(marked)))
        left.append({"path": c.path, "reason": f"changed on another machine since this edit began: the edit "
                     f"was committed beside it as {copy} (a conflict: see `git strata status`)"})
    handled = {c.path for c in good}  # what is still edited and not committed stays kept
    _write_kept(repo, {p: b for p, b in kept.items() if p in edited and p not in handled})
    return result


def clear_killed_commit(repo: Repo) -> None:
    """A sync killed inside its `git commit` leaves index.lock behind: delete it once that
    process is gone and nothing holds the lock (see txn.clear_killed)."""
    txn.clear_killed(repo, contract.SYNC_COMMITTING)
