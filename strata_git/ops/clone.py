"""`git strata clone URL [DIR]`: a new machine joins small.

The clone is a partial clone (`--filter=blob:none`) whose checkout leaves archive/
out (sparse patterns `/*`, `!/archive/`). It holds every commit and tree, the blobs
of HEAD outside archive/ (fetched in one batch), the other machines' access records,
and nothing of the archive's content; the shadow index is built from history at once,
so archived memories are searchable straight away and rehydrate on demand.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TYPE_CHECKING, NamedTuple

from strata_git.core import contract, heap
from strata_git.errors import NotFound, Refused
from strata_git.gitio import git, partial
from strata_git.gitio.git import discover, run
from strata_git.ops import archive

if TYPE_CHECKING:
    from multiprocessing.process import BaseProcess


class Cloned(NamedTuple):
    root: str
    url: str
    archived: int  # memories under archive/ at HEAD
    archived_local: int  # of those, how many blobs came down anyway (0 unless the server ignored the filter)
    warning: str

    def as_dict(self) -> dict:
        return self._asdict()


def _target(url: str, folder: str | None) -> str:
    if folder:
        return os.path.abspath(folder)
    base = url.rstrip("/").rsplit("/", 1)[-1].rsplit(":", 1)[-1]
    base = base[:-4] if base.endswith(".git") else base
    return os.path.abspath(base or "memory")


def clone(url: str, folder: str | None = None, progress: Callable[[str], None] | None = None,
          counted: Callable[[int, int], None] | None = None) -> Cloned:
    """Clone `url` into `folder`. `progress` is told each step as it starts; `counted(done, total)`
    how many archived memories the shadow index holds so far, while it is built."""
    from strata_git.core import config

    target = _target(url, folder)
    if "://" not in url and os.path.isdir(url):  # a local path: git would copy it whole, filter or not
        from pathlib import Path

        url = Path(url).resolve().as_uri()  # percent-encoded: a path with spaces or % stays that path
    if os.path.lexists(target) and (not os.path.isdir(target) or os.listdir(target)):
        raise Refused(f"{target} already exists and is not an empty folder",
                      "give another folder: git strata clone URL DIR")
    say = progress or (lambda _: None)
    say(f"cloning the history of {git.shown_url(url)} (no memory's content)")
    proc = run(["clone", "-q", "--filter=blob:none", "--no-checkout", "--", url, target], os.getcwd(), check=False)
    if proc.returncode != 0:
        reason = git.error_line(proc.stderr)
        raise NotFound(f"could not clone {git.shown_url(url)}: {reason}",
                       "check the url and that the server is reachable")
    repo = discover(target)
    warning = "" if repo.head() else _branch_of_a_headless_remote(repo, url)
    partial.prune_checkout(repo)
    # Every blob the checkout needs, in one fetch: active/, cooled/ and any file outside archive/.
    needed = partial.absent(repo, sorted(archive.live_blobs(repo) - {""}))
    say(f"fetching the content of {len(needed)} files outside archive/")
    archive.fetch_blobs_from(repo, "origin", needed)
    repo.git("read-tree", "-m", "-u", "HEAD")
    if not os.path.isfile(os.path.join(repo.root, config.CONFIG_PATH)):
        raise NotFound(f"cloned into {target}, but it has no {config.CONFIG_PATH}: not a memory repository",
                       f"run `git strata init {target}` to make it one")
    with heap.held_off():  # (millions of objects made and kept from here on: see core/heap.py)
        return _index(repo, url, target, warning, say, counted)


def _index(repo: git.Repo, url: str, target: str, warning: str, say: Callable[[str], None],
           counted: Callable[[int, int], None] | None) -> Cloned:
    """The rest of a clone: the records, history read meanwhile, the shadow index, the live
    memories' rows and index.md."""
    from strata_git.core import config
    from strata_git.ops import hookshims
    from strata_git.ops.sync import sync
    from strata_git.store import catalog, history, index_md, records, shadow, tally

    say("fetching the machines' access and shadow records, and reading history meanwhile")
    access_refs = f"+{contract.ACCESS_REFS}*:{contract.remote_refs('origin', 'access')}*"
    run(["fetch", "-q", "origin", access_refs], repo.root, check=False)
    sync.fetch_access_blobs(repo, "origin", partial=True)
    # The shadow records in the same pack as their trees: these refs reach nothing but records, so
    # lifting the clone's blob filter for this one fetch brings no memory (50,000 records asked
    # for one by one took 40 s over `git daemon`). Any the server left out are fetched by id.
    # Only each ref's last commit: a ref's tree holds every record it ever had, and its history
    # (one commit per janitor run, each rewriting the 256 fan-out trees) is read by nothing here.
    # The clone becomes shallow at those commits only; the memory branch keeps all its history.
    # (At 200,000 archived: 62 s for the refs' whole history, 9.7 s for their last commits.) A
    # server that cannot cut history short gets the plain fetch.
    shadow_refs = ["origin", f"+{contract.SHADOW_REFS}*:{contract.remote_refs('origin', 'shadow')}*"]
    limit = f"--filter=blob:limit={records.MAX_RECORD_BYTES}"
    fetching = git.start(["fetch", "-q", "--depth=1", limit, *shadow_refs], repo.root)

    def make_table() -> None:
        history.last_changed(repo, history.head(repo), ())

    try:  # while the records arrive, what the indexes read from history
        head = repo.head()
        # The last-change table, which only index.md reads: made by another process until then.
        table = _aside(make_table)
        known = shadow.from_history(repo, head) if head else None
    finally:
        fetching.communicate()
    if fetching.returncode != 0:
        run(["fetch", "-q", limit, *shadow_refs], repo.root, check=False)
    sync.fetch_record_blobs(repo, "origin", {}, partial=True)
    hookshims.install(repo)
    cfg = config.load(repo.root, repo.state_dir())
    say("indexing the archive")
    archived = shadow.build(repo, head, counted, known)
    if not _done(table):  # (no other process, or it failed: made here)
        make_table()
    say("indexing the live memories and writing index.md")
    index_md.refresh(repo, cfg.max_memory_bytes, listed=False)
    with catalog.connect(repo) as db:  # (counted as status counts them, and kept for its first run)
        local = tally.held(repo, db, tally.tally(db))
    if local:
        sent = (f"the server sent {local} archived blob(s) anyway (it ignores --filter): run "
                f"{archive.SERVER_SETTINGS} in the repository on the server, then `git strata archive` prunes them "
                "here")
        warning = f"{warning}; {sent}" if warning else sent
    return Cloned(repo.root, git.shown_url(url), archived, local, warning)


