"""A sync's fetch, started before the rest of the command is loaded.

A sync round waits on the network for most of its time, and before this module the fetch began
only after the interpreter had loaded the command's modules and the round had made its checks:
about 95 ms into a round whose fetch takes 50 (bench/sync.py). The command line now calls `begin`
with `git strata sync`'s arguments before it even builds its parser (commands.py: `first`), and
the round `take`s that fetch when it asks the same remote for the same refs; otherwise the early
fetch is stopped and the round fetches as before. The round also takes what the start read: the
repository, and what the clone's git config says of the remote.

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
from strata_git.ops.sync import remotes
from strata_git.ops.sync.remotes import Where

TRACKING = "refs/remotes/{remote}/"


class Started(NamedTuple):
    path: str  # the folder it was started from, absolute
    repo: Repo
    where: Where  # what the clone's git config says of the remote (the round reads it once)
    args: tuple[str, ...]
    tracking: str | None  # the tracking branch's commit before the fetch (None: there was none)
    shadow: dict[str, str]  # records.refs() before the fetch
    proc: subprocess.Popen[bytes]


_started: Started | None = None


def fetch_args(remote: str) -> list[str]:
    """A round's fetch: the remote's branches, access refs, archive records and shadow refs."""
    return ["-c", "maintenance.auto=false", "fetch", "-q", "--no-tags", "--prune", "--recurse-submodules=no",
            "--", remote, f"+refs/heads/*:{TRACKING.format(remote=remote)}*",
            f"+{contract.ACCESS_REFS}*:{contract.remote_refs(remote, 'access')}*",
            f"+{contract.VERIFIED_REFS}*:{contract.remote_refs(remote, 'archive')}*",
            f"+{contract.SHADOW_REFS}*:{contract.remote_refs(remote, 'shadow')}*"]


def tracking_ref(remote: str, branch: str) -> str:
    return TRACKING.format(remote=remote) + branch


LIST_REFS = ["for-each-ref", "--format=%(refname) %(objectname)"]  # then the refs or prefixes


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
    `--remote=NAME`, `--dry-run` and `--json`. For anything else the parser says what is wrong, or
    the round fetches by itself."""
    remote = None
    rest = list(argv)
    while rest:
        given = rest.pop(0)
        if given in ("--json", "--dry-run"):
            continue
        if given == "--remote" and rest and not rest[0].startswith("-"):
            remote = rest.pop(0)
        elif given.startswith("--remote=") and len(given) > len("--remote="):
            remote = given[len("--remote="):]
        else:
            return
    start(".", remote)


def start(path: str, remote: str | None) -> None:
    """Start the fetch of the sync round about to run in the memory repository at `path`, from
    `remote` (default: the config's). Nothing is started where the round would not fetch at once
    (not a memory repository, a detached HEAD) or when anything here fails: the round then does
    everything itself, and says what is wrong."""
    global _started
    stop()
    try:
        # The repository, its remotes and its remote-tracking branches, asked of git at once.
        asked = [git.start(a, path, stdout=subprocess.PIPE)
                 for a in (git.DISCOVER, remotes.config_args(None), [*LIST_REFS, "refs/remotes/"])]
        from strata_git.store import records  # (loaded while git answers)

        found, config_out, tracking_out = (git.finish(proc) for proc in asked)
        repo = git.discovered(path, found)
        branch = repo.branch_quick()
        if branch is None or not os.path.isfile(os.path.join(repo.root, contract.CONFIG_PATH)):
            return
        # Only a remote this clone's git config names (as the round checks): a name from the shared
        # config or the command line is never handed to git unchecked ("--upload-pack=...").
        w = remotes.read(remote or config.load(repo.root, repo.state_dir()).sync_remote, config_out.stdout)
        tracking, shadow = listed(tracking_out.stdout).get(tracking_ref(w.remote, branch)), records.refs(repo)
        args = fetch_args(w.remote)
        _started = Started(os.path.abspath(path), repo, w, tuple(args), tracking, shadow, git.start(args, repo.root))
    except (StrataError, OSError, ValueError):
        return


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
    if found.proc.poll() is None:
        found.proc.kill()
    found.proc.communicate()
