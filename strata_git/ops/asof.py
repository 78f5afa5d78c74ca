"""The memory as it was: `--as-of DATE|COMMIT|REV` on `read`, `list` and `status`.

Answered from history alone: the work tree, the index and the catalog are not touched, and
nothing is recorded (a look at the past is no use of a memory). A point in time is resolved to a
commit of the memory's current branch:

- a DATE (`2026-03-01`, `2026-03-01T12:00:00+01:00`, `@<unix time>`; a day alone means its end,
  23:59:59 UTC): the newest commit on the branch's first-parent line dated at or before it.
  Commit dates come from other machines' clocks and can run out of order: the walk goes from
  HEAD back along first parents and stops at the first commit dated at or before DATE, even if
  an older one is dated later;
- a COMMIT of the memory repository (any revision git reads: a hash, `HEAD~3`, a tag): it must be
  an ancestor of the current branch (a commit of another line is refused);
- a REV of the code repository the command runs in (when that is not the memory itself): "what
  did the agent know when it made that change?" uses that commit's date as DATE.

Archived content this clone pruned is fetched from the archive remote in one batch, into a
scratch repository (the clone stays pruned), as `history --diff` does.
"""

from __future__ import annotations

import os
import re
from typing import Any, NamedTuple

from strata_git.core import memory, names, untrusted
from strata_git.core.config import Config
from strata_git.core.entries import Entry
from strata_git.core.entries import clean as clean_title
from strata_git.core.rules import DAY
from strata_git.errors import BadMemory, BadName, NotFound, Refused, StrataError
from strata_git.gitio.git import Repo, discover
from strata_git.ops import archive

_DATE = re.compile(r"^(@-?\d+|\d{4}-\d{2}-\d{2}([T ][0-9:.]+)?(Z|[+-]\d{2}:?\d{2})?)$")
_MAX_ASKED = 256


class Point(NamedTuple):
    """A commit of the memory, and how it was reached."""
    commit: str
    time: int  # its commit date
    asked: str  # what was given
    how: str  # "date", "commit" or "code revision"

    def as_dict(self) -> dict:
        from strata_git.core import contract

        return {"commit": self.commit, "date": contract.day(self.time), "time": self.time, "asked": self.asked,
                "how": self.how}


def resolve(repo: Repo, asked: str, code_dir: str | None = None) -> Point:
    """The commit `asked` names (see the module's docstring)."""

    if not isinstance(asked, str) or not asked.strip() or len(asked) > _MAX_ASKED or "\0" in asked:
        raise BadName("--as-of needs a date, a commit of the memory or a revision of the code repository",
                      "give a date like 2026-03-01, a commit like HEAD~3, or a code revision like v1.2")
    value = asked.strip()
    head = repo.head_quick()
    if head is None:
        raise NotFound("the memory has no commits yet", "write a memory first")
    held = _KEPT.get((repo.git_dir, "point"))
    if held is not None and held[0] == (value, head):  # the same words at the same HEAD name the same commit
        return held[1]._replace(asked=asked)  # type: ignore[no-any-return]
    point = _resolve(repo, value, asked, code_dir)
    if point.how != "code revision":  # (a code revision's commit moves with the code repository)
        _KEPT[(repo.git_dir, "point")] = ((value, head), point)
    return point


def _resolve(repo: Repo, value: str, asked: str, code_dir: str | None) -> Point:
    from strata_git.core.rules import parse_when

    if _DATE.match(value):  # a day alone means the whole of it: its end
        return _at(repo, parse_when(value, 0) + (DAY - 1 if len(value) == 10 else 0), asked, "date")
    commit = _commit(repo, value)
    if commit is not None:
        if not repo.ok("merge-base", "--is-ancestor", commit, "HEAD"):
            raise Refused(f"--as-of {value[:60]!r}: commit {commit[:12]} is not on the memory's current branch",
                          "give a commit of the current branch, or a date")
        return Point(commit, _date(repo, commit), asked, "commit")
    code = _code_repo(repo, code_dir)
    found = _commit(code, value) if code is not None else None
    if code is None or found is None:
        raise BadName(f"--as-of {value[:60]!r} is not a date"
                      + (", a commit of the memory or a revision of the code repository here" if code is not None
                         else " or a commit of the memory"),
                      "give a date like 2026-03-01, a commit like HEAD~3, or a code revision like v1.2")
    return _at(repo, _date(code, found), asked, "code revision")


