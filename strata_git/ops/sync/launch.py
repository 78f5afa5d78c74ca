"""The first thing `git strata sync` does: start its fetch before the command is loaded.

A sync round waits on its fetch for most of its time, and everything before the fetch starts is
time plain git does not spend. Loading what early.py needs to start it (subprocess, typing, the
config, the command table) took about 20 ms of the 45 before the fetch began (bench/sync.py).
This module loads nothing but os, core.contract and gitio.spawn: it asks git three things at once
(where the repository is; its remote-tracking and shadow refs as they are before the fetch; what
its git config says of its remotes), then starts the fetch with os.posix_spawn.

The remote is the one thing it cannot read without loading more: the shared config names it (and
reading that loads tomllib). So early.py, whenever it reads the config to start a fetch itself,
`remember`s the remote it names, stamped with the size, mtime and inode of the config's files, and
this module takes that remote only while both files are as stamped. As early.py does, it fetches
only from a remote the clone's git config names: a name from the shared config or the command line
is never handed to git unchecked. Anything else (a changed config, a remote the clone does not
name, not a memory repository, a detached HEAD, arguments other than --remote, --dry-run and
--json) starts nothing here. early.py then `take`s what this module saw: the fetch it started, or,
without one, what git said, from which it starts the fetch as before without asking again.
"""

from __future__ import annotations

import os

from strata_git.core import contract
from strata_git.gitio import spawn

TYPE_CHECKING = False
if TYPE_CHECKING:
    from strata_git.gitio.spawn import Spawned

TRACKING = "refs/remotes/{remote}/"
LIST_REFS = ["for-each-ref", "--format=%(refname) %(objectname)"]  # then the refs or prefixes
# What a round needs of its refs as they were before the fetch: the tracking branch, and the shadow
# refs this clone holds (its own, and the other machines' copies): see store/records.refs.
BEFORE = ["refs/remotes/", contract.SHADOW_REFS, contract.REMOTE_REFS]
# What the clone's git config says of its remotes (ops/sync/remotes.py reads the answer).
# (remotes.config_args asks the same of one remote: REMOTE_KEYS with that remote's name, escaped)
REMOTE_KEYS = r"^(remote\.{remote}\.url|remote\..*\.promisor|extensions\.partialclone|strata\.mirror)$"
CONFIG = ["config", "-z", "--get-regexp", REMOTE_KEYS.format(remote=".*")]
FORMAT = "1"  # the remembered file's first line


def fetch_args(remote: str, git_dir: str) -> list[str]:
    """A round's fetch: the remote's branches, access refs, archive records and shadow refs.

    In git's protocol version 0: the server lists its refs as soon as the fetch connects, where
    version 2 (git's default) waits to be asked for them, one exchange more on every sync. A memory
    repository's refs are the ones a sync fetches anyway (its branches and git-strata's refs), so
    the list asked for by prefix in version 2 is the same list. Over `git daemon` on 127.0.0.1 a
    no-change fetch with fifty machines' refs took about 20 ms against 105 (bench/sync.py).

    Without this clone's own access and shadow refs (negative refspecs, git 2.29+): their commits
    are made here, so they are in no promisor pack, and a partial clone's fetch then checks that
    every ref it fetches is connected with `rev-list --exclude-promisor-objects`, which first lists
    every object the promisor packs hold: 0.9 s at a million archived memories, on every sync. The
    round records what the remote holds of them itself, after it pushes them.

    git's own housekeeping stays on, as after `git pull`: the fetch runs `git maintenance run
    --auto` (under a millisecond when there is nothing to do), whose gc folds the packs together
    past gc.autoPackLimit (50), in the background. Without it a clone that only syncs kept every
    pack it fetched (one a round that brings a hundred memories), and every git command a sync
    runs looked through them all: with 150, about 1 ms more a command, and a sync bringing 100
    memories took 161-174 ms against 148-165 ms once git gc had folded them (bench/sync.py's clone,
    three pairs of nine rounds)."""
    mine = own(git_dir)
    return ["-c", "protocol.version=0", "fetch", "-q", "--no-tags", "--prune",
            "--recurse-submodules=no",
            "--", remote, f"+refs/heads/*:{TRACKING.format(remote=remote)}*",
            f"+{contract.ACCESS_REFS}*:{contract.remote_refs(remote, 'access')}*",
            f"+{contract.VERIFIED_REFS}*:{contract.remote_refs(remote, 'archive')}*",
            f"+{contract.SHADOW_REFS}*:{contract.remote_refs(remote, 'shadow')}*",
            *([f"^{contract.ACCESS_REFS}{mine}", f"^{contract.SHADOW_REFS}{mine}"] if mine else [])]


