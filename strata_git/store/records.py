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
from collections.abc import Mapping
from typing import NamedTuple, TypeGuard

from strata_git.core import contract, projects
from strata_git.gitio import git
from strata_git.gitio.git import Repo

VERSION = 2
MAX_RECORD_BYTES = 8 * 1024 * 1024  # a 1 MiB memory's record is about its size: far above any real one
MAX_TAGS = 100
MAX_VECTORS = 8  # meaning vectors a record carries (a memory's first pieces: about 7,000 characters)
MEANING = "meaning/"  # + the model's first 16 hex digits + a blob's note path: vectors made after archiving
MAX_DIM = 4096
_MODEL = re.compile(r"[0-9a-f]{64}")
# A record costs at most what its blob would: its size is within the memory size limit, and its
# words spelled out (each token as often as counted, a space after each) within EXPANSION times
# that size (NFKC can spell a character out as several: U+FDFD, 3 bytes, is 18 characters).
EXPANSION = 8
OID = re.compile(r"[0-9a-f]{40}")  # a git object id (SHA-1), as history and refs name it


class Record(NamedTuple):
    blob: str
    size: int
    title: str
    type: str
    tags: tuple[str, ...]
    preview: str
    counts: dict[str, int]  # surface token -> occurrences in the body (see textindex.tokens)
    project: str = ""  # the project its frontmatter records (core/projects.py)
    model: str = ""  # the sha256 of the model its meaning vectors were made by ("" for none)
    dim: int = 0  # their dimension
    vectors: tuple[bytes, ...] = ()  # one a piece: a float32 scale, then `dim` int8 (see meaning.quantise)

    @property
    def length(self) -> int:
        return sum(self.counts.values())


def make(raw: bytes, blob: str, cap: int = 0, meaning: tuple[str, int, list[bytes]] | None = None) -> bytes:
    """The record of a memory's bytes (see module doc). `cap` > 0 keeps only the `cap` most
    frequent tokens (records.max_terms: less disk, less recall). `meaning`: (model, dimension,
    quantised vectors) made by that model from these bytes, carried so that a clone without the
    blob still finds the memory by meaning (the record is then also a function of the model)."""
    from strata_git.core import entries, memory, textindex
    from strata_git.errors import StrataError

    try:
        mem = memory.parse(raw, "archive/record.md")
        title, type_, tags, body, project = mem.title, mem.type, list(mem.tags), mem.body, mem.project
    except StrataError:  # kept as the catalog keeps an invalid live memory: its whole text as body
        title, type_, tags, body, project = "", "note", [], raw.decode("utf-8", "replace"), ""
    counts = Counter(textindex.tokens(body))
    kept = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:cap] if cap > 0 else counts.items()
    words = " ".join(t if n == 1 else f"{t}:{n}" for t, n in sorted(kept))
    rec = {"v": VERSION, "b": blob, "s": len(raw), "t": entries.clean(title), "y": type_,
           "g": [entries.clean(t) for t in tags], "p": entries.clean(textindex.preview(body)), "w": words}
    if project:  # only then: a memory of no project keeps the record it always had, byte for byte
        rec["j"] = project
    if meaning and meaning[2]:
        import base64

        rec |= {"m": meaning[0], "d": meaning[1],
                "e": [base64.b64encode(v).decode("ascii") for v in meaning[2][:MAX_VECTORS]]}
    return json.dumps(rec, ensure_ascii=False, separators=(",", ":")).encode("utf-8") + b"\n"


def _strings(items: list[object]) -> TypeGuard[list[str]]:
    return all(isinstance(t, str) for t in items)


def parse(raw: bytes | None, blob: str, limit: int = 1 << 40) -> Record | str:
    """The record in `raw` if it is a valid one for `blob` of at most `limit` bytes, else why not (one line)."""
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
    if not _strings(texts) or not isinstance(tags, list) or len(tags) > MAX_TAGS or not _strings(tags):
        return "title, type, tags or preview of the wrong type"
    if "j" in rec and not projects.valid(rec["j"]):
        return "a project that is not a project name"
    vectors = _vectors(rec) if any(k in rec for k in ("m", "d", "e")) else ()
    if vectors is None:
        return "meaning vectors of the wrong shape"
    if size > limit:
        return f"it claims a blob of {size} bytes, over the {limit}-byte memory size limit"
    counted = _counts(words)
    if counted is None:
        return "its words are not `token` or `token:count` items"
    counts, spelled = counted
    if spelled > EXPANSION * size + 64 \
            or len(texts[0]) + sum(len(t) for t in tags) > size + 64:
        return f"its counts, title or tags are more than a blob of {size} bytes holds"
    from strata_git.core import entries

    title, type_, preview = (entries.clean(t) for t in texts)
    return Record(blob, size, title, type_ or "note", tuple(entries.clean(t) for t in tags), preview[:400], counts,
                  rec.get("j", ""), rec["m"] if vectors else "", rec["d"] if vectors else 0, vectors)


