"""Reading one memory, or the summary made when it cooled.

A read records an access (access.py), which is what keeps a memory in use from cooling.
Reading an archived memory brings it back to active/ first (recall.py), unless the reader
must not change the repository.

This is the path of `git strata read` and the MCP `read` tool: it imports what reading needs
and nothing that commits, so the command starts fast.
"""

from __future__ import annotations

from typing import NamedTuple

from strata_git.core import memory, names
from strata_git.core.config import Config
from strata_git.errors import BadMemory, NotFound, StrataError
from strata_git.gitio import safefs
from strata_git.gitio.git import Repo
from strata_git.ops import locate
from strata_git.store import access


class Read(NamedTuple):
    name: str
    tier: str
    raw: bytes

    @property
    def path(self) -> str:
        return f"{self.tier}/{self.name}"

    @property
    def memory(self) -> memory.Memory:
        """The parsed memory (parsed on demand: printing a memory needs only its bytes)."""
        try:
            return memory.parse(self.raw, self.path)
        except BadMemory:
            return memory.Memory(raw=self.raw, meta={}, body=self.raw.decode("utf-8", "replace"))

    def as_dict(self) -> dict:
        parsed = self.memory
        return {"name": names.display(self.name), "tier": self.tier, "path": self.path,
                "title": parsed.title, "type": parsed.type, "tags": parsed.tags,
                "meta": parsed.meta, "content": self.raw.decode("utf-8", "replace")}


def read(repo: Repo, cfg: Config, name: str, via: str = "api", agent: str | None = None,
         archived: str = "recall") -> Read:
    """The memory from whichever tier holds it; records an access. An archived one is brought back
    first (`archived="recall"`, fetching it if pruned) or refused (`"refuse"`: a reader that must
    not change the repository, such as the MCP `read` tool)."""
    tier, norm = locate.find(repo, name)
    shown = names.display(norm)
    if tier is None:
        raise locate.not_found(repo, norm)
    if tier == "archive":
        if archived != "recall":
            raise StrataError(f"{shown} is archived (stored away, maybe not on this machine)",
                              f"call recall with name {shown!r} to bring it back to active, then read it; "
                              "or read its summary with summary=true")
        from strata_git.ops import recall  # only here: a plain read loads no transaction code

        recall.recall(repo, cfg, norm, via=via, agent=agent)
        tier = "active"
    else:
        access.record(repo, shown, tier, via)
    try:
        raw = safefs.read(repo.root, names.tier_path(tier, norm), cfg.max_memory_bytes)
    except NotFound:
        raise StrataError(f"{shown} moved while it was being read", "read it again") from None
    return Read(norm, tier, raw)


def summary_of(repo: Repo, name: str) -> tuple[str, str]:
    """(tier, text) of the summary made when the memory cooled."""
    from strata_git.store import summary

    tier, norm = locate.find(repo, name)
    shown = names.display(norm)
    if tier is None:
        raise locate.not_found(repo, norm)
    if tier == "active":  # its text may have changed since: a summary left over (by a merge) is not served
        raise NotFound(f"{shown} is active and active memories have no summary",
                       f"read it in full with `git strata read {shown}`")
    text = summary.read(repo.root, norm)
    if text is None:
        raise NotFound(f"{shown} has no summary",
                       "summaries are made when a memory cools with [cool] summary set in .strata/config.toml; "
                       f"read the memory itself with `git strata read {shown}`")
    return tier, text
