"""Merging two machines' memory: a three-way merge by memory name, not by path.

A memory keeps its name while the janitor moves it between tiers, so git's path-based
merge (with its rename guessing) would put an edit made in active/ into the cooled/
file the other machine's janitor moved it to. Here every changed path is mapped to
its memory name (compared up to case and Unicode normalization, as names collide),
and each name is decided once from its base, ours and theirs versions (path, mode, blob):

- one side unchanged: take the other side (two janitors making the same move agree);
- content: take the side that changed it; both changed it: `git merge-file`, and if
  that conflicts (or its result no longer parses), keep theirs in place and ours beside
  it as `NAME.conflict-<hex of ours' blob>.md`, with a `strata-conflict:` line in its
  frontmatter saying where it came from;
- tier: an edited memory ends in active/ (the edit wins over a janitor move); a
  memory moved up on one side (a recall: someone used it) ends where it was moved up
  to; both sides moved it down: the further tier (the later decision of the same rules);
- deleted on one side: gone, unless the other side edited it (then the edit survives);
- created on both sides: one memory if the bytes agree, else both survive as above.

Files that are not memories are merged by path the same way; `.gitignore` and
`.gitattributes` by the union of both sides' lines, so they never conflict; two different
summaries of one memory (`.strata/summaries/`, made by each machine's janitor) by keeping
the one with the smaller blob id, which every machine picks alike. After every
name is decided, a copy is placed where nothing else is (its hex grows until the path is
free), and a file that the other side turned into a folder is kept beside the same way.
The decisions depend only on the three versions, so every machine that merges the same
two commits the same way round makes the same tree (apart from the provenance line).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from typing import NamedTuple

from strata_git.core import contract, names
from strata_git.gitio.git import Repo, run

EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
ZERO = "0" * 40
RANK = {"active": 0, "cooled": 1, "archive": 2}
CONFLICT_KEY = contract.CONFLICT_KEY
UNION = (".gitignore", ".gitattributes")  # line lists: both sides' lines are kept


class Version(NamedTuple):
    path: str
    mode: str
    blob: str


class Decision(NamedTuple):
    key: str  # the memory's collision key, or "\0" + path for a file that is not a memory
    result: Version | None
    beside: Version | None  # ours, kept beside (a conflict); its path is settled by place_copies()
    how: str  # what happened, in words

    @property
    def name(self) -> str:
        """The memory name (or file path) as shown to people."""
        for v in (self.result, self.beside):
            if v is not None:
                return memory_name(v.path) or v.path
        return self.key.lstrip("\0")


def memory_name(path: str) -> str | None:
    where = names.split_path(path)
    return where[1] if where and where[1].endswith(names.SUFFIX) else None


def key_of(path: str) -> str:
    name = memory_name(path)
    return names.collision_key(name) if name else "\0" + path


def tier_of(path: str) -> str | None:
    where = names.split_path(path)
    return where[0] if where else None


def _memory_name(path: str) -> str:
    """memory_name() of a path known to hold a memory (its key does not start with a NUL)."""
    name = memory_name(path)
    assert name is not None
    return name


def _memory_tier(path: str) -> str:
    """tier_of() of a path known to hold a memory."""
    tier = tier_of(path)
    assert tier is not None
    return tier


def changes(repo: Repo, base: str, commit: str) -> dict[str, tuple[tuple[str, str] | None, tuple[str, str] | None]]:
    """{path: (old (mode, blob) or None, new or None)} between two commits (no rename guessing)."""
    return {c.path: ((c.old_mode, c.old_oid) if c.old_mode != "000000" else None,
                     (c.new_mode, c.new_oid) if c.new_mode != "000000" else None)
            for c in repo.diff_tree(base, commit)}


def _pick(b: Version | None, o: Version, t: Version, field: Callable[[Version], str]) -> str:
    """Ours' value unless only theirs changed it (mode, spelling of the name)."""
    if field(o) == field(t) or b is None or field(t) == field(b):
        return field(o)
    return field(t)


def _tier(b: Version, o: Version, t: Version) -> str:
    bt, ot, tt = _memory_tier(b.path), _memory_tier(o.path), _memory_tier(t.path)
    if ot == bt:
        return tt
    if tt == bt or ot == tt:
        return ot
    up = [x for x in (ot, tt) if RANK[x] < RANK[bt]]
    return min(up, key=RANK.__getitem__) if up else max((ot, tt), key=RANK.__getitem__)