def _vectors(rec: dict) -> tuple[bytes, ...] | None:
    """A record's meaning vectors if their model, dimension and every vector are well formed, else None."""
    import base64
    import binascii
    import math
    import struct

    model, dim, items = rec.get("m"), rec.get("d"), rec.get("e")
    if not isinstance(model, str) or not _MODEL.fullmatch(model) or type(dim) is not int \
            or not 1 <= dim <= MAX_DIM or not isinstance(items, list) or not 1 <= len(items) <= MAX_VECTORS:
        return None
    found = []
    for item in items:
        if not isinstance(item, str) or len(item) > 2 * (4 + dim) + 8:
            return None
        try:
            data = base64.b64decode(item, validate=True)
        except (binascii.Error, ValueError):
            return None
        if len(data) != 4 + dim or not (math.isfinite(scale := struct.unpack("<f", data[:4])[0]) and scale >= 0):
            return None
        found.append(data)
    return tuple(found)


# A record's words: `token` or `token:count` items, one space apart (checked in one regex pass).
_ITEM = r"[^\W_]{1,64}(?::[1-9][0-9]{0,8})?"
_WORDS = re.compile(f"(?:{_ITEM}(?: {_ITEM})*)?")


def _counts(words: str) -> tuple[dict[str, int], int] | None:
    """({token: count}, the length of the words spelled out: each token as often as counted, a
    space after each), or None if `words` is not a list we wrote."""
    if not _WORDS.fullmatch(words):
        return None
    items = words.split(" ") if words else []
    counts = dict.fromkeys(items, 1)  # most words occur once and are written bare
    spelled = len(words) + 1 if words else 0  # as written: a bare word is spelled out already
    if ":" in words:
        for item in [item for item in items if ":" in item]:
            del counts[item]
            token, _, n = item.partition(":")
            counts[token] = int(n)
            spelled += int(n) * (len(token) + 1) - (len(item) + 1)
    return (counts, spelled) if len(counts) == len(items) else None  # a token twice: not one we wrote


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
                if _is_shadow(ref) and OID.fullmatch(oid):
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
            if OID.fullmatch(oid) and _is_shadow(folder + name):
                found[folder + name] = oid
    return found


def shadow_in(listed: dict[str, str]) -> dict[str, str]:
    """refs() from a listing of the refs under contract.SHADOW_REFS and REMOTE_REFS that git gave
    ({ref: commit}: a sync's launch asked for them before its fetch, with the tracking branch)."""
    return {ref: oid for ref, oid in listed.items() if _is_shadow(ref) and OID.fullmatch(oid)}


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


# A note where _path puts it (`git ls-tree -z -r`: mode, type, id, tab, path, NUL): a ref's
# million notes are read by one pattern; a tree with any other entry is read entry by entry.
_PLACED = re.compile(r"(?:^|(?<=\0))[0-7]{6} blob ([0-9a-f]{40})\t([0-9a-f]{2})/([0-9a-f]{38})\0")


def listing(repo: Repo, commits: list[str]) -> dict[str, list[str]]:
    """{blob id: [note blob ids, sorted]} over the trees of `commits` (no note is read)."""
    found: dict[str, set[str]] = {}
    for commit in sorted(set(commits)):
        out = repo.git("ls-tree", "-z", "-r", commit, check=False).decode("utf-8", "surrogateescape")
        placed = _PLACED.findall(out)
        if len(placed) == out.count("\0"):
            for note, head, tail in placed:
                found.setdefault(head + tail, set()).add(note)
            continue
        for path, entry in git.tree_listing(out).items():
            blob = path.replace("/", "")
            if entry.type == "blob" and OID.fullmatch(blob) and OID.fullmatch(entry.oid):
                found.setdefault(blob, set()).add(entry.oid)
    return {blob: [*notes] if len(notes) == 1 else sorted(notes) for blob, notes in found.items()}


class Choice(NamedTuple):
    """How records are chosen among the candidates for each blob (see choose)."""

    bound: dict[str, str] = {}  # blob -> the record id history names for it (a Strata-Record trailer)
    limit: int = 1 << 40  # the memory size limit: a record claiming a larger blob is refused
    own: frozenset[str] = frozenset()  # record ids on this machine's own shadow ref


