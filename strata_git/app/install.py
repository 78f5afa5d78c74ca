"""`git strata agent install|uninstall HARNESS`: the harness's configuration files edited as a
careful person would edit them (agentconfig says what in them is git-strata's and how it is
merged; everything else is left byte for byte).

Writing: a file is written whole to a temporary file beside it (beside its target, for a
symlink, which stays a symlink) with the file's mode and, where allowed, its owner; fsynced, then
renamed over it. Just before the rename the file is read again: if another program (a running
harness) wrote it since it was read, nothing is written to it. A read-only file is refused. All
files are planned (and every refusal made) before the first is written.

The originals state (`originals_path`, mode 0600: it holds copies of the files) keeps for each
file the text install first found, a hash of what it wrote and the containers it created.
Uninstall gives a file back byte for byte while it still hashes as install left it; otherwise it
removes only git-strata's entries and the containers install created once they are empty. A file
install created is deleted once nothing else is in it, and a folder it created once it is empty.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shlex
import shutil
import stat
import tomllib
from dataclasses import dataclass

from strata_git.app import agentconfig, where
from strata_git.app.agents import EVENTS, HARNESSES, SERVER
from strata_git.core.entries import shown
from strata_git.errors import BadConfig, Refused

STATE_VERSION = 2


@dataclass(frozen=True)
class Record:
    """What the originals state keeps for one file."""

    before: str | None  # the file as install first found it (None: there was none)
    after: str | None  # sha256 of what install last wrote (None: it was edited before that: no byte-for-byte return)
    created: frozenset[str] | None  # the containers install added (None: not known)


@dataclass
class State:
    files: dict[str, Record]
    folders: list[str]  # the folders install created


@dataclass(frozen=True)
class FileChange:
    path: str
    before: bytes | None  # None: there is no such file
    after: bytes | None  # None: the file is deleted
    record: Record | None  # what the state keeps for the file once the change is written (None: nothing)


def targets(harness: str, scope: str, project: str, home: str) -> list[tuple[str, agentconfig.Editor]]:
    """The files a harness reads at a scope (hooks first, then the MCP server), and their editors."""
    if harness == "claude-code":
        base = home if scope == "user" else project
        mcp = os.path.join(home, ".claude.json") if scope == "user" else os.path.join(project, ".mcp.json")
        return [(os.path.join(base, ".claude", "settings.json"), agentconfig.HOOKS), (mcp, agentconfig.SERVERS_JSON)]
    base = os.path.join(home if scope == "user" else project, ".codex")
    return [(os.path.join(base, "hooks.json"), agentconfig.HOOKS),
            (os.path.join(base, "config.toml"), agentconfig.SERVERS_TOML)]


def install(harness: str, scope: str, memory: str | None, project: str, home: str, dry_run: bool = False,
            events: tuple[str, ...] | None = None) -> list[FileChange]:
    """Add (or bring up to date) git-strata's hooks for `events` (default: all the harness has; its
    other hooks go) and MCP server for `memory` (None: the portable entries that name no path); the
    files changed."""
    try:
        (memory or "").encode("utf-8")
    except UnicodeEncodeError:
        raise BadConfig("the memory repository's path is not valid UTF-8, which JSON and TOML cannot hold; "
                        "nothing was changed", "move or link the repository to a UTF-8 path") from None
    state = load_state(home)
    changes = [c for path, editor in targets(harness, scope, project, home)
               if (c := _install(path, editor, harness, memory, events, state.files.get(path)))]
    if not dry_run:
        apply(changes, state, home)
    return changes


def portable(memory: str, project: str, dry_run: bool = False) -> list[str]:
    """Make this machine's setting find `memory` from `project` (what portable entries need): set
    `strata.memory` in ~/.gitconfig when nothing names a memory yet; refused when something else is
    named. What was done, for the user (nothing when all was in place)."""
    found = where.memory(None, project)
    if found.path is not None and os.path.realpath(found.path) == os.path.realpath(memory):
        return []
    if found.path is not None:
        raise Refused(f"{found.source} names {found.path}, not {memory}: the project's hooks would use that one; "
                      "nothing was changed",
                      f"switch with `git config --global {where.SETTING} {memory}`, or install with "
                      f"--memory {found.path}")
    if not dry_run:
        where.remember(memory)
    notes = [f"{'would set' if dry_run else 'set'} `{where.SETTING} = {memory}` in your global git config: "
             "the project's files name no path, and each machine's own setting finds its memory"]
    if not shutil.which(agentconfig.PORTABLE):
        notes.append(f"{agentconfig.PORTABLE} is not on PATH here: the project's hooks call it by name "
                     "(install it with pipx, or put its folder on PATH)")
    return notes


@dataclass(frozen=True)
class Installed:
    """git-strata's entries found in one harness's files at one scope."""

    harness: str
    scope: str
    hooks: str  # the hooks file
    events: tuple[str, ...]  # the events with a hook of ours
    memories: tuple[str | None, ...]  # the memories those hooks name (None: portable), without repeats
    server: str | None  # the file holding our MCP server, None: none
    problems: tuple[str, ...]  # files that could not be read

    def as_dict(self) -> dict:
        return {"harness": self.harness, "scope": self.scope, "hooks_file": self.hooks, "events": list(self.events),
                "memories": list(self.memories), "server_file": self.server, "problems": list(self.problems)}


@dataclass(frozen=True)
class AgentStatus:
    installed: list[Installed]
    memory: str | None  # what portable entries find from the project, None: nothing
    source: str
    on_path: str | None  # the git-strata found on PATH by name

    def as_dict(self) -> dict:
        return {"installed": [i.as_dict() for i in self.installed], "memory": self.memory, "source": self.source,
                "on_path": self.on_path, "missing": None if self.memory else where.MISSING}


def status(harness: str | None, project: str, home: str) -> AgentStatus:
    """Where git-strata's entries are, for one harness or both, at both scopes (read only)."""
    found = []
    for h in (harness,) if harness else HARNESSES:
        for scope in ("project", "user"):
            (hooks, _), (servers, _) = targets(h, scope, project, home)
            found.append(_installed(h, scope, hooks, servers))
    memory = where.memory(None, project)
    return AgentStatus(found, memory.path, memory.source, shutil.which(agentconfig.PORTABLE))


