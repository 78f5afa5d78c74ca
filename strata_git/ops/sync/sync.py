"""`git strata sync`: the memory branch, access records and archive records, both ways.

One round:

1. commit the uncommitted edits in active/ (each checked like a commit through the hooks;
   a file the checks refuse is left as it is, uncommitted, and reported);
2. flush this machine's access records into its access ref;
3. fetch the remote's branches, access refs and archive records;
4. integrate: nothing to do, a fast-forward, or a merge commit made by name (merge.py),
   so conflicts never stop the round and never lose an edit;
5. push the branch and this machine's access ref, never forced. If another machine pushed
   in between (the push is rejected, or the remote's update of the ref loses the race to the
   other push), the round goes back to 3 after a short random pause (at most ten times).

HEAD moves by the janitor's journaled compare-and-swap protocol, so a sync killed at
any instant is finished or undone by the next git-strata command that recovers. The
working tree only changes where the merge changed something, and never where a file has
changes of its own: sync refuses first. Published history is never rewritten: sync
makes merge commits and never rebases. A remote that went back (someone force-pushed)
simply gets the lost commits again, since this clone still has them.
"""

from __future__ import annotations

import itertools
import subprocess
import time
from collections.abc import Callable
from typing import Any, NamedTuple

from strata_git.core import contract
from strata_git.core.config import Config
from strata_git.errors import GitFailed, Refused
from strata_git.gitio import git
from strata_git.gitio.git import Repo, run
from strata_git.gitio.git import start as run_in_background
from strata_git.gitio.partial import absent, is_pruned
from strata_git.gitio.spawn import Spawned
from strata_git.ops import archive, txn
from strata_git.ops.sync import early, localedits, merge, mirror
from strata_git.ops.sync.remotes import Where, where
from strata_git.store import access, records

ATTEMPTS = 10
# The remote's own update of the ref lost a race: another push to it (or its gc packing refs) held
# the ref's lock, or moved it between the check and the update. git 2.39 answers
# `[remote rejected] (failed to update ref)` (its stderr: `cannot lock ref ...: File exists` or
# `... is at X but expected Y`); newer ones `(incorrect old value provided)` or
# `(reference already exists)`, older ones `(failed to lock)` or the `cannot lock ref` text itself.
RACES = ("(failed to update ref)", "(failed to lock)", "(cannot lock ref", "(incorrect old value provided)",
         "(reference already exists)", "(unable to update local ref)")
# Rejections that go away by fetching and pushing again: the remote moved meanwhile.
RETRY = ("(fetch first)", "(non-fast-forward)", "(stale info)", "(already exists)", *RACES)
# Before fetching again, a random pause of up to BACKOFF seconds, doubled at each attempt (at most
# BACKOFF_MAX): machines that keep pushing at the same instant spread out.
BACKOFF, BACKOFF_MAX = 0.1, 2.0


class Decision(NamedTuple):
    """A name both sides changed, and what became of it."""
    name: str  # the memory's name (or a file's path)
    how: str  # what happened, in words
    path: str | None  # where the result is (None: deleted)
    beside: str | None  # the conflict copy beside it, if one was kept

    def as_dict(self) -> dict[str, Any]:
        return self._asdict()


class Result(NamedTuple):
    remote: str
    url: str
    branch: str
    head: str | None
    committed: list[str]  # local edits committed before integrating
    left: list[dict[str, str]]  # uncommitted edits the checks refused: [{path, reason}]
    integrated: str  # "up to date", "fast-forward", "merge" (or "would ..." in a dry run)
    incoming: int  # commits brought in
    outgoing: int  # commits pushed (or to push)
    decisions: list[Decision]  # names both sides changed, and what became of them
    pushed: bool
    rewound: int  # commits the remote had lost, given back to it
    attempts: int
    mirrors: dict[str, str]
    dry_run: bool

    @property
    def conflicts(self) -> list[Decision]:
        return [d for d in self.decisions if d.beside]

    def as_dict(self) -> dict[str, Any]:
        return {**self._asdict(), "decisions": [d.as_dict() for d in self.decisions],
                "conflicts": [d.as_dict() for d in self.conflicts]}


