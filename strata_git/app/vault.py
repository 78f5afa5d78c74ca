"""The library API: one Vault per memory repository. The CLI (and later the MCP
server) are thin shells over it; nothing here prints.

Every change is one commit made with `git commit -- <paths>`, so a user's own
staged changes never ride along; a lock under the git directory serializes
git-strata processes on one repository.
"""

from __future__ import annotations

import fcntl
import json
import os
import time
from contextlib import contextmanager
from typing import TYPE_CHECKING, NamedTuple
from collections.abc import Callable, Iterator

from strata_git.store import access
from strata_git.core import config, memory, names
from strata_git.gitio import safefs
from strata_git.core.config import Config
from strata_git.errors import BadMemory, BadName, NotFound, Refused, StrataError, too_large
from strata_git.gitio import partial
from strata_git.gitio.git import Repo, discover
from strata_git.core import contract

if TYPE_CHECKING:
    from strata_git.ops import janitor
    from strata_git.core.entries import Entry, Scan
    from strata_git.gitio.watch import Watch

LOCK_WAIT = 30.0


class Change(NamedTuple):
    """What a mutating call did."""

    action: str
    name: str
    path: str
    commit: str | None  # None when nothing needed to change
    detail: str = ""

    def as_dict(self) -> dict:
        return {"action": self.action, "name": names.display(self.name), "path": self.path,
                "commit": self.commit, "changed": self.commit is not None, "detail": self.detail}


class Read(NamedTuple):
    name: str
    tier: str
    raw: bytes

    @property
    def path(self) -> str:
        return f"{self.tier}/{self.name}"

    @property
    def memory(self) -> memory.Memory:
        """The parsed memory (parsed on demand: printing a memory needs only its bytes)."""
        try:
            return memory.parse(self.raw, self.path)
        except BadMemory:
            return memory.Memory(raw=self.raw, meta={}, body=self.raw.decode("utf-8", "replace"))

    def as_dict(self) -> dict:
        parsed = self.memory
        return {"name": names.display(self.name), "tier": self.tier, "path": self.path,
                "title": parsed.title, "type": parsed.type, "tags": parsed.tags,
                "meta": parsed.meta, "content": self.raw.decode("utf-8", "replace")}


class Status(NamedTuple):
    root: str
    branch: str
    head: str | None
    tiers: dict[str, dict[str, int]]
    hooks: dict[str, str]
    config: dict
    uncommitted: list[str]
    problems: list[str]
    daemon: int | None  # pid of `git strata serve` for this repository
    archive: dict  # pruned?, archived blobs held here, last verification, shadow index commit
    conflicts: list[dict]  # open conflict copies a sync left (see conflicts.py)
    sync: dict  # the sync remote, and commits ahead of / behind it as of the last fetch
    derived: dict[str, int]  # bytes of each derived-state file under .git/strata (all rebuildable)

    def as_dict(self) -> dict:
        return self._asdict()


def check_content(raw: bytes, where: str, cfg: Config) -> memory.Memory:
    """Validate content about to become a memory: size, encoding, frontmatter, secrets."""
    if len(raw) > cfg.max_memory_bytes:
        raise too_large(where, len(raw), cfg.max_memory_bytes)
    if not raw.strip():
        raise BadMemory(f"{where}: the memory is empty", "give content with -m TEXT, --file PATH or stdin")
    parsed = memory.parse(raw, where)
    if cfg.check_secrets:
        from strata_git.core import secrets

        found = secrets.scan(raw.decode("utf-8"))
        if found:
            f = found[0]
            raise BadMemory(f"{where}:{f.line}: looks like {f.what} (rule {f.rule}); refusing to store it",
                            f"remove it (and rotate the credential); mark a false positive with '{secrets.ALLOW_MARKER}'")
    return parsed


