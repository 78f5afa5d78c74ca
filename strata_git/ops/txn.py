"""The transaction: how every operation that commits changes the repository, safe under SIGKILL
at any instant.

- `locked()`: the repository lock (flock: released by the kernel when its holder dies; waiters
  are served in turn through a second flock, the queue), which first finishes or undoes a move a
  killed process left (`recover()`).
- `commit()`: one commit of exactly the given paths, with the files put back if it fails.
- `move()`: a commit of renames made from trees, never from the working tree (the janitor,
  recall), and `advance()`: HEAD moved to a commit made elsewhere (a sync). Both follow this
  journaled protocol (measured on git 2.39 to recover from 250 of 250 random kills):

  1. write a journal {old} (temporary file + rename);
  2. build the new tree from old's by editing only the folders on the way to a moved path
     (gitio/trees.py: renames by object id, no blob read, no index of every file; the user's
     index is not touched);
  3. commit-tree, and journal {old, new};
  4. `update-ref HEAD new old`: an atomic compare-and-swap, the commit point;
  5. bring the real index and the working tree from old to new with `read-tree -m -u`
     (after `update-index --refresh`), then delete the journal.

  `recover()`: no journal, nothing to do; HEAD still at old, the move never happened (roll
  back); HEAD at new, finish step 5 for the moved paths only (roll forward). A working file is
  removed only if its bytes are the committed ones. Stale git locks a killed move left are
  told from live ones by gitio/procs.py.
- `follow_head()`: the one refresh of index.md and the shadow index after HEAD moved.
"""

from __future__ import annotations

import fcntl
import json
import os
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from typing import NamedTuple

from strata_git.core import contract, names
from strata_git.core.config import Config
from strata_git.errors import Refused
from strata_git.gitio import git, partial, procs, safefs, trees
from strata_git.gitio.git import Repo, run
from strata_git.store import access

JOURNAL, INDEX = contract.JOURNAL, contract.TXN_INDEX
# The temporary index is private to the janitor, which holds the repository lock: a lock file
# beside it can only be left by a janitor killed mid-command, so it is always safe to delete.
INDEX_LOCK = INDEX + ".lock"
# A lock a killed cycle left was made within this many seconds of its last journal write.
LOCK_SLACK = 10.0


def _state_path(repo: Repo, name: str) -> str:
    return os.path.join(repo.state_dir(), name)


def _write_journal(repo: Repo, data: dict) -> None:
    path = _state_path(repo, JOURNAL)
    with open(path + ".tmp", "w", encoding="utf-8") as f:
        json.dump(data, f)
        f.flush()
        os.fsync(f.fileno())
    os.replace(path + ".tmp", path)


def _drop(repo: Repo, *names: str) -> None:
    for name in names:
        try:
            os.unlink(_state_path(repo, name))
        except FileNotFoundError:
            pass


def refuse_unless_settled(repo: Repo, doing: str = "run the janitor") -> None:
    """Refuse during a merge, rebase, cherry-pick or revert, and on a detached HEAD."""
    for marker, what in (("MERGE_HEAD", "a merge"), ("rebase-merge", "a rebase"), ("rebase-apply", "a rebase"),
                         ("CHERRY_PICK_HEAD", "a cherry-pick"), ("REVERT_HEAD", "a revert")):
        if os.path.exists(os.path.join(repo.git_dir, marker)):
            raise Refused(f"refusing to {doing} during {what}", "finish or abort it first")
    if repo.branch_quick() is None and not repo.ok("symbolic-ref", "-q", "HEAD"):
        raise Refused(f"refusing to {doing} on a detached HEAD", "check out a branch first")