def _commit(repo: Repo, rev: str) -> str | None:
    if rev.startswith("-"):
        return None  # (never an option of git's)
    out = repo.git("rev-parse", "--verify", "--quiet", "--end-of-options", f"{rev}^{{commit}}", check=False)
    found = out.decode().strip()
    return found if re.fullmatch(r"[0-9a-f]{40,64}", found) else None


def _date(repo: Repo, commit: str) -> int:
    stamp = untrusted.stamp(repo.git("log", "-1", "--format=%ct", commit, "--").decode())
    if stamp is None:
        raise Refused(f"commit {commit[:12]} has a date no clock gives", "give a date instead")
    return stamp


def _code_repo(repo: Repo, code_dir: str | None) -> Repo | None:
    """The git repository `code_dir` is in, if it is not the memory itself."""
    if not code_dir:
        return None
    try:
        code = discover(code_dir)
    except StrataError:
        return None
    return None if os.path.realpath(code.root) == os.path.realpath(repo.root) else code


def _at(repo: Repo, when: int, asked: str, how: str) -> Point:
    out = repo.git("rev-list", "--first-parent", "--format=%ct", "HEAD").decode().split("\n")
    for i in range(0, len(out) - 1, 2):  # "commit <id>" then its date
        commit, stamp = out[i].removeprefix("commit "), untrusted.stamp(out[i + 1])
        if stamp is not None and stamp <= when:
            return Point(commit, stamp, asked, how)
    from strata_git.core import contract

    raise NotFound(f"the memory has no commit dated at or before {contract.day(when)}",
                   "its history starts later: see `git strata history NAME` or `git log`")


class Listed(NamedTuple):
    tier: str
    name: str  # with .md
    blob: str
    size: int  # -1: not known here (a pruned clone's blob the shadow index does not describe)


_KEPT: dict[tuple[str, str], Any] = {}  # (git dir, what): the last answer kept in a long-running process


def _kept(repo: Repo, what: str, key: object, make: Any) -> Any:
    """`make()`, or the value it gave last time for the same `key` in this process (one per `what`
    and repository: the MCP server and the page ask about the same point again and again)."""
    slot = (repo.git_dir, what)
    held = _KEPT.get(slot)
    if held is not None and held[0] == key:
        return held[1]
    value = make()
    _KEPT[slot] = (key, value)
    return value


def _listed_once(repo: Repo, commit: str) -> list[Listed]:
    """`_listed(commit, sizes=False)`, kept for the last commit asked (a commit's tree never changes)."""
    return _kept(repo, "listed", commit, lambda: _listed(repo, commit, sizes=False))  # type: ignore[no-any-return]


def _listed(repo: Repo, commit: str, sizes: bool = True) -> list[Listed]:
    """The memories at `commit`. Their sizes (unless not asked for: -1) come from git where it holds
    the blob; a pruned clone asks git for none it lacks (that would fetch it) and takes an archived
    one's from its record."""
    from strata_git.gitio import partial

    pruned = not sizes or partial.is_pruned(repo)
    out = repo.git("ls-tree", "-r", *([] if pruned else ["-l"]), "-z", commit, "--", *names.TIERS)
    found = []
    for item in out.decode("utf-8", "surrogateescape").split("\0"):
        meta, tab, path = item.partition("\t")
        parts = meta.split()
        where = names.split_path(path)
        if tab and len(parts) >= 3 and parts[1] == "blob" and where and where[1].endswith(names.SUFFIX):
            size = int(parts[3]) if len(parts) == 4 and parts[3].isdigit() else -1
            found.append(Listed(where[0], where[1], parts[2], size))
    if not pruned or not sizes:
        return found
    known = _sizes(repo, sorted({item.blob for item in found}))
    return [item._replace(size=known.get(item.blob, -1)) for item in found]