def _note(progress: Callable[[str], None] | None, text: str) -> None:
    if progress:
        progress(text)


def _branch(repo: Repo) -> str:
    """The checked-out branch (HEAD is a branch: refuse_unless_settled checked)."""
    return repo.branch_quick() or repo.git("symbolic-ref", "-q", "--short", "HEAD").decode().strip()


def _is_ancestor(repo: Repo, a: str, b: str) -> bool:
    return a == b or repo.ok("merge-base", "--is-ancestor", a, b)


def _count(repo: Repo, spec: str) -> int:
    return int(repo.git("rev-list", "--count", spec).decode().strip() or 0)


def _ahead_behind(repo: Repo, ours: str | None, theirs: str | None) -> tuple[int, int]:
    """(commits only `ours` has, commits only `theirs` has), in one git call."""
    if not theirs or ours == theirs:
        return (_count(repo, ours) if ours and not theirs else 0), 0
    if not ours:
        return 0, _count(repo, theirs)
    ahead, behind = repo.git("rev-list", "--left-right", "--count", f"{ours}...{theirs}").decode().split()
    return int(ahead), int(behind)


# -- 3. fetch --------------------------------------------------------------------------

# What keeping index.md, the catalog and the shadow index at HEAD loads once a round brought changes
# in (about 40 ms of imports, bench/sync.py): loaded while the fetch runs, one module at a time until
# it is done, so a round that brings changes finds them loaded and one that brings none waits for
# at most the one module being loaded when its fetch ended.
UPKEEP = ("sqlite3", "strata_git.core.secrets", "strata_git.core.textindex", "strata_git.store.catalog",
          "strata_git.store.history", "strata_git.store.shadow", "strata_git.store.index_md")


def _load_while(proc: subprocess.Popen[bytes] | Spawned) -> None:
    import importlib

    for module in UPKEEP:
        if proc.poll() is not None:
            return
        importlib.import_module(module)


def fetch(repo: Repo, w: Where, started: subprocess.Popen[bytes] | Spawned | None = None) -> None:
    """Fetch the remote's branches, access refs and archive records (or wait for a fetch `started`)."""
    if started is not None:
        _load_while(started)
    proc = run(early.fetch_args(w.remote, repo.git_dir), repo.root, check=False) if started is None \
        else git.finish(started)
    if proc.returncode != 0:
        raise GitFailed(f"cannot reach {w.remote} ({git.shown_url(w.url)}): {git.error_line(proc.stderr)}; "
                        f"local work is committed here (HEAD {(repo.head() or 'none')[:12]}) and nothing was lost",
                        "check the url and the network; the next sync pushes it")


def fetch_access_blobs(repo: Repo, remote: str, partial: bool = True) -> None:
    """A partial clone fetches other machines' access refs without their records: bring those."""
    if not partial:
        return
    refs = repo.git("for-each-ref", "--format=%(refname)", contract.remote_refs(remote, "access")).decode().split()
    if refs:
        out = repo.git("rev-parse", *(f"{ref}:{contract.ACCESS_BLOB}" for ref in refs), check=False).decode().split()
        _fetch_absent(repo, remote, partial, [o for o in out if len(o) == 40])


def fetch_record_blobs(repo: Repo, remote: str, before: dict[str, str], partial: bool = True) -> None:
    """A partial clone fetches other machines' shadow refs without their records: bring the new ones
    (only what changed since `before`, {ref: commit} as it was before the fetch)."""
    if not partial:
        return
    prefix = contract.remote_refs(remote, "shadow")
    wanted: set[str] = set()
    for ref, oid in records.refs(repo).items():
        if ref.startswith(prefix) and before.get(ref) != oid:
            wanted.update(records.note_blobs(repo, before.get(ref), oid))
    _fetch_absent(repo, remote, partial, sorted(wanted))


