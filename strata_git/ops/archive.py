"""Archiving for real: push, verify by reading back, record, and only then prune locally.

`archive()` runs with the repository lock held:

1. push the branch to the archive remote (never forced: a rejection stops here);
2. check the remote can serve single objects and filtered clones (its `filter`
   capability, read from the protocol advertisement);
3. list the blobs this clone would drop: present locally, reachable from the pushed
   commit, and not needed by HEAD or the index outside archive/;
4. fetch exactly those blobs from the remote into an empty scratch repository and
   check every one arrived (git verifies each object's hash as it unpacks): the remote
   is shown to hold them, the push's exit code is not trusted;
5. record the verification as a commit on `refs/strata/archive/<remote>`;
6. prune: archive/ leaves the working tree (sparse checkout `/*`, `!/archive/`), the
   clone becomes a partial clone of the remote (`remote.<r>.promisor`), everything
   kept is repacked into one pack marked `.promisor` (so fsck and gc accept the
   holes and gc never downloads them again), then the old packs and the dropped loose
   objects are deleted.

A kill at any instant leaves every object either in the local store or verified on
the remote: nothing is deleted before step 4 succeeded and the new promisor pack is
on disk. Any failure before step 6 prunes nothing; the next run retries.
"""

from __future__ import annotations

import os
import subprocess
import time
from typing import NamedTuple

from strata_git.core import contract
from strata_git.core.config import Config
from strata_git.errors import GitFailed, NotFound, Refused
from strata_git.gitio import git, partial, procs
from strata_git.gitio.git import Repo, run
from strata_git.ops import txn
from strata_git.store import access

# What the archive remote's server needs, as commands to paste there.
SERVER_SETTINGS = "`git config uploadpack.allowFilter true && git config uploadpack.allowAnySHA1InWant true`"


class Report(NamedTuple):
    remote: str
    url: str
    pushed: str  # the commit the remote now has
    verified: int  # blobs read back from the remote this run
    pruned: int  # blobs deleted from the local object store this run
    pruned_bytes: int
    missing_before: int  # blobs this clone did not hold before the run
    git_bytes_before: int
    git_bytes_after: int
    record: str | None  # the verification commit, None when there was nothing to verify
    dry_run: bool

    def as_dict(self) -> dict:
        return self._asdict()


def remote_for(repo: Repo, cfg: Config) -> tuple[str, str]:
    """(remote name, url) of the archive remote: archive.remote, else the sync remote."""
    name = cfg.archive_remote or cfg.sync_remote
    proc = run(["remote", "get-url", name], repo.root, check=False)
    if proc.returncode != 0:
        key = "archive.remote" if cfg.archive_remote else "sync.remote"
        raise NotFound(f"no git remote named {name!r} to archive to ({key} in .strata/config.toml)",
                       f"add it with `git remote add {name} URL`, or set {key} to an existing remote")
    url = proc.stdout.decode().strip()
    if "://" not in url and ":" not in url.split("/")[0] and not os.path.isabs(url):
        url = os.path.normpath(os.path.join(repo.root, url))  # a relative local path
    return name, url


def _git_bytes(repo: Repo) -> int:
    total = 0
    for folder, _, files in os.walk(os.path.join(repo.git_dir, "objects")):
        for name in files:
            try:
                total += os.lstat(os.path.join(folder, name)).st_size
            except OSError:
                pass
    return total


def _local_git_dir(url: str) -> str | None:
    """The git directory a local url (a path or file://) names, else None."""
    from urllib.parse import unquote, urlparse

    path = unquote(urlparse(url).path) if url.startswith("file://") else url if "://" not in url else ""
    if not path or not os.path.isdir(path):
        return None
    for candidate in (path, os.path.join(path, ".git")):
        if os.path.isfile(os.path.join(candidate, "HEAD")) and os.path.isdir(os.path.join(candidate, "objects")):
            return os.path.realpath(candidate)
    return None


def _borrowed_stores(objects: str, seen: set[str] | None = None) -> set[str]:
    """Object folders `objects` reads through alternates, transitively."""
    seen = set() if seen is None else seen
    try:
        with open(os.path.join(objects, "info", "alternates"), encoding="utf-8") as f:
            lines = [line.strip() for line in f if line.strip() and not line.startswith("#")]
    except OSError:
        return seen
    for line in lines:
        other = os.path.realpath(line if os.path.isabs(line) else os.path.join(objects, line))
        if other not in seen:
            seen.add(other)
            _borrowed_stores(other, seen)
    return seen


