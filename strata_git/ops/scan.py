"""`git strata scan`: secrets already in history, found by the commit hook's own rules.

Every commit reachable from any ref is read: the branches and tags, and git-strata's own refs
(shadow, access and archive records under refs/strata/, other machines' copies under
refs/strata-remotes/). What each commit brings is scanned once per distinct blob, and each
distinct line once (secrets.scan judges every line on its own, so a line met again, in the
next version of a file or in another record, is looked up rather than scanned again: a
memory edited a thousand times costs about what its distinct lines cost). Commit messages,
trailers included, and file names are scanned too. A blob over `max_bytes` or binary is
skipped and counted, and so is one this clone does not hold (a pruned clone): nothing is
fetched.

A finding is reported once per place (file, record or commit message) at the oldest commit
that brought it there, with its line, rule and fingerprint (store/allowlist.py), never the
secret; fingerprints this clone allows are left out and counted. Nothing here changes the
repository: `advice()` says how to purge history, and a person does it.
"""

from __future__ import annotations

import dataclasses
import shlex
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import NamedTuple

from strata_git.core import contract, secrets
from strata_git.gitio import partial, walk
from strata_git.gitio.git import Repo
from strata_git.store import allowlist

MAX_BYTES = 8 * 1024 * 1024  # the largest blob git-strata writes is a shadow record (records.MAX_RECORD_BYTES)
BINARY_PROBE = 8000  # bytes looked at for a NUL, as git tells binary from text
CHUNK_BYTES = 32 * 1024 * 1024  # blobs read per batch: memory stays bounded on any history
CHUNK_OBJECTS = 2000

Progress = Callable[[int, int], None]  # (objects read, objects to read)


@dataclass(frozen=True)
class Finding:
    commit: str  # the oldest commit that brought it to this place
    ref: str  # the ref that commit was reached from
    kind: str  # file, file name, commit message, shadow record, access record, archive record
    path: str  # the file or record path (a secret in it masked); "" for a commit message
    line: int  # in the file, record or message; 0 for a file name
    rule: str
    what: str
    fingerprint: str

    def as_dict(self) -> dict:
        return dataclasses.asdict(self)


@dataclass(frozen=True)
class Report:
    findings: tuple[Finding, ...]
    commits: int
    blobs: int  # distinct blobs scanned
    large: int  # skipped: over max_bytes
    binary: int  # skipped: binary
    missing: int  # skipped: not in this clone (pruned), never fetched
    allowed: int  # findings whose fingerprint the allowlist holds, left out
    max_bytes: int

    def as_dict(self) -> dict:
        found = {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.name != "findings"}
        steps = [step._asdict() for step in advice(self.findings)]
        return {"findings": [f.as_dict() for f in self.findings], **found, "advice": steps}


class _Lines:
    """Each distinct line judged once: {line: [(rule, what, fingerprint)]} for flagged lines, and
    the set of clean ones."""

    def __init__(self) -> None:
        self.clean: set[str] = set()
        self.flagged: dict[str, list[tuple[str, str, str]]] = {}

    def findings(self, text: str) -> list[tuple[int, str, str, str]]:
        """(line number, rule, what, fingerprint) of the first occurrence of each flagged line in `text`."""
        lines = text.splitlines()  # as secrets.scan numbers them
        unique = set(lines)
        fresh = list(unique.difference(self.clean, self.flagged))
        if fresh:
            for f in secrets.scan("\n".join(fresh)):
                line = fresh[f.line - 1]
                self.flagged.setdefault(line, []).append((f.rule, f.what, allowlist.fingerprint(f.rule, line)))
            self.clean.update(line for line in fresh if line not in self.flagged)
        here = unique.intersection(self.flagged)
        found = []
        for number, line in enumerate(lines, start=1) if here else ():
            if line in here:
                here.discard(line)
                found += [(number, *hit) for hit in self.flagged[line]]
                if not here:
                    break
        return found


