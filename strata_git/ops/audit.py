"""The audit trail: janitor commits read back from `git log` (`log`, `why`).

Every migration commit carries one `Strata-Move:` trailer per move, a JSON object with
action, name, from and to (tiers; commits before that named the paths), rule and evidence
(age_days, last_read, reads), so the history itself is the record and `git revert` of such
a commit is the undo.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, NamedTuple

from strata_git.core import contract, entries, memory, names, rules, untrusted
from strata_git.core.config import Config
from strata_git.errors import StrataError
from strata_git.gitio import safefs
from strata_git.gitio.git import Repo
from strata_git.store import access, history

_FORMAT = f"--format=%H%x00%ct%x00{contract.log_field(contract.MOVE, '%x1e')}%x01"


class Migration(NamedTuple):
    """One move read back from a janitor commit's `Strata-Move` trailer (checked by untrusted.move)."""
    commit: str
    time: int  # the commit's date
    action: str  # cool, archive, promote
    name: str  # as displayed (without .md)
    source: str  # path before (`from` in JSON)
    target: str  # path after (`to` in JSON)
    rule: str | None
    age_days: float | None
    last_read: float | None
    reads: float | None
    window_days: float | None = None  # the days `reads` were counted in (None: an older record)

    @property
    def date(self) -> str | None:
        return contract.day(self.time)

    def as_dict(self) -> dict[str, Any]:
        return {"commit": self.commit, "time": self.time, "date": self.date, "action": self.action,
                "name": self.name, "from": self.source, "to": self.target, "rule": self.rule,
                "age_days": self.age_days, "last_read": self.last_read, "reads": self.reads,
                "window_days": self.window_days}


class Why(NamedTuple):
    """Everything the janitor knows and would decide about one memory (`git strata why`)."""
    name: str  # as displayed
    tier: str
    path: str
    type: str
    last_changed: str | None  # the day of the last commit that changed it
    age_days: int | None
    reads_last_90_days: int
    last_read: str | None
    in_tier_since: str | None
    moved_by: Migration | None  # the last move that brought it here
    would_move_now: rules.Move | None
    next: str  # when it would move next if nothing changed

    def as_dict(self) -> dict[str, Any]:
        moved = self.moved_by
        return {**self._asdict(),
                "moved_by": {"action": moved.action, "rule": moved.rule, "commit": moved.commit,
                             "date": moved.date} if moved else None,
                "would_move_now": self.would_move_now.as_dict() if self.would_move_now else None}


def migrations(repo: Repo, name: str | None = None, limit: int = 50, since: int | None = None) -> list[Migration]:
    """Moves recorded in history, newest first; only those of `name` (with .md) if given, and only
    those of commits dated at or after `since` if given (the others' records are not even read)."""
    if repo.head() is None:
        return []
    out = repo.git("log", "-z", _FORMAT, contract.grep(contract.MOVE), "HEAD", "--").decode("utf-8", "replace")
    found: list[Migration] = []
    for record in out.split("\x01"):
        commit, _, rest = record.strip("\0\n").partition("\0")
        stamp, _, trailers = rest.partition("\0")
        if not commit:
            continue
        when = untrusted.stamp(stamp)
        if when is None:
            untrusted.warn(f"commit {commit[:12]}", f"its date ({stamp[:24]}) is not between 1970 and 9999; "
                           "its moves are left out of the log")
            continue
        if since is not None and when < since:
            continue
        for value in filter(None, (t.strip() for t in trailers.split("\x1e"))):
            move = untrusted.move(value)
            if move is None:
                untrusted.warn(f"commit {commit[:12]}", f"a {contract.MOVE} trailer that is not a move record; "
                               "left out of the log")
                continue
            if name is None or move["name"] == names.display(name):
                found.append(Migration(commit, when, move["action"], move["name"], _path(move, "from"),
                                       _path(move, "to"), move["rule"], move["age_days"], move["last_read"],
                                       move["reads"], move["window_days"] or _window(move["rule"])))
                if len(found) >= limit:
                    return found
    return found