def _place(name: str, tier: str) -> str:
    return f"{tier}/{name}"


class Merger:
    """Decides each name; reads and writes blobs only for content merges and conflict copies."""

    def __init__(self, repo: Repo, provenance: dict[str, str]) -> None:
        self.repo = repo
        self.provenance = provenance  # from, commit, at: written into a conflict copy

    def decide(self, key: str, b: Version | None, o: Version | None, t: Version | None) -> Decision:
        memory = not key.startswith("\0")
        if o == t:
            return Decision(key, o, None, "same on both sides")
        if o == b:
            return Decision(key, t, None, "changed there")
        if t == b:
            return Decision(key, o, None, "changed here")
        if not memory and o is not None and t is not None and o.path.startswith(contract.SUMMARIES + "/"):
            # Summaries are made again whenever a memory cools: two machines' different ones are not
            # an edit to keep, so both pick the same one (the smaller blob id), and no copy is left.
            return Decision(key, min(o, t, key=lambda v: v.blob), None, "summary made on both sides: one kept")
        if o is None or t is None:  # deleted on one side, changed on the other (b exists here)
            kept = o or t
            assert kept is not None and b is not None  # both None, or one None and b None: returned above
            if kept.blob == b.blob:
                return Decision(key, None, None, "deleted on one side, only moved on the other: deleted")
            path = _place(_memory_name(kept.path), "active") if memory else kept.path
            return Decision(key, kept._replace(path=path), None, "deleted on one side, edited on the other: edit kept")
        if b is None:  # created on both sides
            if o.blob == t.blob and o.mode == t.mode:
                path = t.path
                if memory:
                    path = _place(_memory_name(t.path),
                                  min((_memory_tier(o.path), _memory_tier(t.path)), key=RANK.__getitem__))
                return Decision(key, t._replace(path=path), None, "created on both sides with the same content")
            return Decision(key, t, o, "created on both sides")
        name = _pick(b, o, t, lambda v: memory_name(v.path) or v.path)
        content = self._content(name if memory else o.path, b, o, t)
        if content is None:
            return Decision(key, t._replace(path=_place(_memory_name(t.path), "active") if memory else t.path), o,
                            "edited on both sides")
        mode = _pick(b, o, t, lambda v: v.mode)
        if not memory:
            return Decision(key, Version(o.path, mode, content), None, "edited on both sides: merged")
        edited = content != b.blob
        tier = "active" if edited else _tier(b, o, t)
        how = "edited on both sides: merged" if o.blob != b.blob and t.blob != b.blob else \
            "edited on one side, moved on the other: edit kept in active/" if edited else "moved on both sides"
        return Decision(key, Version(_place(name, tier), mode, content), None, how)

    def _content(self, where: str, b: Version, o: Version, t: Version) -> str | None:
        """The merged blob id, or None when the edits conflict or the result would not parse."""
        if o.blob == t.blob or t.blob == b.blob:
            return o.blob
        if o.blob == b.blob:
            return t.blob
        if not all(v.mode == "100644" for v in (b, o, t)):
            return None
        raws = [raw for raw in self.repo.objects([b.blob, o.blob, t.blob]) if raw is not None]
        if len(raws) < 3:
            return None
        import tempfile

        union = ["--union"] if os.path.basename(where) in UNION else []
        with tempfile.TemporaryDirectory(prefix="strata-merge-") as tmp:
            files = []
            for label, raw in zip(("base", "ours", "theirs"), raws, strict=True):
                files.append(os.path.join(tmp, label))
                with open(files[-1], "wb") as f:
                    f.write(raw)
            proc = run(["merge-file", "-p", "-q", *union, files[1], files[0], files[2]], tmp, check=False)
        if proc.returncode != 0 or not _still_valid(where, proc.stdout, raws):
            return None  # > 0: that many conflicts; < 0: an error (binary content)
        return self.repo.git("hash-object", "-w", "--stdin", input=proc.stdout).decode().strip()

    def copy_blob(self, ours: Version, path: str) -> str:
        """Ours' blob as kept beside at `path`: a memory copy gets the provenance line (when it is
        UTF-8 text; the copy's name alone marks it otherwise)."""
        name = memory_name(ours.path)
        if memory_name(path) is None or name is None or ours.mode != "100644":
            return ours.blob
        raw = self.repo.objects([ours.blob])[0]
        marked = with_provenance(raw, {"of": name[: -len(names.SUFFIX)], **self.provenance}) if raw else None
        if marked is None:
            return ours.blob
        return self.repo.git("hash-object", "-w", "--stdin", input=marked).decode().strip()