PLAIN = Choice()  # nothing bound, no limit but the record's own, no machine preferred

def load(repo: Repo, wanted: dict[str, list[str]], choice: Choice = PLAIN) -> tuple[dict[str, Record], list[str]]:
    """The records of the blobs in `wanted` ({blob: candidate note ids}) and a one-line warning per
    candidate refused (see choose)."""
    return choose(texts_of(repo, wanted), choice)


def texts_of(repo: Repo, wanted: dict[str, list[str]]) -> dict[str, dict[str, bytes | None]]:
    """{blob: {note id: its bytes, None if absent}} for `wanted` ({blob: candidate note ids}), in one read."""
    order = sorted({note for notes in wanted.values() for note in notes})
    texts = dict(zip(order, repo.objects(order), strict=True)) if order else {}
    return {blob: {note: texts.get(note) for note in notes} for blob, notes in wanted.items()}


def find(repo: Repo, blobs: list[str], commits: list[str] | None = None, choice: Choice = PLAIN
         ) -> tuple[dict[str, Record], list[str]]:
    """The records of `blobs` on the shadow refs (or `commits`), chosen as choose() chooses. A few
    blobs are looked up by path in each ref; many, from one listing of every ref's tree."""
    held = refs(repo)
    commits = sorted(set(held.values())) if commits is None else commits
    if not blobs or not commits:
        return {}, []
    mine = held.get(own_ref(repo))
    if len(blobs) * len(commits) > 4000:
        wanted_notes, own_notes = candidates(repo, blobs, commits)
        return load(repo, wanted_notes, choice._replace(own=own_notes))
    names = [f"{c}:{_path(b)}" for b in blobs for c in commits]
    texts = dict(zip(names, repo.objects(names), strict=True))
    held_notes: dict[str, dict[str, bytes]] = {}
    mine_held = set()
    for b in blobs:
        for c in commits:
            raw = texts[f"{c}:{_path(b)}"]
            if raw is not None:
                note = _oid(raw)
                held_notes.setdefault(b, {})[note] = raw
                if c == mine:
                    mine_held.add(note)
    return choose(held_notes, choice._replace(own=frozenset(mine_held)))


def candidates(repo: Repo, blobs: list[str], commits: list[str]) -> tuple[dict[str, list[str]], frozenset[str]]:
    """({blob: its candidate note ids} for those of `blobs` that `commits` hold, the note ids on
    this machine's own ref): from one listing of each ref's tree, no note read. load() then reads
    them in parts as large as the caller likes."""
    mine = refs(repo).get(own_ref(repo))
    wanted = set(blobs)
    own = {n for notes in listing(repo, [mine]).values() for n in notes} if mine in commits else set()
    return {b: n for b, n in listing(repo, commits).items() if b in wanted}, frozenset(own)


def _oid(raw: bytes) -> str:
    import hashlib

    return hashlib.sha1(b"blob %d\0" % len(raw) + raw).hexdigest()


def choose(candidates: Mapping[str, Mapping[str, bytes | None]], choice: Choice = PLAIN
            ) -> tuple[dict[str, Record], list[str]]:
    """{blob: Record} and warnings. A blob whose archive commit names its record (choice.bound)
    gets that record or none: every other candidate, valid or not, is a record history does not
    vouch for, and is listed. A blob archived before commits named records takes this machine's
    own record, else the first valid candidate in note-id order (so every clone chooses alike);
    valid candidates that disagree are listed."""
    found: dict[str, Record] = {}
    warnings = []
    for blob, notes in sorted(candidates.items()):
        valid: dict[str, Record] = {}
        for note in sorted(notes):
            rec = parse(notes[note], blob, choice.limit)
            if isinstance(rec, Record):
                valid[note] = rec
            else:
                warnings.append(f"shadow record {note[:12]} for blob {blob[:12]} skipped: {rec}")
        bound = choice.bound.get(blob)
        if bound:
            if bound in valid:
                found[blob] = valid[bound]
            else:
                warnings.append(f"shadow record {bound[:12]} that history names for blob {blob[:12]} is not here "
                                "(or not valid) yet: the memory is found by its name until it arrives")
            warnings += [f"shadow record {note[:12]} for blob {blob[:12]} ignored: history names {bound[:12]}"
                         for note in valid if note != bound]
            continue
        if not valid:
            continue
        chosen = min(valid, key=lambda note: (note not in choice.own, note))
        found[blob] = valid[chosen]
        if len(valid) > 1:
            warnings.append(f"shadow records for blob {blob[:12]} disagree and history names none; "
                            f"{chosen[:12]} is used ({', '.join(n[:12] for n in valid if n != chosen)} not)")
    return found, warnings