def move(repo: Repo, old: str, moves: list[tuple[str, str]], text: Callable[[dict], str],
         identity: dict[str, str], reflog: str, added: dict[str, bytes | None] | None = None) -> str:
    """Commit `moves` (renames by object id: no blob is read) on top of `old` and bring the index
    and working tree to it, by the journaled protocol above; the new commit id. `text` makes the
    message from {path: (mode, blob id)} of the sources. `identity` is GIT_AUTHOR_*/COMMITTER_*
    (empty: git's configured user). `added` {path: content, or None to delete it} are files written
    in the same commit (journaled as moves onto themselves, so recovery treats them like any moved
    path)."""
    if _index_locked(repo):
        raise Refused("another git process is using the index (.git/index.lock exists); nothing was changed",
                      "run the janitor again when it has finished")
    _drop(repo, INDEX, INDEX_LOCK)  # (what an older version's killed cycle left)
    added = added or {}
    old_tree = repo.tree_of(old)
    entries = trees.entries(repo, old_tree, [src for src, _ in moves])
    moves = [*moves, *((p, p) for p in sorted(added))]
    _write_journal(repo, {"old": old, "moves": moves, "pid": os.getpid()})
    # The new tree from the old one and the moved paths alone: no index of every archived file.
    changes: dict[str, tuple[str, str] | None] = {src: None for src, _ in moves if src not in added}
    changes |= {dst: entries[src] for src, dst in moves if src not in added}
    changes |= {p: ("100644", repo.store(data)) if data is not None else None for p, data in added.items()}
    tree = trees.edit(repo, old_tree, changes)
    message = text(entries).rstrip("\n") + f"\n{contract.MACHINE}: {access.machine_id(repo)}\n"
    new = repo.git("commit-tree", tree, "-p", old, input=message.encode("utf-8"),
                   env=identity).decode().strip()
    _write_journal(repo, {"old": old, "new": new, "moves": moves, "pid": os.getpid()})
    moved = run(["update-ref", "-m", reflog, "HEAD", new, old], repo.root, check=False)
    if moved.returncode != 0:
        _drop(repo, JOURNAL, INDEX, INDEX_LOCK)
        if b"but expected" in moved.stderr:
            raise Refused("HEAD moved meanwhile; nothing was changed", "run it again")
        raise Refused(f"could not move HEAD ({moved.stderr.decode('utf-8', 'replace').strip().splitlines()[-1]}); "
                      "nothing was changed", "run it again when no other git command is running")
    _finish(repo, old, new, moves)
    _drop(repo, JOURNAL, INDEX, INDEX_LOCK)
    return new


def advance(repo: Repo, old: str, new: str, paths: list[str], reflog: str,
            meanwhile: Iterator[None] | None = None) -> None:
    """Move HEAD from `old` to `new`, a commit made elsewhere (a sync's fast-forward or merge)
    whose changed `paths` the caller checked are clean here, and bring the index and working
    tree along: steps 3 to 5 of the protocol above, so `recover()` finishes or undoes it.
    `meanwhile`: steps of work to run while git moves HEAD and checks the files out."""
    if _index_locked(repo):
        raise Refused("another git process is using the index (.git/index.lock exists); nothing was changed",
                      "run it again when that git command has finished")
    moves = [(p, p) for p in paths]
    _drop(repo, INDEX, INDEX_LOCK)
    _write_journal(repo, {"old": old, "new": new, "moves": moves, "pid": os.getpid()})
    moved = git.finish_while(git.start(["update-ref", "-m", reflog, "HEAD", new, old], repo.root), meanwhile)
    if moved.returncode != 0:
        _drop(repo, JOURNAL)
        raise Refused("HEAD moved meanwhile (another git command committed); nothing was changed", "run it again")
    # read-tree refuses a file whose stat data is stale ("not uptodate"): refresh those it will
    # change (a whole-index refresh costs a stat of every file).
    on_disk = [p for p in paths if os.path.lexists(os.path.join(repo.root, p))]
    _finish(repo, old, new, moves, refresh=on_disk, meanwhile=meanwhile)
    _drop(repo, JOURNAL, INDEX, INDEX_LOCK)


def _finish(repo: Repo, old: str, new: str, moves: list[list[str]] | list[tuple[str, str]],
            refresh: list[str] | None = None, meanwhile: Iterator[None] | None = None) -> None:
    """Bring the real index and working tree from old to new, waiting out a git that holds
    index.lock; if it never lets go, the journal stays and the next cycle finishes the job.
    read-tree refuses to change a file whose stat data is stale ("not uptodate") and then writes
    nothing, so it is tried first; after a refusal the stat data is refreshed (for every file, or
    only for `refresh`) before each try: a refresh stats every file it is given, and is seldom
    needed. `meanwhile` runs while the first try does."""
    if git.finish_while(git.start(["read-tree", "-m", "-u", old, new], repo.root), meanwhile).returncode == 0:
        return
    for _ in range(50):
        if refresh is None:
            repo.git("update-index", "-q", "--refresh", check=False)
        elif refresh:
            repo.git("add", "--refresh", "--", *refresh, check=False)
        if repo.ok("read-tree", "-m", "-u", old, new):
            return
        if not _index_locked(repo):
            # The two-way merge refused (someone touched the index mid-cycle): move just our paths.
            _align(repo, old, moves)
            return
        time.sleep(0.1)
    raise Refused("HEAD has the janitor's commit, but another git process held .git/index.lock for 5 s, so the "
                  "index and working tree are not updated yet", "run `git strata janitor` again to finish")