def check_not_ourselves(repo: Repo, remote: str, url: str) -> None:
    """Refuse a remote that serves this clone's own objects: the read-back would prove nothing,
    and pruning would delete the only copy."""
    theirs = _local_git_dir(url)
    if theirs is None:
        return
    ours = os.path.realpath(os.path.join(repo.git_dir, "objects"))
    common = run(["rev-parse", "--git-common-dir"], repo.root).stdout.decode().strip()
    ours_common = os.path.realpath(os.path.join(repo.root, common, "objects"))
    stores = {os.path.realpath(os.path.join(theirs, "objects"))} | _borrowed_stores(os.path.join(theirs, "objects"))
    if stores & {ours, ours_common}:
        raise Refused(f"the archive remote {remote} ({git.shown_url(url)}) reads this clone's own objects (it is this "
                      "repository, or shares its objects through alternates); nothing was pruned",
                      "archive to a remote that holds its own copy (a plain `git clone --bare`, not --shared)")


def check_server(repo: Repo, remote: str, url: str) -> None:
    """Refuse unless the remote advertises `filter` (uploadpack.allowFilter): without it a
    filtered clone silently downloads the whole archive, and lazy fetches warn."""
    proc = run(["ls-remote", remote, "HEAD"], repo.root, check=False, env={"GIT_TRACE_PACKET": "1"})
    if proc.returncode != 0:
        raise Refused(f"the archive remote {remote} ({git.shown_url(url)}) is unreachable: "
                      f"{git.error_line(proc.stderr)}; nothing was pruned",
                      "check the url and the network; the next run retries")
    import re

    said = [line.split("ls-remote< ", 1)[1] for line in proc.stderr.decode("utf-8", "replace").splitlines()
            if "ls-remote< " in line]
    if not any("filter" in re.split(r"[\s\0=]", line) for line in said):
        raise Refused(f"the archive remote {remote} ({git.shown_url(url)}) does not offer filtered fetches, so a clone "
                      "could not leave the archive behind; nothing was pruned",
                      f"in the repository on the server, run {SERVER_SETTINGS} (hosted git services already "
                      "allow both)")


def _fetch_by_id(repo: Repo, scratch: str, url: str, oids: list[str]) -> subprocess.CompletedProcess[bytes]:
    """Fetch exactly `oids` from `url` into the scratch repository (no negotiation, no refs)."""
    return run(["-C", scratch, "-c", "fetch.negotiationAlgorithm=noop", "fetch", "-q", "--no-tags",
                "--no-write-fetch-head", "--recurse-submodules=no", url, "--stdin"], repo.root, check=False,
               input="".join(f"{o}\n" for o in oids).encode())


def _push(repo: Repo, remote: str, url: str, refspecs: list[str]) -> None:
    proc = run(["push", "--porcelain", remote, *refspecs], repo.root, check=False)
    if proc.returncode != 0:
        said = proc.stdout.decode("utf-8", "replace") + proc.stderr.decode("utf-8", "replace")
        if "[rejected]" in said or "non-fast-forward" in said or "fetch first" in said:
            raise Refused(f"the archive remote {remote} has commits this clone does not (push rejected, never forced); "
                          "nothing was pruned", f"bring them in first (`git pull {remote}`), then run again")
        reason = git.error_line(proc.stderr) if proc.stderr.strip() else git.error_line(proc.stdout)
        raise Refused(f"could not push to the archive remote {remote} ({git.shown_url(url)}): {reason}; "
                      "nothing was pruned",
                      "check the url, the network and the server's hooks; the next run retries")


def _blob_ids(out: bytes) -> list[str]:
    return [line for line in out.decode().split() if line and not line.startswith("?")]


def live_blobs(repo: Repo) -> set[str]:
    """Blobs the checkout needs: in HEAD or the index anywhere outside archive/. HEAD's tree is
    listed below its other top-level entries only: listing it whole costs a line per archived
    memory (1.7 s at 200,000)."""
    top = [path for path, e in repo.ls_tree("HEAD", recursive=False, full_tree=True).items()
           if not (path == "archive" and e.type == "tree")]
    live = {e.oid for e in repo.ls_tree("HEAD", *top, full_tree=True).values()} if top else set()
    for item in repo.tracked(flags=("-s",))[0]:
        meta, _, path = item.partition("\t")
        if not path.startswith("archive/"):
            live.add(meta.split(" ")[1])
    return live


