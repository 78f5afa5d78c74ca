"""Shadow records: what is kept of an archived memory so that it can be found without its content.

A record belongs to a blob, not to a commit: it is a pure function of the blob's bytes
(every distinct surface token with its count, plus title, type, tags, size and a preview
for display), so two machines that archive the same blob make the same record, byte for
byte. Records live beside history, in git-notes layout (a tree whose paths are the blob
ids, `ab/cdef...`), on one ref per machine: `refs/strata/shadow/<machine>`. Each machine
appends only to its own ref, and the other machines' arrive with a sync or a clone under
`refs/strata-remotes/<remote>/shadow/`, exactly like access records: nothing is ever
merged, so nothing can conflict. A reader takes, for each blob, the first record that
checks out (valid, for that very blob) in the order of the note blobs' ids, so every
clone makes the same choice.

Everything read here comes from history or another machine and is untrusted: a record
that is too large, not JSON, of another shape, or that names another blob is skipped
and reported, never trusted and never a crash.
"""

from __future__ import annotations

import json
import os
import re
import time
from collections import Counter
from typing import NamedTuple

from strata_git.core import contract
from strata_git.gitio.git import Repo

VERSION = 2
MAX_RECORD_BYTES = 8 * 1024 * 1024  # a 1 MiB memory's record is about its size: far above any real one
MAX_TAGS = 100
_OID = re.compile(r"[0-9a-f]{40}")


class Record(NamedTuple):
    blob: str
    size: int
    title: str
    type: str
    tags: tuple[str, ...]
    preview: str
    counts: dict[str, int]  # surface token -> occurrences in the body (see textindex.tokens)

    @property
    def length(self) -> int:
        return sum(self.counts.values())


def make(raw: bytes, blob: str, cap: int = 0) -> bytes:
    """The record of a memory's bytes (see module doc). `cap` > 0 keeps only the `cap` most
    frequent tokens (records.max_terms: less disk, less recall)."""
    from strata_git.core import entries, memory, textindex
    from strata_git.errors import StrataError

    try:
        mem = memory.parse(raw, "archive/record.md")
        title, type_, tags, body = mem.title, mem.type, list(mem.tags), mem.body
    except StrataError:  # kept as the catalog keeps an invalid live memory: its whole text as body
        title, type_, tags, body = "", "note", [], raw.decode("utf-8", "replace")
    counts = Counter(textindex.tokens(body))
    kept = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:cap] if cap > 0 else counts.items()
    words = " ".join(t if n == 1 else f"{t}:{n}" for t, n in sorted(kept))
    rec = {"v": VERSION, "b": blob, "s": len(raw), "t": entries.clean(title), "y": type_,
           "g": [entries.clean(t) for t in tags], "p": entries.clean(textindex.preview(body)), "w": words}
    return json.dumps(rec, ensure_ascii=False, separators=(",", ":")).encode("utf-8") + b"\n"


def parse(raw: bytes | None, blob: str) -> Record | str:
    """The record in `raw` if it is a valid one for `blob`, else why not (one line)."""
    if raw is None:
        return "its content is missing here"
    if len(raw) > MAX_RECORD_BYTES:
        return f"{len(raw)} bytes, over the {MAX_RECORD_BYTES}-byte limit"
    try:
        rec = json.loads(raw)
    except ValueError:
        return "not valid JSON"
    if not isinstance(rec, dict) or rec.get("v") != VERSION:
        return "not a version-2 record"
    if rec.get("b") != blob:
        return f"it describes blob {str(rec.get('b'))[:40]!r}, not this one"
    size, words, tags = rec.get("s"), rec.get("w"), rec.get("g")
    texts = [rec.get(k) for k in ("t", "y", "p")]
    if type(size) is not int or not 0 <= size < 1 << 40 or not isinstance(words, str):
        return "size or words of the wrong type"
    if not all(isinstance(t, str) for t in texts) or not isinstance(tags, list) or len(tags) > MAX_TAGS \
            or not all(isinstance(t, str) for t in tags):
        return "title, type, tags or preview of the wrong type"
    counts = _counts(words)
    if counts is None:
        return "its words are not `token` or `token:count` items"
    from strata_git.core import entries

    title, type_, preview = (entries.clean(t) for t in texts)
    return Record(blob, size, title, type_ or "note", tuple(entries.clean(t) for t in tags), preview[:400], counts)