def _index_locked(repo: Repo) -> bool:
    return os.path.exists(os.path.join(repo.git_dir, "index.lock"))


def _align(repo: Repo, old: str, moves: Sequence[Sequence[str]]) -> None:  # (src, dst); lists from the journal
    """Make the index and working tree match HEAD for the moved paths only: what HEAD holds is
    checked out, and a working file HEAD no longer has is removed only if its bytes are the
    ones `old` committed (anything else is a user's edit, and stays)."""
    srcs, dsts = [m[0] for m in moves], [m[1] for m in moves]
    repo.git("reset", "-q", "HEAD", "--", *srcs, *dsts)
    present = set(repo.tree_entries("HEAD", srcs + dsts))
    committed = repo.tree_entries(old, srcs + dsts)
    pruned = partial.is_pruned(repo)  # archive/ stays out of the working tree: no checkout there
    shown = sorted(p for p in present if not (pruned and p.startswith("archive/")))
    # A file whose bytes are neither the ones `old` committed nor a beginning of HEAD's version
    # (what a git killed mid-write leaves) was changed by someone: it is left as it is (its change
    # then shows against HEAD), never overwritten. Nor is anything checked out where a file stands
    # in the way of a folder, or a folder where a file goes: checkout would delete them.
    shown = [p for p in shown if not _in_the_way(repo.root, p)]
    on_disk = [p for p in shown if os.path.isfile(os.path.join(repo.root, p))]
    hashes = repo.git("hash-object", "--", *on_disk).decode().split() if on_disk else []
    differ = [p for p, h in zip(on_disk, hashes, strict=True) if h != committed.get(p, ("", ""))[1]]
    if differ:
        versions = repo.objects([f"HEAD:{p}" for p in differ])
        edited = set()
        for p, version in zip(differ, versions, strict=True):
            with open(os.path.join(repo.root, p), "rb") as f:
                data = f.read()
            if version is None or not version.startswith(data):
                edited.add(p)
        shown = [p for p in shown if p not in edited]
    if shown:
        repo.git("checkout", "HEAD", "--", *shown)
    if pruned:
        repo.git("sparse-checkout", "reapply")  # marks the archive/ entries skip-worktree again
    for path in srcs + dsts:
        full = os.path.join(repo.root, path)
        if path not in present and os.path.isfile(full) and not os.path.islink(full):
            if repo.git("hash-object", "--", path).decode().strip() == committed.get(path, ("", ""))[1]:
                os.unlink(full)


def _in_the_way(root: str, path: str) -> bool:
    """Whether checking out `path` would have to delete something: a file (or link) where one of
    its folders goes, or a folder where it goes."""
    parts = path.split("/")
    for i in range(1, len(parts)):
        folder = os.path.join(root, *parts[:i])
        if os.path.islink(folder) or (os.path.lexists(folder) and not os.path.isdir(folder)):
            return True
    full = os.path.join(root, path)
    return os.path.isdir(full) and not os.path.islink(full)


def _lock_files(repo: Repo) -> list[str]:
    """The lock files a janitor killed inside git can leave: the index's, HEAD's and its branch's."""
    branch = repo.git("symbolic-ref", "-q", "HEAD", check=False).decode().strip()
    paths = ["index.lock", "HEAD.lock"] + ([f"{branch}.lock"] if branch else [])
    return [os.path.join(repo.git_dir, p) for p in paths]


def _clear_stale_locks(repo: Repo, journal: dict) -> None:
    """A janitor killed inside `read-tree -u` or `update-ref` leaves git's lock file behind, and
    git cannot tell a stale lock from a live one; see procs.clear_stale_lock()."""
    written = os.stat(_state_path(repo, JOURNAL)).st_mtime
    for lock in _lock_files(repo):
        procs.clear_stale_lock(repo, lock, owner_alive=lambda: procs.alive(journal.get("pid")),
                               made_by=written + LOCK_SLACK)