def own(git_dir: str) -> str | None:
    """This clone's machine id (access.machine_id), read as it is: None before one is made, or if
    the file holds anything but the 16 hex digits git-strata writes there."""
    try:
        with open(os.path.join(git_dir, contract.STATE_DIR, contract.MACHINE_ID), "rb") as f:
            found = f.read(64).strip().decode("ascii")
    except (OSError, UnicodeDecodeError):
        return None
    return found if len(found) == 16 and all(c in "0123456789abcdef" for c in found) else None


def tracking_ref(remote: str, branch: str) -> str:
    return TRACKING.format(remote=remote) + branch


def asked(argv: list[str]) -> tuple[bool, str | None]:
    """(whether `git strata sync`'s arguments are all ones the parser takes as they are: --remote
    NAME, --remote=NAME, --dry-run and --json; the remote they name, if any)."""
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
            return False, None
    return True, remote


class Seen:
    """What `begin` asked git before any fetch, and the fetch it started, if it could."""

    def __init__(self, path: str, root: str, git_dir: str, refs: bytes, config: bytes) -> None:
        self.path, self.root, self.git_dir = path, root, git_dir
        self.branch = spawn.head_branch(git_dir)
        self.refs = refs  # LIST_REFS of BEFORE, as git answered before any fetch
        self.config = config  # git's answer to CONFIG
        self.remote: str | None = None  # the remote of the fetch started
        self.args: list[str] = []
        self.proc: Spawned | None = None

    def fetch(self, remote: str) -> None:
        self.remote, self.args = remote, fetch_args(remote, self.git_dir)
        self.proc = spawn.start(self.args, self.root)


_seen: Seen | None = None


def begin(argv: list[str]) -> None:
    """Ask git what a round needs from before its fetch, and start the fetch if all it needs is
    known (see above). Never fails and never prints: whatever goes wrong starts nothing."""
    global _seen
    ok, remote = asked(argv)
    if not ok or _seen is not None:
        return
    try:
        asking = [spawn.start(args, ".", stdout=True) for args in (spawn.DISCOVER, [*LIST_REFS, *BEFORE], CONFIG)]
        found, refs, config = (proc.communicate(10)[0] or b"" for proc in asking)
        lines = found.decode().split("\n")
        if asking[0].returncode or asking[1].returncode or len(lines) != 3:  # (a newline in a path: early.py)
            return
        seen = _seen = Seen(os.path.abspath("."), lines[0], lines[1], refs, config)
        if seen.branch is None or not os.path.isfile(os.path.join(seen.root, contract.CONFIG_PATH)):
            return
        name = remote or remembered(seen.root, seen.git_dir)
        if name is not None and name in named(config):
            seen.fetch(name)
    except (OSError, ValueError):
        return


def take(path: str) -> Seen | None:
    """What `begin` saw from `path` (absolute), and the fetch it started; early.py's from now on."""
    global _seen
    found = _seen
    if found is not None and found.path == path:
        _seen = None
        return found
    return None


def named(out: bytes) -> list[str]:
    """The remotes this clone's git config gives a url, from git's answer to CONFIG."""
    found = set()
    for item in filter(None, out.decode("utf-8", "surrogateescape").split("\0")):
        key = item.partition("\n")[0]
        if key.startswith("remote.") and key.endswith(".url") and len(key) > len("remote..url"):
            found.add(key[len("remote."):-len(".url")])
    return sorted(found)


def stamps(root: str, git_dir: str) -> str:
    """The size, mtime and inode of the files the config's remote comes from, on one line: the
    shared config and this clone's own."""
    found = []
    for path in (os.path.join(root, contract.CONFIG_PATH), os.path.join(git_dir, contract.STATE_DIR, "config.toml")):
        try:
            info = os.stat(path)
            found.append(f"{info.st_ino}:{info.st_size}:{info.st_mtime_ns}")
        except FileNotFoundError:
            found.append("-")
    return " ".join(found)


def remember(root: str, git_dir: str, stamped: str, remote: str) -> None:
    """Keep the remote the config names, as it was when its files had `stamped` (taken before
    they were read)."""
    path = os.path.join(git_dir, contract.STATE_DIR, contract.SYNC_LAUNCH)
    text = f"{FORMAT}\n{stamped}\n{remote}\n"
    try:
        with open(path, encoding="utf-8") as f:
            if f.read() == text:
                return
    except (OSError, UnicodeDecodeError):
        pass
    try:
        tmp = f"{path}.{os.getpid()}.tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except OSError:
        return


def remembered(root: str, git_dir: str) -> str | None:
    """The remote the config names as `remember` kept it, if its files are as they were then."""
    try:
        with open(os.path.join(git_dir, contract.STATE_DIR, contract.SYNC_LAUNCH), encoding="utf-8") as f:
            lines = f.read().split("\n")
    except (OSError, UnicodeDecodeError):
        return None
    if len(lines) != 4 or lines[0] != FORMAT or lines[1] != stamps(root, git_dir) or not lines[2]:
        return None
    return lines[2]
