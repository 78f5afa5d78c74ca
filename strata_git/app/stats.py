"""`git strata stats`: what the memory holds, how it moves, how it is read, and what it saves.

- memories and bytes per tier (as on disk, archive/ from the shadow index when pruned);
- migrations per ISO week (the janitor's commits, last 12 weeks with any) and recalls;
- reads per tier and per interface (the access records, all machines' that this clone knows);
- index freshness: whether the search catalog (behind index.md and search) and the shadow
  index reflected HEAD when the command started (it then brings them up to date);
- the boot context's size at the default budget against all active memory (tokens saved);
- archive prune savings: archived blobs not held here and their bytes.
"""

from __future__ import annotations

import datetime
import time
from collections import Counter, defaultdict
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NamedTuple

from strata_git.core import names, untrusted
from strata_git.gitio import partial
from strata_git.gitio.git import Repo
from strata_git.ops import audit
from strata_git.store import access, catalog, shadow

if TYPE_CHECKING:
    from strata_git.core.context import Context

WEEKS = 12


class Index(NamedTuple):
    """How fresh the indexes were before this command refreshed them."""
    head: str | None
    catalog_fresh: bool
    shadow_commit: str | None
    shadow_fresh: bool


class Saving(NamedTuple):
    """The boot context at the default budget against loading all active memory."""
    budget: int
    tokens: int
    active_memories: int
    active_tokens: int
    tokens_saved: int
    ratio: float | None  # active_tokens / tokens


class Pruned(NamedTuple):
    pruned: bool
    archived_memories: int
    blobs_not_held_here: int
    bytes_not_held_here: int


class Stats(NamedTuple):
    tiers: dict[str, dict[str, int]]  # {tier: {memories, bytes}}
    migrations_per_week: list[dict[str, Any]]  # [{week, ACTION: count...}], newest first
    reads_per_tier: dict[str, dict[str, int]]  # {tier: {total, last_30_days}}
    reads_per_interface: dict[str, int]
    indexes: Index  # (`index` in JSON)
    context: Saving
    archive: Pruned
    derived_bytes: dict[str, int]

    def as_dict(self) -> dict[str, Any]:
        return {"tiers": self.tiers, "migrations_per_week": self.migrations_per_week,
                "reads": {"per_tier": self.reads_per_tier, "per_interface": self.reads_per_interface},
                "index": self.indexes._asdict(), "context": self.context._asdict(), "archive": self.archive._asdict(),
                "derived_bytes": self.derived_bytes}


def _week(stamp: int) -> str:
    stamp = min(max(stamp, 0), untrusted.MAX_TIME)  # checked where read; clamped here all the same
    year, week, _ = datetime.datetime.fromtimestamp(stamp, datetime.UTC).isocalendar()
    return f"{year}-W{week:02d}"


def _since(repo: Repo) -> int | None:
    """The start of the oldest week that can be among the last WEEKS with migrations, with a margin
    as wide again (a week whose records are all unreadable shows none): the moves of older commits
    are not read, which at a million archived was most of the command's time."""
    if repo.head() is None:
        return None
    from strata_git.core import contract
    from strata_git.ops import timeline

    stamps = {untrusted.stamp(s) for s in repo.git("log", "--format=%ct", contract.grep(contract.MOVE), "HEAD",
                                                   "--").decode().split()}
    mondays = sorted({timeline.monday(t) for t in stamps if t is not None}, reverse=True)
    return mondays[2 * WEEKS - 1] if len(mondays) >= 2 * WEEKS else None