def _installed(harness: str, scope: str, hooks: str, servers: str) -> Installed:
    events: dict[str, None] = {}  # (dicts keep the order met, without repeats)
    memories: dict[str | None, None] = {}
    problems, server = [], None
    try:
        for event, cmd in _commands(_parsed(hooks), harness):
            words = shlex.split(cmd)
            events[event] = memories[words[7] if len(words) == 8 else None] = None
    except (OSError, ValueError) as e:
        problems.append(f"{shown(hooks)}: {e}")
    try:
        data = _parsed(servers)
        table = data.get("mcp_servers" if servers.endswith(".toml") else "mcpServers") if isinstance(data, dict) \
            else None
        server = servers if isinstance(table, dict) and SERVER in table else None
    except (OSError, ValueError) as e:
        problems.append(f"{shown(servers)}: {e}")
    return Installed(harness, scope, hooks, tuple(events), tuple(memories), server, tuple(problems))


def _commands(data: object, harness: str) -> list[tuple[str, str]]:
    """(event, command) of each of git-strata's hook entries in a hooks file's values."""
    groups = data.get("hooks") if isinstance(data, dict) else None
    if not isinstance(groups, dict):
        return []
    found = []
    for event in EVENTS[harness]:
        listed = groups.get(event)
        for group in listed if isinstance(listed, list) else []:
            entries = group.get("hooks") if isinstance(group, dict) else None
            for entry in entries if isinstance(entries, list) else []:
                cmd = entry.get("command") if isinstance(entry, dict) else None
                if isinstance(cmd, str) and agentconfig.is_ours(cmd, event, harness):
                    found.append((event, cmd))
    return found


def _parsed(path: str) -> object:
    """A config file's values ({} when there is none); ValueError when unreadable."""
    raw = _read(path)
    if raw is None or not raw.strip():
        return {}
    text = raw.decode("utf-8").lstrip("\ufeff")
    return tomllib.loads(text) if path.endswith(".toml") else json.loads(text)