# A record's words: `token` or `token:count` items, one space apart (checked in one regex pass).
_ITEM = r"[^\W_]{1,64}(?::[1-9][0-9]{0,8})?"
_WORDS = re.compile(f"(?:{_ITEM}(?: {_ITEM})*)?")


def _counts(words: str) -> dict[str, int] | None:
    if not _WORDS.fullmatch(words):
        return None
    items = words.split(" ") if words else []
    counts = dict.fromkeys(items, 1)  # most words occur once and are written bare
    if ":" in words:
        for item in [item for item in items if ":" in item]:
            del counts[item]
            token, _, n = item.partition(":")
            counts[token] = int(n)
    return counts if len(counts) == len(items) else None  # a token twice: not one we wrote


def _path(blob: str) -> str:
    return f"{blob[:2]}/{blob[2:]}"


_REMOTE = re.compile(re.escape(contract.REMOTE_REFS) + r"[^/]+/shadow/[^/]+")


def refs(repo: Repo) -> dict[str, str]:
    """{ref: commit} of every shadow ref this clone knows (its own and the other machines'), read
    from the ref files themselves: search asks before every query, and a git process costs more
    than the query."""
    found: dict[str, str] = {}
    try:
        with open(os.path.join(repo.git_dir, "packed-refs"), encoding="utf-8", errors="replace") as f:
            for line in f:
                oid, _, ref = line.rstrip("\n").partition(" ")
                if _is_shadow(ref) and _OID.fullmatch(oid):
                    found[ref] = oid
    except OSError:
        pass
    remotes = _listdir(repo, contract.REMOTE_REFS.rstrip("/"))
    for folder in [contract.SHADOW_REFS, *(contract.remote_refs(r, "shadow") for r in remotes)]:
        for name in _listdir(repo, folder):
            try:
                with open(os.path.join(repo.git_dir, folder, name), encoding="ascii", errors="replace") as f:
                    oid = f.read().strip()
            except OSError:
                continue
            if _OID.fullmatch(oid) and _is_shadow(folder + name):
                found[folder + name] = oid
    return found


def _is_shadow(ref: str) -> bool:
    mine = ref.startswith(contract.SHADOW_REFS) and "/" not in ref[len(contract.SHADOW_REFS):]
    return mine or bool(_REMOTE.fullmatch(ref))


def _listdir(repo: Repo, folder: str) -> list[str]:
    try:
        return sorted(os.listdir(os.path.join(repo.git_dir, folder)))
    except OSError:
        return []


def note_blobs(repo: Repo, old: str | None, new: str) -> list[str]:
    """The record blobs `new` holds that `old` did not (all of them without `old`), from trees only."""
    if old:
        return sorted({c.new_oid for c in repo.diff_tree(old, new, only="AM", check=False)})
    return sorted({e.oid for e in repo.ls_tree(new, check=False).values()})


def listing(repo: Repo, commits: list[str]) -> dict[str, list[str]]:
    """{blob id: [note blob ids, sorted]} over the trees of `commits` (no note is read)."""
    found: dict[str, set[str]] = {}
    for commit in sorted(set(commits)):
        for path, entry in repo.ls_tree(commit, check=False).items():
            blob = path.replace("/", "")
            if entry.type == "blob" and _OID.fullmatch(blob) and _OID.fullmatch(entry.oid):
                found.setdefault(blob, set()).add(entry.oid)
    return {blob: sorted(notes) for blob, notes in found.items()}


