"""A memory as a listing sees it (tier, name, size, title, type, tags, problem), and the text
rule for anything shown from one: what the catalog stores, index.md lists and the boot context
is built from."""

from __future__ import annotations

from typing import NamedTuple

from strata_git.core.memory import UNSAFE_TO_DISPLAY
from strata_git.core.names import SUFFIX


class Entry(NamedTuple):
    """One memory file as it is on disk (a NamedTuple: thousands are built per scan)."""

    tier: str
    name: str  # with the .md suffix
    size: int
    title: str = ""
    type: str = "note"
    tags: tuple[str, ...] = ()
    problem: str = ""
    project: str = ""  # the project it records (core/projects.py), "" for none

    @property
    def path(self) -> str:
        return f"{self.tier}/{self.name}"

    @property
    def folder(self) -> str:
        return self.name.rpartition("/")[0]

    def as_dict(self) -> dict:
        return {"tier": self.tier, "name": self.name[: -len(SUFFIX)], "path": self.path, "size": self.size,
                "title": self.title, "type": self.type, "tags": list(self.tags), "problem": self.problem,
                "project": self.project or None}


class Scan(NamedTuple):
    entries: list[Entry]
    strays: list[str]  # non-memory files, links and special files inside tier folders


def shown(text: str) -> str:
    """A name (or a line that holds one) safe to print and still exact: each control or
    direction-changing character as a `\\uXXXX` escape, so a newline in a name cannot forge a line
    of output and U+202E cannot reverse one."""
    return UNSAFE_TO_DISPLAY.sub(lambda m: f"\\u{ord(m[0]):04x}", text)


def clean(text: str) -> str:
    """Text safe to show on a terminal or in index.md: no control or direction-changing characters."""
    return UNSAFE_TO_DISPLAY.sub(" ", text).strip()