def uninstall(harness: str, scope: str, project: str, home: str, dry_run: bool = False) -> list[FileChange]:
    """Remove git-strata's hooks and MCP server, whatever memory they named; the files changed."""
    state = load_state(home)
    files = targets(harness, scope, project, home)
    changes = [c for path, editor in files if (c := _uninstall(path, editor, harness, state.files.get(path)))]
    if not dry_run:
        apply(changes, state, home, forget=[path for path, _ in files])
    return changes


def _install(path: str, editor: agentconfig.Editor, harness: str, memory: str | None,
             events: tuple[str, ...] | None, rec: Record | None) -> FileChange | None:
    raw = _read(path)
    text = _text(path, raw)
    new, made = editor.add(path, text, harness, memory, events)
    after = new.encode("utf-8")
    if after == raw:
        return None
    _writable(path, raw)
    if rec is None or raw is None:
        return FileChange(path, raw, after, Record(None if raw is None else text, _sha(after), frozenset(made)))
    created = None if rec.created is None else rec.created | made
    return FileChange(path, raw, after, Record(rec.before, _sha(after) if rec.after == _sha(raw) else None, created))


def _uninstall(path: str, editor: agentconfig.Editor, harness: str, rec: Record | None) -> FileChange | None:
    raw = _read(path)
    if raw is None:
        return None
    if rec is not None and rec.after == _sha(raw):  # as install left it: back to what it was
        after = None if rec.before is None else rec.before.encode("utf-8")
    else:
        new = editor.remove(path, _text(path, raw), harness, None if rec is None else rec.created)
        gone = rec is not None and rec.before is None and new.strip() in ("", "{}")  # install made it; it is empty
        after = None if gone else new.encode("utf-8")
    if after == raw:
        return None
    _writable(path, raw)
    return FileChange(path, raw, after, None)


def apply(changes: list[FileChange], state: State, home: str, forget: list[str] | None = None) -> None:
    """Write each change and record it in the state; then forget the records of the files in
    `forget` and remove the folders install created for them, if empty."""
    for c in changes:
        if c.after is None:
            _delete(c.path, c.before)
        else:
            state.folders += _make_folders(os.path.dirname(c.path))
            _write(c.path, c.after, c.before)
        if c.record is None:
            state.files.pop(c.path, None)
        else:
            state.files[c.path] = c.record
        save_state(home, state)
    forget = forget or []
    for path in forget:
        state.files.pop(path, None)
    for folder in sorted(state.folders, key=len, reverse=True):
        if any(os.path.dirname(path) == folder or path.startswith(folder + os.sep) for path in forget):
            with contextlib.suppress(OSError):  # not empty: something else lives there now
                os.rmdir(folder)
            state.folders.remove(folder)
    save_state(home, state)


def diff(changes: list[FileChange]) -> str:
    import difflib

    out: list[str] = []
    for c in changes:
        before = (c.before or b"").decode("utf-8", "replace").splitlines(keepends=True)
        after = (c.after or b"").decode("utf-8", "replace").splitlines(keepends=True)
        out += difflib.unified_diff(before, after, f"a/{c.path}", f"b/{c.path}")
    return "".join(out)


# -- reading and writing files -------------------------------------------------------------------------

def _read(path: str) -> bytes | None:
    try:
        with open(path, "rb") as f:
            return f.read()
    except FileNotFoundError:
        if os.path.islink(path):
            raise BadConfig(f"{shown(path)} is a symbolic link to a file that does not exist; nothing was changed",
                            "create the file it points to (or remove the link), then run the command again") from None
        return None


def _text(path: str, raw: bytes | None) -> str:
    try:
        return "" if raw is None else raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise BadConfig(f"{shown(path)} is not UTF-8 text (byte {e.start}); nothing was changed",
                        agentconfig.FIX) from None


def _writable(path: str, raw: bytes | None) -> None:
    """Refuse a read-only file (one nobody may write counts, even for root): someone made it so."""
    if raw is not None and (not os.access(path, os.W_OK) or not stat.S_IMODE(os.stat(path).st_mode) & 0o222):
        raise Refused(f"{shown(path)} is read-only; nothing was changed",
                      "make it writable (chmod u+w) if git-strata may edit it, then run the command again")