def candidates(repo: Repo, commit: str) -> dict[str, int]:
    """{blob id: size} of blobs held locally, reachable from `commit`, and not live."""
    out = repo.git("rev-list", "--objects", "--no-object-names", "--missing=print", "--filter=object:type=blob",
                   commit)
    present = _blob_ids(out)
    live = live_blobs(repo)
    wanted = [o for o in present if o not in live]
    if not wanted:
        return {}
    checked = repo.git("cat-file", "--batch-check=%(objectname) %(objecttype) %(objectsize)",
                       input="".join(f"{o}\n" for o in wanted).encode()).decode().splitlines()
    found = {}
    for line in checked:
        parts = line.split()
        if len(parts) == 3 and parts[1] == "blob":
            found[parts[0]] = int(parts[2])
    return found


def verify(repo: Repo, remote: str, url: str, blobs: list[str]) -> None:
    """Fetch `blobs` from the remote into an empty repository and check each one arrived."""
    scratch = os.path.join(repo.state_dir(), f"{contract.VERIFY_SCRATCH}{os.getpid()}-{os.urandom(4).hex()}")
    try:
        run(["init", "-q", "--bare", scratch], repo.root)
        for start in range(0, len(blobs), 20000):
            chunk = blobs[start:start + 20000]
            proc = _fetch_by_id(repo, scratch, url, chunk)
            if proc.returncode != 0:
                raise Refused(f"the archive remote {remote} did not give back the archived objects "
                              f"({git.error_line(proc.stderr)}); nothing was pruned",
                              f"the server must serve objects by id: run {SERVER_SETTINGS} in the repository on "
                              "the server; the next run retries")
            out = run(["-C", scratch, "cat-file", "--batch-check=%(objectname) %(objecttype)"], repo.root,
                      input="".join(f"{o}\n" for o in chunk).encode()).stdout.decode().splitlines()
            missing = [line.split()[0] for line in out if not line.endswith(" blob")]
            if missing:
                raise Refused(f"the archive remote {remote} lacks {len(missing)} archived object(s), "
                              f"{missing[0]} first; nothing was pruned", "push again (`git strata archive`)")
    finally:
        import shutil

        shutil.rmtree(scratch, ignore_errors=True)


def _record(repo: Repo, remote: str, url: str, commit: str, blobs: list[str], cfg: Config) -> str:
    """The verification record: a commit (not yet on any ref) on top of the previous one."""
    import hashlib

    ref = contract.VERIFIED_REFS + remote
    parent = run(["rev-parse", "-q", "--verify", ref], repo.root, check=False).stdout.decode().strip()
    empty = repo.git("mktree", input=b"").decode().strip()
    digest = hashlib.sha256("".join(f"{b}\n" for b in sorted(blobs)).encode()).hexdigest()
    text = contract.message(f"strata: verified {len(blobs)} archived object(s) on {remote}", [
        (contract.VERIFIED_REMOTE, remote), (contract.VERIFIED_URL, git.shown_url(url)),
        (contract.VERIFIED_COMMIT, commit), (contract.VERIFIED_OBJECTS, str(len(blobs))),
        (contract.VERIFIED_DIGEST, f"sha256:{digest}"), (contract.VERIFIED_AT, str(int(time.time()))),
        (contract.MACHINE, access.machine_id(repo))])
    identity = git.identity_env(cfg.janitor_name, cfg.janitor_email)
    # Parents: the previous record, then the verified commit. The chain of records reaches every
    # commit ever verified, so the ref, pushed to the remote, keeps their objects there even if the
    # branch is later rewound.
    new = repo.git("commit-tree", empty, *(["-p", parent] if parent else []), "-p", commit, input=text.encode(),
                   env=identity).decode().strip()
    return new


def _sparse(repo: Repo) -> None:
    """Take archive/ out of the working tree (its files are committed and unchanged: checked).
    Run every time: a run killed inside `sparse-checkout set` may have left only the patterns, a
    clone pruned by an older version has the non-cone patterns (every archived file an index
    entry: migrated here), and a sync may have brought a new top-level folder."""
    repo.git("update-index", "-q", "--refresh", check=False)
    on = repo.git("config", "--get", "core.sparseCheckout", check=False).decode().strip() == "true"
    if on and partial.is_current(repo):
        repo.git("sparse-checkout", "reapply")
    else:
        partial.prune_checkout(repo)


