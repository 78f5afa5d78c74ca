"""Sync's first step: commit the uncommitted edits in active/ that pass the hooks' checks.

Everything is checked in one guard pass (the pre-commit hook's checks); a file the checks
refuse is left exactly as it is and reported. Files outside active/ are never committed
here, and neither is a mass deletion (more than MASS_DELETE files, or a tenth of active/):
that is for a person to commit. A marker names the process while it is inside `git commit`,
so that the index.lock a kill leaves there can be told from a live one.
"""

from __future__ import annotations

import os

from strata_git import merge, migrate, names
from strata_git.config import Config
from strata_git.git import Repo, run


def status(repo: Repo) -> list[tuple[str, str]]:
    """(status code, path) of every uncommitted change, untracked and ignored files included (an
    untracked or ignored folder may be listed whole, as "folder/")."""
    out = repo.git("status", "--porcelain", "-z", "--untracked-files=all", "--ignored=matching", "--no-renames")
    return [(item[:2], item[3:]) for item in out.decode("utf-8", "surrogateescape").split("\0") if len(item) > 3]


def _changes(repo: Repo, edits: list[tuple[str, str]]) -> list:
    """guard.Change of each edit, the files hashed into the object store with one git call."""
    from strata_git import guard

    found, files = {}, []
    for code, path in edits:
        full = os.path.join(repo.root, path)
        if not os.path.lexists(full):
            found[path] = guard.Change("D", path, "000000", merge.ZERO)
        elif os.path.islink(full) or not os.path.isfile(full):
            found[path] = guard.Change("A", path, "120000", merge.ZERO)  # refused: only files are memories
        else:
            st = os.lstat(full)
            found[path] = guard.Change("A" if code == "??" else "M", path,
                                       "100755" if st.st_mode & 0o111 else "100644", "", st.st_size)
            files.append(path)
    if files:
        oids = repo.git("hash-object", "-w", "--no-filters", "--stdin-paths",
                        input="".join(f"{p}\n" for p in files).encode("utf-8", "surrogateescape")).decode().split()
        for path, oid in zip(files, oids, strict=True):
            found[path] = found[path]._replace(oid=oid)
    return [found[path] for _, path in edits]


MASS_DELETE = 20  # more deletions than this (and than a tenth of active/) are not committed by sync
COMMITTING = "sync.committing"  # pid of a sync inside `git commit`: its index.lock is stale once that pid is gone


def commit_local(repo: Repo, cfg: Config, dry_run: bool, listed: list[tuple[str, str]]
                 ) -> tuple[list[str], list[dict]]:
    """Commit the uncommitted edits in active/ (from `listed`, see status()) that pass the hooks'
    checks; (committed, left)."""
    edits = [(code, path) for code, path in listed if code != "!!" and path.startswith("active/")
             and not path.endswith("/") and "\n" not in path]
    if not edits or dry_run:
        return [path for _, path in edits], []
    if run(["var", "GIT_AUTHOR_IDENT"], repo.root, check=False).returncode != 0:
        return [], [{"path": p, "reason": "git does not know who you are, so it cannot commit"} for _, p in edits]
    from strata_git import guard

    changes = _changes(repo, edits)
    staged = repo.git("ls-files", "-z", "--", *names.TIERS).decode("utf-8", "surrogateescape").split("\0")
    staged = sorted({p for p in staged if p} | {c.path for c in changes if c.status == "A"})
    blobs = dict(zip((c.oid for c in changes if c.status != "D" and c.oid),
                     repo.objects([c.oid for c in changes if c.status != "D" and c.oid]), strict=True))
    # One check of them all; each problem names its path first (a duplicate name: both paths).
    problems = guard.problems(changes, staged, lambda oid: blobs.get(oid) or b"", cfg)
    refused: dict[str, str] = {}
    for problem in problems:
        named = problem.message.split(": ", 1)[0]
        for change in changes:
            if change.path == named or change.path in named.split(" and ") or \
                    problem.message.startswith(change.path + ":"):
                refused.setdefault(change.path, str(problem))
    deletions = [c for c in changes if c.status == "D" and c.path not in refused]
    if len(deletions) > max(MASS_DELETE, sum(1 for p in staged if p.startswith("active/")) // 10):
        for c in deletions:  # a circuit breaker: deleting this much is for a person to commit
            refused[c.path] = (f"sync does not commit {len(deletions)} deletions at once; if they are meant, "
                               "commit them yourself (`git commit -a`)")
    good = [c for c in changes if c.path not in refused]
    left = [{"path": path, "reason": reason} for path, reason in refused.items()]
    if good:
        new = [c.path for c in good if c.status == "A"]
        marker = os.path.join(repo.state_dir(), COMMITTING)
        with open(marker, "w", encoding="ascii") as f:
            f.write(f"{os.getpid()}\n")
        try:
            if new:
                repo.git("add", "--", *new)
            paths = [c.path for c in good]
            repo.commit(paths, f"strata: sync commits {len(paths)} local edit{'s' if len(paths) != 1 else ''}",
                        {"Strata-Sync": "uncommitted edits in active/, committed before syncing"})
        finally:
            os.unlink(marker)
    return [c.path for c in good], left


def clear_killed_commit(repo: Repo) -> None:
    """A sync killed inside its `git commit` leaves index.lock behind: delete it once that
    process is gone and nothing holds the lock (see migrate.clear_stale_lock)."""
    marker = os.path.join(repo.state_dir(), COMMITTING)
    try:
        with open(marker, encoding="ascii") as f:
            pid = int(f.read().strip() or 0)
        made = os.stat(marker).st_mtime
    except (OSError, ValueError):
        return
    migrate.clear_stale_lock(repo, os.path.join(repo.git_dir, "index.lock"), owner_alive=lambda: migrate._alive(pid),
                             made_by=made + migrate.LOCK_SLACK)
    os.unlink(marker)
