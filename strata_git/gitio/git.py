"""The module that runs git (with spawn.py, which starts a sync's first git processes before
subprocess is loaded), and the queries whose output git-strata reads.

git is always called with an argv list, `--` before paths, literal pathspecs and
STRATA_INTERNAL=1 in its environment, so git-strata's own hook shims exit at once
when git-strata itself is the caller (no recursion). Failures become GitFailed
carrying git's own error line (`error_line`).

The output of `status`, `ls-tree` and `diff-tree` is parsed here, once, into named
tuples (`Repo.status`, `Repo.ls_tree`, `Repo.tree_entries`, `Repo.diff_tree`); no
other module splits git's porcelain.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Generator, Iterator
from typing import IO, TYPE_CHECKING, NamedTuple

from strata_git.errors import GitFailed, NotFound, Refused
from strata_git.gitio import spawn
from strata_git.gitio.spawn import Spawned, head_branch
from strata_git.gitio.spawn import env as _env

if TYPE_CHECKING:
    import threading

    import pygit2

TIMEOUT = 300  # seconds any local git command may take: past it, something hangs
# A transfer moves what the repository holds: a fresh clone of a million archived memories fetches
# a million shadow records, which a busy server took more than TIMEOUT to pack. An hour, then.
TRANSFER_TIMEOUT = 3600
_TRANSFERS = frozenset({"clone", "fetch", "push", "ls-remote"})


BULK = 2000  # objects from which libgit2 pays for its import in a one-shot command
CHUNK = 1 << 20  # bytes of output Repo.items reads at a time
_LIBGIT2: dict[str, pygit2.Repository | None] = {}  # git dir -> repository, kept by a process that reads often
_KEEP = False
_LOCK: threading.Lock | None = None


def use_libgit2() -> None:
    """Read objects in-process from now on (a long-running server: its start pays the import)."""
    global _KEEP
    _KEEP = True


def forked() -> None:
    """In a process just forked from one that may have read objects: open its own handles (a
    handle's pack windows and locks are not to be shared between processes)."""
    global _LOCK
    _LIBGIT2.clear()
    _LOCK = None


def _libgit2(git_dir: str, bulk: bool) -> pygit2.Repository | None:
    """This repository opened with pygit2, or None (not wanted here, or pygit2 not installed)."""
    global _LOCK
    if not (_KEEP or bulk):
        return None
    if git_dir in _LIBGIT2:
        return _LIBGIT2[git_dir]
    try:
        import threading

        import pygit2

        lib: pygit2.Repository | None = pygit2.Repository(git_dir)
    except Exception:  # noqa: BLE001 - not installed, or a repository it cannot open: the CLI reads it
        lib = None
    if _KEEP:
        _LOCK = _LOCK or threading.Lock()
        _LIBGIT2[git_dir] = lib
    return lib


def _partial(lib: pygit2.Repository) -> bool:
    """Whether a remote may hold objects this clone lacks (a partial clone's promisor remote)."""
    try:
        return any(e.name == "extensions.partialclone" or e.name.startswith("remote.") and e.name.endswith(".promisor")
                   and str(e.value).lower() in ("true", "1", "yes", "on") for e in lib.config)
    except Exception:  # noqa: BLE001 - an unreadable config: ask the CLI
        return True


def _exists(odb: pygit2.Odb, oid: str) -> bool:
    try:
        return bool(odb.exists(oid))
    except Exception:  # noqa: BLE001 - ValueError (not an id) or GitError: not held, as far as this can tell
        return False


def _read(lib: pygit2.Repository, name: str) -> bytes | None:
    """One object's content through libgit2, or None where `cat-file --batch` says missing."""
    try:
        if len(name) == 40 and ":" not in name:
            return lib.read(name)[1]  # (one read of the object; `lib[name].read_raw()` reads it twice)
        return lib.revparse_single(name).read_raw()
    except Exception:  # noqa: BLE001 - KeyError, ValueError, GitError: no such object (or not here)
        return None


def run(args: list[str], cwd: str, *, input: bytes | None = None, check: bool = True,
        env: dict[str, str] | None = None) -> subprocess.CompletedProcess[bytes]:
    limit = TRANSFER_TIMEOUT if _command(args) in _TRANSFERS else TIMEOUT
    try:
        proc = subprocess.run(["git", *args], cwd=cwd, input=input, capture_output=True,
                              stdin=None if input is not None else subprocess.DEVNULL,
                              env=_env(env), timeout=limit)
    except FileNotFoundError:
        raise GitFailed("git is not installed or not on PATH", "install git 2.39 or newer") from None
    except subprocess.TimeoutExpired:
        raise GitFailed(f"git {_command(args)} did not finish in {limit} s",
                        "check for a hung hook or remote") from None
    if check and proc.returncode != 0:
        raise GitFailed(f"git {_command(args)} failed: {error_line(proc.stderr)}",
                        "run the same git command by hand to see the details")
    return proc


def _command(args: list[str]) -> str:
    """The git command in `args` (past options such as `-c key=value` and `-C dir`)."""
    i = 0
    while i < len(args) and args[i].startswith("-"):
        i += 2 if args[i] in ("-c", "-C") else 1
    return args[i] if i < len(args) else "(no command)"


def start(args: list[str], cwd: str, stdout: int = subprocess.DEVNULL,
          stderr: int | IO[bytes] = subprocess.PIPE) -> subprocess.Popen[bytes]:
    """Start git in the background (by default its stderr kept for the caller's `communicate()`)."""
    try:
        return subprocess.Popen(["git", *args], cwd=cwd, stdin=subprocess.DEVNULL, stdout=stdout,
                                stderr=stderr, env=_env())
    except FileNotFoundError:
        raise GitFailed("git is not installed or not on PATH", "install git 2.39 or newer") from None


def finish(proc: subprocess.Popen[bytes] | Spawned) -> subprocess.CompletedProcess[bytes]:
    """Wait for a git `start`ed, within the time `run` gives the same command (check=False)."""
    argv = [str(a) for a in proc.args[1:]] if isinstance(proc.args, list) else []
    limit = TRANSFER_TIMEOUT if _command(argv) in _TRANSFERS else TIMEOUT
    try:
        out, err = proc.communicate(timeout=limit)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        raise GitFailed(f"git {_command(argv)} did not finish in {limit} s",
                        "check for a hung hook or remote") from None
    return subprocess.CompletedProcess(proc.args, proc.wait(), out, err)


def finish_while(proc: subprocess.Popen[bytes] | Spawned, steps: Iterator[None] | None
                 ) -> subprocess.CompletedProcess[bytes]:
    """finish(proc), taking `steps` one at a time meanwhile (Python's work while git works): each
    step is short, so git's end is noticed at most a step late. Steps left over stay in `steps`
    (for git's next wait). For a git that writes little: one blocked on a full pipe waits for
    the steps to run out."""
    if steps is not None:
        try:
            for _ in steps:
                if proc.poll() is not None:
                    break
        except Exception:  # noqa: BLE001 - the steps only get ahead of later work, which then does it itself
            pass
    return finish(proc)


def error_line(stderr: bytes) -> str:
    """git's own error line: the first `fatal:`/`error:`/`!` line (it names the cause; the lines
    after it are often consequences or advice), else the last line."""
    lines = [line for line in stderr.decode("utf-8", "replace").strip().splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith(("fatal:", "error:", "!", " !"))]
    return (errors or lines[-1:] or ["no message"])[0].strip()


def shown_url(url: str) -> str:
    """The url without credentials (it goes into commits and messages)."""
    scheme, sep, rest = url.partition("://")
    return f"{scheme}{sep}{rest.rpartition('@')[2]}" if sep and "@" in rest.split("/")[0] else url


def identity_env(name: str, email: str, date: int | None = None) -> dict[str, str]:
    """The environment that makes git author and commit as `name <email>` (at `date`, a Unix time)."""
    env = {"GIT_AUTHOR_NAME": name, "GIT_AUTHOR_EMAIL": email, "GIT_COMMITTER_NAME": name,
           "GIT_COMMITTER_EMAIL": email}
    if date is not None:
        env |= {"GIT_AUTHOR_DATE": f"@{date} +0000", "GIT_COMMITTER_DATE": f"@{date} +0000"}
    return env


def _paths(out: bytes) -> list[str]:
    return [p for p in out.decode("utf-8", "surrogateescape").split("\0") if p]


class TreeEntry(NamedTuple):
    mode: str
    type: str  # blob, tree or commit (a submodule)
    oid: str


def tree_listing(text: str) -> dict[str, TreeEntry]:
    """{path: TreeEntry} from `git ls-tree -z` output, decoded."""
    found = {}
    for item in text.split("\0"):
        meta, tab, path = item.partition("\t")
        parts = meta.split(" ")
        if tab and len(parts) == 3:
            found[path] = TreeEntry(*parts)
    return found


class Changed(NamedTuple):
    """One line of `git diff-tree --raw`: a path's status (A, M, D, T) with both sides."""

    status: str
    path: str
    old_mode: str
    new_mode: str
    old_oid: str
    new_oid: str


class Repo(NamedTuple):
    """A git work tree: its top folder and its git directory."""

    root: str
    git_dir: str

    def git(self, *args: str, input: bytes | None = None, check: bool = True,
            env: dict[str, str] | None = None) -> bytes:
        return run(list(args), self.root, input=input, check=check, env=env).stdout

    def ok(self, *args: str) -> bool:
        return run(list(args), self.root, check=False).returncode == 0

    def items(self, *args: str, sep: bytes = b"\x01", lead: bool = False) -> Generator[bytes, None, None]:
        """git's output split at `sep` (the text before the first one dropped, unless `lead`: lines
        split at b"\n" end with an empty item instead), read as it comes: a log of a million
        trailers is never held whole. GitFailed at the end if git failed or was
        killed; a caller that stops early stops git."""
        import tempfile

        with tempfile.TemporaryFile() as err:  # (a file, not a pipe: git cannot block on it)
            proc = start(list(args), self.root, stdout=subprocess.PIPE, stderr=err)
            assert proc.stdout is not None
            finished = False
            try:
                pending: list[bytes] = []  # the item being read, in pieces (one may span many reads)
                started = lead
                while chunk := proc.stdout.read(CHUNK):
                    pieces = chunk.split(sep)
                    pending.append(pieces[0])
                    if len(pieces) == 1:
                        continue
                    if started:
                        yield b"".join(pending)
                    started = True
                    yield from pieces[1:-1]
                    pending = [pieces[-1]]
                if started:
                    yield b"".join(pending)
                finished = True
            finally:
                if not finished:
                    proc.kill()
                proc.stdout.close()
                if proc.wait() != 0 and finished:
                    err.seek(0)
                    raise GitFailed(f"git {_command(list(args))} failed: {error_line(err.read())}",
                                    "run the same git command by hand to see the details")

    def state_dir(self) -> str:
        """Per-clone derived state (caches, access records, locks); never committed."""
        path = os.path.join(self.git_dir, "strata")
        os.makedirs(path, exist_ok=True)
        return path

    def head_quick(self) -> str | None:
        """HEAD's commit id read from the ref files (no git process), else from git."""
        found = _read_head(self.git_dir)
        return found if found is not None else self.head()

    def branch_quick(self) -> str | None:
        """The branch HEAD names, read from .git/HEAD (no git process): spawn.head_branch."""
        return head_branch(self.git_dir)

    def head(self) -> str | None:
        proc = run(["rev-parse", "-q", "--verify", "HEAD^{commit}"], self.root, check=False)
        return proc.stdout.decode().strip() if proc.returncode == 0 else None

    def objects(self, names: list[str]) -> list[bytes | None]:
        """The contents of the named objects (`<oid>` or `<rev>:<path>`), in order; None for a
        name that does not exist. An object a partial clone left on its remote is never fetched:
        asking for one fails (GitFailed), whichever way it is read.

        Read in-process through libgit2 (pygit2) by a long-running process that asked for it
        (`use_libgit2`: the MCP server, `serve`), and for BULK names or more anywhere; else with
        one `git cat-file --batch` process. bench/pygit2_reads.py: 5,000 records 2.6x faster,
        one object 39x, but importing pygit2 costs a fresh process ~60 ms."""
        if not names:
            return []
        lib = _libgit2(self.git_dir, len(names) >= BULK)
        if lib is not None:
            import contextlib

            with _LOCK or contextlib.nullcontext():  # a server's threads share one handle; libgit2's is not thread-safe
                read = [_read(lib, name) for name in names]
            if None not in read or not _partial(lib):
                return read
            # In a partial clone libgit2 cannot tell "left on the remote" from "no such object":
            # the CLI tells, as it always has.
        out = self.git("cat-file", "--batch", input="".join(f"{n}\n" for n in names).encode())
        found: list[bytes | None] = []
        pos = 0
        while pos < len(out):
            end = out.index(b"\n", pos)
            header = out[pos:end].split(b" ")
            if len(header) == 3 and header[2].isdigit():  # "<oid> <type> <size>"
                size = int(header[2])
                found.append(out[end + 1:end + 1 + size])
                pos = end + 1 + size + 1
            else:  # "<name> missing" (or ambiguous)
                found.append(None)
                pos = end + 1
        return found

    def holds(self, oid: str) -> bool:
        """Whether the object store holds `oid`, never fetching it: git is asked (a few ms) unless
        this is a partial clone, where asking git fetches what is missing and held() looks it up
        instead; False where that cannot tell."""
        promised = self.git("config", "--get-regexp", r"^(extensions\.partialclone|remote\..*\.promisor)$",
                            check=False)
        if promised.strip():
            return bool(self.held([oid]))
        return self.ok("cat-file", "-e", oid)

    def held(self, oids: list[str]) -> set[str] | None:
        """Which of `oids` the object store holds, never fetching a promised object: looked up in
        the loose objects' folders and the packs' indexes (packindex), else asked of libgit2 (about
        10 µs an id, after an import of about 50 ms); None where neither can be used."""
        from strata_git.gitio import packindex

        found = packindex.held(self.git_dir, oids)
        if found is not None:
            return found
        lib = _libgit2(self.git_dir, bulk=True)
        if lib is None:
            return None
        import contextlib

        with _LOCK or contextlib.nullcontext():
            odb = lib.odb
            return {oid for oid in oids if len(oid) == 40 and _exists(odb, oid)}

    def entries_at(self, asked: list[tuple[str, str]]) -> list[tuple[str | None, str | None]]:
        """For each (commit, path): the id of what the path holds in the commit and in its first parent
        (None: no such path, or a commit that cannot be read). Through libgit2, whose cache keeps each
        tree it reads while the pairs of one commit are looked up (sort them by commit), else with
        `cat-file --batch-check` (which reads every tree again for each name)."""
        lib = _libgit2(self.git_dir, bulk=True)
        if lib is None:
            names = "".join(f"{c}:{p}\n{c}^:{p}\n" for c, p in asked)
            out = [line.split(b" ") for line in self.git("cat-file", "--batch-check=%(objectname) %(objecttype)",
                                                         input=names.encode()).split(b"\n")]
            ids = [line[0].decode() if len(line) == 2 and line[1] != b"missing" else None for line in out]
            return [(ids[2 * i], ids[2 * i + 1]) for i in range(len(asked))]
        import contextlib

        import pygit2

        def at(tree: pygit2.Tree | None, path: str) -> str | None:
            try:
                return str(tree[path].id) if tree is not None else None
            except KeyError:
                return None

        tree_kind = pygit2.enums.ObjectType.TREE
        found: list[tuple[str | None, str | None]] = []
        with _LOCK or contextlib.nullcontext():
            pygit2.settings.cache_object_limit(tree_kind, 64 << 20)  # (a large folder is read once, not per path)
            try:
                trees: tuple[str, pygit2.Tree | None, pygit2.Tree | None] = ("", None, None)
                for commit, path in asked:
                    if trees[0] != commit:
                        try:
                            c = lib.get(pygit2.Oid(hex=commit))
                            trees = (commit, c.tree, c.parents[0].tree if c.parents else None) \
                                if isinstance(c, pygit2.Commit) else (commit, None, None)
                        except (KeyError, ValueError, pygit2.GitError):  # not a commit id, or a parent not held
                            trees = (commit, None, None)
                    found.append((at(trees[1], path), at(trees[2], path)))
            finally:
                pygit2.settings.cache_object_limit(tree_kind, 4096)  # libgit2's own default
        return found

    def store(self, data: bytes) -> str:
        """Write `data` as a blob in the object store; its id."""
        return self.git("hash-object", "-w", "--stdin", input=data).decode().strip()

    def in_head(self, path: str) -> bool:
        return bool(self.git("ls-tree", "--name-only", "HEAD", "--", path, check=False).strip())

    def require_identity(self) -> None:
        require_identity(self.root)

    def status(self, *paths: str, untracked: str = "all", ignored: str | None = None) -> list[tuple[str, str]]:
        """(two-letter status code, path) of every uncommitted change under `paths` (all when none),
        renames shown as a deletion and an addition. `untracked`: all, normal or no; `ignored`:
        None, traditional or matching (an untracked or ignored folder may be listed whole, "folder/")."""
        args = ["status", "--porcelain", "-z", "--no-renames", f"--untracked-files={untracked}"]
        if ignored:
            args.append(f"--ignored={ignored}")
        out = self.git(*args, "--", *paths) if paths else self.git(*args)
        return [(item[:2], item[3:]) for item in out.decode("utf-8", "surrogateescape").split("\0") if len(item) > 3]

    def dirty(self, *paths: str) -> bool:
        """Whether any of `paths` has uncommitted changes (untracked files count)."""
        return bool(self.status(*paths))

    def ls_tree(self, commit: str, *paths: str, recursive: bool = True, full_tree: bool = False,
                check: bool = True) -> dict[str, TreeEntry]:
        """{path: TreeEntry} at `commit` under `paths` (the whole tree when none); no blob is read."""
        args = ["ls-tree", "-z", *(["-r"] if recursive else []), *(["--full-tree"] if full_tree else []), commit]
        out = self.git(*args, "--", *paths, check=check) if paths else self.git(*args, check=check)
        return tree_listing(out.decode("utf-8", "surrogateescape"))

    def tree_of(self, rev: str) -> str:
        """The id of `rev`'s tree (a commit id, or any revision git understands)."""
        return self.git("rev-parse", "--verify", "--end-of-options", f"{rev}^{{tree}}").decode().strip()

    def tree_entries(self, commit: str, paths: list[str]) -> dict[str, tuple[str, str]]:
        """{path: (mode, blob id)} of exactly `paths` at `commit`. Many paths: read just the folders
        on the way to them (git matches each literal pathspec against every entry: 600 of them cost
        15x one folder, and listing the top folders costs a line per archived memory)."""
        if not paths:
            return {}  # (ls-tree with no path lists the whole top level)
        if len(paths) > 20:
            from strata_git.gitio import trees

            return trees.entries(self, self.tree_of(commit), paths)
        return {p: (e.mode, e.oid) for p, e in self.ls_tree(commit, *paths, recursive=False).items()}

    def names_in(self, commit: str, paths: list[str]) -> set[str]:
        """Which of `paths` (files or folders) exist at `commit` (its tree only: no blob is read)."""
        if not paths:
            return set()
        return set(_paths(self.git("ls-tree", "-z", "--name-only", commit, "--", *paths)))

    def tracked(self, *paths: str, flags: tuple[str, ...] = ()) -> tuple[list[str], list[str]]:
        """(entries, collapsed) of `git ls-files -z --sparse FLAGS -- PATHS`, which never expands a
        sparse index: `collapsed` are the folders a pruned clone keeps as one index entry (each
        ending in "/": archive/), left out of `entries`; their files are HEAD's, skip-worktree."""
        out = self.git("ls-files", "-z", "--sparse", *flags, "--", *paths).decode("utf-8", "surrogateescape")
        entries, collapsed = [], []
        for item in out.split("\0"):
            if item.endswith("/"):
                path = item.rsplit("\t", 1)[-1]  # (-s: "mode oid stage<TAB>path")
                collapsed.append(path[2:] if "-v" in flags else path)  # (-v: "S path")
            elif item:
                entries.append(item)
        return entries, collapsed

    def diff_tree(self, old: str, new: str, *paths: str, only: str = "", check: bool = True) -> list[Changed]:
        """What changed between two commits' trees under `paths` (no rename guessing); `only`
        keeps those statuses (git's --diff-filter letters, e.g. "AM")."""
        args = ["diff-tree", "-r", "-z", "--no-renames", "--no-abbrev", "--raw",
                *([f"--diff-filter={only}"] if only else []), old, new]
        # git 2.39's diff-tree reads the index and expands a sparse one in full (0.5 s at 300,000
        # archived files) though it compares two trees: an index file that does not exist is empty.
        env = {"GIT_INDEX_FILE": os.path.join(self.git_dir, "strata", "no-such-index")}
        out = self.git(*args, "--", *paths, check=check, env=env) if paths else self.git(*args, check=check, env=env)
        fields = out.decode("utf-8", "surrogateescape").split("\0")
        found = []
        for meta, path in zip(fields[0::2], fields[1::2], strict=False):
            parts = meta.lstrip(":").split(" ")
            if meta.startswith(":") and len(parts) == 5:
                old_mode, new_mode, old_oid, new_oid, status = parts
                found.append(Changed(status, path, old_mode, new_mode, old_oid, new_oid))
        return found

    def commit(self, paths: list[str], subject: str, body: str) -> str:
        """Commit exactly `paths` as staged (nothing else the user staged) with no hooks at all.

        git-strata checks in-process what the hooks would; no hook may block, hang or
        re-enter it (`--no-verify` alone still runs prepare-commit-msg and post-commit).
        """
        old = self.head()
        midway = any(os.path.exists(os.path.join(self.git_dir, m)) for m in ("MERGE_HEAD", "CHERRY_PICK_HEAD",
                                                                             "REVERT_HEAD"))
        if old is not None and not midway and not self.tracked(*paths, flags=("-u",))[0]:
            # What `git commit -- PATHS` does, without the index of every file it builds (git 2.39
            # expands a sparse index for it): the paths as the working tree has them staged, then
            # HEAD's tree with exactly those paths changed. (Mid-merge or over a conflict, git's own
            # refusal below says what to do.)
            from strata_git.gitio import trees

            # (update-index, unlike add, stages a path whatever .gitignore says, as commit does)
            self.git("update-index", "--add", "--remove", "-z", "--stdin",
                     input="".join(f"{p}\0" for p in paths).encode("utf-8", "surrogateescape"))
            entries, _ = self.tracked(*paths, flags=("-s",))
            staged: dict[str, tuple[str, str] | None] = dict.fromkeys(paths)
            for item in entries:
                meta, _, path = item.partition("\t")
                if path in staged:
                    mode, oid, _ = meta.split(" ")
                    staged[path] = (mode, oid)
            base = self.tree_of(old)
            tree = trees.edit(self, base, staged)
            if tree != base:
                message = f"{subject.strip()}\n\n{body.strip()}\n"
                new = self.git("commit-tree", tree, "-p", old, input=message.encode("utf-8")).decode().strip()
                self.git("update-ref", "-m", f"commit: {subject.strip()}", "HEAD", new, old)
                return new
        self.git("-c", "core.hooksPath=/dev/null", "commit", "-q", "-m", subject, "-m", body, "--", *paths)
        return self.head() or ""

    def ignored(self, path: str) -> bool:
        """Whether .gitignore rules match `path` (a validated name: no pathspec magic in it)."""
        proc = run(["check-ignore", "-q", "--no-index", "--", path], self.root, check=False,
                   env={"GIT_LITERAL_PATHSPECS": "0"})  # check-ignore refuses literal pathspecs
        return proc.returncode == 0


def _read_head(git_dir: str) -> str | None:
    """HEAD's commit id from .git/HEAD, the loose ref or packed-refs; None when unsure (a symbolic
    ref to a symbolic ref, a reftable, an unborn branch): the caller then asks git."""
    import re

    def read(path: str) -> str:
        with open(path, encoding="utf-8") as f:
            return f.read().strip()

    try:
        value = read(os.path.join(git_dir, "HEAD"))
        if not value.startswith("ref: "):
            return value if re.fullmatch(r"[0-9a-f]{40}", value) else None
        ref = value[5:]
        common = git_dir
        if os.path.exists(os.path.join(git_dir, "commondir")):
            common = os.path.normpath(os.path.join(git_dir, read(os.path.join(git_dir, "commondir"))))
        for folder in (git_dir, common):
            try:
                value = read(os.path.join(folder, ref))
                return value if re.fullmatch(r"[0-9a-f]{40}", value) else None
            except FileNotFoundError:
                continue
        with open(os.path.join(common, "packed-refs"), encoding="utf-8") as f:
            for line in f:
                if line.rstrip("\n").endswith(" " + ref):
                    return line.split(" ", 1)[0]
    except (OSError, UnicodeDecodeError):
        return None
    return None


def require_identity(cwd: str) -> None:
    """Refuse before anything is written when git could not make a commit."""
    if run(["var", "GIT_AUTHOR_IDENT"], cwd, check=False).returncode != 0:
        raise Refused("git does not know who you are, so it cannot commit",
                      'run: git config --global user.name "Your Name"; '
                      "git config --global user.email you@example.com")


DISCOVER = spawn.DISCOVER


def discover(path: str = ".") -> Repo:
    """The repository containing `path`; NotFound outside any work tree."""
    if not os.path.isdir(path):
        raise NotFound(f"{path}: no such folder", "give the folder of a memory repository")
    return discovered(path, run(DISCOVER, path, check=False))


def discovered(path: str, proc: subprocess.CompletedProcess[bytes]) -> Repo:
    """discover()'s answer from git's answer to DISCOVER asked from `path` (here or by the caller)."""
    if proc.returncode != 0:
        raise NotFound(f"{os.path.abspath(path)} is not inside a git repository",
                       "run `git strata init` to make it a memory repository")
    lines = proc.stdout.decode().split("\n")
    if len(lines) == 3:  # "root\ngit dir\n": the usual case, one git process
        return Repo(root=lines[0], git_dir=lines[1])
    # A newline in a path: each asked for alone, its one trailing newline taken off.
    root, git_dir = (run(["rev-parse", flag], path).stdout.decode()[:-1]
                     for flag in ("--show-toplevel", "--absolute-git-dir"))
    return Repo(root=root, git_dir=git_dir)