class Vault:
    def __init__(self, repo: Repo, cfg: Config) -> None:
        self.repo = repo
        self.cfg = cfg
        self.recovered = ""  # what taking the lock last recovered from a killed move, if anything
        self.agent: str | None = None  # the agent's name, recorded in every commit's Strata-Agent trailer
        self.watch: Watch | None = None  # set by watch_files() in a long-running process

    @classmethod
    def open(cls, path: str = ".") -> Vault:
        repo = discover(path)
        if not os.path.isfile(os.path.join(repo.root, config.CONFIG_PATH)):
            raise NotFound(f"{repo.root} is a git repository but not a memory repository",
                           f"run `git strata init {repo.root}`")
        return cls(repo, config.load(repo.root, repo.state_dir()))

    # -- locking and committing -------------------------------------------------

    @contextmanager
    def locked(self, wait: float = LOCK_WAIT) -> Iterator[None]:
        """The repository lock (the kernel releases it when the holder dies, so it is never stale)."""
        fd = os.open(os.path.join(self.repo.state_dir(), contract.LOCK), os.O_RDWR | os.O_CREAT, 0o644)
        deadline = time.monotonic() + wait
        try:
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() >= deadline:
                        raise Refused("another git-strata process (a janitor or a write) is changing this "
                                      "repository", "wait for it to finish, then try again") from None
                    time.sleep(0.05)
            if os.path.exists(os.path.join(self.repo.state_dir(), contract.JOURNAL)):
                from strata_git.gitio import txn  # a janitor, recall or sync was killed mid-move: finish it first

                self.recovered = txn.recover(self.repo)
            yield
        finally:
            os.close(fd)

    def _commit(self, paths: list[str], stage: Callable[[], None], subject: str, trailers: dict[str, str],
                restore: bool = True) -> str:
        """Stage with `stage()`, then commit exactly `paths`.

        If no commit was made (git failed, or the process was interrupted before
        HEAD moved), the working files are put back byte for byte as they were
        (callers check beforehand that they were clean) when `restore` is set, and
        unstaged. Once HEAD has moved nothing is touched: the commit is the truth.
        """
        if os.path.exists(os.path.join(self.repo.git_dir, "index.lock")):
            raise Refused("another git process is using the index (.git/index.lock exists)",
                          "wait for it to finish and try again; if none is running, delete .git/index.lock")
        before = self.repo.head()
        saved = {p: safefs.read(self.repo.root, p, 1 << 62) if safefs.kind(self.repo.root, p) == "file" else None
                 for p in paths} if restore else {}
        if self.agent:
            trailers = {**trailers, "Strata-Agent": self.agent}
        try:
            stage()
            return self.repo.commit(paths, subject, trailers)
        except BaseException:
            if self.repo.head() == before:
                for path, data in saved.items():  # the files first: they matter most, and need no git
                    if data is not None:
                        safefs.write(self.repo.root, path, data)
                    elif safefs.kind(self.repo.root, path) == "file":
                        safefs.remove(self.repo.root, path)  # one this operation created
                self.repo.git("reset", "-q", "--", *paths, check=False)
            raise

    def _dirty(self, path: str) -> bool:
        return bool(self.repo.git("status", "--porcelain", "-z", "--untracked-files=all", "--", path).strip(b"\0"))

    def _require_clean(self, path: str, doing: str) -> None:
        """Refuse unless `path` is committed and unchanged (or absent and not ignored)."""
        flags = self.repo.git("ls-files", "-v", "--", path)[:1]
        if flags.islower() or flags == b"S":  # git would hide changes to it from status
            raise Refused(f"refusing to {doing} {path}: git is told to ignore changes to it "
                          "(assume-unchanged or skip-worktree)",
                          f"clear it with `git update-index --no-assume-unchanged --no-skip-worktree {path}`")
        out = self.repo.git("status", "--porcelain", "-z", "--ignored", "--untracked-files=all",
                            "--no-renames", "--", path)
        code = out[:2].decode()
        if code == "??":
            raise Refused(f"refusing to {doing} {path}: it exists but was never committed",
                          f"commit it with `git add {path} && git commit`, or move it aside")
        if code == "!!" or (not out and not self.repo.in_head(path) and self.repo.ignored(path)):
            raise Refused(f"refusing to {doing} {path}: git ignores it (a .gitignore rule matches)",
                          f"see `git check-ignore -v {path}`; remove the rule or choose another name")
        if out:
            raise Refused(f"refusing to {doing} {path}: it has uncommitted changes",
                          f"commit them (`git commit -- {path}`) or discard them (`git checkout -- {path}`)")

    def index(self) -> tuple[str, str]:
        """(path, text) of index.md, brought up to date first."""

        self.refresh_router()
        path = os.path.join(self.repo.root, contract.INDEX_MD)
        with open(path, encoding="utf-8") as f:
            return path, f.read()

    def refresh_router(self, times: dict[str, int] | None = None) -> Scan:
        """Bring index.md (and the catalog) up to date with the working tree (`times`: the memories'
        last changes at HEAD, if the caller has them)."""
        from strata_git.store import index_md

        return index_md.refresh(self.repo, self.cfg.max_memory_bytes, times=times)

    # -- names ------------------------------------------------------------------

    def _known(self) -> tuple[dict[str, list[tuple[str, str]]], dict[str, str]]:
        """({collision key: [(tier, name)]}, {collision key: folder}) for every memory tracked or on
        disk, ignored files included (a name must not collide with a file git ignores either)."""
        out = self.repo.git("ls-files", "-z", "-c", "-o", "--", *names.TIERS)
        known: dict[str, list[tuple[str, str]]] = {}
        folders: dict[str, str] = {}
        for path in sorted(set(out.decode("utf-8", "surrogateescape").split("\0"))):
            where = names.split_path(path)
            if where and where[1].endswith(names.SUFFIX):
                known.setdefault(names.collision_key(where[1]), []).append(where)
                for folder in names.folders(where[1]):
                    folders.setdefault(names.collision_key(folder), folder)
        return known, folders

    def locate(self, name: str, known_names: tuple | None = None) -> tuple[str | None, str]:
        """(tier holding the memory or None, normalized name); refuses near-collisions.
        `known_names` is a _known() result to reuse when locating many names at once."""
        norm = names.normalize(name)
        known, folders = known_names or self._known()
        holders = known.get(names.collision_key(norm), [])
        exact = [tier for tier, held in holders if held == norm]
        if exact:
            return exact[0], norm
        if holders:
            tier, other = holders[0]
            raise BadName(f"bad memory name {name!r}: it differs only by case or accents from "
                          f"the existing {tier}/{other}", f"use the existing name {names.display(other)!r}")
        for folder in names.folders(norm):
            key = names.collision_key(folder)
            if key in known:
                raise BadName(f"bad memory name {name!r}: {folder!r} is a memory, not a folder",
                              "choose another folder name")
            if folders.get(key, folder) != folder:
                raise BadName(f"bad memory name {name!r}: the folder {folder!r} differs only by case or accents "
                              f"from the existing {folders[key]!r}", f"use the folder {folders[key]!r}")
        return None, norm

    def find(self, name: str) -> tuple[str | None, str]:
        """`locate`, with a fast path for what nearly every read is: the exact file exists."""
        norm = names.normalize(name)
        tier = next((t for t in names.TIERS if safefs.kind(self.repo.root, names.tier_path(t, norm)) == "file"), None)
        return (tier, norm) if tier else self.locate(name)

    def _not_found(self, norm: str) -> NotFound:
        import difflib

        candidates = [n for held in self._known()[0].values() for _, n in held]
        close = difflib.get_close_matches(norm, candidates, n=1)
        hint = (f"did you mean {names.display(close[0])!r}?" if close else
                "see `git strata list`, or `git strata search WORDS` to find it by what it says")
        return NotFound(f"no memory named {names.display(norm)!r}", hint)

    # -- operations ---------------------------------------------------------------

    def write(self, name: str, content: bytes, *, title: str | None = None, tags: list[str] | None = None,
              type: str | None = None, via: str = "api", create_only: bool = False,
              keep_types: tuple[str, ...] = ()) -> Change:
        """Create or replace an active memory from `content` (bytes kept exactly unless metadata is given);
        with `create_only`, refuse a name that exists; refuse to replace a memory of a type in `keep_types`
        (checked under the lock, so no writer can slip in between)."""
        with self.locked():
            tier, norm = self.locate(name)
            path = names.tier_path("active", norm)
            if create_only and tier is not None:
                raise Refused(f"{names.display(norm)} already exists (in {tier}/)", "choose another name")
            if keep_types and tier == "active" and self._type_of(path) in keep_types:
                raise Refused(f"{names.display(norm)} is a {self._type_of(path)}; agents add those but do not "
                              "change them", "write a new memory instead; a person can change it with "
                              f"`git strata edit {names.display(norm)}`")
            if tier not in (None, "active"):
                raise Refused(f"{names.display(norm)} is in {tier}/, which is read-only",
                              f"bring it back with `git strata recall {names.display(norm)}`, then write it")
            if title is not None or tags is not None or type is not None:
                text = memory.decode(content, path) if content.strip() else ""
                content = memory.compose(text, {"title": title, "tags": tags, "type": type}, path)
            check_content(content, path, self.cfg)
            existed = tier == "active"
            self._require_clean(path, "write")
            if existed and safefs.read(self.repo.root, path, self.cfg.max_memory_bytes) == content:
                return Change("write", norm, path, None, "unchanged")
            self.repo.require_identity()
            verb = "update" if existed else "create"

            def stage() -> None:
                safefs.write(self.repo.root, path, content)
                self.repo.git("add", "--", path)

            commit = self._commit([path], stage, f"strata: {verb} {names.display(norm)}",
                                  {"Strata-Action": verb, "Strata-Name": names.display(norm), "Strata-Via": via})
            detail = "updated" if existed else "created"
            try:
                self.refresh_router()
            except Exception as e:  # noqa: BLE001 - committed is done: index.md catches up on the next command
                detail += f" (index.md not refreshed: {e})"
            return Change("write", norm, path, commit, detail)

    def _type_of(self, path: str) -> str | None:
        """The type of the memory at `path` (None if it does not parse: a valid one may replace it)."""
        try:
            return memory.parse(safefs.read(self.repo.root, path, self.cfg.max_memory_bytes), path).type
        except StrataError:
            return None

    def reject(self, text: str, *, name: str | None = None, why: str | None = None, via: str = "api") -> Change:
        """Record "we said no to `text`" as an active memory of type rejection (never cooled, always
        in the boot context), named rejections/<words of text> unless `name` is given."""
        import datetime

        if not isinstance(text, str) or not text.strip():
            raise BadMemory("nothing to reject: the text is empty", 'say what was rejected: git strata reject "TEXT"')
        title = " ".join(text.split())
        if len(title) > 200:
            raise BadMemory(f"the rejection is {len(title)} characters; keep it to 200",
                            "say what was rejected in one line and put the reasons in --why")
        created = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d")
        meta = {"type": "rejection", "title": title, "created": created}
        body = f"We said no to: {title}\n" + (f"\nWhy: {' '.join(why.split())}\n" if why and why.strip() else "")
        content = memory.compose(body, meta, "rejection")
        if name is not None:
            return self.write(name, content, via=via, create_only=True)
        slug = "-".join("".join(c if c.isalnum() else " " for c in title.lower()).split())[:60].strip("-")
        base = f"rejections/{slug or 'rejection'}"
        try:
            names.normalize(base)
        except BadName:  # "con", "aux", ...: names some file systems reserve
            base = f"rejections/no-{slug}"
        taken = self._known()[0]
        for candidate in (base, *(f"{base}-{i}" for i in range(2, 1000))):
            if names.collision_key(names.normalize(candidate)) in taken:
                continue
            try:
                return self.write(candidate, content, via=via, create_only=True)
            except Refused as e:
                if "already exists" not in e.message:  # another writer took this name meanwhile: next one
                    raise
        raise Refused(f"there are 999 rejections named {base}", "pass --name to choose a name")

    def context(self, budget: int | None = None, type: str | None = None):
        """The boot context (see context.py): rejections, decisions, recent memories, the router."""
        from strata_git.core import context
        from strata_git.store import history

        budget = context.check_budget(context.DEFAULT_BUDGET if budget is None else budget)
        times = history.last_changed(self.repo, history.head(self.repo))
        entries = self.refresh_router(times).entries  # one history pass for both

        def read(entry: Entry) -> str:
            return safefs.read(self.repo.root, entry.path, self.cfg.max_memory_bytes).decode("utf-8", "replace")

        return context.build(entries, times, read, self.repo.head(), budget, type)

    def summary(self, name: str) -> tuple[str, str]:
        """(tier, text) of the summary made when the memory cooled."""
        from strata_git.store import summary

        tier, norm = self.find(name)
        if tier is None:
            raise self._not_found(norm)
        if tier == "active":  # its text may have changed since: a summary left over (by a merge) is not served
            raise NotFound(f"{names.display(norm)} is active and active memories have no summary",
                           f"read it in full with `git strata read {names.display(norm)}`")
        text = summary.read(self.repo.root, norm)
        if text is None:
            raise NotFound(f"{names.display(norm)} has no summary",
                           "summaries are made when a memory cools with [cool] summary set in .strata/config.toml; "
                           "read the memory itself with `git strata read`")
        return tier, text

    def stats(self) -> dict:
        """Sizes, movements, reads, index freshness and what the boot context saves (see stats.py)."""
        from strata_git.app import stats

        return stats.gather(self.repo, self.context)

    def read(self, name: str, via: str = "api") -> Read:
        """The memory from whichever tier holds it; records an access."""
        tier, norm = self.find(name)
        if tier is None:
            raise self._not_found(norm)
        if tier == "archive":  # reading an archived memory brings it back (fetching it if pruned)
            self.recall(norm, via=via)
            tier = "active"
        else:
            access.record(self.repo, names.display(norm), tier, via)
        raw = safefs.read(self.repo.root, names.tier_path(tier, norm), self.cfg.max_memory_bytes)
        return Read(norm, tier, raw)

    def list(self, tier: str | None = None, type: str | None = None) -> list[Entry]:
        if tier is not None and tier not in names.TIERS:
            raise BadName(f"unknown tier {tier!r}", f"use one of: {', '.join(names.TIERS)}")
        entries = self.refresh_router().entries
        return [e for e in entries if (tier is None or e.tier == tier) and (type is None or e.type == type)]

    def forget(self, name: str, via: str = "api") -> Change:
        """Remove an active memory in a commit; history keeps it."""
        with self.locked():
            tier, norm = self.locate(name)
            path = names.tier_path("active", norm)
            if tier is None:
                raise self._not_found(norm)
            if tier != "active":
                raise Refused(f"{names.display(norm)} is in {tier}/, and only active memories can be forgotten",
                              f"run `git strata recall {names.display(norm)}` first")
            self._require_clean(path, "forget")  # history must hold exactly what is removed
            self.repo.require_identity()
            from strata_git.store import summary

            held = summary.path(norm)  # a summary of an earlier cooling goes with it, if nobody changed it
            paths = [path, held] if self.repo.in_head(held) and not self._dirty(held) else [path]
            commit = self._commit(paths, lambda: self.repo.git("rm", "-q", "--", *paths),
                                  f"strata: forget {names.display(norm)}",
                                  {"Strata-Action": "forget", "Strata-Name": names.display(norm), "Strata-Via": via})
            self.refresh_router()
            return Change("forget", norm, path, commit, f"undo with: git revert {commit[:12]}")

    def recall(self, items: str | list[str], via: str = "api", match: bool = False) -> list[Change]:
        """Bring cooled or archived memories back to active/ in one commit.

        Each item is a name or, with `match`, when no memory has that name, a query whose
        best cooled or archived hit is recalled. Archived content this clone does not hold is fetched from
        the archive remote first, all in one batch: if that fails nothing is changed.
        """
        from strata_git.ops import archive
        from strata_git.gitio import txn
        from strata_git.store import index_md, shadow

        wanted = [items] if isinstance(items, str) else list(items)
        if not wanted:
            raise BadName("nothing to recall", "give one or more memory names (or a query)")
        with self.locked():
            txn.recover(self.repo)
            txn.refuse_unless_settled(self.repo)
            found: dict[str, tuple[str, str]] = {}  # name -> (tier, how it was found)
            done: list[Change] = []
            exact = self._exact_tiers(wanted)
            known: tuple | None = None
            for item in wanted:
                if item in exact:
                    tier, norm, how = exact[item], names.normalize(item), ""
                else:
                    known = known or self._known()
                    tier, norm, how = self._recall_target(item, match, known)
                if tier == "active":
                    done.append(Change("recall", norm, names.tier_path("active", norm), None, "already active"))
                elif norm not in found:
                    found[norm] = (tier, how)
            if not found:
                return done
            moves = []
            self._require_movable([names.tier_path(tier, norm) for norm, (tier, _) in found.items()])
            for norm, (tier, _) in found.items():
                src, dst = names.tier_path(tier, norm), names.tier_path("active", norm)
                if os.path.lexists(os.path.join(self.repo.root, dst)):
                    raise Refused(f"{dst} already exists on disk, so {src} cannot come back there",
                                  f"move {dst} aside, then run recall again")
                moves.append((src, dst))
            self.repo.require_identity()
            old = self.repo.head() or ""
            blobs = self.repo.tree_entries(old, [src for src, _ in moves])
            archive.fetch_blobs(self.repo, self.cfg, partial.absent(self.repo, sorted({b for _, b in blobs.values()})))
            shown = [names.display(n) for n in found]
            subject = f"strata: recall {shown[0]}" if len(shown) == 1 else f"strata: recall {len(shown)} memories"
            trailers = [f"Strata-Recall: {json.dumps({'name': names.display(n), 'from': t}, ensure_ascii=False)}"
                        for n, (t, _) in found.items()]
            text = f"{subject}\n\nStrata-Action: recall\n" + "\n".join(trailers) + f"\nStrata-Via: {via}\n" \
                + (f"Strata-Agent: {self.agent}\n" if self.agent else "")
            from strata_git.store import summary

            stale = dict.fromkeys(self.repo.tree_entries(old, [summary.path(n) for n in found]))
            commit = txn.move(self.repo, old, moves, lambda _: text, {}, subject, added=stale)
            for norm in found:
                access.record(self.repo, names.display(norm), "active", via)
            index_md.refresh(self.repo, self.cfg.max_memory_bytes,
                           moved=([p for m in moves for p in m], self.repo.git("rev-parse", f"{old}^{{tree}}")
                                  .decode().strip()))
            shadow.refresh(self.repo)
            return done + [Change("recall", norm, names.tier_path("active", norm), commit,
                                  f"moved from {tier}/" + (f" ({how})" if how else ""))
                           for norm, (tier, how) in found.items()]

    def _exact_tiers(self, items: list[str]) -> dict[str, str]:
        """{item: tier} for the items that are exactly a memory's name (one git call for all);
        the rest go through locate(), which also refuses near-collisions."""
        paths = {}
        for item in items:
            try:
                norm = names.normalize(item)
            except BadName:
                continue
            paths.update({names.tier_path(t, norm): item for t in names.TIERS})
        if not paths:
            return {}
        # The whole listing, filtered here: git matches N literal pathspecs against every index entry.
        out = self.repo.git("ls-files", "-z", "--", *names.TIERS).decode("utf-8", "surrogateescape")
        held = set(out.split("\0"))
        found: dict[str, str] = {}
        for path, item in paths.items():  # in TIERS order for each item: active wins, then cooled
            if path in held:
                found.setdefault(item, path.partition("/")[0])
        return found

    def _recall_target(self, item: str, match: bool, known: tuple) -> tuple[str, str, str]:
        """(tier, name, how) of what `item` names, or (`match`) of the best non-active hit for it as a query."""
        from strata_git.store import search

        try:
            tier, norm = self.locate(item, known)
        except BadName:
            if not match:
                raise
            tier, norm = None, ""
        if tier is not None:
            return tier, norm, ""
        if not match:
            raise self._not_found(norm)
        hits = [h for h in search.search(self.repo, item, limit=20, max_bytes=self.cfg.max_memory_bytes)
                if h.tier != "active"]
        if not hits:
            raise self._not_found(norm) if norm else NotFound(f"no memory named or matching {item!r}",
                                                              "see `git strata search`")
        return hits[0].tier, names.normalize(hits[0].name), f"best match for {item!r}"

    def _require_movable(self, srcs: list[str]) -> None:
        """Cooled or archived files may move if committed and unchanged; an archived one a pruned
        clone keeps out of the working tree (skip-worktree, no file) may too. Two git calls for all."""
        wanted = set(srcs)
        out = self.repo.git("ls-files", "-v", "-z", "--", *names.TIERS).decode("utf-8", "surrogateescape")
        flags = {item[2:]: item[0] for item in out.split("\0") if item[2:] in wanted}
        check = [p for p in srcs if not (flags.get(p) == "S" and p.startswith("archive/")
                                         and not os.path.lexists(os.path.join(self.repo.root, p)))]
        if not check:
            return
        out = self.repo.git("status", "--porcelain", "-z", "--ignored", "--untracked-files=all", "--no-renames",
                            "--", *check).decode("utf-8", "surrogateescape")
        changed = [item[3:] for item in out.split("\0") if len(item) > 3]
        for path in changed + [p for p in check if flags.get(p, "H") != "H"]:
            self._require_clean(path, "recall")  # raises, with the reason for that path

    def edit(self, name: str, run_editor: Callable[[str], None], via: str = "api") -> Change:
        """Open an active memory in an editor and commit the result if it is valid and changed."""
        tier, norm = self.locate(name)
        path = names.tier_path("active", norm)
        if tier is None:
            raise NotFound(f"no memory named {names.display(norm)!r}",
                           f"create it with `git strata write {names.display(norm)} -m TEXT`")
        if tier != "active":
            raise Refused(f"{names.display(norm)} is in {tier}/, which is read-only",
                          f"bring it back with `git strata recall {names.display(norm)}` (or `git strata edit --recall ...`)")
        if safefs.kind(self.repo.root, path) != "file":
            raise Refused(f"{path} is not a regular file", "replace it with a real file")
        before = safefs.read(self.repo.root, path, self.cfg.max_memory_bytes)
        run_editor(os.path.join(self.repo.root, path))
        with self.locked():
            try:
                after = safefs.read(self.repo.root, path, self.cfg.max_memory_bytes)
                check_content(after, path, self.cfg)
            except (BadMemory, Refused) as e:
                raise BadMemory(e.message, f"your edit is kept in {path}; fix it and run "
                                f"`git strata edit {names.display(norm)}` again, or `git checkout -- {path}` to drop it"
                                ) from None
            if not self._dirty(path):
                return Change("edit", norm, path, None, "unchanged")
            self.repo.require_identity()
            # restore=False: a failed commit must never throw away what the user just typed.
            commit = self._commit([path], lambda: self.repo.git("add", "--", path),
                                  f"strata: edit {names.display(norm)}",
                                  {"Strata-Action": "edit", "Strata-Name": names.display(norm), "Strata-Via": via},
                                  restore=False)
            self.refresh_router()
            return Change("edit", norm, path, commit, "unchanged content" if after == before else "edited")

    def janitor(self, dry_run: bool = False, now: int | None = None) -> janitor.Result:
        """One janitor cycle (plan, and apply unless `dry_run`); refuses at once if another runs."""
        from strata_git.ops import archive, janitor
        from strata_git.store import index_md, shadow
        from strata_git.errors import StrataError

        self.recovered = ""
        with self.locked(wait=0):
            result = janitor.run(self.repo, self.cfg, dry_run=dry_run, now=now)
            if self.recovered and result.recovered == "clean":
                result = result._replace(recovered=self.recovered)
            if self.cfg.archive_prune and not dry_run:
                # Push, verify, prune; a failure is reported and the next cycle retries.
                try:
                    result = result._replace(archive=archive.archive(self.repo, self.cfg).as_dict())
                except StrataError as e:
                    result = result._replace(archive={"error": e.message, "hint": e.hint})
        if result.commit:  # only the moved paths changed: no need to rescan every file
            old_tree = self.repo.git("rev-parse", f"{result.plan.head}^{{tree}}").decode().strip()
            paths = [p for move in result.plan.moves for p in move.paths]
            index_md.refresh(self.repo, self.cfg.max_memory_bytes, moved=(paths, old_tree))
        if result.commit or result.archive:
            shadow.refresh(self.repo)
        return result

    def serve(self, interval: int, live: bool = False, once: bool = False,
              say: Callable[[str], None] = lambda _: None, sync: bool = False) -> int:
        """Run janitor cycles every `interval` seconds until SIGTERM/SIGINT; the cycles run.
        With `sync`, each live cycle is followed by a sync (its failure is logged, not fatal)."""
        from strata_git.app import serve
        from strata_git.errors import StrataError

        def one(dry_run: bool) -> dict:
            result = self.janitor(dry_run=dry_run).as_dict()
            entry = {k: result[k] for k in ("summary", "commit", "head", "skipped", "recovered")}
            if sync:
                try:
                    done = self.sync(dry_run=dry_run)
                    entry["sync"] = {"integrated": done.integrated, "pushed": done.pushed,
                                     "conflicts": len(done.conflicts), "head": done.head}
                except StrataError as e:
                    entry["sync"] = {"error": e.message}
            return entry

        return serve.serve(self.repo, one, interval, live, once, say)

    def search(self, query: str, *, tier: str | None = None, type: str | None = None, limit: int = 10,
               rank: str = "merged") -> list:
        """Hits for any text over active/, cooled/ and the shadow index of archive/ (see search.py)."""
        from strata_git.store import search

        return search.search(self.repo, query, tier=tier, type=type, limit=limit, rank=rank,
                             max_bytes=self.cfg.max_memory_bytes, watch=self.watch)

    def watch_files(self) -> None:
        """For a long-running process: learn which memories changed from the OS (inotify) instead
        of a stat of every file before each search (see watch.py)."""
        from strata_git.gitio import watch

        if self.watch is None:
            self.watch = watch.watch(self.repo.root)

    def archive(self, dry_run: bool = False):
        """Push archived content to the archive remote, verify it there, then prune it here."""
        from strata_git.ops import archive
        from strata_git.gitio import txn
        from strata_git.store import index_md, shadow

        with self.locked():
            if not dry_run:
                txn.recover(self.repo)
            report = archive.archive(self.repo, self.cfg, dry_run=dry_run)
        if not dry_run:
            shadow.refresh(self.repo)
            index_md.refresh(self.repo, self.cfg.max_memory_bytes)
        return report

    def sync(self, remote: str | None = None, dry_run: bool = False,
             progress: Callable[[str], None] | None = None):
        """Bring memory, access records and archive records in line with the remote, both ways."""
        from strata_git.ops.sync import sync

        with self.locked():
            return sync.sync(self.repo, self.cfg, remote, dry_run, progress)

    def resolve(self, name: str, keep: str, via: str = "api") -> Change:
        """Close a conflict a sync left: keep the version in place, take the copy, or keep both."""
        from strata_git.ops.sync import conflicts

        with self.locked():
            active = [e.name for e in self.refresh_router().entries if e.tier == "active"]
            norm, copy = conflicts.pick(self.repo.root, active, names.display(names.normalize(name)))
            writes, subject = conflicts.resolution(self.repo.root, norm, copy, keep)
            for path in writes:
                self._require_clean(path, "resolve")
            self.repo.require_identity()

            def stage() -> None:
                for path, data in writes.items():
                    if data is None:
                        self.repo.git("rm", "-q", "--", path)
                    else:
                        safefs.write(self.repo.root, path, data)
                        self.repo.git("add", "--", path)

            commit = self._commit(list(writes), stage, subject,
                                  {"Strata-Action": f"resolve ({keep})", "Strata-Name": names.display(norm),
                                   "Strata-Via": via})
            self.refresh_router()
            return Change("resolve", norm, f"active/{norm}", commit, subject.split(": ", 2)[-1])

    def reindex(self) -> dict:
        """Upgrade archived memories that lack a full shadow record (archived by an older version,
        or by hand) to one, then rebuild the catalog from the working tree and the shadow index
        from history. Blobs held here are read here; the others are fetched from the archive
        remote in one batch. Offline, what could not be upgraded is named and keeps its old row."""
        from strata_git.ops import archive
        from strata_git.store import catalog, records, shadow
        from strata_git.errors import StrataError

        with self.locked():
            lacking = [row for row in shadow.all_rows(self.repo) if row.source != "record"]
            blobs = sorted({row.blob for row in lacking})
            missing = set(partial.absent(self.repo, blobs))
            held = [b for b in blobs if b not in missing]
            raw = dict(zip(held, self.repo.objects(held), strict=True))
            unreachable = ""
            try:
                raw |= archive.borrow(self.repo, self.cfg, sorted(missing))
            except StrataError as e:
                unreachable = e.message
            made = {b: records.make(data, b, self.cfg.record_max_terms) for b, data in raw.items() if data is not None}
            written = records.write(self.repo, made, (self.cfg.janitor_name, self.cfg.janitor_email))
            catalog.reset(self.repo)
            archived = shadow.build(self.repo, self.repo.head())
            scan = self.refresh_router()
        left = sorted(row.name for row in lacking if row.blob not in made)
        return {"archived": archived, "active_and_cooled": sum(1 for e in scan.entries if e.tier != "archive"),
                "shadow_commit": self.repo.head(), "records_written": written, "upgraded": len(lacking) - len(left),
                "not_upgraded": left, "unreachable": unreachable}

    def log(self, name: str | None = None, limit: int = 50) -> list[dict]:
        """Migrations, newest first, from the janitor commits' trailers (optionally of one memory)."""
        from strata_git.ops import audit

        norm = names.normalize(name) if name else None
        return audit.migrations(self.repo, norm, limit)

    def why(self, name: str, now: int | None = None) -> dict:
        """Where a memory is, since when, by which rule, its evidence, and when it moves next."""
        from strata_git.ops import audit

        tier, norm = self.locate(name)
        if tier is None:
            raise self._not_found(norm)
        return audit.why(self.repo, self.cfg, tier, norm, int(time.time()) if now is None else now)

    def status(self) -> Status:
        from strata_git.ops import hookshims

        scan = self.refresh_router()
        tiers = {t: {"memories": 0, "bytes": 0} for t in names.TIERS}
        for entry in scan.entries:
            tiers[entry.tier]["memories"] += 1
            tiers[entry.tier]["bytes"] += entry.size
        dirty = self.repo.git("status", "--porcelain", "-z", "--untracked-files=all", "--no-renames", "--", *names.TIERS)
        uncommitted = [item[3:] for item in dirty.decode("utf-8", "surrogateescape").split("\0") if len(item) > 3]
        problems = [f"{e.path}: {e.problem}" for e in scan.entries if e.problem]
        problems += [f"{p}: not a memory (only .md files belong in tier folders)" for p in scan.strays]
        from strata_git.ops.sync import conflicts
        from strata_git.app import serve
        from strata_git.store import shadow

        archive_state = self._archive_state()
        problems += shadow.warnings(self.repo)
        branch = self.repo.git("symbolic-ref", "-q", "--short", "HEAD", check=False).decode().strip()

        return Status(self.repo.root, branch or "(detached)", self.repo.head(), tiers,
                      hookshims.state(self.repo), self.cfg.as_dict(), uncommitted, problems, serve.running(self.repo),
                      archive_state,
                      conflicts.open_conflicts(self.repo.root, [e.name for e in scan.entries if e.tier == "active"],
                                               self._tracked_copies()),
                      self._sync_state(branch), _derived(self.repo))

    def _tracked_copies(self) -> list[str]:
        """Tracked files outside the tiers that look like conflict copies (`PATH.conflict-<hex>`)."""
        out = self.repo.git("ls-files", "-z").decode("utf-8", "surrogateescape").split("\0")
        return [p for p in out if contract.looks_like_copy(p) and not names.split_path(p)]

    def _sync_state(self, branch: str) -> dict:
        remote = self.cfg.sync_remote
        tracking = f"refs/remotes/{remote}/{branch}"
        found = self.repo.git("rev-list", "--left-right", "--count", f"HEAD...{tracking}", check=False).split()
        if not branch or len(found) != 2:
            return {"remote": remote, "ahead": None, "behind": None}
        return {"remote": remote, "ahead": int(found[0]), "behind": int(found[1])}

    def _archive_state(self) -> dict:
        from strata_git.store import shadow

        rows = shadow.all_rows(self.repo)
        blobs = sorted({row.blob for row in rows})
        records = self.repo.git("for-each-ref", "--format=%(refname:lstrip=3) %(objectname)",
                                contract.VERIFIED_REFS).decode().split("\n")
        last = None
        for line in filter(None, records):
            remote, commit = line.split(" ", 1)
            stamp = int(self.repo.git("log", "-1", "--format=%ct", commit).decode().strip())
            if last is None or stamp > last[1]:
                last = (remote, stamp)
        import datetime

        when = (f"{last[0]} at {datetime.datetime.fromtimestamp(last[1], datetime.UTC):%Y-%m-%d %H:%M} UTC"
                if last else None)
        return {"pruned": partial.is_pruned(self.repo), "memories": len(blobs),
                "held_blobs": len(blobs) - len(partial.absent(self.repo, blobs)), "last_verified": when,
                "shadow_commit": shadow.reflects(self.repo),
                "indexed_from": {source: sum(1 for r in rows if r.source == source)
                                 for source in ("record", "trailer", "name")}}


def _derived(repo: Repo) -> dict[str, int]:
    from strata_git.store import catalog

    return catalog.derived_sizes(repo)