def _sizes(repo: Repo, blobs: list[str]) -> dict[str, int]:
    """Sizes of the blobs a pruned clone holds (git asked about no other), then of the archived
    ones the shadow index describes."""
    from strata_git.gitio import partial
    from strata_git.store import catalog

    absent = set(partial.absent(repo, blobs))
    held = [b for b in blobs if b not in absent]
    out = repo.git("cat-file", "--batch-check=%(objectname) %(objectsize)", input="\n".join(held).encode()) \
        if held else b""
    found = {oid: int(size) for oid, _, size in (line.partition(" ") for line in out.decode().splitlines())
             if size.isdigit()}
    with catalog.connect(repo) as db:
        found |= {blob: size for blob, size in db.execute("SELECT blob, size FROM archived") if blob in absent}
    return found


def contents(repo: Repo, cfg: Config, blobs: list[str], absent: set[str] | None = None,
             fetch: bool = True) -> dict[str, bytes | None]:
    """Blobs' contents: those this clone holds (one batch), the rest, which a pruned clone left on
    its remote (`absent`, when the caller knows), fetched from the archive remote in one batch into
    a scratch repository (the clone stays pruned) unless not `fetch`; any not had are left out."""
    from strata_git.gitio import partial

    if absent is None:
        absent = set(partial.absent(repo, blobs)) if partial.is_pruned(repo) else set()
    missing = {b for b in blobs if b in absent}
    held = [b for b in blobs if b not in missing]
    found: dict[str, bytes | None] = dict(zip(held, repo.objects(held), strict=True))
    if not fetch:
        return found
    try:
        found |= archive.borrow(repo, cfg, sorted(missing))
    except StrataError:
        pass  # (what each caller does without it, it says)
    return found


def read(repo: Repo, cfg: Config, name: str, point: Point) -> tuple[str, bytes]:
    """(tier, content) of memory `name` at `point`."""
    norm = names.normalize(name)
    entries = repo.ls_tree(point.commit, *(names.tier_path(t, norm) for t in names.TIERS))
    for tier in names.TIERS:
        entry = entries.get(names.tier_path(tier, norm))
        if entry is not None and entry.type == "blob":
            data = contents(repo, cfg, [entry.oid]).get(entry.oid)
            if data is None:
                raise NotFound(f"{names.display(norm)} as of {point.commit[:12]} is archived and could not be "
                               "fetched from the archive remote", "check the archive remote with `git strata status`")
            return tier, data
    raise NotFound(f"no memory named {names.display(norm)!r} as of {point.asked.strip()[:60]} "
                   f"(commit {point.commit[:12]})", f"see its versions with `git strata history {names.display(norm)}`")


def listing(repo: Repo, cfg: Config, point: Point, listed: list[Listed] | None = None) -> list[Entry]:
    """Every memory at `point` with its tier, size, title, type, tags and project: from the
    blobs this clone holds, else from the shadow records (archived ones), else its name alone."""
    from strata_git.store import catalog

    listed = _listed(repo, point.commit) if listed is None else listed
    wanted = {item.blob for item in listed}
    with catalog.connect(repo) as db:  # what the shadow index knows of archived blobs (one pass)
        rows = {r[0]: r[1:] for r in db.execute("SELECT blob, title, type, tags, project FROM archived")
                if r[0] in wanted}
    unknown = [item.blob for item in listed if item.blob not in rows]
    held = contents(repo, cfg, unknown, fetch=False)  # (a listing never fetches: it shows the others' names)
    out = []
    for item in listed:
        if item.blob in rows:
            title, kind, tags, project = rows[item.blob]
            out.append(Entry(item.tier, item.name, max(item.size, 0), title or "", kind or "note",
                             tuple(t for t in (tags or "").split(catalog.TAG_SEP) if t), project=project or ""))
            continue
        data = held.get(item.blob)
        try:
            parsed = memory.parse(data, names.tier_path(item.tier, item.name)) if data is not None else None
        except BadMemory as e:
            out.append(Entry(item.tier, item.name, max(item.size, 0), problem=e.message))
            continue
        if parsed is None:
            out.append(Entry(item.tier, item.name, max(item.size, 0)))
        else:
            project = parsed.meta.get("project")
            out.append(Entry(item.tier, item.name, max(item.size, 0), parsed.title or "", parsed.type,
                             tuple(parsed.tags), project=project if isinstance(project, str) else ""))
    return out


