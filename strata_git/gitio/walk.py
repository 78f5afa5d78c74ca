"""Every commit reachable from any ref, oldest first, with the blobs each one brings: one
`git log --all --raw` parsed (for `git strata scan`, ops/scan.py).

Only trees are read, never a blob, so walking a pruned clone fetches nothing. A merge is
compared with each of its parents (`-m`), so a blob that only a merge brings (a resolved
conflict) is listed too.
"""

from __future__ import annotations

from typing import NamedTuple

from strata_git.gitio.git import Repo

_GITLINK = "160000"  # a submodule: its id names a commit of another repository
_ABSENT = "0" * 40  # the new side of a deletion


class Step(NamedTuple):
    commit: str
    ref: str  # the ref the walk reached it from (`git log --source`): refs/heads/main, refs/strata/...
    blobs: tuple[tuple[str, str], ...]  # (path, blob id) added or changed by it


def history(repo: Repo) -> list[Step]:
    """Every commit of every ref (branches, tags, git-strata's refs under refs/strata/, stashes),
    parents before children."""
    out = repo.git("log", "--all", "--source", "--topo-order", "--reverse", "-m", "--root", "--raw", "-z",
                   "--no-renames", "--no-abbrev", "--no-color", "--no-show-signature", "--format=%x01%H %S")
    return parse(out.decode("utf-8", "surrogateescape"))


def parse(out: str) -> list[Step]:
    """The steps in `git log -z --raw --format=%x01%H %S` output: after each `\\x01commit ref`
    header, `:meta` and path fields by pairs (a path is taken whole, whatever it holds)."""
    steps: dict[str, tuple[str, list[tuple[str, str]]]] = {}
    fields = out.split("\0")
    blobs: list[tuple[str, str]] = []
    i = 0
    while i < len(fields):
        field = fields[i].lstrip("\n")
        i += 1
        if field.startswith("\x01"):
            commit, _, ref = field[1:].partition(" ")
            blobs = steps.setdefault(commit, (ref, []))[1]  # a merge comes once per parent
        elif field.startswith(":") and i < len(fields):
            parts, path = field[1:].split(" "), fields[i]
            i += 1
            if len(parts) == 5 and parts[1] != _GITLINK and parts[3] != _ABSENT:
                blobs.append((path, parts[3]))
    return [Step(commit, ref, tuple(dict.fromkeys(found))) for commit, (ref, found) in steps.items()]