def _still_valid(where: str, merged: bytes, sides: list[bytes]) -> bool:
    """A clean text merge can still break what git-strata parses (a key set on both sides)."""
    from strata_git.errors import StrataError

    try:
        if where == contract.CONFIG_PATH:
            import tomllib

            from strata_git.core import config

            config.parse(tomllib.loads(merged.decode("utf-8")))
        elif where.endswith(names.SUFFIX):
            from strata_git.core import memory

            try:
                for raw in sides:
                    memory.parse(raw or b"", where)
            except StrataError:
                return True  # it did not parse before either: nothing to protect
            memory.parse(merged, where)
    except (StrataError, ValueError, UnicodeDecodeError):
        return False
    return True


def with_provenance(raw: bytes, info: dict[str, str]) -> bytes | None:
    """`raw` with a `strata-conflict:` line first in its frontmatter (added if it has none);
    None when it is not UTF-8 text or already carries one. `without_provenance` undoes it exactly."""
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        return None
    line = f"{CONFLICT_KEY}: {json.dumps(info, ensure_ascii=True)}\n".encode()
    if raw.startswith((b"---\n", b"---\r\n")):
        head = raw.split(b"\n---", 1)[0]
        if f"\n{CONFLICT_KEY}:".encode() in head:
            return None
        first = raw.index(b"\n") + 1
        return raw[:first] + line + raw[first:]
    return b"---\n" + line + b"---\n" + raw


def without_provenance(raw: bytes) -> bytes:
    prefix = f"---\n{CONFLICT_KEY}: ".encode()
    for opening in (b"---\n", b"---\r\n"):
        start = opening + f"{CONFLICT_KEY}: ".encode()
        if raw.startswith(start):
            end = raw.index(b"\n", len(start)) + 1
            rest = raw[end:]
            if opening == b"---\n" and raw.startswith(prefix) and rest.startswith(b"---\n"):
                return rest[4:]  # the frontmatter was added for the line alone
            return opening + rest
    return raw


def provenance_of(raw: bytes) -> dict | None:
    """The `strata-conflict:` record of a conflict copy, or None."""
    for opening in (b"---\n", b"---\r\n"):
        start = opening + f"{CONFLICT_KEY}: ".encode()
        if raw.startswith(start):
            line = raw[len(start):raw.find(b"\n", len(start))]
            try:
                found = json.loads(line.decode("utf-8"))
            except ValueError:
                return None
            return found if isinstance(found, dict) else None
    return None


class Merged(NamedTuple):
    tree: str
    decisions: list[Decision]  # only the names both sides changed

    @property
    def conflicts(self) -> list[Decision]:
        return [d for d in self.decisions if d.beside is not None]


def copy_path(version: Version, tag: str, like: str | None = None) -> str:
    """Where `version` is kept beside; its folders spelled as in `like` (the version in place)
    where they differ only by case, so the copy adds no second spelling of a folder."""
    name = memory_name(version.path)
    if name is not None:
        folder, _, leaf = name.rpartition("/")
        other = (memory_name(like) or "") if like else ""
        if folder and other.rpartition("/")[0] and \
                names.collision_key(other.rpartition("/")[0]) == names.collision_key(folder):
            folder = other.rpartition("/")[0]
        stem = f"{folder}/{leaf}" if folder else leaf
        return contract.conflict_copy(f"active/{stem}", tag)
    return contract.conflict_copy(version.path, tag)


def _in_trees(repo: Repo, commits: list[str], paths: list[str]) -> set[str]:
    """Which of `paths` (files or folders) exist in any of `commits` (trees only: no blob read)."""
    found: set[str] = set()
    for commit in commits:
        found |= repo.names_in(commit, paths)
    return found


