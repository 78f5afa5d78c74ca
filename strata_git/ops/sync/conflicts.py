"""Conflict copies a sync left, and `git strata resolve`.

When two machines edit the same memory in ways `git merge-file` cannot combine, the
merge keeps the remote's version in place and this machine's beside it as
`NAME.conflict-<8 hex>.md` in active/, its frontmatter opening with a
`strata-conflict:` line (where it came from). Both are ordinary memories: search
finds both, and nothing is lost. A conflict is open while that copy exists with
that line; `resolve` closes it in one commit, or the user does by editing and
committing (deleting the copy, or removing the line to keep it as a memory).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any, NamedTuple

from strata_git.core import contract, names, untrusted
from strata_git.core.config import Config
from strata_git.errors import NotFound, Refused
from strata_git.gitio import safefs
from strata_git.gitio.git import Repo
from strata_git.ops import txn
from strata_git.ops.sync import merge
from strata_git.ops.txn import Change
from strata_git.store import index_md

KEEP = ("current", "copy", "both")
HEAD_BYTES = 4096  # the provenance line is the first in the file


def _head(root: str, path: str) -> bytes:
    try:
        with open(os.path.join(root, path), "rb") as f:
            return f.read(HEAD_BYTES)
    except OSError:
        return b""


class OpenConflict(NamedTuple):
    name: str  # the memory's name (or a tracked file's path) the copy stands beside
    copy: str  # the copy's name (or path)
    source: str | None  # where the copy came from, per its provenance line (`from` in JSON)
    commit: str | None
    at: str | None
    memory: bool  # a memory's copy (`resolve` closes it), not another tracked file's

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.name, "copy": self.copy, "from": self.source, "commit": self.commit, "at": self.at,
                "memory": self.memory}


def open_conflicts(root: str, active_names: list[str], tracked: Sequence[str] = ()) -> list[OpenConflict]:
    """Every open conflict: memory copies in active/ (from its names) that carry the provenance
    line or are not text, and copies of other `tracked` files."""
    found = []
    for name in sorted(active_names):
        match = contract.CONFLICT_COPY.match(name)
        if not match:
            continue
        head = _head(root, f"active/{name}")
        info = merge.provenance_of(head)
        if info is None:
            try:
                head.decode("utf-8")
                continue  # text without the line: resolved by hand, now a memory of its own
            except UnicodeDecodeError:
                info = {}  # a binary memory's copy: its name is the only mark
        source, commit, at = (untrusted.text(info.get(k)) for k in ("from", "commit", "at"))  # another machine's
        found.append(OpenConflict(match["of"], names.display(name), source, commit, at, memory=True))
    for path in sorted(tracked):
        match = contract.CONFLICT_FILE_COPY.match(path)
        if match and not names.split_path(path):
            found.append(OpenConflict(match["of"], path, None, None, None, memory=False))
    return found


def pick(root: str, active_names: list[str], name: str) -> tuple[str, str]:
    """(memory name, copy name), both with .md, for NAME (the memory or one of its copies)."""
    open_ = open_conflicts(root, active_names)
    copies = [c for c in open_ if c.copy == name and c.memory]
    if not copies:
        copies = [c for c in open_ if c.name == name and c.memory]
    if not copies:
        raise NotFound(f"no open conflict for {name!r}", "`git strata status` lists open conflicts")
    if len(copies) > 1:
        raise Refused(f"{name} has {len(copies)} conflict copies: "
                      + ", ".join(c.copy for c in copies), "name the copy to resolve")
    return copies[0].name + names.SUFFIX, copies[0].copy + names.SUFFIX


def resolution(root: str, name: str, copy: str, keep: str) -> tuple[dict[str, bytes | None], str]:
    """({path: new bytes, or None to delete}, commit subject) for resolving one conflict."""
    if keep not in KEEP:
        raise Refused(f"--keep must be one of {', '.join(KEEP)}, not {keep!r}",
                      "current: keep the version in place; copy: take the copy's; both: keep both as memories")
    place, beside = f"active/{name}", f"active/{copy}"
    raw = safefs.read(root, beside, 1 << 62)
    shown = names.display(name)
    if keep == "current":
        return {beside: None}, f"strata: resolve {shown}: kept the version in place"
    if keep == "both":
        return {beside: merge.without_provenance(raw)}, f"strata: resolve {shown}: kept both versions"
    if safefs.kind(root, place) != "file":
        raise Refused(f"{shown} is not in active/ here, so its copy cannot replace it",
                      f"run `git strata recall {shown}` first, or resolve with --keep both")
    return {place: merge.without_provenance(raw), beside: None}, f"strata: resolve {shown}: took the copy"


def resolve(repo: Repo, cfg: Config, name: str, keep: str, via: str = "api", agent: str | None = None) -> Change:
    """Close a conflict a sync left, in one commit: keep the version in place, take the copy, or keep both."""
    with txn.locked(repo):
        scan = index_md.refresh(repo, cfg.max_memory_bytes, pruned=False)
        active = [e.name for e in scan.entries if e.tier == "active"]
        norm, copy = pick(repo.root, active, names.display(names.normalize(name)))
        writes, subject = resolution(repo.root, norm, copy, keep)
        for path in writes:
            txn.require_clean(repo, path, "resolve")
        repo.require_identity()

        def stage() -> None:
            for path, data in writes.items():
                if data is None:
                    repo.git("rm", "-q", "--", path)
                else:
                    safefs.write(repo.root, path, data)
                    repo.git("add", "--", path)

        commit = txn.commit(repo, list(writes), stage, subject,
                            {contract.ACTION: f"resolve ({keep})", contract.NAME: names.display(norm),
                             contract.VIA: via}, agent=agent)
        index_md.refresh(repo, cfg.max_memory_bytes, listed=False)
        return Change("resolve", norm, f"active/{norm}", commit, subject.split(": ", 2)[-1])
