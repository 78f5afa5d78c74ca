"""What each git hook does when it runs (`git strata hook NAME`, called by the shims that
ops/hookshims.py installs).

pre-commit checks the staged memories (ops/guard.py) and brings index.md and the catalog
to the tree being committed; the others bring them (and the shadow index) to the new HEAD.
This is the commit path: it imports neither argparse nor the MCP SDK, and the YAML parser
only when a staged memory has frontmatter.
"""

from __future__ import annotations

import os
import time

from strata_git.core.config import Config
from strata_git.gitio.git import Repo
from strata_git.ops import guard
from strata_git.store import catalog, index_md


def _commit_time() -> int:
    """When the commit in progress will be dated (GIT_COMMITTER_DATE if set, else now)."""
    import datetime

    value = os.environ.get("GIT_COMMITTER_DATE", "").strip()
    try:
        if value.startswith("@"):
            return int(value[1:].split()[0])
        if value:
            return int(datetime.datetime.fromisoformat(value).timestamp())
    except ValueError:
        pass
    return int(time.time())


def _pre_commit(repo: Repo, cfg: Config) -> list[str]:
    with catalog.connect(repo) as db:
        problems, changes = guard.check_staged(repo, cfg, catalog.FrontmatterMemo(db))
    if problems:
        return [str(p) for p in problems]
    tree = repo.git("write-tree").decode().strip()  # the tree this commit will record
    index_md.refresh(repo, cfg.max_memory_bytes, ([c.path for c in changes], _commit_time(), tree))
    return []


def run(repo: Repo, cfg: Config, hook: str) -> list[str]:
    """Do the hook's work; returns the problems that must stop a pre-commit (empty otherwise)."""
    if os.environ.get("STRATA_INTERNAL"):
        return []
    if hook == "pre-commit":
        return _pre_commit(repo, cfg)
    index_md.refresh(repo, cfg.max_memory_bytes)
    if hook != "post-commit":  # after a commit it is brought forward when next searched
        from strata_git.store import shadow

        shadow.refresh(repo)
    return []
