"""Access records: every read through git-strata.

Reads never create commits on the memory branch. Each read is one JSON line appended
with a single write to `<git dir>/strata/access.log` (O_APPEND makes concurrent appends
safe), keyed by the memory's name so its history survives tier moves, and carrying the
machine and a unique number so that a record is counted once however often it is seen.

`flush()` (each janitor cycle) moves those lines into `refs/strata/access/<machine>`: a
commit chain holding one file, appended to only by this machine. Refs of other machines
arrive under `refs/strata-remotes/<remote>/access/` when syncing; since every machine
writes only its own ref, syncing them can never conflict and needs no merge code at all
(simpler than git notes merged with cat_sort_uniq, the other conflict-free option).
"""

from __future__ import annotations

import json
import os
import time

from strata_git.core import contract, untrusted
from strata_git.gitio.git import Repo, identity_env


def machine_id(repo: Repo) -> str:
    """This clone's id (random, made once): which access ref it writes."""
    path = os.path.join(repo.state_dir(), contract.MACHINE_ID)
    try:
        with open(path, encoding="ascii") as f:
            found = f.read().strip()
        if found:
            return found
    except FileNotFoundError:
        pass
    made = os.urandom(8).hex()
    with open(path, "w", encoding="ascii") as f:
        f.write(made + "\n")
    return made


def record(repo: Repo, name: str, tier: str, via: str, now: float | None = None) -> None:
    stamp = now if now is not None else time.time()
    line = json.dumps({"t": round(stamp, 3), "name": name, "tier": tier, "via": via,
                       "m": machine_id(repo), "n": time.time_ns()}, ensure_ascii=False) + "\n"
    fd = os.open(os.path.join(repo.state_dir(), contract.ACCESS_LOG), os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        size = os.fstat(fd).st_size
        if size and os.pread(fd, 1, size - 1) != b"\n":
            line = "\n" + line  # a torn last record (a crash mid-append) must not swallow this one
        os.write(fd, line.encode("utf-8"))
    finally:
        os.close(fd)


def _parse(text: str, where: str) -> list[dict]:
    """Records in `text`; a torn line (a crash mid-append) is skipped quietly, a record that is
    not one (a time no date shows, NaN, a name that is not text: another machine's bug) with a
    warning naming `where` it came from."""
    records, bad = [], 0
    for line in text.splitlines():
        item = untrusted.json_object(line) if line.startswith("{") and line.endswith("}") else None
        if item is None:
            bad += line.endswith("}")  # whole but not JSON (NaN, say); a torn line does not end so
            continue
        checked = untrusted.access_record(item)
        if checked is None:
            bad += 1
            continue
        records.append(checked)
    if bad:
        untrusted.warn(where, f"{bad} access record(s) with a bad time, name or machine; not counted as reads")
    return records


def _key(item: dict) -> tuple:
    return (item.get("m"), item.get("n"), item["name"], item["t"])


def _local(repo: Repo) -> list[dict]:
    records = []
    for name in (contract.ACCESS_FLUSHING, contract.ACCESS_LOG):
        try:
            with open(os.path.join(repo.state_dir(), name), encoding="utf-8", errors="replace") as f:
                records += _parse(f.read(), f".git/strata/{name}")
        except FileNotFoundError:
            pass
    return records


def _refs(repo: Repo) -> list[str]:
    out = repo.git("for-each-ref", "--format=%(refname)", contract.ACCESS_REFS, contract.REMOTE_REFS)
    return [r for r in out.decode().split() if r.startswith(contract.ACCESS_REFS) or "/access/" in r]


def _blobs(repo: Repo, refs: list[str]) -> list[dict]:
    records = []
    for ref, raw in zip(refs, repo.objects([f"{ref}:{contract.ACCESS_BLOB}" for ref in refs]), strict=True):
        records += _parse(raw.decode("utf-8", "replace"), ref) if raw is not None else []
    return records


def read_all(repo: Repo) -> list[dict]:
    """Every record this clone knows (its own, flushed or not, and other machines' it has
    fetched), each once, oldest first."""
    unique = {_key(item): item for item in _blobs(repo, _refs(repo)) + _local(repo)}
    return sorted(unique.values(), key=lambda item: (item["t"], str(item.get("m")), str(item.get("n"))))


def reads_by_name(repo: Repo) -> dict[str, list[int]]:
    """{name (with .md): [read times]} for the janitor."""
    found: dict[str, list[int]] = {}
    for item in read_all(repo):
        found.setdefault(item["name"] + ".md", []).append(int(item["t"]))
    return found


def flush(repo: Repo, author: tuple[str, str]) -> int:
    """Move local records into this machine's access ref; the number of records moved.

    Crash-safe by construction: the spool is renamed aside first, the ref is moved with
    a compare-and-swap, and only then is the aside file deleted; a crash anywhere leaves
    records either still aside (flushed next time, duplicates dropped) or in the ref."""
    state = repo.state_dir()
    spool, aside = os.path.join(state, contract.ACCESS_LOG), os.path.join(state, contract.ACCESS_FLUSHING)
    if os.path.exists(spool) and not os.path.exists(aside):
        os.replace(spool, aside)
    try:
        with open(aside, encoding="utf-8", errors="replace") as f:
            pending = _parse(f.read(), f".git/strata/{contract.ACCESS_FLUSHING}")
    except FileNotFoundError:
        return 0
    ref = contract.ACCESS_REFS + machine_id(repo)
    old = repo.git("rev-parse", "-q", "--verify", ref, check=False).decode().strip()
    kept = _blobs(repo, [ref]) if old else []
    seen = {_key(item) for item in kept}
    new = [item for item in pending if _key(item) not in seen]
    if new:
        text = "".join(json.dumps(item, ensure_ascii=False) + "\n" for item in kept + new)
        blob = repo.git("hash-object", "-w", "--stdin", input=text.encode("utf-8")).decode().strip()
        tree = repo.git("mktree", input=f"100644 blob {blob}\t{contract.ACCESS_BLOB}\n".encode()).decode().strip()
        env = identity_env(*author)
        parents = ["-p", old] if old else []
        # Only the janitor writes this machine's ref, under the repository lock: a lock file left
        # beside it comes from a flush that was killed.
        from strata_git.gitio.procs import clear_stale_lock

        clear_stale_lock(repo, os.path.join(repo.git_dir, ref + ".lock"))
        commit = repo.git("commit-tree", tree, *parents, "-m", f"strata: {len(new)} access records",
                          env=env).decode().strip()
        repo.git("update-ref", "-m", "strata: flush access records", ref, commit, old)
    os.unlink(aside)
    return len(new)