def _clear_leftovers(repo: Repo) -> None:
    """Scratch repositories of verifications a killed run never finished. (git's own lock files
    are never deleted here: a live git process may hold one without having it open.)"""
    procs.sweep(repo.state_dir(), contract.VERIFY_SCRATCH)


def _refuse_locks(repo: Repo, remote: str, branch: str) -> None:
    """Refuse, before anything changes, while git's lock files exist (another git command is
    running, or one was killed): the hint says which file and what to do."""
    for lock in ("index.lock", "config.lock", "config.worktree.lock", "info/sparse-checkout.lock",
                 "packed-refs.lock", "HEAD.lock", f"refs/heads/{branch}.lock", f"{contract.VERIFIED_REFS}{remote}.lock",
                 f"refs/remotes/{remote}/{branch}.lock"):
        if os.path.exists(os.path.join(repo.git_dir, lock)):
            raise Refused(f"another git process is using this repository (.git/{lock} exists); nothing was "
                          "pushed or pruned", f"wait for it to finish; if no git command is running, a killed one "
                          f"left it behind: delete .git/{lock} and run again")


def _become_partial(repo: Repo, remote: str) -> None:
    """What `git clone --filter=blob:none` writes on git 2.39, for the archive remote."""
    repo.git("config", "core.repositoryformatversion", "1")
    repo.git("config", f"remote.{remote}.promisor", "true")
    repo.git("config", f"remote.{remote}.partialclonefilter", "blob:none")


def _fsync_file(path: str) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def prune(repo: Repo, drop: set[str]) -> None:
    """Repack everything but `drop` into one promisor pack, then delete the rest."""
    pack_dir = os.path.join(repo.git_dir, "objects", "pack")
    os.makedirs(pack_dir, exist_ok=True)
    old = sorted(f[:-5] for f in os.listdir(pack_dir) if f.endswith(".pack")
                 and not os.path.exists(os.path.join(pack_dir, f[:-5] + ".keep")))
    # Everything this clone holds except `drop`: reachable or not (FETCH_HEAD, dropped stashes,
    # cruft packs), nothing but the verified blobs may leave.
    out = repo.git("cat-file", "--batch-all-objects", "--unordered", "--batch-check=%(objectname)")
    keep = [o for o in dict.fromkeys(out.decode().split()) if o not in drop]
    name = repo.git("pack-objects", "-q", os.path.join(pack_dir, "pack"),
                    input="".join(f"{o}\n" for o in keep).encode()).decode().strip()
    new = f"pack-{name}"
    marker = os.path.join(pack_dir, new + ".promisor")
    with open(marker, "wb") as f:  # the marker: holes this pack refers to are promised by the remote
        f.flush()
        os.fsync(f.fileno())
    _fsync_file(pack_dir)
    for base in old:
        if base == new:
            continue
        for suffix in (".promisor", ".bitmap", ".rev", ".mtimes", ".idx", ".pack"):
            try:
                os.unlink(os.path.join(pack_dir, base + suffix))
            except FileNotFoundError:
                pass
    for stale in ("multi-pack-index",):
        try:
            os.unlink(os.path.join(pack_dir, stale))
        except FileNotFoundError:
            pass
    objects = os.path.join(repo.git_dir, "objects")
    for oid in drop:
        try:
            os.unlink(os.path.join(objects, oid[:2], oid[2:]))
        except FileNotFoundError:
            pass
    repo.git("prune-packed", "-q")


