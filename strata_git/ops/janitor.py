"""One janitor cycle: recover, gather the planner's inputs from HEAD, plan, apply.

The inputs are read from HEAD (names, tiers, types), commit history (last changes) and
the access records, never from the working tree's contents, so two clones at the same
commit with the same records plan the same moves. The working tree only says which
memories have uncommitted changes: those are skipped, never moved.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence, Set
from typing import NamedTuple

from strata_git.core import contract, memory, names, rules
from strata_git.core.config import Config
from strata_git.errors import Refused, StrataError
from strata_git.gitio.git import Repo, identity_env
from strata_git.ops import archive, txn
from strata_git.store import access, history, records, summary


class Result(NamedTuple):
    plan: rules.Plan
    commit: str | None  # None for a dry run or an empty plan
    recovered: str
    flushed: int
    archive: dict | None = None  # what archive.prune did after the cycle, or its error
    summaries: tuple = ()  # summary.Made for each memory cooled with summaries on

    def as_dict(self) -> dict:
        return {**self.plan.as_dict(), "commit": self.commit, "recovered": self.recovered,
                "flushed_access_records": self.flushed, "applied": self.commit is not None,
                "archive": self.archive,
                "summaries": [{"name": names.display(m.name), "made": m.text is not None, "why": m.why}
                              for m in self.summaries]}


def _tree(repo: Repo, commit: str) -> list[tuple[str, str, str]]:
    """(tier, name, blob id) of every memory in active/ and cooled/ at `commit`."""
    found = []
    for path, entry in repo.ls_tree(commit, "active", "cooled").items():
        where = names.split_path(path)
        if where and where[1].endswith(names.SUFFIX) and entry.type == "blob":
            found.append((where[0], where[1], entry.oid))
    return found


def _types(repo: Repo, oids: list[str]) -> dict[str, str]:
    """{blob id: memory type}: from the catalog's cache, else parsed (one cat-file process)."""
    from strata_git.store import catalog

    with catalog.connect(repo) as db:
        found = catalog.blob_types(db, oids)
        missing = [o for o in oids if o not in found]
        parsed = _parse_types(repo, missing)
        catalog.remember_blob_types(db, parsed)
    return found | parsed


def _parse_types(repo: Repo, oids: list[str]) -> dict[str, str]:
    found = {}
    for oid, raw in zip(oids, repo.objects(oids), strict=True):
        try:
            found[oid] = memory.parse(raw or b"", oid).type
        except StrataError:
            found[oid] = "note"
    return found


def _dirty(repo: Repo) -> set[str]:
    """Paths in active/ and cooled/ with staged or unstaged changes, or hidden from status."""
    dirty = {path for _, path in repo.status("active", "cooled", untracked="no")}
    flagged, _ = repo.tracked("active", "cooled", flags=("-v",))
    dirty |= {item[2:] for item in flagged if item[0].islower() or item[0] == "S"}
    return dirty


def states(repo: Repo, cfg: Config, at: history.Head, now: int, every: bool = False) -> list[rules.MemoryState]:
    """What the planner knows of each memory at `at`. `every`: each one's type and standing, even
    when nothing calls for them yet (for `why`)."""
    tree = _tree(repo, at.commit)
    times = history.last_changed(repo, at, [name for _, name, _ in tree])
    # Only active memories old enough to cool need their type (rejections never cool): read just those.
    def candidate(tier: str, name: str) -> bool:
        days = cfg.cool_days_for(name)
        return tier == "active" and days is not None and now - times.get(name, now) >= days * rules.DAY
    # A cooled decision or rejection that stands is not archived: when any cooled memory is old
    # enough to archive, every type is needed (cached by blob), and the standing ones' frontmatter.
    def archivable(tier: str, name: str) -> bool:
        return tier == "cooled" and now - times.get(name, now) >= cfg.archive_idle_days * rules.DAY
    every = every or any(archivable(tier, name) for tier, name, _ in tree)
    types = _types(repo, sorted({oid for tier, name, oid in tree if every or candidate(tier, name)}))
    standing = _standing(repo, [(t, n, o) for t, n, o in tree if types.get(o) in ("decision", "rejection")]) \
        if every else set()
    dirty = _dirty(repo)
    return [rules.MemoryState(name, tier, times.get(name, now), types.get(oid, "note"),
                                f"{tier}/{name}" in dirty, name in standing) for tier, name, oid in tree]