class Counted(NamedTuple):
    point: Point
    tiers: dict[str, tuple[int, int, int]]  # tier: (memories, bytes, memories whose size is not known here)

    def as_dict(self) -> dict:
        return {"as_of": self.point.as_dict(),
                "tiers": {t: {"memories": n, "bytes": b, "size_unknown": u} for t, (n, b, u) in self.tiers.items()}}


def status(repo: Repo, point: Point) -> Counted:
    """Memories and bytes per tier at `point`."""
    counts = {t: (0, 0, 0) for t in names.TIERS}
    for item in _listed(repo, point.commit):
        n, b, u = counts[item.tier]
        counts[item.tier] = (n + 1, b + max(item.size, 0), u + (item.size < 0))
    return Counted(point, counts)


def context(repo: Repo, cfg: Config, point: Point, budget: int | None = None, type: str | None = None,
            standing_only: bool = False, project: str | None = None) -> Any:
    """The boot context as it would have been built at `point`: the memories then, their last
    changes in the history up to it, and the reads recorded up to its date (core/context.py)."""
    from strata_git.core import context as boot
    from strata_git.store import access, history

    listed = _listed(repo, point.commit)
    entries = listing(repo, cfg, point, listed)
    blob = {(item.tier, item.name): item.blob for item in listed}
    shown = [e for e in entries if e.tier == "active" or e.tier == "cooled" and e.type in ("decision", "rejection")]
    texts = contents(repo, cfg, sorted({blob[(e.tier, e.name)] for e in shown}))
    times: dict[str, int] = {}
    history.scan(repo, point.commit, times)  # (not the table: it follows HEAD)
    reads = {name: max(kept) for name, stamps in access.reads_by_name(repo).items()
             if (kept := [t for t in stamps if t <= point.time])}

    def read(entry: Entry) -> str:
        data = texts.get(blob[(entry.tier, entry.name)])
        if data is None:
            raise NotFound(f"{entry.path} as of {point.commit[:12]} could not be had", "")
        return data[:cfg.max_memory_bytes].decode("utf-8", "replace")

    return boot.build(entries, times, read, point.commit, boot.check_budget(boot.DEFAULT_BUDGET if budget is None
                                                                            else budget),
                      type, standing_only, project, reads)


WITHIN = 5000  # scored by walking the whole ranking (search.scored_within) from this many memories up


def _archived_known(repo: Repo, db: Any) -> tuple[tuple, dict[str, tuple]]:
    """(what tells the archived rows' state, {blob: (rowid, title, type, tags, project)} of those the
    index holds), kept while they stay as they are: the shadow index's commit, the catalog's birth,
    their count and largest id."""
    from strata_git.store import catalog

    key = (catalog.get_meta(db, "born"), catalog.get_meta(db, "shadow_commit"),
           tuple(db.execute("SELECT count(*), max(id) FROM archived").fetchone()))
    return key, _kept(repo, "archived", key, lambda: {
        r[0]: r[1:] for r in db.execute("SELECT blob, id, title, type, tags, project FROM archived")})


