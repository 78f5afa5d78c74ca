"""When each memory last changed, from commit history (never the file system's mtime).

One `git log` pass gives, for every memory name, the commit time of the last commit
that touched it, skipping git-strata's own migration commits (those carrying a
`Strata-Move` trailer: a move does not make a memory young) and merge commits: every
commit of every line merged in counts at its own time, so a sync's merge (which only
combines changes made on two machines, or keeps an edit in active/) makes nothing
young, and every machine computes the same times from the same HEAD. The result is
cached under the git directory with the commit it reflects and brought forward
incrementally; a rewritten history rebuilds it.
"""

from __future__ import annotations

import json
import os
from array import array
from typing import NamedTuple

from strata_git.core import contract, untrusted
from strata_git.core.names import SUFFIX, split_path
from strata_git.gitio.git import Repo

CACHE_VERSION = 4  # a JSON header line, the names joined by NUL, then their times as int64s
_FORMAT = f"--format=%x01%H %ct {contract.log_field(contract.MOVE, '%x1e')}"


def _scan(repo: Repo, revs: str, times: dict[str, int], skipped: list[str]) -> None:
    # No pathspec: it would make git simplify history, comparing every commit twice (~+45 % at
    # 20,000 commits), to filter out what split_path() drops anyway.
    out = repo.git("log", "--no-renames", "--name-only", "-z", "--no-merges", _FORMAT, revs, "--")
    # Newest first, but commits of two machines can be dated out of order: keep the latest time.
    for record in out.decode("utf-8", "surrogateescape").split("\x01")[1:]:
        header, _, paths = record.partition("\0")
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


def _load(path: str) -> dict | None:
    """The cache, or None when it is missing, of another version or damaged (then history is read
    again). Names and times are stored apart, not as JSON: at a million memories JSON took 0.8 s to
    read and 0.5 s to write on every commit."""
    try:
        with open(path, "rb") as f:
            line, _, rest = f.read().partition(b"\n")
        data = json.loads(line)
        if not (isinstance(data, dict) and data.get("version") == CACHE_VERSION and isinstance(data.get("head"), str)
                and isinstance(data.get("skipped"), list) and type(data.get("count")) is int
                and type(data.get("names")) is int and 0 <= data["names"] <= len(rest)):
            return None
        stamps = array("q")
        stamps.frombytes(rest[data["names"]:])
        names = rest[:data["names"]].decode("utf-8", "surrogateescape").split("\0") if data["count"] else []
    except (OSError, ValueError, UnicodeDecodeError):
        return None
    if len(names) != data["count"] or len(stamps) != data["count"]:
        return None
    data["times"] = dict(zip(names, stamps, strict=True))
    return data


def _save(path: str, head: str, times: dict[str, int], skipped: list[str]) -> None:
    names = "\0".join(times).encode("utf-8", "surrogateescape")
    header = json.dumps({"version": CACHE_VERSION, "head": head, "skipped": skipped, "count": len(times),
                         "names": len(names)}, ensure_ascii=False).encode("utf-8")
    tmp = f"{path}.{os.getpid()}.{os.urandom(4).hex()}.tmp"  # threads of one process too
    with open(tmp, "wb") as f:
        f.write(header + b"\n" + names + array("q", times.values()).tobytes())
    os.replace(tmp, path)


class Head(NamedTuple):
    commit: str
    tree: str
    parents: tuple[str, ...]


def head(repo: Repo) -> Head | None:
    """HEAD's commit, tree and parents in one git call (None on an unborn branch)."""
    out = repo.git("log", "-1", "--format=%H %T %P", "HEAD", "--", check=False).decode().split()
    return Head(out[0], out[1], tuple(out[2:])) if len(out) >= 2 else None


def last_changed(repo: Repo, at: Head | None) -> dict[str, int]:
    """{name: unix time of its last content change} for every name in the history of `at`."""
    if at is None:
        return {}
    cache_path = os.path.join(repo.state_dir(), contract.CHANGES)
    cached = _load(cache_path)
    if cached and cached["head"] == at.commit:
        _report(cached["skipped"])
        times: dict[str, int] = cached["times"]
        return times
    # In the common case the cache is one commit behind: no ancestry check needed.
    if cached and (cached["head"] in at.parents[:1]
                   or repo.ok("merge-base", "--is-ancestor", cached["head"], at.commit)):
        times, skipped = dict(cached["times"]), list(cached["skipped"])
        _scan(repo, f"{cached['head']}..{at.commit}", times, skipped)
    else:
        times, skipped = {}, []
        _scan(repo, at.commit, times, skipped)
    skipped = skipped[-untrusted.MAX_WARNINGS:]
    _report(skipped)
    _save(cache_path, at.commit, times, skipped)
    return times


def _report(skipped: list[str]) -> None:
    for line in skipped:  # kept in the cache, so every command that reads history says so again
        where, _, what = line.partition(": ")
        untrusted.warn(where, what)