def _kind(ref: str) -> str:
    """What a blob reached from `ref` is: a branch's (or tag's) file, or one of git-strata's records."""
    own = {"shadow": contract.SHADOW_REFS, "access": contract.ACCESS_REFS, "archive": contract.VERIFIED_REFS}
    for kind, prefix in own.items():
        theirs = ref.startswith(contract.REMOTE_REFS) and ref[len(contract.REMOTE_REFS):].split("/")[1:2] == [kind]
        if ref.startswith(prefix) or theirs:
            return f"{kind} record"
    return "file"


def _places(steps: list[walk.Step]) -> dict[str, dict[str, tuple[int, str, str]]]:
    """{blob: {path: (walk order, commit, ref)}}: where each blob first appears at each path."""
    places: dict[str, dict[str, tuple[int, str, str]]] = {}
    for order, step in enumerate(steps):
        for path, blob in step.blobs:
            places.setdefault(blob, {}).setdefault(path, (order, step.commit, step.ref))
    return places


def _chunks(ids: list[str], sizes: dict[str, int]) -> Iterator[list[str]]:
    chunk: list[str] = []
    total = 0
    for oid in ids:
        if chunk and (total + sizes.get(oid, 0) > CHUNK_BYTES or len(chunk) >= CHUNK_OBJECTS):
            yield chunk
            chunk, total = [], 0
        chunk.append(oid)
        total += sizes.get(oid, 0)
    if chunk:
        yield chunk


class _Scan:
    """One scan's running state: the line memo, the findings so far (the oldest per place), counts."""

    def __init__(self, progress: Progress | None, total: int) -> None:
        self.lines = _Lines()
        self.found: dict[tuple[str, str, str], tuple[int, Finding]] = {}
        self.counts = {"blobs": 0, "binary": 0, "missing": 0}
        self.progress, self.done, self.total = progress, 0, total

    def add(self, order: int, finding: Finding) -> None:
        key = (finding.kind, finding.path, finding.fingerprint)
        if key not in self.found or order < self.found[key][0]:
            self.found[key] = (order, finding)

    def read(self, repo: Repo, ids: list[str], sizes: dict[str, int]) -> Iterator[tuple[str, bytes | None]]:
        for chunk in _chunks(ids, sizes):
            yield from zip(chunk, repo.objects(chunk), strict=True)
            self.done += len(chunk)
            if self.progress:
                self.progress(self.done, self.total)


def _scan_blobs(repo: Repo, state: _Scan, places: dict, todo: list[str], sizes: dict[str, int]) -> None:
    for blob, raw in state.read(repo, todo, sizes):
        if raw is None:
            state.counts["missing"] += 1
            continue
        if b"\0" in raw[:BINARY_PROBE]:
            state.counts["binary"] += 1
            continue
        state.counts["blobs"] += 1
        for line, rule, what, fp in state.lines.findings(raw.decode("utf-8", "replace")):
            for path, (order, commit, ref) in places[blob].items():
                state.add(order, Finding(commit, ref, _kind(ref), path, line, rule, what, fp))


def _scan_messages(repo: Repo, state: _Scan, steps: list[walk.Step]) -> None:
    order = {step.commit: i for i, step in enumerate(steps)}
    refs = {step.commit: step.ref for step in steps}
    for commit, raw in state.read(repo, list(order), {}):
        message = (raw or b"").partition(b"\n\n")[2].decode("utf-8", "replace")
        for line, rule, what, fp in state.lines.findings(message):
            state.add(order[commit], Finding(commit, refs[commit], "commit message", "", line, rule, what, fp))


def _scan_names(state: _Scan, places: dict) -> None:
    """File names: each path of a branch once, at its oldest commit (records are named by blob ids)."""
    first: dict[str, tuple[int, str, str]] = {}
    for at in places.values():
        for path, place in at.items():
            if _kind(place[2]) == "file" and (path not in first or place < first[path]):
                first[path] = place
    for path, (order, commit, ref) in first.items():
        for f in secrets.scan(path):
            state.add(order, Finding(commit, ref, "file name", path, 0, f.rule, f.what,
                                     allowlist.fingerprint(f.rule, path)))