def gather(repo: Repo, context: Callable[[], Context], now: int | None = None) -> Stats:
    """The figures `git strata stats` shows; `context()` builds the boot context, bringing index.md
    and the catalog up to date (called after the indexes' freshness is noted)."""
    now = int(time.time()) if now is None else now
    head = repo.head()
    tree = repo.git("rev-parse", "HEAD^{tree}").decode().strip() if head else ""
    with catalog.connect(repo) as db:  # how fresh the indexes were before this command refreshes them
        catalog_fresh = bool(tree) and catalog.get_meta(db, "tree") == tree
    shadow_at = shadow.reflects(repo)
    ctx = context()  # refreshes index.md and the catalog first
    with catalog.connect(repo) as db:
        entries = catalog.entries(db)
    shadow.refresh(repo)
    rows = shadow.all_rows(repo)
    tiers = {t: {"memories": 0, "bytes": 0} for t in names.TIERS}
    for e in entries:
        if e.tier != "archive":
            tiers[e.tier]["memories"] += 1
            tiers[e.tier]["bytes"] += e.size
    for row in rows:
        tiers["archive"]["memories"] += 1
        tiers["archive"]["bytes"] += row.size

    weeks: dict[str, Counter[str]] = defaultdict(Counter)
    for move in audit.migrations(repo, limit=1 << 30, since=_since(repo)):
        weeks[_week(move.time)][move.action] += 1
    migrations = [{"week": w, **dict(sorted(weeks[w].items()))} for w in sorted(weeks, reverse=True)[:WEEKS]]

    reads: dict[str, Counter[str]] = {t: Counter() for t in names.TIERS}
    by_via: Counter[str] = Counter()
    for item in access.read_all(repo):
        tier = item["tier"] if item.get("tier") in reads else "active"
        reads[tier]["total"] += 1
        if item["t"] >= now - 30 * 86400:
            reads[tier]["last_30_days"] += 1
        by_via[str(item.get("via", "?"))] += 1

    blobs = sorted({row.blob for row in rows})
    sizes = {row.blob: row.size for row in rows}
    missing = partial.absent(repo, blobs)
    return Stats(
        tiers=tiers, migrations_per_week=migrations,
        reads_per_tier={t: {"total": c["total"], "last_30_days": c["last_30_days"]} for t, c in reads.items()},
        reads_per_interface=dict(sorted(by_via.items())),
        indexes=Index(head=head, catalog_fresh=catalog_fresh, shadow_commit=shadow_at or None,
                      shadow_fresh=bool(head) and shadow_at == head),
        context=Saving(budget=ctx.budget, tokens=ctx.tokens, active_memories=ctx.active_memories,
                       active_tokens=ctx.active_tokens, tokens_saved=max(0, ctx.active_tokens - ctx.tokens),
                       ratio=round(ctx.active_tokens / ctx.tokens, 1) if ctx.tokens else None),
        archive=Pruned(pruned=partial.is_pruned(repo), archived_memories=len(rows), blobs_not_held_here=len(missing),
                       bytes_not_held_here=sum(sizes[b] for b in missing)),
        derived_bytes=catalog.derived_sizes(repo),
    )


def render(s: Stats) -> str:
    lines = [f"{t:<8} {v['memories']:>7} memories {v['bytes']:>12,} bytes" for t, v in s.tiers.items()]
    lines.append("migrations per week: " + ("; ".join(
        f"{m['week']} " + ", ".join(f"{k} {v}" for k, v in m.items() if k != "week") for m in s.migrations_per_week)
        or "none yet"))
    lines.append("reads: " + ", ".join(f"{t} {v['total']} ({v['last_30_days']} in 30 days)"
                                       for t, v in s.reads_per_tier.items())
                 + (" · by " + ", ".join(f"{k} {v}" for k, v in s.reads_per_interface.items())
                    if s.reads_per_interface else ""))
    ix = s.indexes
    lines.append(f"index (before this command refreshed it): search catalog "
                 f"{'fresh' if ix.catalog_fresh else 'behind HEAD'}, shadow index "
                 f"{'fresh' if ix.shadow_fresh else 'at ' + (ix.shadow_commit or 'nothing')[:12]}"
                 f" (HEAD {(ix.head or 'none')[:12]})")
    c = s.context
    lines.append(f"boot context: {c.tokens:,} tokens (budget {c.budget:,}) for {c.active_memories} active "
                 f"memories of about {c.active_tokens:,} tokens: {c.tokens_saved:,} tokens saved"
                 + (f" ({c.ratio}x smaller)" if c.ratio and c.ratio > 1 else
                    " (all of it is smaller than the context's frame)" if c.ratio else ""))
    a = s.archive
    lines.append(f"archive: {a.archived_memories} archived; {a.blobs_not_held_here} pruned from this clone, "
                 f"{a.bytes_not_held_here:,} bytes saved here" + ("" if a.pruned else " (not pruned)"))
    files = ", ".join(f"{name} {size:,} bytes" for name, size in s.derived_bytes.items())
    lines.append(f".git/strata (per-clone state, all rebuildable but machine-id): {files}")
    return "\n".join(lines)