# -- 4. integrate ----------------------------------------------------------------------

def _message(remote: str, branch: str, theirs: str, merged: merge.Merged, machine: str) -> str:
    kept = len(merged.conflicts)
    subject = f"strata: sync with {remote}/{branch}" + (f" ({kept} kept beside)" if kept else "")
    trailers = [(contract.SYNC, f"{remote}/{branch} {theirs}")]
    for d in merged.decisions:
        if d.beside:
            trailers.append((contract.CONFLICT, f"{d.name} -> {d.beside.path}"))
        else:
            trailers.append((contract.MERGE, f"{d.name}: {d.how}"))
    return contract.message(subject, [*trailers, (contract.MACHINE, machine)])


def _decision(d: merge.Decision) -> Decision:
    return Decision(d.name, d.how, d.result.path if d.result else None, d.beside.path if d.beside else None)


def _refuse_dirty(repo: Repo, old: str, new: str, listed: list[tuple[str, str]], left: list[dict]
                  ) -> dict[str, tuple[tuple[str, str] | None, tuple[str, str] | None]]:
    """What the move from old to new changes ({path: (old (mode, id) or None, new or None)}, as
    merge.changes gives it), after checking the working tree can take it (`listed`: what status
    listed). Refused: an untracked or ignored file where the move writes one, and a file where it
    needs a folder or the other way round. A tracked file with changes of its own (one the checks
    refused to commit) is left as it is, never overwritten (see txn._align), and reported in `left`."""
    diff = merge.changes(repo, old, new)
    changed = list(diff)
    exact = {p for code, p in listed if code in ("??", "!!")}
    tracked = {p for code, p in listed if code not in ("??", "!!")}
    on_disk = [p.rstrip("/") for _, p in listed]
    clash = sorted(p for p in changed if p in exact or any(p.startswith(d + "/") or d.startswith(p + "/")
                                                             for d in on_disk if d != p))
    if clash:
        why = {item["path"]: item["reason"] for item in left}.get(clash[0])
        raise Refused(f"{clash[0]} is in the way here (untracked, ignored, or a file where a folder goes) and the "
                      f"remote changed that path{f' (and {len(clash) - 1} more)' if len(clash) > 1 else ''}"
                      f"{f'; it was left uncommitted: {why}' if why else ''}; nothing was changed",
                      "move it aside (or commit it), then run `git strata sync` again")
    reasons = {item["path"]: item for item in left}
    localedits.remember_kept(repo, {p: (diff[p][0] or ("", ""))[1] for p in tracked & set(changed)})
    for path in sorted(tracked & set(changed)):
        item = reasons.get(path)
        note = "the remote changed it too: this version is kept, uncommitted (review it before committing)"
        if item:
            item["reason"] += f"; {note}"
        else:
            left.append({"path": path, "reason": note})
    return diff


def _fetch_absent(repo: Repo, remote: str, partial: bool, blobs: list[str]) -> None:
    """In a partial clone, bring those of `blobs` it lacks in one fetch (git would not: lazy
    fetching is off for git-strata)."""
    if blobs and partial:
        archive.fetch_blobs_from(repo, remote, absent(repo, blobs))


def _fetch_needed(repo: Repo, w: Where, added: dict[str, str]) -> None:
    """Bring the blobs the working tree will need (`added`: {path: object id} the move writes; not
    archive/'s when pruned) in one fetch."""
    if not added or not w.partial:
        return
    sparse = is_pruned(repo)
    _fetch_absent(repo, w.remote, True, sorted({oid for p, oid in added.items()
                                                if not (sparse and p.startswith("archive/"))}))