def place_copies(repo: Repo, merger: Merger, decisions: list[Decision], commits: list[str],
                 fetch: Callable[[list[str]], None] = lambda blobs: None) -> list[Decision]:
    """Give every copy a free path, and keep beside a file the other side made a folder of."""
    results = {d.result.path for d in decisions if d.result is not None}
    moved = []
    for d in decisions:  # a file whose path another result needs as a folder goes beside
        if d.result is not None and any(p.startswith(d.result.path + "/") for p in results):
            how = d.how + "; a folder of the same name came from the other side: the file kept beside"
            if d.beside is not None:  # a conflict too: both of its versions go beside
                moved.append(d._replace(result=None, how=how))
            moved.append(d._replace(result=None, beside=d.result, how=how))
        else:
            moved.append(d)
    taken = {d.result.path for d in moved if d.result is not None}
    existing = _in_trees(repo, commits, [copy_path(d.beside, d.beside.blob[:8], d.result.path if d.result else None)
                                         for d in moved if d.beside])
    fetch(sorted({d.beside.blob for d in moved if d.beside and memory_name(d.beside.path)}))
    final = []
    for d in moved:
        if d.beside is None:
            final.append(d)
            continue
        like = d.result.path if d.result is not None else None
        width, path = 8, copy_path(d.beside, d.beside.blob[:8], like)
        while path in taken or path in existing or any(f in taken for f in names.folders(path)):
            width += 1  # 41 and on: the whole id, then -1, -2, ...
            path = copy_path(d.beside, d.beside.blob[:width] + (f"-{width - 40}" if width > 40 else ""), like)
            existing |= _in_trees(repo, commits, [path])
        taken.add(path)
        how = d.how if "beside" in d.how else f"{d.how}: this machine's version kept beside"
        final.append(d._replace(beside=Version(path, d.beside.mode, merger.copy_blob(d.beside, path)), how=how))
    return final


def merge(repo: Repo, base: str | None, ours: str, theirs: str, provenance: dict[str, str],
          fetch: Callable[[list[str]], None] = lambda blobs: None) -> Merged:
    """The merged tree of two commits (written to the object store; no ref, index or file touched).
    `fetch(blobs)` brings the blobs a content merge needs, in one batch, into a partial clone."""
    base = base or EMPTY_TREE
    mine, other = changes(repo, base, ours), changes(repo, base, theirs)
    by_key: dict[str, set[str]] = {}
    for path in mine.keys() | other.keys():
        by_key.setdefault(key_of(path), set()).add(path)
    work: list[tuple[str, Version | None, Version | None, Version | None]] = []
    for key in sorted(by_key):
        paths = sorted(by_key[key])
        base_v = {p: (mine[p] if p in mine else other[p])[0] for p in paths}
        sides = [{p: (diff[p][1] if p in diff else base_v[p]) for p in paths} for diff in (mine, other)]
        states = [_versions(base_v), _versions(sides[0]), _versions(sides[1])]
        if any(len(s) > 1 for s in states):  # a name in two places at once: merge its paths one by one
            for p in paths:
                b, o, t = (_one(_versions({p: s.get(p)})) for s in (base_v, *sides))
                work.append(("\0" + p, b, o, t))
        else:
            b, o, t = (_one(s) for s in states)
            work.append((key, b, o, t))
    fetch(sorted({v.blob for _, b, o, t in work if o != t and o != b and t != b for v in (b, o, t) if v}))
    merger = Merger(repo, provenance)
    decided = [(merger.decide(k, b, o, t), o, o != t and o != b and t != b) for k, b, o, t in work]
    placed = place_copies(repo, merger, [d for d, _, _ in decided], [ours, theirs], fetch)
    both = {d.key for d, _, changed_on_both in decided if changed_on_both}
    edits: dict[str, Version | None] = {o.path: None for _, o, _ in decided if o is not None}  # None: remove
    for decision in placed:
        for v in (decision.result, decision.beside):
            if v is not None:
                edits[v.path] = v
    decisions = [d for d in placed if d.key in both or d.beside is not None]  # worth reporting
    return Merged(_write_tree(repo, ours, edits), decisions)


def _versions(state: dict[str, tuple[str, str] | None]) -> dict[str, Version]:
    return {p: Version(p, *v) for p, v in state.items() if v is not None}


def _one(found: dict[str, Version]) -> Version | None:
    return next(iter(found.values()), None)


def _write_tree(repo: Repo, ours: str, edits: dict[str, Version | None]) -> str:
    """Our tree with the merge's edits made, editing only the folders on the way to them (no index
    of every archived file). Removals go first, so a file and a folder of one name may swap places;
    a version that would replace a folder (or the reverse) is refused, never silently dropped."""
    from strata_git.errors import GitFailed, Refused
    from strata_git.gitio import trees

    try:
        return trees.edit(repo, repo.tree_of(ours), {p: (v.mode, v.blob) if v else None for p, v in edits.items()})
    except GitFailed as e:
        raise Refused(f"the merge would drop a version ({e.message}: a file and a folder of one name); nothing "
                      "was changed", "rename one of them on either machine, then sync again") from None
