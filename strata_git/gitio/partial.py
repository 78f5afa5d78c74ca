"""A pruned clone: a partial clone whose working tree leaves archive/ out.

Pruning (ops/archive.py) makes the clone fetch from the archive remote on demand and marks
archive/ skip-worktree with these sparse-checkout patterns; the questions every layer asks of
such a clone (is it pruned? which blobs does it not hold?) are answered here.
"""

from __future__ import annotations

import os

from strata_git.gitio.git import Repo

SPARSE_PATTERNS = ("/*", "!/archive/")


def is_pruned(repo: Repo) -> bool:
    """Whether archive/ is kept out of this clone's working tree."""
    path = os.path.join(repo.git_dir, "info", "sparse-checkout")
    try:
        with open(path, encoding="utf-8") as f:
            return f.read().split() == list(SPARSE_PATTERNS)
    except OSError:
        return False


def held_blobs(repo: Repo) -> dict[str, int]:
    """{blob id: size} of every blob this clone holds, listed from the object store (as `absent`
    does), so that a blob a pruned clone left on its remote is never fetched by asking."""
    out = repo.git("cat-file", "--batch-all-objects", "--unordered",
                   "--batch-check=%(objectname) %(objecttype) %(objectsize)")
    return {oid: int(size) for oid, kind, size in (line.split(" ") for line in out.decode().splitlines())
            if kind == "blob"}


def absent(repo: Repo, blobs: list[str]) -> list[str]:
    """Which of `blobs` this clone does not hold. (Asking git about a missing promised object
    either fetches it or fails, so this lists what the object store holds instead.)"""
    if not blobs:
        return []
    out = repo.git("cat-file", "--batch-all-objects", "--unordered", "--batch-check=%(objectname)")
    held = set(out.decode().split())
    return [b for b in blobs if b not in held]
