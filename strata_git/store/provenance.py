"""Where a memory (or its summary) came from, as history records it: the last commit that changed
it, its interface and agent from the commit's trailers, and whether the file still matches."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from strata_git.core import contract, names
from strata_git.gitio.git import Repo
from strata_git.store import summary

_LOG_FORMAT = (f"--format=%H%x00%cI%x00%an%x00{contract.log_field(contract.VIA)}%x00"
               f"{contract.log_field(contract.AGENT)}%x00{contract.log_field(contract.SUMMARY, '%x1e')}")
# Commits that move a memory without changing it: the janitor's, and recalls.
_MOVES = (contract.grep(contract.MOVE), contract.grep(contract.ACTION, "recall"))


def _last_change(repo: Repo, paths: list[str], moves_too: bool = False) -> tuple[list[str], set[str]]:
    """The fields of the last commit that changed `paths` (moves and recalls skipped unless
    `moves_too`), and the blob ids it left at those paths."""
    skip = [] if moves_too else ["--invert-grep", *_MOVES]
    out = repo.git("log", "-1", "--no-merges", "--raw", "--no-abbrev", "--no-renames", *skip, _LOG_FORMAT, "HEAD",
                   "--", *paths, check=False)  # no commits yet: git fails, nothing printed
    header, _, raw = out.decode("utf-8", "replace").partition("\n\n:")
    blobs = {line.split("\t", 1)[0].split(" ")[3] for line in (":" + raw).splitlines() if line.startswith(":")}
    return header.rstrip("\n").split("\0"), blobs


def _blob_id(data: bytes, like: str) -> str:
    digest = hashlib.sha256() if len(like) == 64 else hashlib.sha1()  # git's object id
    digest.update(b"blob %d\0" % len(data))
    digest.update(data)
    return digest.hexdigest()


def _changed_since(repo: Repo, paths: list[str], data: bytes | None, blobs: set[str]) -> bool:
    """Whether the file differs from what history has: by hashing `data` (one process fewer) when a
    commit left exactly that blob, else by asking git."""
    if data is not None and blobs and _blob_id(data, next(iter(blobs))) in blobs:
        return False
    return repo.dirty(*paths)


def provenance(repo: Repo, name: str, data: bytes | None = None) -> dict[str, Any]:
    """Where the memory `name` (with .md) came from, as history records it: the last commit that
    changed its content (migrations, recalls and merges skipped). `via` is git-strata's interface
    (cli, mcp, api) from the commit's trailer, or "git" for a commit made without git-strata
    (history is as trustworthy as whoever can commit and push to it); "uncommitted" when the
    file differs from what was committed. `data`, the file's bytes, saves asking git that."""
    paths = [names.tier_path(t, name) for t in names.TIERS]
    fields, blobs = _last_change(repo, paths)
    if len(fields) < 5 or _changed_since(repo, paths, data, blobs):
        return {"via": "uncommitted"}
    commit, when, author, via, agent = fields[:5]
    out: dict[str, Any] = {"via": via.strip() or "git", "agent": agent.strip() or None, "author": author, "at": when,
           "commit": commit[:12]}
    if data is not None and _blob_id(data, commit) not in blobs:
        out["merged"] = True  # a sync's merge combined this commit's text with another machine's
    return out


def summary_provenance(repo: Repo, name: str) -> dict[str, Any]:
    """Who made the summary of `name`: the janitor when it cooled (its commit records the summary
    in a Strata-Summary trailer), or someone who edited the file afterwards (`edited`)."""
    path = summary.path(name)
    fields, blobs = _last_change(repo, [path], moves_too=True)
    if len(fields) < 6 or _changed_since(repo, [path], None, blobs):
        return {"via": "uncommitted"}
    commit, when, author, _, _, records = fields[:6]
    made = any(f'"name":{json.dumps(names.display(name), ensure_ascii=False)}' in r for r in records.split("\x1e"))
    return {"via": "janitor" if made else "edited", "author": author, "at": when, "commit": commit[:12]}
