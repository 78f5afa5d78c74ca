"""Every hook's entry point, git's and the agent harnesses', in one place.

- `git_hook(NAME)`: what the shims that ops/hookshims.py installs call (`git strata hook NAME`, on
  every commit, checkout, merge and rewrite). pre-commit checks the staged memories
  (ops/guard.py) and brings index.md and the catalog to the tree being committed; the others
  bring them (and the shadow index) to the new HEAD. This is the commit path: it imports neither
  argparse nor the MCP SDK, and the YAML parser only when a staged memory has frontmatter.
- `agent(ARGS)`: what Claude Code and Codex call (`git strata hook agent EVENT ...`); agents.py
  answers within the hook's deadline and always fails open.

Installing them is elsewhere: ops/hookshims.py writes git's shims; app/install.py writes the
harness's configuration.
"""

from __future__ import annotations

import os
import sys
import time
from typing import TYPE_CHECKING

from strata_git.errors import StrataError

if TYPE_CHECKING:
    from strata_git.core.config import Config
    from strata_git.gitio.git import Repo


def git_hook(hook: str, as_json: bool = False) -> int:
    """Run one git hook's work and report as git expects: exit 1 (with the problems on stderr)
    refuses a pre-commit; the other hooks only warn."""
    from strata_git.core import config
    from strata_git.core.contract import HOOKS
    from strata_git.gitio.git import discover

    if hook not in HOOKS:
        raise StrataError(f"unknown hook {hook!r}", f"use one of: {', '.join(HOOKS)}")
    if os.environ.get("STRATA_INTERNAL"):
        return 0
    repo = discover(".")
    has_config = os.path.isfile(os.path.join(repo.root, config.CONFIG_PATH))
    if not has_config and hook != "pre-commit":
        return 0  # a checkout without git-strata (another branch); the shim was installed here, so guard anyway
    try:
        cfg = config.load(repo.root, repo.state_dir()) if has_config else config.Config()
        problems = run(repo, cfg, hook)
    except StrataError as e:
        if hook == "pre-commit":
            raise
        print(f"git-strata: warning: {hook}: {e.message}", file=sys.stderr)
        return 0
    if as_json:
        import json

        print(json.dumps({"hook": hook, "ok": not problems, "problems": problems}, ensure_ascii=False))
    for problem in problems:
        print(f"git-strata: refused: {problem}", file=sys.stderr)
    if problems:
        print(f"git-strata: commit refused ({len(problems)} problem{'s' * (len(problems) > 1)}); "
              "nothing was committed", file=sys.stderr)
        return 1
    return 0


AGENT_USAGE = """usage: git strata hook agent EVENT [--harness claude-code|codex] [--memory PATH]

Answer an agent harness's hook: its JSON on stdin, the answer on stdout, exit 0 always (every
hook fails open). `git strata agent install` writes these entries; you do not run this by hand.

EVENT        SessionStart (the boot context), UserPromptSubmit (hints), PreCompact, Stop,
             SessionEnd (capture in the background)
--harness    claude-code (default) or codex
--memory     the memory repository (default: the one the harness runs in)"""


def agent(args: list[str]) -> int:
    """`git strata hook agent EVENT [--harness H] [--memory PATH]`: the harness's JSON on stdin, the
    answer on stdout, exit 0 always (see agents.py: every hook fails open, bad arguments too)."""
    if "-h" in args or "--help" in args:
        print(AGENT_USAGE)
        return 0
    if os.environ.get("STRATA_NOTETAKER"):  # the note-taker's own session (capture.NOTETAKER_ENV): not remembered
        print("{}")
        return 0
    from strata_git.app import agents

    event = args[0] if args else ""
    options = dict(zip(args[1::2], args[2::2], strict=False))
    harness = options.get("--harness", "claude-code")
    stdin = sys.stdin.buffer if sys.stdin is not None else None  # read within the hook's deadline
    print(agents.hook(event, harness if harness in agents.HARNESSES else "claude-code", options.get("--memory"), stdin))
    return 0


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


def _tree_to_record(repo: Repo, changes: list) -> str:
    """The tree this commit will record: HEAD's with the staged changes made (what `write-tree`
    gives, without the full index git 2.39's write-tree makes of a sparse one)."""
    from strata_git.gitio import trees
    from strata_git.store import history

    at = history.head(repo)  # (commit and tree in one git call)
    if at is None:
        return repo.git("write-tree").decode().strip()
    return trees.edit(repo, at.tree, {c.path: None if c.status == "D" else (c.mode, c.oid) for c in changes})


def _pre_commit(repo: Repo, cfg: Config) -> list[str]:
    from strata_git.ops import guard
    from strata_git.store import catalog, index_md

    with catalog.connect(repo) as db:
        problems, changes = guard.check_staged(repo, cfg, catalog.FrontmatterMemo(db))
    if problems:
        return [str(p) for p in problems]
    tree = _tree_to_record(repo, changes)
    index_md.refresh(repo, cfg.max_memory_bytes, ([c.path for c in changes], _commit_time(), tree))
    return []


def run(repo: Repo, cfg: Config, hook: str) -> list[str]:
    """Do the hook's work; returns the problems that must stop a pre-commit (empty otherwise)."""
    if os.environ.get("STRATA_INTERNAL"):
        return []
    if hook == "pre-commit":
        return _pre_commit(repo, cfg)
    from strata_git.store import index_md

    index_md.refresh(repo, cfg.max_memory_bytes, listed=False)
    if hook != "post-commit":  # after a commit it is brought forward when next searched
        from strata_git.store import shadow

        shadow.refresh(repo)
    return []
