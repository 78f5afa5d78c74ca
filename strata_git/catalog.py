"""What memories are on disk, in which tier, with their title, type and tags.

The working tree is the truth: a file changed a moment ago is listed as it is
now. Parsed metadata is cached under the git directory keyed by path, size and
mtime, so listing thousands of memories parses only the files that changed.
Symlinks and special files are never followed; they are reported as problems.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field

from strata_git import memory
from strata_git.errors import StrataError
from strata_git.git import Repo
from strata_git.names import SUFFIX, TIERS

CACHE_VERSION = 1
PLACEHOLDER = ".gitkeep"


@dataclass(frozen=True)
class Entry:
    """One memory file as it is on disk."""

    tier: str
    name: str
    size: int
    title: str = ""
    type: str = "note"
    tags: tuple[str, ...] = ()
    problem: str = ""

    @property
    def path(self) -> str:
        return f"{self.tier}/{self.name}"

    def as_dict(self) -> dict:
        return {"tier": self.tier, "name": self.name[: -len(SUFFIX)], "path": self.path, "size": self.size,
                "title": self.title, "type": self.type, "tags": list(self.tags), "problem": self.problem}


@dataclass
class Scan:
    entries: list[Entry] = field(default_factory=list)
    strays: list[str] = field(default_factory=list)  # non-memory files and links inside tier folders


def _walk(root: str, folder: str, found: list[tuple[str, os.stat_result]], strays: list[str]) -> None:
    try:
        items = list(os.scandir(os.path.join(root, folder)))
    except (FileNotFoundError, NotADirectoryError):
        return
    for item in items:
        rel = f"{folder}/{item.name}"
        if item.is_dir(follow_symlinks=False):
            _walk(root, rel, found, strays)
        elif item.is_file(follow_symlinks=False) and item.name.endswith(SUFFIX) and not item.name.startswith("."):
            found.append((rel, item.stat(follow_symlinks=False)))
        elif item.name != PLACEHOLDER and ".strata-tmp-" not in item.name:
            strays.append(rel)


def _describe(root: str, rel: str, info: os.stat_result, limit: int) -> list:
    try:
        with open(os.path.join(root, rel), "rb") as f:
            raw = f.read(limit + 1)
        if len(raw) > limit:
            return ["", "note", [], f"over the {limit}-byte limit"]
        mem = memory.parse(raw, rel)
        return [mem.title, mem.type, mem.tags, ""]
    except StrataError as e:
        return ["", "note", [], e.message]
    except OSError as e:
        return ["", "note", [], f"unreadable ({e.strerror})"]


def scan(repo: Repo, limit: int = 1024 * 1024) -> Scan:
    """Every memory in every tier, sorted by tier then name."""
    found: list[tuple[str, os.stat_result]] = []
    result = Scan()
    for tier in TIERS:
        _walk(repo.root, tier, found, result.strays)
    cache_path = os.path.join(repo.state_dir(), "meta.json")
    try:
        with open(cache_path, encoding="utf-8") as f:
            cache = json.load(f)
        if cache.get("version") != CACHE_VERSION:
            raise ValueError
    except (OSError, ValueError, AttributeError):
        cache = {"version": CACHE_VERSION, "files": {}}
    old, new, dirty = cache["files"], {}, False
    for rel, info in found:
        stamp = [info.st_size, info.st_mtime_ns, info.st_ino]
        hit = old.get(rel)
        if not hit or hit[0] != stamp:
            hit, dirty = [stamp, _describe(repo.root, rel, info, limit)], True
        new[rel] = hit
        title, kind, tags, problem = hit[1]
        tier, _, name = rel.partition("/")
        result.entries.append(Entry(tier, name, info.st_size, title, kind, tuple(tags), problem))
    if dirty or len(new) != len(old):
        tmp = f"{cache_path}.{os.getpid()}.tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump({"version": CACHE_VERSION, "files": new}, f)
        os.replace(tmp, cache_path)
    result.entries.sort(key=lambda e: (TIERS.index(e.tier), e.name))
    return result