_WINDOW = re.compile(r"(?:after_days[.\w/-]* = |window_days = |idle_days = )(\d{1,6})")


def _window(rule: str | None) -> int | None:
    """The days a move's reads were counted in, as its rule names them (`cool.after_days.gtd = 7`,
    `promote.window_days = 14`, `archive.idle_days = 90`); None for a rule that names none."""
    found = _WINDOW.search(rule or "")
    return int(found[1]) if found else None


def _path(move: dict, key: str) -> str:
    """A move's `from` or `to` as a path: janitor commits record just the tiers (older ones the
    paths), since the paths follow from the name."""
    value: str = move[key]
    return f"{value}/{move['name']}{names.SUFFIX}" if value in names.TIERS else value


def why(repo: Repo, cfg: Config, tier: str, name: str, now: int) -> Why:
    """Everything the janitor knows and would decide about one memory."""
    at = history.head(repo)
    changed = history.last_changed(repo, at, [name]).get(name)
    reads = sorted(access.reads_by_name(repo).get(name, []))
    try:
        kind = memory.parse(safefs.read(repo.root, f"{tier}/{name}", cfg.max_memory_bytes)).type
    except StrataError:
        kind = "note"
    from strata_git.ops import janitor

    held = [s for s in janitor.states(repo, cfg, at, now, every=True) if (s.tier, s.name) == (tier, name)] if at else []
    state = rules.MemoryState(name, tier, changed if changed is not None else now, kind,
                              standing=bool(held and held[0].standing))
    last_move = next(iter(migrations(repo, name, limit=1)), None)
    decision = rules.plan([state], {name: reads}, cfg, now).moves
    return Why(
        name=names.display(name), tier=tier, path=f"{tier}/{name}", type=kind,
        last_changed=contract.day(changed), age_days=(now - changed) // rules.DAY if changed else None,
        reads_last_90_days=sum(1 for t in reads if t >= now - 90 * rules.DAY),
        last_read=contract.day(reads[-1]) if reads else None,
        in_tier_since=(last_move.date if last_move and last_move.target.startswith(tier + "/")
                       else contract.day(changed)),
        moved_by=last_move, would_move_now=decision[0] if decision else None,
        next=rules.next_move(state, reads, cfg, now),
    )


# -- a memory's history: its versions and moves -------------------------------------------------

_VERSIONS = ("--format=%x01%H%x00%ct%x00%an%x00%s%x00"
             + "%x00".join(contract.log_field(k, "%x1e") for k in (contract.MOVE, contract.MACHINE, contract.ACTION))
             + "%x00")
_RAW = re.compile(r":\d{6} \d{6} ([0-9a-f]{40,64}) ([0-9a-f]{40,64}) ([AMDT])")
_NO_BLOB = re.compile(r"^0+$")


class Version(NamedTuple):
    """What one commit did to one memory (`git strata history`)."""
    commit: str
    time: int  # the commit's date (as its machine's clock said)
    author: str  # shown safely: no control or direction-changing characters
    machine: str  # the Strata-Machine trailer: the clone that made it ("" for a plain git commit)
    action: str  # create, edit, delete, or a move: cool, archive, promote, recall, moved
    source: str  # the tier it was in before ("" if it was not)
    tier: str  # the tier it is in after ("" once deleted)
    blob: str  # its content after ("" once deleted)
    why: str  # the janitor's rule for a move, else the commit's subject
    previous: str = ""  # its content before ("" if it had none)
    diff: str | None = None  # with --diff: the change to its text (None: no change of content)

    @property
    def date(self) -> str | None:
        return contract.day(self.time)

    def as_dict(self) -> dict[str, Any]:
        return {"commit": self.commit, "time": self.time, "date": self.date, "author": self.author,
                "machine": self.machine, "action": self.action, "from": self.source, "to": self.tier,
                "blob": self.blob, "why": self.why, **({"diff": self.diff} if self.diff is not None else {})}