def scan(repo: Repo, allow: frozenset[str] = frozenset(), *, max_bytes: int = MAX_BYTES,
         progress: Progress | None = None) -> Report:
    """Every secret in the history of every ref (see the module doc)."""
    steps = walk.history(repo)
    places = _places(steps)
    sizes = partial.held_blobs(repo)
    todo = [b for b in places if sizes.get(b, max_bytes + 1) <= max_bytes]
    state = _Scan(progress, len(todo) + len(steps))
    _scan_blobs(repo, state, places, todo, sizes)
    _scan_messages(repo, state, steps)
    _scan_names(state, places)
    ordered = [f for _, f in sorted(state.found.values(), key=lambda item: (item[0], item[1].kind, item[1].path))]
    kept = tuple(dataclasses.replace(f, path=secrets.redact(f.path), ref=secrets.redact(f.ref))
                 for f in ordered if f.fingerprint not in allow)
    return Report(kept, len(steps), state.counts["blobs"], sum(1 for b in places if sizes.get(b, 0) > max_bytes),
                  state.counts["binary"], state.counts["missing"] + sum(1 for b in places if b not in sizes),
                  len(ordered) - len(kept), max_bytes)


class Step(NamedTuple):
    """One step of what to do: what and why, then the commands (none runs here)."""

    text: str
    commands: tuple[str, ...] = ()


def advice(findings: tuple[Finding, ...] | list[Finding]) -> list[Step]:
    """What to do about `findings`, as guidance: git-strata never rewrites history itself."""
    if not findings:
        return []
    kinds = {f.kind for f in findings}
    files = sorted({f.path for f in findings if f.kind == "file"})
    purge = ["git clone --mirror URL purge.git && cd purge.git"]
    purge += ["git filter-repo --replace-text ../secrets.txt"] if kinds - {"commit message", "file name"} else []
    purge += ["git filter-repo --replace-message ../secrets.txt"] if "commit message" in kinds else []
    steps = [Step("Rotate each secret first: revoke it where it was issued and make a new one. It is already public "
                  "to anyone who has this history (every clone, the sync and archive remotes, mirrors), and "
                  "purging history does not take it back."),
             Step("Then purge it from history with git-filter-repo, in a fresh mirror clone (it rewrites every ref, "
                  "refs/strata/ included): put each secret's text on a line of a file outside the repository, "
                  "say ../secrets.txt (each becomes ***REMOVED***), and run:", tuple(purge))]
    if files:
        steps.append(Step("Or drop the whole file(s) from all history instead:",
                          ("git filter-repo --invert-paths " + " ".join(f"--path {shlex.quote(p)}" for p in files),)))
    if "file name" in kinds:
        steps.append(Step("A file name that holds one (masked above): rename it in all history with "
                          "`git filter-repo --path-rename OLD:NEW`, or drop it with `--invert-paths --path OLD`."))
    steps += [Step("Force-push the rewritten history to every remote that has it (the sync remote, the archive "
                   "remote, each mirror):", ("git push --force --mirror URL",)),
              Step("Every clone must then be re-cloned: an old clone still holds the secret, and a sync from it "
                   "would push the old history back.", ("git strata clone URL",))]
    if "shadow record" in kinds or any(p.startswith(f"{contract.TIERS[2]}/") for p in files):
        steps.append(Step("In the new clone, make the shadow records of rewritten archived memories again:",
                          ("git strata reindex",)))
    steps.append(Step("A false positive? Allow its fingerprint in this clone (.git/strata/secrets-allow, never "
                      "synced): scans leave it out and commits may hold that line.",
                      ("git strata scan --allow FINGERPRINT",)))
    return steps