def archive(repo: Repo, cfg: Config, dry_run: bool = False) -> Report:
    """Push, verify, record, prune; the caller holds the repository lock."""
    txn.refuse_unless_settled(repo)
    remote, url = remote_for(repo, cfg)
    head = repo.head()
    if head is None:
        raise Refused("the repository has no commits yet", "run `git strata init` first")
    branch = repo.git("symbolic-ref", "--short", "HEAD").decode().strip()
    # A file only missing from the working tree (" D") is still committed: pruning takes it out
    # anyway (and a run killed inside `sparse-checkout set` leaves exactly that).
    dirty = [path for code, path in repo.status("archive", untracked="no") if code != " D"]
    if dirty:
        first = dirty[0]
        raise Refused(f"archive/ has uncommitted changes ({first}); nothing was pushed or pruned",
                      f"commit or discard them (`git checkout -- {first}`), then run again")
    _refuse_locks(repo, remote, branch)
    # A dry run checks what the real run checks first (nothing of it writes): the remote is not this
    # repository, and its server can serve filtered clones.
    check_not_ourselves(repo, remote, url)
    check_server(repo, remote, url)
    if not dry_run:
        _clear_leftovers(repo)
    before = _git_bytes(repo)
    listed = repo.git("rev-list", "--objects", "--no-object-names", "--missing=print", head).decode().split()
    missing = len([line for line in listed if line.startswith("?")])
    if dry_run:
        drop = candidates(repo, head)
        return Report(remote, git.shown_url(url), head, 0, len(drop), sum(drop.values()), missing, before, before,
                      None, True)
    from strata_git.store import records  # the archived memories' records go where their content goes

    own = records.own_ref(repo)
    shadow_refs = [f"{own}:{own}"] if own in records.refs(repo) else []
    _push(repo, remote, url, [f"{head}:refs/heads/{branch}", *shadow_refs])
    drop = candidates(repo, head)
    record = None
    if drop:
        verify(repo, remote, url, sorted(drop))
        record = _record(repo, remote, url, head, sorted(drop), cfg)
        # The record goes here, then to the remote, where it pins the verified commits. In this
        # order the remote's copy is always an ancestor of ours, so the push is a fast-forward even
        # after a run killed in between.
        from strata_git.store.access import machine_id

        ref = contract.VERIFIED_REFS + remote
        parent = run(["rev-parse", "-q", "--verify", ref], repo.root, check=False).stdout.decode().strip()
        repo.git("update-ref", "-m", "strata: archive verified", ref, record, parent or "0" * 40)
        _push(repo, remote, url, [f"{record}:{contract.VERIFIED_REFS}{machine_id(repo)}"])
    _sparse(repo)
    _become_partial(repo, remote)
    if drop:
        prune(repo, set(drop))
    return Report(remote, git.shown_url(url), head, len(drop), len(drop), sum(drop.values()), missing, before,
                  _git_bytes(repo), record, False)


def command(repo: Repo, cfg: Config, dry_run: bool = False) -> Report:
    """`git strata archive`: archive() under the repository lock; index.md and the shadow index follow."""
    with txn.locked(repo):
        if not dry_run:
            txn.recover(repo)
        report = archive(repo, cfg, dry_run=dry_run)
    if not dry_run:
        txn.follow_head(repo, cfg)
    return report


def fetch_blobs(repo: Repo, cfg: Config, blobs: list[str]) -> None:
    """Bring `blobs` this clone lacks from the archive remote in one batch (nothing is written
    if any is unavailable: a fetch lands whole or not at all)."""
    if blobs:
        fetch_blobs_from(repo, remote_for(repo, cfg)[0], blobs)


def fetch_blobs_from(repo: Repo, remote: str, blobs: list[str]) -> None:
    if not blobs:
        return
    proc = run(["-c", "fetch.negotiationAlgorithm=noop", "fetch", "-q", "--no-tags", "--no-write-fetch-head",
                "--recurse-submodules=no", "--filter=blob:none", remote, "--stdin"], repo.root, check=False,
               input="".join(f"{o}\n" for o in blobs).encode())
    if proc.returncode != 0:
        url = run(["remote", "get-url", remote], repo.root, check=False).stdout.decode().strip()
        raise GitFailed(f"could not fetch {len(blobs)} archived memor{'y' if len(blobs) == 1 else 'ies'} from "
                        f"{remote} ({git.shown_url(url)}): {git.error_line(proc.stderr)}; nothing was changed",
                        "check that the archive remote is reachable, then try again")


def borrow(repo: Repo, cfg: Config, blobs: list[str]) -> dict[str, bytes]:
    """The contents of `blobs`, fetched from the archive remote in one batch into a scratch
    repository that is deleted afterwards, so this clone's pruned object store stays pruned."""
    if not blobs:
        return {}
    remote, url = remote_for(repo, cfg)
    scratch = os.path.join(repo.state_dir(), f"{contract.BORROW_SCRATCH}{os.getpid()}-{os.urandom(4).hex()}")
    try:
        run(["init", "-q", "--bare", scratch], repo.root)
        proc = _fetch_by_id(repo, scratch, url, blobs)
        if proc.returncode != 0:
            raise GitFailed(f"could not fetch {len(blobs)} archived blob(s) from {remote} ({git.shown_url(url)}): "
                            f"{git.error_line(proc.stderr)}",
                            "check that the archive remote is reachable, then try again")
        return {b: raw for b, raw in zip(blobs, Repo(scratch, scratch).objects(blobs), strict=True) if raw is not None}
    finally:
        import shutil

        shutil.rmtree(scratch, ignore_errors=True)
