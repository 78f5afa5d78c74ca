"""A sync's fetch, started before the rest of the command is loaded.

A sync round waits on the network for most of its time, and before this module the fetch began
only after the interpreter had loaded the command's modules and the round had made its checks:
about 95 ms into a round whose fetch takes 50 (bench/sync.py). The command line now calls `begin`
with `git strata sync`'s arguments before it even builds its parser (commands.py: `first`), and
the round `take`s that fetch when it asks the same remote for the same refs; otherwise the early
fetch is stopped and the round fetches as before. The round also takes what the start read: the
repository, and what the clone's git config says of the remote. When launch.py could start the
fetch even before this module was loaded, `begin` takes that one over instead.

A fetch only writes remote-tracking refs and objects, so it may run before the repository lock
is held, as the round's own fetch already ran beside its checks and recovery. What the round
needs from before its fetch is read before it starts: the tracking branch and the shadow refs.
"""

from __future__ import annotations

import os
import subprocess
from typing import NamedTuple

from strata_git.core import config, contract
from strata_git.errors import StrataError
from strata_git.gitio import git
from strata_git.gitio.git import Repo
from strata_git.gitio.spawn import Spawned
from strata_git.ops.sync import launch, remotes
from strata_git.ops.sync.remotes import Where


class Started(NamedTuple):
    path: str  # the folder it was started from, absolute
    repo: Repo
    where: Where  # what the clone's git config says of the remote (the round reads it once)
    args: tuple[str, ...]
    tracking: str | None  # the tracking branch's commit before the fetch (None: there was none)
    shadow: dict[str, str]  # records.refs() before the fetch
    proc: subprocess.Popen[bytes] | Spawned  # (Spawned: started by launch.py)


_started: Started | None = None
fetch_args, tracking_ref, LIST_REFS = launch.fetch_args, launch.tracking_ref, launch.LIST_REFS


def listed(out: bytes) -> dict[str, str]:
    """{ref: commit} from git's answer to LIST_REFS."""
    return dict(line.split(" ", 1) for line in out.decode().split("\n") if line)


def refs(repo: Repo, names: list[str]) -> dict[str, str]:
    """{ref: commit} of those of `names` that exist, in one git call."""
    found = listed(repo.git(*LIST_REFS, *names))
    return {ref: oid for ref, oid in found.items() if ref in names}


def before_fetch(repo: Repo, tracking: str) -> tuple[str | None, dict[str, str]]:
    """(the tracking branch's commit, the shadow refs) as they are now, before a fetch."""
    from strata_git.store import records

    return refs(repo, [tracking]).get(tracking), records.refs(repo)


def begin(argv: list[str]) -> None:
    """`start` for `git strata sync`'s arguments as typed, before the parser is built (the command
    table calls it first), when they are all ones the parser takes as they are: `--remote NAME`,
    `--remote=NAME`, `--dry-run` and `--json`; with what launch.py saw, or the fetch it started.
    For anything else the parser says what is wrong, or the round fetches by itself."""
    seen = launch.take(os.path.abspath("."))
    ok, remote = launch.asked(argv)
    if seen is not None and seen.proc is not None:
        adopt(seen)
    elif ok:
        start(".", remote, seen)


def adopt(seen: launch.Seen) -> None:
    """The fetch launch.py started, taken as this module's own."""
    global _started
    stop()
    assert seen.proc is not None and seen.remote is not None, "adopt() takes a fetch launch.py started"
    try:
        refs, repo = listed(seen.refs), Repo(root=seen.root, git_dir=seen.git_dir)
        _started = Started(seen.path, repo, remotes.read(seen.remote, seen.config), tuple(seen.args),
                           refs.get(tracking_ref(seen.remote, seen.branch or "")), _shadow(refs), seen.proc)
    except (StrataError, OSError, ValueError):
        _stop_proc(seen.proc)


def start(path: str, remote: str | None, seen: launch.Seen | None = None) -> None:
    """Start the fetch of the sync round about to run in the memory repository at `path`, from
    `remote` (default: the config's), with what launch.py `seen` there if given. Nothing is started
    where the round would not fetch at once (not a memory repository, a detached HEAD) or when
    anything here fails: the round then does everything itself, and says what is wrong."""
    global _started
    stop()
    try:
        if seen is None:  # the repository, its remotes and its refs, asked of git at once
            asked = [git.start(a, path, stdout=subprocess.PIPE)
                     for a in (git.DISCOVER, list(launch.CONFIG), [*LIST_REFS, *launch.BEFORE])]
            found, config_out, refs_out = (git.finish(proc) for proc in asked)
            repo = git.discovered(path, found)
            config_said, refs_said = config_out.stdout, refs_out.stdout
        else:
            repo, config_said, refs_said = Repo(root=seen.root, git_dir=seen.git_dir), seen.config, seen.refs
        branch = repo.branch_quick()
        if branch is None or not os.path.isfile(os.path.join(repo.root, contract.CONFIG_PATH)):
            return
        # Only a remote this clone's git config names (as the round checks): a name from the shared
        # config or the command line is never handed to git unchecked ("--upload-pack=...").
        stamped = launch.stamps(repo.root, repo.git_dir)  # (before the files are read)
        configured = config.load(repo.root, repo.state_dir()).sync_remote
        w = remotes.read(remote or configured, config_said)
        launch.remember(repo.root, repo.git_dir, stamped, configured)
        refs = listed(refs_said)
        args = fetch_args(w.remote, repo.git_dir)
        _started = Started(os.path.abspath(path), repo, w, tuple(args), refs.get(tracking_ref(w.remote, branch)),
                           _shadow(refs), git.start(args, repo.root))
    except (StrataError, OSError, ValueError):
        return


def _shadow(refs: dict[str, str]) -> dict[str, str]:
    from strata_git.store import records  # (loaded while git answers)

    return records.shadow_in(refs)


def found(path: str) -> Repo | None:
    """The repository an early fetch started from `path` found (the round need not ask git again)."""
    return _started.repo if _started is not None and _started.path == os.path.abspath(path) else None


def where_of(repo: Repo, remote: str) -> Where | None:
    """What the early fetch read of `remote` in `repo`'s git config, or None if it read no such thing."""
    if _started is not None and _started.repo.git_dir == repo.git_dir and _started.where.remote == remote:
        return _started.where
    return None


def take(repo: Repo, args: list[str]) -> Started | None:
    """The fetch `start` began, if it is this repository's with these arguments (the round then
    waits for it); else None, and any other early fetch is stopped."""
    global _started
    found, _started = _started, None
    if found is not None and (found.repo.git_dir, found.args) == (repo.git_dir, tuple(args)):
        return found
    if found is not None:
        _stop(found)
    return None


def stop() -> None:
    """Stop an early fetch no round took."""
    global _started
    found, _started = _started, None
    if found is not None:
        _stop(found)


def _stop(found: Started) -> None:
    _stop_proc(found.proc)


def _stop_proc(proc: subprocess.Popen[bytes] | Spawned) -> None:
    if proc.poll() is None:
        proc.kill()
    proc.communicate()
