"""The library API: one Vault per memory repository. The CLI (and later the MCP
server) are thin shells over it; nothing here prints.

Every change is one commit made with `git commit -- <paths>`, so a user's own
staged changes never ride along; a lock under the git directory serializes
git-strata processes on one repository.
"""

from __future__ import annotations

import fcntl
import os
import time
from contextlib import contextmanager
from typing import TYPE_CHECKING, NamedTuple
from collections.abc import Callable, Iterator

from strata_git import access, config, memory, names, safefs
from strata_git.config import Config
from strata_git.errors import BadMemory, BadName, NotFound, Refused
from strata_git.git import Repo, discover

if TYPE_CHECKING:
    from strata_git.catalog import Entry, Scan

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

    def as_dict(self) -> dict:
        return self._asdict()


def check_content(raw: bytes, where: str, cfg: Config) -> memory.Memory:
    """Validate content about to become a memory: size, encoding, frontmatter, secrets."""
    if len(raw) > cfg.max_memory_bytes:
        raise BadMemory(f"{where}: {len(raw)} bytes is over the {cfg.max_memory_bytes}-byte limit",
                        "split it, or raise limits.max_memory_bytes in .strata/config.toml")
    if not raw.strip():
        raise BadMemory(f"{where}: the memory is empty", "give content with -m TEXT, --file PATH or stdin")
    parsed = memory.parse(raw, where)
    if cfg.check_secrets:
        from strata_git import secrets

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

    @classmethod
    def open(cls, path: str = ".") -> Vault:
        repo = discover(path)
        if not os.path.isfile(os.path.join(repo.root, config.CONFIG_PATH)):
            raise NotFound(f"{repo.root} is a git repository but not a memory repository",
                           f"run `git strata init {repo.root}`")
        return cls(repo, config.load(repo.root, repo.state_dir()))

    # -- locking and committing -------------------------------------------------

    @contextmanager
    def locked(self) -> Iterator[None]:
        fd = os.open(os.path.join(self.repo.state_dir(), "lock"), os.O_RDWR | os.O_CREAT, 0o644)
        deadline = time.monotonic() + LOCK_WAIT
        try:
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() > deadline:
                        raise Refused("another git-strata process has been changing this repository for "
                                      f"{LOCK_WAIT:.0f} s", "wait for it to finish, then try again") from None
                    time.sleep(0.05)
            yield
        finally:
            os.close(fd)

    def _require_identity(self) -> None:
        if not self.repo.ok("var", "GIT_AUTHOR_IDENT"):
            raise Refused("git does not know who you are, so it cannot commit",
                          'run: git config --global user.name "Your Name"; '
                          "git config --global user.email you@example.com")

    def _commit(self, paths: list[str], subject: str, trailers: dict[str, str]) -> str:
        body = "\n".join(f"{k}: {v}" for k, v in trailers.items())
        self.repo.git("commit", "-q", "--no-verify", "-m", subject, "-m", body, "--", *paths)
        return self.repo.head() or ""

    def _dirty(self, path: str) -> bool:
        out = self.repo.git("status", "--porcelain", "-z", "--untracked-files=all", "--", path)
        return bool(out.strip(b"\0"))

    def _tracked(self, path: str) -> bool:
        return bool(self.repo.git("ls-files", "-z", "--", path).strip(b"\0"))

    def refresh_router(self, paths: list[str] | None = None) -> Scan:
        """Bring index.md up to date: for `paths` only (after our own commit), or a full rescan."""
        from strata_git import router

        return router.refresh(self.repo, self.cfg.max_memory_bytes, paths)

    # -- names ------------------------------------------------------------------

    def _known(self) -> dict[str, list[tuple[str, str]]]:
        """collision key -> [(tier, name)] for every memory tracked or on disk."""
        out = self.repo.git("ls-files", "-z", "-c", "-o", "--exclude-standard", "--", *names.TIERS)
        known: dict[str, list[tuple[str, str]]] = {}
        for path in sorted(set(out.decode("utf-8", "surrogateescape").split("\0"))):
            where = names.split_path(path)
            if where and where[1].endswith(names.SUFFIX):
                known.setdefault(names.collision_key(where[1]), []).append(where)
        return known

    def locate(self, name: str) -> tuple[str | None, str]:
        """(tier holding the memory or None, normalized name); refuses near-collisions."""
        norm = names.normalize(name)
        holders = self._known().get(names.collision_key(norm), [])
        exact = [tier for tier, held in holders if held == norm]
        if exact:
            return exact[0], norm
        if holders:
            tier, other = holders[0]
            raise BadName(f"bad memory name {name!r}: it differs only by case or accents from "
                          f"the existing {tier}/{other}", f"use the existing name {names.display(other)!r}")
        return None, norm

    def _not_found(self, norm: str) -> NotFound:
        import difflib

        candidates = [n for held in self._known().values() for _, n in held]
        close = difflib.get_close_matches(norm, candidates, n=1)
        hint = f"did you mean {names.display(close[0])!r}?" if close else "see `git strata list`"
        return NotFound(f"no memory named {names.display(norm)!r}", hint)

    # -- operations ---------------------------------------------------------------

    def write(self, name: str, content: bytes, *, title: str | None = None, tags: list[str] | None = None,
              type: str | None = None, via: str = "api") -> Change:
        """Create or replace an active memory from `content` (bytes kept exactly unless metadata is given)."""
        with self.locked():
            tier, norm = self.locate(name)
            path = names.tier_path("active", norm)
            if tier not in (None, "active"):
                raise Refused(f"{names.display(norm)} is in {tier}/, which is read-only",
                              f"bring it back with `git strata recall {names.display(norm)}`, then write it")
            if title is not None or tags is not None or type is not None:
                text = memory.decode(content, path) if content.strip() else ""
                content = memory.compose(text, {"title": title, "tags": tags, "type": type}, path)
            check_content(content, path, self.cfg)
            existed = tier == "active"
            if existed:
                if self._dirty(path):
                    raise Refused(f"refusing to replace {path}: it has uncommitted changes",
                                  f"commit them first (`git commit {path}`) or discard them")
                if safefs.read(self.repo.root, path, self.cfg.max_memory_bytes) == content:
                    return Change("write", norm, path, None, "unchanged")
            self._require_identity()
            return self._write_and_commit(norm, path, content, existed, via)

    def _write_and_commit(self, norm: str, path: str, content: bytes, existed: bool, via: str) -> Change:
        previous = safefs.read(self.repo.root, path, self.cfg.max_memory_bytes) if existed else None
        safefs.write(self.repo.root, path, content)
        try:
            self.repo.git("add", "--", path)
            verb = "update" if existed else "create"
            commit = self._commit([path], f"strata: {verb} {names.display(norm)}",
                                  {"Strata-Action": verb, "Strata-Name": names.display(norm), "Strata-Via": via})
        except BaseException:
            if previous is None:
                self.repo.git("rm", "-q", "--cached", "--ignore-unmatch", "--", path, check=False)
                safefs.remove(self.repo.root, path)
            else:
                safefs.write(self.repo.root, path, previous)
                self.repo.git("add", "--", path, check=False)
            raise
        self.refresh_router([path])
        return Change("write", norm, path, commit, "updated" if existed else "created")

    def read(self, name: str, via: str = "api") -> Read:
        """The memory from whichever tier holds it; records an access."""
        norm = names.normalize(name)
        # Fast path: the exact file exists (what nearly every read is); else look for near-collisions.
        tier = next((t for t in names.TIERS if safefs.kind(self.repo.root, names.tier_path(t, norm)) == "file"),
                    None) or self.locate(name)[0]
        if tier is None:
            raise self._not_found(norm)
        raw = safefs.read(self.repo.root, names.tier_path(tier, norm), self.cfg.max_memory_bytes)
        access.record(self.repo, names.display(norm), tier, via)
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
            if not self._tracked(path):
                raise Refused(f"refusing to forget {path}: it was never committed, so history could not keep it",
                              "commit it first, or delete the file yourself")
            if self._dirty(path):
                raise Refused(f"refusing to forget {path}: it has uncommitted changes",
                              "commit or discard them first")
            self._require_identity()
            self.repo.git("rm", "-q", "--", path)
            commit = self._commit([path], f"strata: forget {names.display(norm)}",
                                  {"Strata-Action": "forget", "Strata-Name": names.display(norm), "Strata-Via": via})
            self.refresh_router([path])
            return Change("forget", norm, path, commit, f"undo with: git revert {commit[:12]}")

    def recall(self, name: str, via: str = "api") -> Change:
        """Bring a cooled (or locally present archived) memory back to active/ as a pure rename."""
        with self.locked():
            tier, norm = self.locate(name)
            if tier is None:
                raise self._not_found(norm)
            dst = names.tier_path("active", norm)
            if tier == "active":
                return Change("recall", norm, dst, None, "already active")
            src = names.tier_path(tier, norm)
            if self._dirty(src) or not self._tracked(src):
                raise Refused(f"refusing to recall {src}: it has uncommitted changes",
                              f"restore it with `git checkout -- {src}`, then recall")
            if safefs.kind(self.repo.root, src) != "file":
                raise NotFound(f"{src} is not in this working tree", "it may be pruned; fetch it first")
            self._require_identity()
            safefs.make_parents(self.repo.root, dst)
            self.repo.git("mv", "--", src, dst)
            commit = self._commit([src, dst], f"strata: recall {names.display(norm)}",
                                  {"Strata-Action": "recall", "Strata-Name": names.display(norm),
                                   "Strata-From": tier, "Strata-Via": via})
            access.record(self.repo, names.display(norm), "active", via)
            self.refresh_router([src, dst])
            return Change("recall", norm, dst, commit, f"moved from {tier}/")

    def edit(self, name: str, run_editor: Callable[[str], None], via: str = "api") -> Change:
        """Open an active memory in an editor and commit the result if it is valid and changed."""
        tier, norm = self.locate(name)
        path = names.tier_path("active", norm)
        if tier is None:
            raise NotFound(f"no memory named {names.display(norm)!r}",
                           f"create it with `git strata write {names.display(norm)} -m TEXT`")
        if tier != "active":
            raise Refused(f"{names.display(norm)} is in {tier}/, which is read-only",
                          f"bring it back with `git strata recall {names.display(norm)}`, then edit it")
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
            self._require_identity()
            self.repo.git("add", "--", path)
            commit = self._commit([path], f"strata: edit {names.display(norm)}",
                                  {"Strata-Action": "edit", "Strata-Name": names.display(norm), "Strata-Via": via})
            self.refresh_router([path])
            return Change("edit", norm, path, commit, "unchanged content" if after == before else "edited")

    def status(self) -> Status:
        from strata_git import hooks

        scan = self.refresh_router()
        tiers = {t: {"memories": 0, "bytes": 0} for t in names.TIERS}
        for entry in scan.entries:
            tiers[entry.tier]["memories"] += 1
            tiers[entry.tier]["bytes"] += entry.size
        dirty = self.repo.git("status", "--porcelain", "-z", "--untracked-files=all", "--", *names.TIERS)
        uncommitted = [item[3:] for item in dirty.decode("utf-8", "surrogateescape").split("\0") if len(item) > 3]
        problems = [f"{e.path}: {e.problem}" for e in scan.entries if e.problem]
        problems += [f"{p}: not a memory (only .md files belong in tier folders)" for p in scan.strays]
        branch = self.repo.git("symbolic-ref", "-q", "--short", "HEAD", check=False).decode().strip()
        return Status(self.repo.root, branch or "(detached)", self.repo.head(), tiers,
                      hooks.state(self.repo), self.cfg.as_dict(), uncommitted, problems)
