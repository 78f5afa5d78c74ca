"""Bringing cooled or archived memories back to active/, in one commit.

A recall is a move like the janitor's: it goes through the journaled transaction (txn.move),
so a kill at any instant is finished or undone by the next command. Archived content this
clone does not hold (a pruned clone) is fetched from the archive remote first, in one batch:
if that fails, nothing is changed.
"""

from __future__ import annotations

import json
import os
import shlex

from strata_git.core import contract, names
from strata_git.core.config import Config
from strata_git.errors import BadName, NotFound, Refused
from strata_git.gitio import partial
from strata_git.gitio.git import Repo
from strata_git.ops import archive, locate, txn
from strata_git.ops.txn import Change
from strata_git.store import access, summary


def recall(repo: Repo, cfg: Config, items: str | list[str], via: str = "api", match: bool = False,
           agent: str | None = None, mode: str | None = None) -> list[Change]:
    """A Change for each item: a name or, with `match`, when no memory has that name, a
    query whose best cooled or archived hit is recalled (searched by `mode`, as `search` does)."""
    wanted = [items] if isinstance(items, str) else list(items)
    if not wanted:
        raise BadName("nothing to recall", "give one or more memory names (or a query)")
    with txn.locked(repo):
        txn.refuse_unless_settled(repo)
        found: dict[str, tuple[str, str]] = {}  # name -> (tier, how it was found)
        done = []
        exact = locate.exact_tiers(repo, wanted)
        known: locate.Known | None = None
        for item in wanted:
            if item in exact:
                tier, norm, how = exact[item], names.normalize(item), ""
            else:
                known = known or locate.known(repo)
                tier, norm, how = _target(repo, cfg, item, match, known, mode)
            if tier == "active":
                done.append(Change("recall", norm, names.tier_path("active", norm), None, "already active"))
            elif norm not in found:
                found[norm] = (tier, how)
        if not found:
            return done
        moves = []
        _require_movable(repo, [names.tier_path(tier, norm) for norm, (tier, _) in found.items()])
        for norm, (tier, _) in found.items():
            src, dst = names.tier_path(tier, norm), names.tier_path("active", norm)
            if os.path.lexists(os.path.join(repo.root, dst)):
                raise Refused(f"{dst} already exists on disk, so {src} cannot come back there",
                              f"move {dst} aside, then run recall again")
            moves.append((src, dst))
        repo.require_identity()
        old = repo.head() or ""
        blobs = repo.tree_entries(old, [src for src, _ in moves])
        archive.fetch_blobs(repo, cfg, partial.absent(repo, sorted({b for _, b in blobs.values()})))
        shown = [names.display(n) for n in found]
        subject = f"strata: recall {shown[0]}" if len(shown) == 1 else f"strata: recall {len(shown)} memories"
        trailers = [(contract.ACTION, "recall"),
                    *((contract.RECALL, json.dumps({"name": names.display(n), "from": t}, ensure_ascii=False))
                      for n, (t, _) in found.items()),
                    (contract.VIA, via), *([(contract.AGENT, agent)] if agent else [])]
        stale = dict.fromkeys(repo.tree_entries(old, [summary.path(n) for n in found]))
        commit = txn.move(repo, old, moves, lambda _: contract.message(subject, trailers), {}, subject, added=stale)
        for norm in found:
            access.record(repo, names.display(norm), "active", via)
        txn.follow_head(repo, cfg, since=old, paths=[p for m in moves for p in m])
        return done + [Change("recall", norm, names.tier_path("active", norm), commit,
                              f"moved from {tier}/" + (f" ({how})" if how else ""))
                       for norm, (tier, how) in found.items()]


def _target(repo: Repo, cfg: Config, item: str, match: bool, known: locate.Known,
            mode: str | None = None) -> tuple[str, str, str]:
    """(tier, name, how) of what `item` names, or (`match`) of the best non-active hit for it as a query."""
    from strata_git.store import search

    try:
        tier, norm = locate.locate(repo, item, known)
    except BadName:
        if not match:
            raise
        tier, norm = None, ""
    if tier is not None:
        return tier, norm, ""
    if not match:
        raise locate.not_found(repo, norm)
    found = search.search(repo, item, limit=20, max_bytes=cfg.max_memory_bytes, mode=mode or cfg.search_mode(),
                          model=cfg.search_model, weight=cfg.search_meaning_weight)
    hits = [h for h in found if h.tier != "active"]
    if not hits:
        if norm:
            raise locate.not_found(repo, norm)
        raise NotFound(f"no memory named or matching {item!r}",
                       f"look for it with `git strata search {shlex.quote(item)}`")
    return hits[0].tier, names.normalize(hits[0].name), f"best match for {item!r}"


def _require_movable(repo: Repo, srcs: list[str]) -> None:
    """Cooled or archived files may move if committed and unchanged; an archived one a pruned
    clone keeps out of the working tree (skip-worktree, no file) may too. Two git calls for all."""
    wanted = set(srcs)
    entries, collapsed = repo.tracked(*names.TIERS, flags=("-v",))
    flags = {item[2:]: item[0] for item in entries if item[2:] in wanted}
    # A path inside a folder the sparse index keeps collapsed (archive/) is skip-worktree.
    flags |= {p: "S" for p in wanted if p not in flags and any(p.startswith(c) for c in collapsed)}
    check = [p for p in srcs if not (flags.get(p) == "S" and p.startswith("archive/")
                                     and not os.path.lexists(os.path.join(repo.root, p)))]
    if not check:
        return
    changed = [path for _, path in repo.status(*check, ignored="traditional")]
    for path in changed + [p for p in check if flags.get(p, "H") != "H"]:
        txn.require_clean(repo, path, "recall")  # raises, with the reason for that path