def integrate(repo: Repo, cfg: Config, w: Where, branch: str, ours: str | None, theirs: str | None,
              counts: tuple[int, int], dry_run: bool, listed: list[tuple[str, str]], left: list[dict]
              ) -> tuple[str, str, list[merge.Decision], list[str]]:
    """(what happened, the new HEAD, decisions, paths changed) after bringing `theirs` into `ours`
    (HEAD); `counts`: _ahead_behind(ours, theirs)."""
    ahead, behind = counts
    if theirs is None or behind == 0:
        return "up to date", ours or "", [], []
    if ours is None or ahead == 0:
        how, new, decisions = "fast-forward", theirs, []
    else:
        base = repo.git("merge-base", ours, theirs, check=False).decode().split()
        merged = merge.merge(repo, base[0] if base else None, ours, theirs, localedits.provenance(repo, ours),
                             lambda blobs: _fetch_absent(repo, w.remote, w.partial, blobs))
        if dry_run:
            return "would merge", ours, merged.decisions, []
        identity = git.identity_env(cfg.janitor_name, cfg.janitor_email)
        text = _message(w.remote, branch, theirs, merged, access.machine_id(repo))
        new = repo.git("commit-tree", merged.tree, "-p", ours, "-p", theirs, input=text.encode("utf-8"),
                       env=identity).decode().strip()
        how, decisions = "merge", merged.decisions
    if dry_run:
        return f"would {how}", ours or "", decisions, []
    assert ours is not None, "an unborn HEAD cannot be moved from"  # it never could: git was given None
    diff = _refuse_dirty(repo, ours, new, listed, left)
    changed = list(diff)
    added = {p: after[1] for p, (_, after) in diff.items() if after}  # {path: the object it has at `new`}
    _fetch_needed(repo, w, added)
    from strata_git.store import catalog, history  # (loaded while the fetch ran: UPKEEP)

    # While git checks the files out: the last-change table brought to the new commit, and the
    # changed memories described for the catalog.
    steps = itertools.chain(history.ahead(repo, ours, new),
                            catalog.primer(repo, new, changed, cfg.max_memory_bytes, added))
    txn.advance(repo, ours, new, changed, f"strata: sync {how} with {w.remote}/{branch}", meanwhile=steps)
    return how, new, decisions, changed


# -- 5. push ---------------------------------------------------------------------------

def _push_args(w: Where, refspecs: list[str]) -> list[str]:
    return ["push", "--porcelain", "--", w.remote, *refspecs]


def start_push(repo: Repo, w: Where, refspecs: list[str]) -> subprocess.Popen[bytes] | None:
    """The push of `refspecs` started in the background, for push(started=...); None for none."""
    if not refspecs:
        return None
    return run_in_background(_push_args(w, refspecs), repo.root, stdout=subprocess.PIPE)


