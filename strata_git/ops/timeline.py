"""Memory over time: memories per tier at the end of each ISO week and the moves of each week
(cooled, archived, rehydrated, captured), from history in one `git log` (`stats --chart`, the
page's picture).

Only trees are compared, never a blob read, so a pruned clone fetches nothing.

- The memories per tier come from the current branch's first-parent line: each of its commits
  compared with its first parent (a sync's merge with the commit it merged into), so their
  changes add up to the tree at HEAD.
- The moves come from every commit that is not a merge, whichever machine made it (a sync's
  merge only repeats its side's moves): a memory leaving active/ for cooled/ was cooled; leaving
  active/ or cooled/ for archive/ was archived; coming back to active/ was rehydrated (a recall
  or the janitor's promotion); a memory a capture commit (`Strata-Capture` trailer) adds was
  captured. A move is told by the paths a commit changes, not by what its trailers claim.
- Commit dates come from other machines and may be out of order. Each change counts in the week
  its commit is dated, so a week's figures are the sum of the changes dated up to its end (a sum
  does not depend on the order); where dates disagree with the order of the commits, a week may
  show a memory gone before it came (shown as 0, never below). Dates are clamped to the range a
  record may hold; the first week shown holds the memories of the weeks before it but none of
  their moves, and a change dated after the last week (in the future) counts in the last.
"""

from __future__ import annotations

import datetime
from collections import Counter
from typing import Any, NamedTuple

from strata_git.core import contract, names, untrusted
from strata_git.gitio.git import Repo

MOVES = ("cooled", "archived", "rehydrated", "captured")
MAX_WEEKS = 520  # ten years of weeks at most; older ones fold into the first shown
_WEEK = 7 * 86400
_MONDAY = 4 * 86400  # 1970-01-01 was a Thursday: the first Monday is 4 days later


class Week(NamedTuple):
    week: str  # ISO week, e.g. 2026-W47
    start: int  # its Monday, 00:00 UTC (Unix seconds)
    tiers: dict[str, int]  # memories in each tier at the week's end
    moves: dict[str, int]  # memories cooled, archived, rehydrated, captured in the week

    def as_dict(self) -> dict[str, Any]:
        return {"week": self.week, "start": self.start, "tiers": self.tiers, "moves": self.moves}


def monday(stamp: int) -> int:
    """The start (Monday, 00:00 UTC) of the ISO week `stamp` falls in."""
    return stamp - (stamp - _MONDAY) % _WEEK


def _label(start: int) -> str:
    year, week, _ = datetime.datetime.fromtimestamp(start, datetime.UTC).isocalendar()
    return f"{year}-W{week:02d}"


def _time(text: str) -> int | None:
    try:
        stamp = int(text)
    except ValueError:
        return None
    return min(max(stamp, 0), untrusted.MAX_TIME)


def _moves(added: dict[str, str], removed: dict[str, str], captured: bool) -> Counter[str]:
    """What one commit did, from the tiers its memories left (`removed`) and reached (`added`)."""
    found: Counter[str] = Counter()
    for name, tier in added.items():
        before = removed.get(name)
        if before == "active" and tier == "cooled":
            found["cooled"] += 1
        elif before in ("active", "cooled") and tier == "archive":
            found["archived"] += 1
        elif before in ("cooled", "archive") and tier == "active":
            found["rehydrated"] += 1
        elif before is None and tier == "active" and captured:
            found["captured"] += 1
    return found


class _Commit(NamedTuple):
    id: str
    merge: bool
    time: int | None
    captured: bool  # a capture made it
    paths: list[tuple[str, str]]  # (status, path)


def _commits(out: str) -> list[_Commit]:
    """The commits of `git log -z --name-status --format=%x01%H %P%x00%ct%x00<capture trailer>`:
    fields by NUL; after a status letter its path is taken whole, whatever it holds (a path cannot
    pass for the next header)."""
    found: list[_Commit] = []
    fields = out.split("\0")
    i = 0
    while i < len(fields):
        token = fields[i].lstrip("\n")
        if token.startswith("\x01") and i + 2 < len(fields):
            ids = token[1:].split()
            found.append(_Commit(ids[0] if ids else "", len(ids) > 2, _time(fields[i + 1].strip()),
                                 bool(fields[i + 2].strip()), []))
            i += 3
        elif token and found and i + 1 < len(fields):
            found[-1].paths.append((token, fields[i + 1]))
            i += 2
        else:
            i += 1
    return found


def weekly(repo: Repo, now: int, weeks: int = MAX_WEEKS) -> list[Week]:
    """Every week from the first commit's to `now`'s (at most `weeks` of them, the latest), oldest first;
    a commit dated after `now` counts in `now`'s week."""
    if repo.head() is None:
        return []
    weeks = min(max(weeks, 1), MAX_WEEKS)
    line = set(repo.git("rev-list", "--first-parent", "HEAD").decode().split())
    out = repo.git("log", "--topo-order", "--reverse", "--diff-merges=first-parent", "--no-renames", "-z",
                   "--name-status", "--no-color", "--no-show-signature",
                   f"--format=%x01%H %P%x00%ct%x00%(trailers:key={contract.CAPTURE},valueonly,separator=%x20)",
                   "HEAD", "--", *names.TIERS).decode("utf-8", "surrogateescape")
    changes: list[tuple[int, Counter[str]]] = []  # (date, tier deltas) of the first-parent line
    moved: list[tuple[int, Counter[str]]] = []  # (date, moves) of every commit but merges
    latest = 0  # (a commit whose date cannot be read counts at the latest date before it)
    for commit in _commits(out):
        when = latest if commit.time is None else commit.time
        latest = max(latest, when)
        delta: Counter[str] = Counter()
        added: dict[str, str] = {}
        removed: dict[str, str] = {}
        for status, path in commit.paths:
            tier, _, name = path.partition("/")
            if tier not in names.TIERS or not name.endswith(contract.SUFFIX):
                continue
            if status == "A":
                delta[tier] += 1
                added[name] = tier
            elif status == "D":
                delta[tier] -= 1
                removed[name] = tier
        if commit.id in line:
            changes.append((when, delta))
        if not commit.merge:
            moved.append((when, _moves(added, removed, commit.captured)))
    if not changes and not moved:
        return []
    last = monday(min(max(now, 0), untrusted.MAX_TIME))
    first = min(monday(min([t for t, _ in changes] + [t for t, _ in moved])), last)
    first = max(first, last - (weeks - 1) * _WEEK)
    mondays = range(first, last + _WEEK, _WEEK)
    tiers_at: list[Counter[str]] = [Counter() for _ in mondays]
    moves_in: list[Counter[str]] = [Counter() for _ in mondays]
    for when, delta in changes:
        tiers_at[min(max(0, (monday(when) - first) // _WEEK), len(mondays) - 1)].update(delta)
    for when, found in moved:
        slot = (monday(when) - first) // _WEEK
        if slot >= 0:  # (a move before the weeks shown is not one of theirs)
            moves_in[min(slot, len(mondays) - 1)].update(found)
    result: list[Week] = []
    running: Counter[str] = Counter()
    for start, delta, found in zip(mondays, tiers_at, moves_in, strict=True):
        running.update(delta)
        result.append(Week(_label(start), start, {t: max(0, running[t]) for t in names.TIERS},
                           {m: found[m] for m in MOVES}))
    return result