def versions(repo: Repo, name: str, limit: int = 100) -> list[Version]:
    """Each commit that changed or moved memory `name` (with .md) in any tier, newest first: every
    commit on every line merged in, at its own time (merge commits are left out: what they bring
    is listed as the commits that made it). Commit dates, authors and trailers come from other
    machines: each is checked, and a commit whose date no clock gives is left out with a warning."""
    if repo.head() is None:
        return []
    paths = [names.tier_path(tier, name) for tier in names.TIERS]
    out = repo.git("log", "-z", "--raw", "--no-renames", "--no-merges", "--full-history", "--no-abbrev",
                   _VERSIONS, "HEAD", "--", *paths).decode("utf-8", "surrogateescape")
    found: list[Version] = []
    for record in out.split("\x01")[1:]:
        fields = record.split("\0")
        if len(fields) < 8:
            continue
        commit, stamp, author, subject, moves, machine, action = fields[:7]
        when = untrusted.stamp(stamp)
        if when is None:
            untrusted.warn(f"commit {commit[:12]}", f"its date ({stamp[:24]}) is not between 1970 and 9999; "
                           "left out of the history")
            continue
        before, after = _sides(fields[7:], paths)
        tiers = (before[0] if before else "", after[0] if after else "")
        # A move record counts only where git shows that move (a trailer is anyone's to write).
        move = next((m for m in map(untrusted.move, filter(None, (t.strip() for t in moves.split("\x1e"))))
                     if m is not None and m["name"] == names.display(name)
                     and (_path(m, "from"), _path(m, "to")) == tuple(names.tier_path(t, name) for t in tiers)), None)
        if move is not None:
            kind, why = move["action"], move["rule"] or subject
        elif before and after and tiers[0] != tiers[1]:
            kind, why = ("recall" if "recall" in action.split(",") else "moved"), subject
        else:
            kind, why = ("create" if not before else "delete" if not after else "edit"), subject
        found.append(Version(commit, when, entries.clean(author)[:200],
                             untrusted.text(machine.strip(), 64) or "", kind, tiers[0], tiers[1],
                             after[1] if after else "", entries.clean(why)[:300], before[1] if before else ""))
        if len(found) >= limit:
            break
    return found


def _sides(raw: list[str], paths: list[str]) -> tuple[tuple[str, str] | None, tuple[str, str] | None]:
    """(tier, blob) the memory had before and after one commit, from its `--raw -z` lines."""
    before = after = None
    for i in range(len(raw) - 1):  # (":<modes> <old> <new> <status>", path) pairs, after git's blank ones
        found = _RAW.match(raw[i].lstrip("\n"))
        if found is None or raw[i + 1] not in paths:
            continue
        old, new, status = found.groups()
        tier = raw[i + 1].split("/", 1)[0]
        if status != "A" and not _NO_BLOB.match(old):
            before = (tier, old)
        if status != "D" and not _NO_BLOB.match(new):
            after = (tier, new)
    return before, after


def with_diffs(found: list[Version], read: Callable[[list[str]], dict[str, bytes | None]],
               max_bytes: int) -> list[Version]:
    """Each version with the change it made to the memory's text, as a unified diff whose lines are
    shown safely (control characters escaped); a move that kept the content has none (None)."""
    import difflib

    texts = read(sorted({b for v in found for b in (v.blob, v.previous) if b}))

    def lines(blob: str) -> list[str]:
        if not blob:
            return []
        data = texts.get(blob)
        if data is None:
            return [f"(version {blob[:12]} is not in this clone and could not be fetched)"]
        return data[:max_bytes].decode("utf-8", "replace").splitlines()

    out = []
    for v in found:
        if v.blob == v.previous:
            out.append(v)
            continue
        diff = difflib.unified_diff(lines(v.previous), lines(v.blob), f"a/{v.previous[:12] or 'nothing'}",
                                    f"b/{v.blob[:12] or 'nothing'}", lineterm="")
        out.append(v._replace(diff="".join(entries.shown(line) + "\n" for line in diff)))
    return out