def push(repo: Repo, w: Where, refspecs: list[str], last: bool = False,
         started: subprocess.Popen[bytes] | None = None) -> bool:
    """Push (never forced), or wait for the push start_push `started`; False when the remote moved
    meanwhile or its ref update lost a race (fetch and try again). On the `last` attempt a lost
    race is refused with the remote's words: one that never goes away is a lock file a crashed git
    left there."""
    if not refspecs:
        return True
    proc = git.finish(started) if started is not None else run(_push_args(w, refspecs), repo.root, check=False)
    if proc.returncode != 0 and b"from promisor remote" in proc.stderr:
        # A pruned clone: the pack for the remote needs a blob this clone gave back to its
        # archive remote (archived and pruned before the commits naming it were pushed). The
        # remote side has it, but git only counts what the pushed refs' old tips reach; so the
        # blob is fetched back from the promisor remote for this push (the next archive prunes
        # it again), where the push would otherwise be refused every time.
        proc = run(_push_args(w, refspecs), repo.root, check=False, env={"GIT_NO_LAZY_FETCH": "0"})
    if proc.returncode == 0:
        return True
    said = proc.stdout.decode("utf-8", "replace")
    rejected = [line for line in said.splitlines() if line.startswith("!")]
    again = bool(rejected) and all(any(mark in line for mark in RETRY) for line in rejected)
    raced = [line for line in rejected if any(mark in line for mark in RACES)]
    if again and not (last and raced):
        return False
    told = [line[len("remote: "):].strip() for line in proc.stderr.decode("utf-8", "replace").splitlines()
            if line.startswith("remote: ") and line[len("remote: "):].strip()]
    if again:  # the last attempt, and the remote's update of the ref failed once more
        why = raced[0].split("\t")[-1].strip()
        locks = [line for line in told if "cannot lock ref" in line] or told
        raise Refused(f"{w.remote} failed to update its refs, on the last of {ATTEMPTS} attempts: {why}"
                      f"{': ' + locks[0] if locks else ''}; local work is committed here "
                      f"(HEAD {(repo.head() or 'none')[:12]}) and nothing was lost",
                      "run `git strata sync` again; if this keeps happening and nothing else pushes there, a git "
                      "that crashed on the remote left a .lock file beside the ref: remove it")
    if rejected:
        why = rejected[0].split("\t")[-1].strip()
        raise Refused(f"{w.remote} refused the push: {why}{': ' + told[-1] if told else ''}; "
                      f"local work is committed here (HEAD {(repo.head() or 'none')[:12]}) and nothing was lost",
                      "ask whoever runs the remote why it refuses; the next sync pushes again")
    raise GitFailed(f"cannot push to {w.remote} ({git.shown_url(w.url)}): {git.error_line(proc.stderr)}; "
                    f"local work is committed here (HEAD {(repo.head() or 'none')[:12]}) and nothing was lost",
                    "check the url and the network; the next sync pushes it")


# -- the round -------------------------------------------------------------------------

