"""What this clone knows of each captured session beyond its commits: how far the last capture
read (past a stretch of blank or junk lines no commit covers) and the problem that stopped the
last capture, if one did. One small JSON file a session under `.git/strata/captures/`, never
committed or synced: another clone reads the transcript again from its last commit, which is
only slower. Read as untrusted: a file that does not parse is ignored.
"""

from __future__ import annotations

import json
import os
import time
from typing import NamedTuple

from strata_git.core.entries import shown
from strata_git.gitio.git import Repo

FOLDER = "captures"
KEEP = 1000  # session files kept; the oldest go first
MAX_IGNORED = 5  # untrusted watermarks kept in a session's state for `status`


class Mark(NamedTuple):
    """Where a capture of a session stopped reading a transcript."""

    line: int  # the last line read (0: none)
    offset: int = -1  # the byte just after it (-1: not known: lines are counted from the top)
    head: str = ""  # hash of the transcript's first bytes (up to `offset`) when it was read
    tail: str = ""  # hash of the bytes just before `offset`


NONE = Mark(0)


class State(NamedTuple):
    session: str
    transcript: str  # the file's name, for the reader of `status`
    committed: int  # the last line a commit of the session covered when this was written
    mark: Mark  # how far this clone read past it
    problem: str  # why the last capture made no progress ("" when it did)
    when: str
    ignored: tuple[str, ...] = ()  # capture watermarks in history not trusted (made on another machine)


def _folder(repo: Repo) -> str:
    return os.path.join(repo.state_dir(), FOLDER)


def load(repo: Repo, session: str) -> State | None:
    try:
        with open(os.path.join(_folder(repo), f"{session}.json"), encoding="utf-8") as f:
            data = json.load(f)
        mark = Mark(*data["mark"])
        fields = (data["transcript"], data["problem"], data["when"], mark.head, mark.tail)
        if all(isinstance(v, str) for v in fields) and all(type(v) is int and 0 <= v < 1 << 50
                                                           for v in (data["committed"], mark.line)) \
                and type(mark.offset) is int and mark.offset >= -1:
            ignored = data.get("ignored", [])
            ignored = tuple(i for i in ignored if isinstance(i, str))[:MAX_IGNORED] if isinstance(ignored, list) else ()
            return State(session, data["transcript"], data["committed"], mark, data["problem"], data["when"], ignored)
    except (OSError, ValueError, TypeError, KeyError):
        pass
    return None


def save(repo: Repo, state: State) -> None:
    """Written whole (temporary file, then rename); a failure to write is not the capture's."""
    folder = _folder(repo)
    record = {"transcript": state.transcript, "committed": state.committed, "mark": list(state.mark),
              "problem": state.problem, "ignored": list(state.ignored[:MAX_IGNORED]),
              "when": state.when or time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    try:
        os.makedirs(folder, exist_ok=True)
        path = os.path.join(folder, f"{state.session}.json")
        tmp = f"{path}.{os.getpid()}.tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(record, f)
        os.replace(tmp, path)
        _prune(folder)
    except OSError:
        pass


def _prune(folder: str) -> None:
    entries = [e for e in os.scandir(folder) if e.name.endswith(".json")]
    if len(entries) > KEEP:
        for e in sorted(entries, key=lambda e: e.stat().st_mtime)[: len(entries) - KEEP]:
            os.unlink(e.path)


def problems(repo: Repo) -> list[str]:
    """One line for each session whose last capture made no progress, for `status`."""
    folder = _folder(repo)
    try:
        names = sorted(n for n in os.listdir(folder) if n.endswith(".json"))
    except OSError:
        return []
    out = []
    for name in names:
        state = load(repo, name.removesuffix(".json"))
        if state and state.problem:
            out.append(shown(f"capture of session {state.session} ({state.transcript}) made no progress since "
                             f"{state.when}: {state.problem}"))
        out += [shown(f"capture of session {state.session}: {line}") for line in state.ignored] if state else []
    return out
