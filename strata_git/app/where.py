"""Where the memory repository is, for what runs in a code project: the agent hooks, the MCP
server and `agent install`. Entries written into a project's own files (which a team commits)
name no path: each person's machine says where its memory is.

In order: `--memory PATH`; the STRATA_MEMORY environment variable; `git config strata.memory`
(set in ~/.gitconfig by `agent install`; a repository's own config may override it for one
clone); the folder the process runs in, when that is a memory repository.
"""

from __future__ import annotations

import os
from typing import NamedTuple

ENV = "STRATA_MEMORY"
SETTING = "strata.memory"
MISSING = (f"git-strata: no memory repository is set on this machine, so memory is off here: "
           f"run `git config --global {SETTING} PATH` (or set {ENV}) with PATH a memory repository "
           "(`git strata init PATH` makes one)")


class Found(NamedTuple):
    path: str | None  # None: nowhere set
    source: str  # what named it: "--memory", ENV, "git config strata.memory", "the folder here", or ""


def memory(explicit: str | None, here: str) -> Found:
    """The memory repository for a process that runs in `here` (see the module's docstring)."""
    if explicit:
        return Found(os.path.abspath(explicit), "--memory")
    named = os.environ.get(ENV, "").strip()
    if named:
        return Found(os.path.abspath(os.path.expanduser(named)), ENV)
    named = setting(here)
    if named:
        return Found(named, f"git config {SETTING}")
    if _is_memory(here):
        return Found(os.path.abspath(here), "the folder here")
    return Found(None, "")


def setting(here: str) -> str:
    """`git config strata.memory` as git reads it in `here` (~ expanded), "" if unset."""
    from strata_git.gitio import git

    cwd = here if os.path.isdir(here) else os.path.expanduser("~")
    try:
        proc = git.run(["config", "--type=path", "--get", SETTING], cwd, check=False)
    except Exception:  # noqa: BLE001 - no git, a hung config: the setting is as good as unset
        return ""
    value = proc.stdout.decode("utf-8", "replace").strip() if proc.returncode == 0 else ""
    return os.path.abspath(value) if value else ""


def remember(path: str) -> None:
    """Set `strata.memory` in the user's global git config."""
    from strata_git.gitio import git

    git.run(["config", "--global", SETTING, path], os.path.expanduser("~"))


def _is_memory(here: str) -> bool:
    from strata_git.core import config
    from strata_git.gitio.git import discover

    try:
        return os.path.isfile(os.path.join(discover(here).root, config.CONFIG_PATH))
    except Exception:  # noqa: BLE001 - not a repository, not a folder: not a memory
        return False


def project(here: str) -> str | None:
    """The identity of the code project `here` is in (core/projects.py): its repository's remote URL
    (`origin`, else the first remote by name) normalised, else the repository's root folder's name;
    None outside a git repository (a home folder's name is a person's, not a project's), and in the
    memory repository itself. Never a path."""
    from strata_git.core import config, projects
    from strata_git.gitio import git

    if not here or not os.path.isdir(here):
        return None
    try:
        top = git.run(["rev-parse", "--show-toplevel"], here, check=False)
        root = top.stdout.decode("utf-8", "replace").strip() if top.returncode == 0 else ""
        if root and os.path.isfile(os.path.join(root, config.CONFIG_PATH)):
            return None  # the memory repository itself
        urls = git.run(["config", "--get-regexp", r"^remote\..*\.url$"], here, check=False) if root else None
    except Exception:  # noqa: BLE001 - no git, a hung config: no project told
        return None
    if not root:
        return None
    remotes = {}
    for line in (urls.stdout.decode("utf-8", "replace").splitlines() if urls and urls.returncode == 0 else []):
        key, _, url = line.partition(" ")
        remotes[key[len("remote."): -len(".url")]] = url
    for name in (["origin"] if "origin" in remotes else []) + sorted(remotes):
        found = projects.of_url(remotes[name])
        if found:
            return found
    return projects.of_folder(os.path.basename(root))