def _standing(repo: Repo, kept: list[tuple[str, str, str]]) -> set[str]:
    """Names of the decisions and rejections among `kept` (tier, name, blob id) that stand: as the
    boot context tells (core/context.standing), from their text at HEAD."""
    from strata_git.core import context

    said = {name: context.standing((raw or b"").decode("utf-8", "replace"), f"{tier}/{name}", "decision")
            for (tier, name, _), raw in zip(kept, repo.objects([o for _, _, o in kept]), strict=True)}
    retired = {n for s in said.values() for n in s.supersedes} | {n for n, s in said.items() if s.retired}
    return set(said) - retired


def _clashes(held: list[rules.MemoryState]) -> set[str]:
    """Collision keys of names held more than once: in two tiers, or spelled two ways (case,
    accents). Which one a name means is unclear, so the janitor moves none of them."""
    seen: dict[str, int] = {}
    for m in held:
        key = names.collision_key(m.name)
        seen[key] = seen.get(key, 0) + 1
    return {key for key, n in seen.items() if n > 1}


def _blocked_removed(repo: Repo, plan: rules.Plan, clashes: Set[str] = frozenset()) -> rules.Plan:
    """Skip a move whose destination already has something on disk (say an untracked file):
    moving there would overwrite it; and a memory whose name `write` refuses (it came in through
    plain git or a sync): moved, it could not be inspected by name, and its name could forge the
    lines that report it."""
    moves, skipped = [], list(plan.skipped)
    for move in plan.moves:
        dst = move.paths[1]
        why = names.refusal(move.name)
        if why:
            skipped.append(rules.Skip(move.name, f"its name is one git-strata refuses ({why}); rename it with "
                                                 f"`git mv` (would {move.action})"))
        elif names.collision_key(move.name) in clashes:
            skipped.append(rules.Skip(move.name, "another memory has this name in another tier, or one that "
                                                 f"differs only by case or accents; see `git strata status` "
                                                 f"(would {move.action})"))
        elif os.path.lexists(os.path.join(repo.root, dst)):
            skipped.append(rules.Skip(move.name, f"{dst} already exists on disk (would {move.action})"))
        else:
            moves.append(move)
    return plan._replace(moves=tuple(moves), skipped=tuple(sorted(skipped)))


def run(repo: Repo, cfg: Config, *, dry_run: bool, now: int | None = None) -> Result:
    """One cycle; the caller holds the repository lock."""
    recovered = "not checked (dry run)" if dry_run else txn.recover(repo)
    txn.refuse_unless_settled(repo)
    at = history.head(repo)
    if at is None:
        raise Refused("the repository has no commits yet", "run `git strata init` first")
    flushed = 0 if dry_run else access.flush(repo, (cfg.janitor_name, cfg.janitor_email))
    when = int(time.time()) if now is None else now
    held = states(repo, cfg, at, when)
    plan = _blocked_removed(repo, rules.plan(held, access.reads_by_name(repo), cfg, when, at.commit), _clashes(held))
    if dry_run or not plan.moves:
        return Result(plan, None, recovered, flushed)
    made, added = _summaries(repo, cfg, plan)
    commit = apply(repo, plan, cfg, date=now, added=added, notes=[m.trailer(cfg.cool_summary) for m in made])
    return Result(plan, commit, recovered, flushed, summaries=tuple(made))