class _Plan(NamedTuple):
    """What an as-of search at one point scores among, whatever the query."""
    chosen: list[tuple]  # (Listed, title, type, project) of the memories then that pass the filters
    made: dict[str, tuple]  # blob: (title, type, tags, project, body, name) of versions the index lacks
    among: dict[int, int]  # the index rowid of each chosen version it holds: its key (place in `chosen`)
    absent: set[str]  # blobs this pruned clone lacks (of those it looked at)
    made_keys: dict[str, int]  # each chosen version the index lacks: its key
    documents: list[tuple]  # (title, tags, body) of each of `made`, in its order, as the index takes them


def _plan(repo: Repo, cfg: Config, db: Any, point: Point, tier: str | None, type: str | None,
          project: str | None, known: dict[str, tuple]) -> _Plan:
    from strata_git.gitio import partial

    listed = [item for item in _listed_once(repo, point.commit) if tier is None or item.tier == tier]
    lacking = sorted({item.blob for item in listed if item.blob not in known})
    # (which blobs a pruned clone lacks: one listing of its objects, only when some version is needed)
    absent = set(partial.absent(repo, lacking)) if lacking and partial.is_pruned(repo) else set()
    texts = contents(repo, cfg, lacking, absent)
    made: dict[str, tuple] = {}
    for item in listed:
        if item.blob in known or item.blob in made or texts.get(item.blob) is None:
            continue  # (an old version no one can fetch now is not searched)
        raw = texts[item.blob] or b""
        try:
            parsed = memory.parse(raw[:cfg.max_memory_bytes], names.tier_path(item.tier, item.name))
            meta = (clean_title(parsed.title), parsed.type, tuple(parsed.tags),
                    parsed.meta.get("project") if isinstance(parsed.meta.get("project"), str) else "", parsed.body)
        except BadMemory:
            meta = ("", "note", (), "", raw.decode("utf-8", "replace"))
        made[item.blob] = (*meta, item.name[: -len(names.SUFFIX)])
    chosen = []
    for item in listed:
        if item.blob in known:
            _, title, kind, tags, proj = known[item.blob]
        elif item.blob in made:
            title, kind, tags, proj, _, _ = made[item.blob]
        else:
            continue
        if (type is None or kind == type) and (project is None or proj == project):
            chosen.append((item, title, kind, proj))
    among: dict[int, int] = {}
    made_keys: dict[str, int] = {}
    for i, (item, *_) in enumerate(chosen):
        if item.blob in known:
            among.setdefault(known[item.blob][0], i)
        else:
            made_keys.setdefault(item.blob, i)
    from collections import Counter

    from strata_git.core import textindex

    documents = [textindex.document(t, tags, k, name, Counter(textindex.tokens(body)))
                 for t, k, tags, _, body, name in made.values()]
    return _Plan(chosen, made, among, absent, made_keys, documents)