def load(repo: Repo, wanted: dict[str, list[str]]) -> tuple[dict[str, Record], list[str]]:
    """The records of the blobs in `wanted` ({blob: candidate note ids}) and a one-line warning per
    candidate refused. The first valid candidate wins, so every clone chooses alike."""
    order = sorted({note for notes in wanted.values() for note in notes})
    texts = dict(zip(order, repo.objects(order), strict=True)) if order else {}
    return _choose({blob: {note: texts.get(note) for note in notes} for blob, notes in wanted.items()})


def find(repo: Repo, blobs: list[str], commits: list[str] | None = None) -> tuple[dict[str, Record], list[str]]:
    """The records of `blobs` on the shadow refs (or `commits`), chosen as load() chooses. A few
    blobs are looked up by path in each ref; many, from one listing of every ref's tree."""
    commits = sorted(set(refs(repo).values())) if commits is None else commits
    if not blobs or not commits:
        return {}, []
    if len(blobs) * len(commits) > 4000:
        wanted = set(blobs)
        return load(repo, {b: n for b, n in listing(repo, commits).items() if b in wanted})
    names = [f"{c}:{_path(b)}" for b in blobs for c in commits]
    texts = dict(zip(names, repo.objects(names), strict=True))
    candidates: dict[str, dict[str, bytes]] = {}
    for b in blobs:
        for c in commits:
            raw = texts[f"{c}:{_path(b)}"]
            if raw is not None:
                candidates.setdefault(b, {})[_oid(raw)] = raw
    return _choose({b: found for b, found in candidates.items()})


def _oid(raw: bytes) -> str:
    import hashlib

    return hashlib.sha1(b"blob %d\0" % len(raw) + raw).hexdigest()


def _choose(candidates: dict[str, dict[str, bytes | None]]) -> tuple[dict[str, Record], list[str]]:
    """{blob: Record} taking, for each blob, the first valid candidate in note-id order."""
    found: dict[str, Record] = {}
    warnings = []
    for blob, notes in sorted(candidates.items()):
        for note in sorted(notes):
            rec = parse(notes[note], blob)
            if isinstance(rec, Record):
                found[blob] = rec
                break
            warnings.append(f"shadow record {note[:12]} for blob {blob[:12]} skipped: {rec}")
    return found, warnings


def own_ref(repo: Repo) -> str:
    from strata_git.store import access

    return contract.SHADOW_REFS + access.machine_id(repo)


def write(repo: Repo, made: dict[str, bytes], author: tuple[str, str], now: int | None = None) -> int:
    """Add records ({blob: record bytes}) to this machine's ref in one commit, skipping blobs it
    already holds; the number added. One `git fast-import` writes every record and the commit
    as a single pack (50,000 records would otherwise be 50,000 loose objects)."""
    ref = own_ref(repo)
    old = repo.git("rev-parse", "-q", "--verify", ref + "^{commit}", check=False).decode().strip()
    held = set(listing(repo, [old])) if old else set()
    new = {blob: rec for blob, rec in made.items() if blob not in held and _OID.fullmatch(blob)}
    if not new:
        return 0
    stamp = int(time.time()) if now is None else now
    subject = f"strata: {len(new)} shadow record{'s' if len(new) != 1 else ''}".encode()
    # The identity comes from the shared config: nothing in it may end the line (or the <email>)
    # and start a command of the stream, as git itself strips those from identities.
    name, email = (re.sub(r"[\x00-\x1f<>]", "", part).strip() or "git-strata" for part in author)
    parts = [f"commit {ref}\ncommitter {name} <{email}> {stamp} +0000\n".encode(),
             b"data %d\n" % len(subject), subject, b"\n"]
    if old:
        parts.append(f"from {old}\n".encode())
    for blob in sorted(new):
        parts += [f"M 100644 inline {_path(blob)}\ndata {len(new[blob])}\n".encode(), new[blob], b"\n"]
    from strata_git.gitio.procs import clear_stale_lock

    clear_stale_lock(repo, os.path.join(repo.git_dir, ref + ".lock"))
    repo.git("fast-import", "--quiet", "--done", input=b"".join(parts) + b"done\n")
    return len(new)