def own_ref(repo: Repo) -> str:
    from strata_git.store import access

    return contract.SHADOW_REFS + access.machine_id(repo)


def meaning_path(model: str, blob: str) -> str:
    return f"{MEANING}{model[:16]}/{_path(blob)}"


def meaning_note(blob: str, model: str, dim: int, vectors: list[bytes]) -> bytes:
    """A meaning note: the vectors a model made of an archived blob after its record was written
    (that record is the one history names, so it cannot change). It sits on the same shadow ref as
    the records, under meaning_path(), and travels with them."""
    import base64

    note = {"v": VERSION, "b": blob, "m": model, "d": dim,
            "e": [base64.b64encode(v).decode("ascii") for v in vectors[:MAX_VECTORS]]}
    return json.dumps(note, separators=(",", ":")).encode("utf-8") + b"\n"


def find_meaning(repo: Repo, blobs: list[str], model: str) -> dict[str, tuple[bytes, ...]]:
    """{blob: vectors} from the meaning notes of `model` on every shadow ref (this machine's first,
    then the others' in ref order; a note that does not check out is skipped). History vouches for
    none of them: a peer's note can only change where that archived memory ranks by meaning."""
    mine = own_ref(repo)
    commits = [c for _, c in sorted(refs(repo).items(), key=lambda rc: (rc[0] != mine, rc[0]))]
    if not blobs or not commits:
        return {}
    names = [f"{c}:{meaning_path(model, b)}" for b in blobs for c in commits]
    texts = dict(zip(names, repo.objects(names), strict=True))
    found: dict[str, tuple[bytes, ...]] = {}
    for b in blobs:
        for c in commits:
            raw = texts[f"{c}:{meaning_path(model, b)}"]
            try:
                note = json.loads(raw) if raw is not None and len(raw) <= MAX_RECORD_BYTES else None
            except ValueError:
                note = None
            vectors = _vectors(note) if isinstance(note, dict) and note.get("b") == b and note.get("m") == model \
                else None
            if vectors:
                found[b] = vectors
                break
    return found


def write(repo: Repo, made: dict[str, bytes], author: tuple[str, str], now: int | None = None,
          model: str = "") -> dict[str, str]:
    """Add records ({blob: record bytes}) to this machine's ref in one commit, skipping blobs it
    already holds (with `model`: meaning notes of that model, replacing any it holds); {blob: the
    id of its record on the ref} for every blob of `made`, added now
    or held before. One `git fast-import` writes every record and the commit as a single pack
    (50,000 records would otherwise be 50,000 loose objects)."""
    ref = own_ref(repo)
    old = repo.git("rev-parse", "-q", "--verify", ref + "^{commit}", check=False).decode().strip()
    held = {blob: notes[0] for blob, notes in listing(repo, [old]).items() if blob in made} if old and not model else {}
    new = {blob: rec for blob, rec in made.items() if blob not in held and OID.fullmatch(blob)}
    ids = {**held, **{blob: _oid(rec) for blob, rec in new.items()}}
    if not new:
        return ids
    stamp = int(time.time()) if now is None else now
    what = "meaning note" if model else "shadow record"
    subject = f"strata: {len(new)} {what}{'s' if len(new) != 1 else ''}".encode()
    # The identity comes from the shared config: nothing in it may end the line (or the <email>)
    # and start a command of the stream, as git itself strips those from identities.
    name, email = (re.sub(r"[\x00-\x1f<>]", "", part).strip() or "git-strata" for part in author)
    parts = [f"commit {ref}\ncommitter {name} <{email}> {stamp} +0000\n".encode(),
             b"data %d\n" % len(subject), subject, b"\n"]
    if old:
        parts.append(f"from {old}\n".encode())
    for blob in sorted(new):
        path = meaning_path(model, blob) if model else _path(blob)
        parts += [f"M 100644 inline {path}\ndata {len(new[blob])}\n".encode(), new[blob], b"\n"]
    from strata_git.gitio.procs import clear_stale_lock

    clear_stale_lock(repo, os.path.join(repo.git_dir, ref + ".lock"))
    repo.git("fast-import", "--quiet", "--done", input=b"".join(parts) + b"done\n")
    return ids