def cycle(repo: Repo, cfg: Config, dry_run: bool = False, now: int | None = None) -> Result:
    """`git strata janitor`: one cycle under the repository lock (it waits its turn behind writes,
    up to txn.LOCK_WAIT; refused at once if another janitor runs), then, with archive.prune on, the
    archive's push, verification and prune (a failure is reported and the next cycle retries);
    index.md and the shadow index follow."""
    with txn.locked(repo, role="janitor") as recovered:
        result = run(repo, cfg, dry_run=dry_run, now=now)
        if recovered and result.recovered == "clean":
            result = result._replace(recovered=recovered)
        if cfg.archive_prune and not dry_run:
            try:
                result = result._replace(archive=archive.archive(repo, cfg).as_dict())
            except StrataError as e:
                result = result._replace(archive={"error": e.message, "hint": e.hint})
    if result.commit or result.archive:  # only the moved paths changed: no need to rescan every file
        moved = [p for move in result.plan.moves for p in move.paths] if result.commit else []
        txn.follow_head(repo, cfg, since=result.plan.head, paths=moved)
    return result


def _summaries(repo: Repo, cfg: Config, plan: rules.Plan) -> tuple[list[summary.Made], dict[str, bytes | None]]:
    """Summaries made for the memories cooling, and {summary path: content, or None to delete}: a
    memory that cools without a new summary, or goes back to active, loses any older one (it
    described text that may since have changed)."""
    cooling = [m for m in plan.moves if m.action == "cool"]
    made = []
    if cfg.cool_summary != "none" and cooling:
        contents = repo.objects([f"{plan.head}:{m.paths[0]}" for m in cooling])
        made = summary.make(repo, cfg, [(m.name, raw) for m, raw in zip(cooling, contents, strict=True)])
    added: dict[str, bytes | None] = {summary.path(m.name): m.text.encode("utf-8") for m in made if m.text is not None}
    stale = [summary.path(m.name) for m in plan.moves if m.action in ("cool", "promote")]
    held = repo.tree_entries(plan.head, [p for p in stale if p not in added])
    return made, {**dict.fromkeys(held), **added}


def message(plan: rules.Plan, notes: Sequence[str] = ()) -> str:
    """Subject `strata: cool 3, archive 1`, then one short JSON trailer per move. (An archived
    memory's shadow record lives beside history, on the shadow ref: see records.py.)"""
    trailers = [(contract.MOVE, contract.trailer_value(m.trailer())) for m in plan.moves]
    lines = [contract.trailers([*trailers, (contract.PLANNED_AT, str(plan.now))]), *notes]
    return f"strata: {plan.summary()}\n\n" + "\n".join(lines) + "\n"


def write_records(repo: Repo, cfg: Config, moves: list[tuple[str, str]], head: str) -> dict[str, str]:
    """Shadow records for the memories `moves` archive, on this machine's shadow ref, before the
    commit that archives them (a record is keyed by blob, so one left by a killed cycle is
    simply there already when the cycle runs again); {blob: its record's id}, which the commit
    names (Strata-Record) so that no record a peer pushes later can stand in for it."""
    sources = [src for src, dst in moves if dst.startswith("archive/")]
    if not sources:
        return {}
    entries = repo.tree_entries(head, sources)
    blobs = sorted({oid for _, oid in entries.values()})
    # A memory embedded for meaning search takes its vectors along (store/meaning.py).
    from strata_git.store import meaning

    by_blob = meaning.carried(repo, cfg.search_model, blobs)
    made = {blob: records.make(raw, blob, cfg.record_max_terms, by_blob.get(blob))
            for blob, raw in zip(blobs, repo.objects(blobs), strict=True) if raw is not None}
    return records.write(repo, made, (cfg.janitor_name, cfg.janitor_email))


def apply(repo: Repo, plan: rules.Plan, cfg: Config, date: int | None = None,
          added: dict[str, bytes | None] | None = None, notes: Sequence[str] = ()) -> str:
    """Make the plan's one commit and bring index and working tree to it; the new commit id.
    `added` are files the commit also writes or (None) deletes: summaries; `notes` more trailer lines."""
    moves = [m.paths for m in plan.moves]
    bound = write_records(repo, cfg, moves, plan.head)
    notes = [*notes, *(f"{contract.RECORD}: {blob} {note}" for blob, note in sorted(bound.items()))]
    return txn.move(repo, plan.head, moves, lambda entries: message(plan, notes),
                    identity_env(cfg.janitor_name, cfg.janitor_email, date), f"strata: {plan.summary()}", added)
