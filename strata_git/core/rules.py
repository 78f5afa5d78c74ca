"""The janitor's decisions: a pure function of the memories at HEAD, their reads, the config
and the time. No git, no files: the same inputs give the same plan on every machine.

Rules (defaults in `.strata/config.toml`):

- cool: an active memory whose last change is older than its folder's threshold (the longest
  matching `cool.after_days` prefix; `never` disables) moves to cooled/, unless its type is
  in `cool.never_types` or is a rejection (always: they belong in every boot context);
- promote: a cooled memory read at least `promote.reads` times in the last
  `promote.window_days` days moves back to active/ (checked before archiving);
- archive: a cooled memory whose last change is older than `archive.idle_days` and that was
  read at most `archive.max_reads` times in that window moves to archive/, unless it is a
  decision or rejection that still stands (see core/context.py: not `status: retired` or
  `superseded`, and named in no other one's `supersedes:`): that stays in cooled/, in every boot
  context, until it is retired.

A memory with uncommitted changes is never moved; it is reported as skipped.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple

from strata_git.core import contract, names, untrusted
from strata_git.core.config import Config

DAY = 86400


class MemoryState(NamedTuple):
    """What the planner knows of one memory at HEAD."""

    name: str  # with the .md suffix
    tier: str
    changed: int  # unix time of the last content change (migrations excluded)
    type: str = "note"
    dirty: bool = False  # uncommitted changes in the working tree
    standing: bool = False  # a decision or rejection not retired nor superseded: never archived


class Move(NamedTuple):
    action: str  # cool, archive, promote
    name: str
    src: str  # tier
    dst: str
    rule: str
    age_days: int
    last_read: int | None
    reads: int  # in the window the rule looks at
    window_days: int = 0  # that window

    @property
    def paths(self) -> tuple[str, str]:
        return f"{self.src}/{self.name}", f"{self.dst}/{self.name}"

    def as_dict(self) -> dict:
        src, dst = self.paths
        return {"action": self.action, "name": names.display(self.name), "from": src, "to": dst, "rule": self.rule,
                "age_days": self.age_days, "last_read": self.last_read, "reads": self.reads,
                "window_days": self.window_days}

    def trailer(self) -> dict:
        """What the commit records: as_dict with tiers for from and to (the paths follow from the
        name), so that a move's line is about 175 bytes plus its name; not the window, which the
        rule names (audit.py reads it back from there). audit.py reads both forms of from and to."""
        found = {**self.as_dict(), "from": self.src, "to": self.dst}
        del found["window_days"]
        return found


class Skip(NamedTuple):
    name: str
    reason: str


class Plan(NamedTuple):
    head: str
    now: int
    moves: tuple[Move, ...]
    skipped: tuple[Skip, ...]

    def summary(self) -> str:
        """`cool 3, archive 1, promote 1` (actions in a fixed order), or `nothing to do`."""
        counts = {a: sum(1 for m in self.moves if m.action == a) for a in ("cool", "archive", "promote")}
        return ", ".join(f"{a} {n}" for a, n in counts.items() if n) or "nothing to do"

    def as_dict(self) -> dict:
        return {"head": self.head, "now": self.now, "summary": self.summary(),
                "moves": [m.as_dict() for m in self.moves],
                "skipped": [{"name": names.display(s.name), "reason": s.reason} for s in self.skipped]}


def _reads_since(reads: Iterable[int], since: int) -> int:
    return sum(1 for t in reads if t >= since)


def _decide(m: MemoryState, reads: list[int], cfg: Config, now: int) -> Move | Skip | None:
    age = now - m.changed
    last_read = max(reads) if reads else None
    if m.tier == "active":
        if m.type == "rejection" or m.type in cfg.never_cool_types:  # rejections, whatever the config says
            return None
        days, key = cfg.cool_rule(m.name)
        if days is None or age < days * DAY:
            return None
        move = Move("cool", m.name, "active", "cooled", f"{key} = {days}", age // DAY, last_read,
                    _reads_since(reads, now - days * DAY), days)
    elif m.tier == "cooled":
        recent = _reads_since(reads, now - cfg.promote_window_days * DAY)
        idle = _reads_since(reads, now - cfg.archive_idle_days * DAY)
        if cfg.promote_reads and recent >= cfg.promote_reads:
            move = Move("promote", m.name, "cooled", "active",
                        f"promote.reads = {cfg.promote_reads} in promote.window_days = {cfg.promote_window_days}",
                        age // DAY, last_read, recent, cfg.promote_window_days)
        elif age >= cfg.archive_idle_days * DAY and idle <= cfg.archive_max_reads and not m.standing:
            move = Move("archive", m.name, "cooled", "archive",
                        f"archive.idle_days = {cfg.archive_idle_days}, archive.max_reads = {cfg.archive_max_reads}",
                        age // DAY, last_read, idle, cfg.archive_idle_days)
        else:
            return None
    else:
        return None
    return Skip(m.name, f"it has uncommitted changes (would {move.action})") if m.dirty else move


def plan(memories: Iterable[MemoryState], reads: dict[str, list[int]], cfg: Config, now: int,
         head: str = "") -> Plan:
    """Every move the rules call for, in name order; `reads` maps a name to its read times."""
    moves: list[Move] = []
    skipped: list[Skip] = []
    for m in sorted(memories, key=lambda m: (m.name, m.tier)):
        decision = _decide(m, sorted(reads.get(m.name, ())), cfg, now)
        if isinstance(decision, Move):
            moves.append(decision)
        elif isinstance(decision, Skip):
            skipped.append(decision)
    return Plan(head, now, tuple(moves), tuple(skipped))


def next_move(m: MemoryState, reads: list[int], cfg: Config, now: int) -> str:
    """When the memory would move next if nothing changed (for `git strata why`)."""
    if m.tier == "active":
        if m.type in cfg.never_cool_types:
            return f"never cools automatically (type {m.type} is in cool.never_types)"
        days, key = cfg.cool_rule(m.name)
        if days is None:
            return f"never cools automatically ({key} = never)"
        return f"cools after {days} days without changes ({key}), on day {contract.day(m.changed + days * DAY)}"
    if m.tier == "cooled" and m.standing:
        return (f"stays cooled while it stands (a {m.type} in the boot context): it can archive once retired "
                f"(`status: retired` in it, or another decision's `supersedes:` naming it); promoted after "
                f"{cfg.promote_reads} reads within {cfg.promote_window_days} days")
    if m.tier == "cooled":
        return (f"archived once unchanged for {cfg.archive_idle_days} days with at most {cfg.archive_max_reads} "
                f"read(s) in them (from {contract.day(m.changed + cfg.archive_idle_days * DAY)}); promoted after "
                f"{cfg.promote_reads} reads within {cfg.promote_window_days} days")
    return "stays archived until recalled"


def parse_when(text: str, now: int) -> int:
    """`--now`: an ISO date or time (UTC unless it says), `@<unix time>`, or `+<N>d` from now."""
    import datetime

    from strata_git.errors import StrataError

    value = text.strip()
    try:
        if value.startswith("@"):
            found = int(value[1:])
        elif value.startswith("+") and value.endswith("d"):
            found = now + int(value[1:-1]) * DAY
        else:
            parsed = datetime.datetime.fromisoformat(value)
            found = int((parsed if parsed.tzinfo else parsed.replace(tzinfo=datetime.UTC)).timestamp())
    except (ValueError, OverflowError):
        raise StrataError(f"cannot read the time {text[:40]!r}",
                          "use a date like 2027-01-31, a time like 2027-01-31T12:00:00+00:00, @<unix time> or +30d"
                          ) from None
    if untrusted.stamp(found) is None:
        raise StrataError(f"the time {text[:40]!r} is outside what a commit date can hold (1970 to 9999)",
                          "give a time between 1970-01-01 and 9999-12-31")
    return found