def recover(repo: Repo) -> str:
    """Finish or undo a cycle a crash interrupted: 'clean', 'rolled back' or 'rolled forward'."""
    try:
        with open(_state_path(repo, JOURNAL), encoding="utf-8") as f:
            journal = json.load(f)
    except FileNotFoundError:
        _drop(repo, INDEX, INDEX_LOCK)
        return "clean"
    except ValueError:  # a torn journal is written before anything else happened
        _drop(repo, JOURNAL, INDEX, INDEX_LOCK)
        return "rolled back"
    _clear_stale_locks(repo, journal)  # before anything else: git refuses to work past them
    head = repo.head()
    if journal.get("new") is None or head == journal["old"]:
        _drop(repo, JOURNAL, INDEX, INDEX_LOCK)
        return "rolled back"
    landed = head == journal["new"] or repo.ok("merge-base", "--is-ancestor", journal["new"], head or "")
    if landed:  # our commit is in HEAD's history (maybe with a user's commit on top): align to HEAD
        _align(repo, journal["old"], journal["moves"])
        _drop(repo, JOURNAL, INDEX, INDEX_LOCK)
        return "rolled forward"
    _drop(repo, JOURNAL, INDEX, INDEX_LOCK)  # history went elsewhere (a reset): it says what happened
    return "superseded"


# -- the repository lock, and commits of exact paths ----------------------------------------------

class Change(NamedTuple):
    """What an operation that commits did (to one memory)."""

    action: str
    name: str
    path: str
    commit: str | None  # None when nothing needed to change
    detail: str = ""

    def as_dict(self) -> dict:
        return {"action": self.action, "name": names.display(self.name), "path": self.path,
                "commit": self.commit, "changed": self.commit is not None, "detail": self.detail}


LOCK_WAIT = 30.0
POLL = 0.005  # seconds between tries of a lock another process holds (flock cannot time out)


def _open_lock(repo: Repo, name: str) -> int:
    return os.open(_state_path(repo, name), os.O_RDWR | os.O_CREAT, 0o644)


def _take(fd: int, deadline: float) -> bool:
    """flock `fd` exclusively, trying until `deadline` (time.monotonic()); whether it was taken.
    Polled, not blocking: a blocking flock can only be cut short by a signal, which only the
    main thread receives, and the MCP server and the watcher lock from other threads."""
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            if time.monotonic() >= deadline:
                return False
            time.sleep(POLL)


@contextmanager
def locked(repo: Repo, wait: float = LOCK_WAIT, role: str | None = None) -> Iterator[str]:
    """Hold the repository lock for the block; yields what recovering a killed move did ("" when
    there was nothing to recover). Refused when it is not had within `wait` seconds.

    Waiters are served in turn: each first takes the queue lock, then waits for the repository
    lock holding it, and lets go of the queue once it has the repository lock; so a process that
    waits is next, whoever comes after. With a `role` ("janitor"), a second process of the same
    role is refused at once rather than queued behind the first. Every lock is a flock, released
    by the kernel when its holder dies, so none is ever stale."""
    with ExitStack() as held_here:
        if role is not None:
            fd = _open_lock(repo, f"{contract.LOCK}.{role}")
            held_here.callback(os.close, fd)
            if not _take(fd, 0):
                raise Refused(f"another git-strata process (a {role}) is already running on this repository",
                              "wait for it to finish, then try again")
        deadline = time.monotonic() + wait
        fd = _open_lock(repo, contract.LOCK)
        held_here.callback(os.close, fd)
        queue = _open_lock(repo, contract.LOCK_QUEUE)
        try:
            taken = _take(queue, deadline) and _take(fd, deadline)
        finally:
            os.close(queue)  # served (or refused): the next waiter's turn to queue
        if not taken:
            raise Refused("another git-strata process (a janitor or a write) is changing this repository",
                          "wait for it to finish, then try again")
        # A writer killed after its commit, while writing index.md, left its temporary file and no
        # journal; a run with nothing to change would not write index.md, so sweep here.
        procs.sweep(repo.root, contract.temp_prefix(contract.INDEX_MD))
        # A janitor, recall or sync killed mid-move: finish it first.
        yield recover(repo) if os.path.exists(_state_path(repo, JOURNAL)) else ""


def held(repo: Repo) -> bool:
    """Whether another process holds the repository lock now (this one only looks: it keeps nothing)."""
    fd = os.open(_state_path(repo, contract.LOCK), os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)  # closing lets go of it if it was taken
    return False