def sync(repo: Repo, cfg: Config, remote: str | None = None, dry_run: bool = False,
         progress: Callable[[str], None] | None = None) -> Result:
    """One sync round (the caller holds the repository lock)."""
    name = remote or cfg.sync_remote
    w = early.where_of(repo, name) or where(repo, name)
    branch = repo.branch_quick()
    tracking = early.tracking_ref(w.remote, branch or "")
    _note(progress, f"fetching from {w.remote}")
    # The fetch waits on the network: it starts first (before this command's modules were loaded,
    # when the command line started it: see early.py), and the checks, recovery and the commit of
    # local edits run meanwhile (it only writes remote-tracking refs and objects; they write HEAD,
    # the index and objects). On a detached HEAD it waits for the checks, which refuse.
    started: subprocess.Popen[bytes] | Spawned | None
    prefetched = early.take(repo, early.fetch_args(w.remote, repo.git_dir)) if branch else None
    if prefetched is not None:
        before, shadow_before, started = prefetched.tracking, prefetched.shadow, prefetched.proc
    else:
        before, shadow_before = early.before_fetch(repo, tracking) if branch else (None, records.refs(repo))
        started = run_in_background(early.fetch_args(w.remote, repo.git_dir), repo.root) if branch else None
    try:
        if not dry_run:
            localedits.clear_killed_commit(repo)
            txn.recover(repo)
        txn.refuse_unless_settled(repo, "sync")
        if repo.head_quick() is None:
            raise Refused("this repository has no commits yet, so there is nothing here to sync",
                          f"join the memory with `git strata clone {git.shown_url(w.url)}`, "
                          "or start one here with `git strata init`")
        branch = branch or _branch(repo)
        machine = access.machine_id(repo)
        mine, mine_there = contract.ACCESS_REFS + machine, contract.remote_refs(w.remote, "access") + machine
        shadow_mine, shadow_there = records.own_ref(repo), contract.remote_refs(w.remote, "shadow") + machine
        listed = localedits.status(repo)
        committed, left = localedits.commit_local(repo, cfg, dry_run, listed)
        if not dry_run:
            access.flush(repo, (cfg.janitor_name, cfg.janitor_email))
    except BaseException:
        if started is not None:
            started.kill()
            started.communicate()
        raise
    listed = [(code, path) for code, path in listed if path not in set(committed)]
    start = repo.head_quick()
    decisions: list[merge.Decision] = []
    integrated, rewound, incoming = "up to date", 0, 0
    for attempt in range(1, ATTEMPTS + 1):
        if attempt > 1:
            import random  # (here: a round that nobody raced never needs it)

            time.sleep(random.uniform(0, min(BACKOFF_MAX, BACKOFF * 2 ** (attempt - 2))))
            _note(progress, f"fetching from {w.remote} again (another machine pushed first)")
            listed = localedits.status(repo)
        fetch(repo, w, started if attempt == 1 else None)
        refs = early.refs(repo, [tracking, mine, mine_there, shadow_mine, shadow_there])
        fetch_access_blobs(repo, w.remote, w.partial)
        fetch_record_blobs(repo, w.remote, shadow_before, w.partial)
        shadow_before = records.refs(repo)
        theirs, ours = refs.get(tracking), repo.head_quick()
        ahead, behind = _ahead_behind(repo, ours, theirs)
        if before and theirs and before != theirs:  # did the remote lose commits it had?
            lost = ahead if before == ours else (0 if _is_ancestor(repo, before, theirs) else
                                                 _count(repo, f"{theirs}..{before}"))
            rewound = max(rewound, lost)
        incoming += behind
        _note(progress, f"integrating {w.remote}/{branch}")
        how, head, found, changed = integrate(repo, cfg, w, branch, ours, theirs, (ahead, behind), dry_run, listed,
                                              left)
        decisions += found
        if how != "up to date":
            integrated = how
        outgoing = {"fast-forward": 0, "merge": ahead + 1}.get(how, ahead)
        if dry_run:
            return Result(remote=w.remote, url=git.shown_url(w.url), branch=branch, head=start, committed=committed,
                          left=left, integrated=integrated, incoming=incoming, outgoing=outgoing,
                          decisions=[_decision(d) for d in decisions], pushed=False, rewound=rewound,
                          attempts=attempt, mirrors={}, dry_run=True)
        specs = [f"{head}:refs/heads/{branch}"] if head and head != theirs else []
        for ref, there in ((mine, mine_there), (shadow_mine, shadow_there)):
            if refs.get(ref) and refs.get(ref) != refs.get(there):
                specs.append(f"{ref}:{ref}")
        _note(progress, f"pushing to {w.remote}")
        pushing = None
        if head != start:
            # The push waits on the network: index.md, the catalog and the shadow index follow HEAD
            # meanwhile (they are this clone's own files; the push reads objects and refs).
            pushing = start_push(repo, w, specs)
            try:
                # Only `changed` differ from `ours`, which the catalog may reflect; else a full scan.
                txn.follow_head(repo, cfg, since=ours, paths=changed if changed and ours else None, to=head)
            except BaseException:
                if pushing is not None:
                    pushing.kill()
                    pushing.communicate()
                raise
        if push(repo, w, specs, last=attempt == ATTEMPTS, started=pushing):
            for ref, oid in ((tracking, head), (mine_there, refs.get(mine)), (shadow_there, refs.get(shadow_mine))):
                if specs and oid:  # what the remote has now, as a fetch would record it
                    repo.git("update-ref", ref, oid)
            pushed_to = mirror.push_mirrors(repo, w, branch)
            return Result(remote=w.remote, url=git.shown_url(w.url), branch=branch, head=head, committed=committed,
                          left=left, integrated=integrated, incoming=incoming, outgoing=outgoing,
                          decisions=[_decision(d) for d in decisions], pushed=bool(specs), rewound=rewound,
                          attempts=attempt, mirrors=pushed_to, dry_run=False)
        before = theirs
    raise Refused(f"{w.remote} kept changing: {ATTEMPTS} rounds in a row another machine pushed first; "
                  "everything here is committed", "run `git strata sync` again")
