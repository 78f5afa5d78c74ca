"""What memories are on disk, in which tier, with their title, type and tags.

The working tree is the truth: a file changed a moment ago is listed as it is
now. Parsed metadata is cached under the git directory keyed by path, size,
mtime and inode, so listing thousands of memories parses only the files that
changed. The cache is derived state: any error or version change rebuilds it. It is JSON written in one piece: at 5,000 entries json loads in
~9 ms where marshal took ~55 ms (measured), and the pre-commit hook refreshes
index.md from this scan. Symlinks and
special files are never followed; they are reported as strays.
"""

from __future__ import annotations

import json
import os
import re
import stat
from typing import NamedTuple

from strata_git.errors import StrataError
from strata_git.git import Repo
from strata_git.names import SUFFIX, TIERS

CACHE_VERSION = 2
PLACEHOLDER = ".gitkeep"
_UNSAFE = re.compile(r"[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


class Entry(NamedTuple):
    """One memory file as it is on disk (a NamedTuple: thousands are built per scan)."""

    tier: str
    name: str  # with the .md suffix
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


class Scan(NamedTuple):
    entries: list[Entry]
    strays: list[str]  # non-memory files, links and special files inside tier folders


def clean(text: str) -> str:
    """Text safe to show on a terminal or in index.md: no control or direction-changing characters."""
    return _UNSAFE.sub(" ", text).strip()


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


def _describe(root: str, rel: str, limit: int) -> list:
    """(title, type, tags, problem) of one file, cleaned for display."""
    from strata_git import memory

    try:
        with open(os.path.join(root, rel), "rb") as f:
            raw = f.read(limit + 1)
        if len(raw) > limit:
            return ["", "note", [], f"over the {limit}-byte limit"]
        mem = memory.parse(raw, rel)
        return [clean(mem.title), mem.type, [clean(t) for t in mem.tags], ""]
    except StrataError as e:
        return ["", "note", [], clean(e.message)]
    except OSError as e:
        return ["", "note", [], f"unreadable ({e.strerror})"]


def _load(path: str) -> dict:
    try:
        with open(path, "rb") as f:
            version, files = json.loads(f.read())
        return files if version == CACHE_VERSION and isinstance(files, dict) else {}
    except (OSError, ValueError, TypeError):
        return {}


def _save(path: str, files: dict) -> None:
    tmp = f"{path}.{os.getpid()}.tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(json.dumps([CACHE_VERSION, files], ensure_ascii=False))
    os.replace(tmp, path)


def _entries(files: dict) -> list[Entry]:
    entries = []
    for rel, (stamp, (title, kind, tags, problem)) in files.items():
        tier, _, name = rel.partition("/")
        entries.append(Entry(tier, name, stamp[0], title, kind, tuple(tags), problem))
    entries.sort(key=lambda e: (TIERS.index(e.tier), e.name))
    return entries


def _refresh(root: str, rel: str, info: os.stat_result, old: dict, limit: int) -> tuple[list, bool]:
    stamp = [info.st_size, info.st_mtime_ns, info.st_ino]
    hit = old.get(rel)
    if hit is None or hit[0] != stamp:
        return [stamp, _describe(root, rel, limit)], True
    return hit, False


def scan(repo: Repo, limit: int = 1024 * 1024) -> Scan:
    """Every memory in every tier, sorted by tier then name (walks the whole working tree)."""
    found: list[tuple[str, os.stat_result]] = []
    strays: list[str] = []
    for tier in TIERS:
        _walk(repo.root, tier, found, strays)
    cache_path = os.path.join(repo.state_dir(), "meta.json")
    old = _load(cache_path)
    new, dirty = {}, False
    for rel, info in found:
        new[rel], changed = _refresh(repo.root, rel, info, old, limit)
        dirty = dirty or changed
    if dirty or len(new) != len(old):
        _save(cache_path, new)
    return Scan(_entries(new), sorted(strays))


def update(repo: Repo, paths: list[str], limit: int = 1024 * 1024) -> Scan:
    """Like scan(), but re-examine only `paths` and trust the cache for the rest.

    For hooks, where git says exactly which files a commit touches; without a
    cache it falls back to a full scan. Strays are not reported.
    """
    cache_path = os.path.join(repo.state_dir(), "meta.json")
    files = _load(cache_path)
    if not files:
        return scan(repo, limit)
    dirty = False
    for rel in paths:
        try:
            info = os.lstat(os.path.join(repo.root, rel))
        except OSError:
            info = None
        tier, _, name = rel.partition("/")
        if info is None or not stat.S_ISREG(info.st_mode) or tier not in TIERS or not name.endswith(SUFFIX):
            dirty = files.pop(rel, None) is not None or dirty
        else:
            files[rel], changed = _refresh(repo.root, rel, info, files, limit)
            dirty = dirty or changed
    if dirty:
        _save(cache_path, files)
    return Scan(_entries(files), [])