def _sha(data: bytes | None) -> str | None:
    return None if data is None else hashlib.sha256(data).hexdigest()


def _unchanged(path: str, expected: bytes | None) -> None:
    if _read(path) != expected:
        raise Refused(f"{shown(path)} changed while git-strata was editing it (is the harness running?); "
                      "nothing was written to it", "run the command again")


def _write(path: str, data: bytes, expected: bytes | None) -> None:
    """Replace the file at `path` (through a symlink: its target) with `data`, atomically, keeping
    its mode and owner; refused if it no longer holds `expected`."""
    target = os.path.realpath(path)
    folder, name = os.path.split(target)
    try:
        old = os.stat(target)
    except FileNotFoundError:
        old = None
    tmp = os.path.join(folder, f".{name}.git-strata-{os.getpid()}-{os.urandom(4).hex()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600 if old else 0o666)
    try:
        with open(fd, "wb") as f:
            if old is not None:
                with contextlib.suppress(OSError):  # only root (or a member of the group) may give a file away
                    os.fchown(f.fileno(), old.st_uid, old.st_gid)
                os.fchmod(f.fileno(), stat.S_IMODE(old.st_mode))
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        _unchanged(path, expected)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    _sync(folder)


def _delete(path: str, expected: bytes | None) -> None:
    _unchanged(path, expected)
    os.unlink(path)
    _sync(os.path.dirname(path))


def _sync(folder: str) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _make_folders(folder: str) -> list[str]:
    """Create `folder` and what is missing above it; the folders created."""
    missing, up = [], folder
    while not os.path.lexists(up):
        missing.append(up)
        up = os.path.dirname(up)
    os.makedirs(folder, exist_ok=True)
    return missing


# -- the originals state ----------------------------------------------------------------------------------

def originals_path(home: str) -> str:
    state = os.environ.get("XDG_STATE_HOME") or os.path.join(home, ".local", "state")
    return os.path.join(state, "git-strata", "agent-originals.json")


def load_state(home: str) -> State:
    """The state as saved (an unreadable one counts as empty: uninstall then removes only what is
    git-strata's, and keeps files and folders)."""
    try:
        with open(originals_path(home), encoding="utf-8") as f:
            data = json.load(f)
    except (OSError, ValueError):
        return State({}, [])
    if not isinstance(data, dict):
        return State({}, [])
    if data.get("version") != STATE_VERSION:  # the first format: {path: text before install or null, "folder/": null}
        return State({p: Record(v, None, None) for p, v in data.items() if not p.endswith("/") and _optional_str(v)},
                     [p[:-1] for p in data if p.endswith("/")])
    files = {p: rec for p, r in _dict(data.get("files")).items() if (rec := _record(r))}
    folders = data.get("folders")
    return State(files, [f for f in folders if isinstance(f, str)] if isinstance(folders, list) else [])


def save_state(home: str, state: State) -> None:
    path = originals_path(home)
    if not state.files and not state.folders:  # nothing left to give back: no trace left either
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)
        with contextlib.suppress(OSError):
            os.rmdir(os.path.dirname(path))
        return
    os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
    files = {p: {"before": r.before, "after": r.after, "created": None if r.created is None else sorted(r.created)}
             for p, r in sorted(state.files.items())}
    data = {"version": STATE_VERSION, "folders": sorted(state.folders), "files": files}
    tmp = f"{path}.{os.getpid()}.tmp"
    with open(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w", encoding="utf-8") as f:
        json.dump(data, f, indent=1)
    os.replace(tmp, path)


def _record(data: object) -> Record | None:
    if not isinstance(data, dict) or not _optional_str(data.get("before")) or not _optional_str(data.get("after")):
        return None
    created = data.get("created")
    if created is not None and not (isinstance(created, list) and all(isinstance(n, str) for n in created)):
        return None
    return Record(data.get("before"), data.get("after"), None if created is None else frozenset(created))


def _optional_str(value: object) -> bool:
    return value is None or isinstance(value, str)


def _dict(value: object) -> dict:
    return value if isinstance(value, dict) else {}