def commit(repo: Repo, paths: list[str], stage: Callable[[], object], subject: str, trailers: dict[str, str],
           restore: bool = True, agent: str | None = None) -> str:
    """Stage with `stage()`, then commit exactly `paths` (nothing else a user staged rides along);
    `agent` adds the Strata-Agent trailer.

    If no commit was made (git failed, or the process was interrupted before HEAD moved), the
    working files are put back byte for byte as they were (callers check beforehand that they
    were clean) when `restore` is set, and unstaged. Once HEAD has moved nothing is touched: the
    commit is the truth.
    """
    if _index_locked(repo):
        raise Refused("another git process is using the index (.git/index.lock exists)",
                      "wait for it to finish and try again; if none is running, delete .git/index.lock")
    before = repo.head()
    saved = {p: safefs.read(repo.root, p, 1 << 62) if safefs.kind(repo.root, p) == "file" else None
             for p in paths} if restore else {}
    trailers = {**trailers, **({contract.AGENT: agent} if agent else {}), contract.MACHINE: access.machine_id(repo)}
    try:
        stage()
        return repo.commit(paths, subject, contract.trailers(trailers))
    except BaseException:
        if repo.head() == before:
            for path, data in saved.items():  # the files first: they matter most, and need no git
                if data is not None:
                    safefs.write(repo.root, path, data)
                elif safefs.kind(repo.root, path) == "file":
                    safefs.remove(repo.root, path)  # one this operation created
            repo.git("reset", "-q", "--", *paths, check=False)
        raise


def require_clean(repo: Repo, path: str, doing: str) -> None:
    """Refuse unless `path` is committed and unchanged (or absent and not ignored)."""
    listed, _ = repo.tracked(path, flags=("-v",))
    flags = listed[0][:1].encode() if listed else b""
    if flags.islower() or flags == b"S":  # git would hide changes to it from status
        raise Refused(f"refusing to {doing} {path}: git is told to ignore changes to it "
                      "(assume-unchanged or skip-worktree)",
                      f"clear it with `git update-index --no-assume-unchanged --no-skip-worktree {path}`")
    found = repo.status(path, ignored="traditional")
    code = found[0][0] if found else ""
    if code == "??":
        raise Refused(f"refusing to {doing} {path}: it exists but was never committed",
                      f"commit it with `git add {path} && git commit`, or move it aside")
    if code == "!!" or (not found and not repo.in_head(path) and repo.ignored(path)):
        raise Refused(f"refusing to {doing} {path}: git ignores it (a .gitignore rule matches)",
                      f"see `git check-ignore -v {path}`; remove the rule or choose another name")
    if found:
        raise Refused(f"refusing to {doing} {path}: it has uncommitted changes",
                      f"commit them (`git commit -- {path}`) or discard them (`git checkout -- {path}`)")


@contextmanager
def marked(repo: Repo, marker: str) -> Iterator[None]:
    """Leave this process's pid in the state file `marker` while it runs `git commit`: a commit
    killed inside git leaves index.lock behind, which clear_killed() deletes once that pid is gone."""
    path = _state_path(repo, marker)
    with open(path, "w", encoding="ascii") as f:
        f.write(f"{os.getpid()}\n")
    try:
        yield
    finally:
        _drop(repo, marker)


def clear_killed(repo: Repo, marker: str) -> None:
    """Delete the index.lock a commit killed under `marked(marker)` left: only once its process is
    gone, the lock is no newer than the marker, and nothing holds it open (procs.clear_stale_lock)."""
    path = _state_path(repo, marker)
    try:
        with open(path, encoding="ascii") as f:
            pid = int(f.read().strip() or 0)
        made = os.stat(path).st_mtime
    except (OSError, ValueError):
        return
    procs.clear_stale_lock(repo, os.path.join(repo.git_dir, "index.lock"), owner_alive=lambda: procs.alive(pid),
                           made_by=made + LOCK_SLACK)
    _drop(repo, marker)


# -- after HEAD moved -----------------------------------------------------------------------------

def follow_head(repo: Repo, cfg: Config, since: str | None = None, paths: list[str] | None = None,
                to: str | None = None) -> None:
    """Bring index.md, the catalog and the shadow index to HEAD after it moved: every operation that
    moves HEAD calls this once. `paths` changed since the commit `since` (only they are looked at
    again); without them the working tree is scanned. `to`: the commit the operation moved HEAD to,
    given by one that still holds the lock (the shadow index then asks git nothing more while HEAD
    is still there). (The full-text index follows on its next query.)"""
    from strata_git.store import history, index_md, shadow  # here: a sync with nothing new never needs them

    moved = None
    if since and paths is not None:
        described = history.known(repo, [since]).get(since)
        moved = (paths, described.tree if described else repo.tree_of(since))

    index_md.refresh(repo, cfg.max_memory_bytes, moved=moved)
    shadow.refresh(repo, (since, to, paths) if since and to and paths is not None else None)
