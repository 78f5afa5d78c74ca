"""Every memory of a repository, as HEAD records it and as the disk holds it, by tier."""

from __future__ import annotations

import collections
from pathlib import Path

from conftest import git


def memory_names_in_head(root: Path) -> dict[str, list[tuple[str, str]]]:
    """{name: [(tier, blob id), ...]} of every .md in HEAD's tier folders."""
    found: dict[str, list[tuple[str, str]]] = collections.defaultdict(list)
    listing = git(root, "ls-tree", "-r", "-z", "HEAD", "--", "active", "cooled", "archive").stdout
    for item in listing.decode().split("\0"):
        if item.endswith(".md"):
            meta, path = item.split("\t", 1)
            tier, name = path.split("/", 1)
            found[name].append((tier, meta.split()[2]))
    return found


def memory_files_on_disk(root: Path) -> dict[str, list[tuple[str, bytes]]]:
    found: dict[str, list[tuple[str, bytes]]] = collections.defaultdict(list)
    for tier in ("active", "cooled", "archive"):
        for path in (root / tier).rglob("*.md"):
            found[path.relative_to(root / tier).as_posix()].append((tier, path.read_bytes()))
    return found