def search(repo: Repo, cfg: Config, point: Point, query: str, tier: str | None = None, type: str | None = None,
           limit: int = 10, project: str | None = None, watch: Any = None) -> list[Any]:
    """Hits for `query` among the memories as they were at `point`, each in the tier it was in.

    The versions then are scored in the one full-text index: each version the index holds now
    (the same blob, live or archived) as it is there, and the others (changed or removed since)
    added for this search inside a savepoint that is rolled back. So the word statistics are
    those of the index now plus those versions: close to, not exactly, the corpus of that day.
    A long-running process (`watch` given: the MCP server, the page) keeps what it worked out for
    the last point and filters while the index holds the same versions, so asking that point
    again costs the scoring alone."""
    from collections import ChainMap

    from strata_git.core import textindex
    from strata_git.gitio import partial
    from strata_git.store import catalog, toplists
    from strata_git.store import search as words

    words.check(query, tier, limit, "merged")
    terms = textindex.query_terms(query)
    if not terms:
        return []
    with catalog.connect(repo) as db:
        catalog.rescan(repo, db, cfg.max_memory_bytes, catalog.SEARCHED, watch, quick=True)

        def held() -> dict[str, tuple]:
            """What the index holds of each live memory's blob: (rowid, title, type, tags, project)."""
            live = _live_blobs(repo, watch)
            by_path = {r[0]: r[1:] for r in db.execute(
                "SELECT path, id, title, type, tags, project FROM memories WHERE tier IN ('active', 'cooled')")}
            return {blob: by_path[path] for path, blob in live.items() if path in by_path}

        state, archived = _archived_known(repo, db)
        if watch is None:  # (a command's one search: nothing to keep)
            plan = _plan(repo, cfg, db, point, tier, type, project, archived | held())
        else:  # the live rows change only with a file (the watch tells) or HEAD
            live_key = (repo.head_quick(), watch.seen, catalog.get_meta(db, "born"))
            known = _kept(repo, "held", live_key, held)
            plan = _kept(repo, "plan", (point.commit, tier, type, project, state, live_key),
                         lambda: _plan(repo, cfg, db, point, tier, type, project, archived | known))
        chosen, made, absent = plan.chosen, plan.made, plan.absent
        db.execute("SAVEPOINT as_of")
        try:
            fresh = catalog.allocate(db, len(made)) if made else 0
            ids = {blob: fresh + n for n, blob in enumerate(made)}
            rows = [(fresh + n, *document) for n, document in enumerate(plan.documents)]
            db.executemany("INSERT INTO docs (rowid, title, tags, body) VALUES (?,?,?,?)", rows)
            toplists.added(db, rows)  # (the words' counts come from their lists: see search.idf_weights)
            among = ChainMap({ids[blob]: key for blob, key in plan.made_keys.items()}, plan.among)
            found = (words.scored_within if len(plan.among) + len(plan.made_keys) >= WITHIN
                     else words.scored_among)(db, terms, among, limit)
        finally:
            db.execute("ROLLBACK TO as_of")
            db.execute("RELEASE as_of")
        top = [(chosen[key], score, covered) for key, score, covered in found]
        rows = sorted({archived[item.blob][0] for (item, *_), _, _ in top if item.blob in archived})
        previews = dict(db.execute(f"SELECT blob, preview FROM archived WHERE id IN ({','.join('?' * len(rows))})",
                                   rows)) if rows else {}
    wanted = sorted({item.blob for (item, *_), _, _ in top if item.blob not in made and item.blob not in previews})
    if wanted and not absent and partial.is_pruned(repo):
        absent = set(partial.absent(repo, wanted))
    bodies = contents(repo, cfg, wanted, absent)
    hits = []
    for (item, title, kind, proj), score, covered in top:
        text = (made[item.blob][4] if item.blob in made
                else previews.get(item.blob) or (bodies.get(item.blob) or b"").decode("utf-8", "replace"))
        name = item.name[: -len(names.SUFFIX)]
        hits.append(words.Hit(item.tier, name, title or name, kind, words.readable(score),
                              textindex.snippet(text, terms), point.commit, item.blob, project=proj,
                              coverage=round(min(1.0, covered or 0.0), 3)))
    return hits


def _live_blobs(repo: Repo, watch: Any = None) -> dict[str, str]:
    """{path: blob at HEAD} of the active and cooled memories whose file is as committed. With the
    `watch` the catalog was just brought up to date through, the files that differ are asked of git
    again only once HEAD moved or a file changed."""
    head = repo.head_quick()
    if head is None:
        return {}
    def differ() -> set[str]:
        return {path for _, path in repo.status("active", "cooled", untracked="no")}

    dirty = differ() if watch is None else _kept(repo, "dirty", (head, watch.seen), differ)
    at_head = _kept(repo, "head-tree", head, lambda: {path: entry.oid for path, entry in
                                                      repo.ls_tree(head, "active", "cooled").items()
                                                      if entry.type == "blob"})
    return {path: blob for path, blob in at_head.items() if path not in dirty}