def _aside(work: Callable[[], object]) -> BaseProcess | None:
    """`work` started in a forked process, or None where this one cannot fork (heap.forkable).
    The last-change table and the archive's paths are each read from all of history, and neither
    needs the other, nor does the shadow index need the table: at a million archived memories the
    table took 32.6 s of one core and the archive's paths and commits 15.0 s, and the records'
    fetch beside them ends first."""
    if not heap.forkable():
        return None
    import multiprocessing

    def in_child() -> None:
        git.forked()
        try:
            work()
        except BaseException:  # noqa: BLE001 - the caller does the work itself, and says why if it fails again
            os._exit(1)
        os._exit(0)

    proc = multiprocessing.get_context("fork").Process(target=in_child, daemon=True)
    proc.start()
    return proc


def _done(proc: BaseProcess | None) -> bool:
    """Whether the process _aside started did its work."""
    if proc is None:
        return False
    proc.join()
    return proc.exitcode == 0


def _branch_of_a_headless_remote(repo: git.Repo, url: str) -> str:
    """A remote whose HEAD names a branch it does not have (plain git clones it with a warning and
    no branch): check out its `main`, `master` or only branch, and say so; refuse if it has none."""
    branches = repo.git("for-each-ref", "--format=%(refname:lstrip=3)", "refs/remotes/origin/").decode().split()
    branches = [b for b in branches if b != "HEAD"]
    if not branches:
        raise Refused(f"{git.shown_url(url)} has no commits: it is not a memory repository yet",
                      "run `git strata init` in a clone of it, or clone a memory repository")
    pick = next((b for b in ("main", "master") if b in branches), branches[0] if len(branches) == 1 else None)
    if pick is None:
        raise Refused(f"{git.shown_url(url)}'s HEAD names a branch it does not have, and it has "
                      f"{len(branches)} others ({', '.join(branches[:5])})",
                      "set its HEAD to the memory branch (`git symbolic-ref HEAD refs/heads/NAME` in it), "
                      "then clone again")
    repo.git("update-ref", f"refs/heads/{pick}", f"refs/remotes/origin/{pick}")
    repo.git("symbolic-ref", "HEAD", f"refs/heads/{pick}")
    repo.git("branch", f"--set-upstream-to=origin/{pick}", pick)
    return f"the remote's HEAD names a branch it does not have; checked out its {pick!r} instead"
