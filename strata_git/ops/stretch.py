"""The stretch of a transcript a capture takes: the complete lines after where the last capture
of the session stopped, read into the stenographer's notes without holding any lock.

- **Where to start.** A capture's commit records the last line it covered, the byte just after
  it and two hashes: of the transcript's first bytes and of the bytes just before that point. The
  next capture seeks straight there when both still match; when the file is shorter or either
  hash differs, the transcript was truncated or replaced, and it is read from its first line
  (capture then writes no memory that already exists). A record without the bytes (an older
  capture's) is resumed by counting lines.
- **No line stops it.** A line that is blank is passed over; one that is over MAX_LINE bytes, not
  JSON, nested too deeply, or of no known shape is counted and skipped, and the first few are
  kept, escaped and with secrets redacted, for the report. A last line without its newline is
  still being written and is left for the next capture.
- **Bounded.** A stretch ends after PART_BYTES of transcript or PART_STATEMENTS statements; the
  rest is the next part's.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable
from typing import BinaryIO, NamedTuple

from strata_git.core import secrets, transcript
from strata_git.core.entries import shown
from strata_git.store.captures import Mark

MAX_LINE = 8 * 1024 * 1024
PART_BYTES = 32 * 1024 * 1024
PART_STATEMENTS = 1000
IDENTITY = 4096  # bytes hashed at the start of the file and before the resume point
SHOWN = 5  # skipped lines quoted in a report
EXCERPT = 80
SESSION_LINES = 20  # opening lines looked through for the session's id


class Skipped(NamedTuple):
    line: int
    why: str
    excerpt: str  # the line's start, escaped, secrets redacted


class Stretch(NamedTuple):
    session: str
    fmt: str
    first: int  # the first line that held turns (0: none)
    last: int  # the last complete line read
    notes: transcript.Notes
    skipped: int
    shown: list[Skipped]
    stamp: str  # the first timestamp seen
    span: tuple[int, int]  # byte offsets of the lines from `first` to `last`
    more: bool  # the stretch ended at a part's size: more follows
    rewritten: bool  # the transcript was truncated or replaced since the last capture
    end: Mark  # where this stretch ends (the next capture's start)


def identity(f: BinaryIO, offset: int) -> tuple[str, str]:
    """(head, tail): hashes of the file's first bytes up to `offset` and of the bytes before it."""
    f.seek(0)
    head = f.read(min(IDENTITY, offset))
    f.seek(max(0, offset - IDENTITY))
    tail = f.read(min(IDENTITY, offset))
    return _hash(head), _hash(tail)


def _hash(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:16]


def session_of(path: str, session: str | None, harness_id: Callable[[str], str]) -> str:
    """The session: `session`, else the first one the opening lines name (a Claude Code transcript
    may open with lines that name none), else the file's name without `.jsonl`."""
    named = None
    with open(path, "rb") as f:
        for _ in range(SESSION_LINES):
            raw = f.readline(MAX_LINE + 1)
            if not raw.endswith(b"\n"):
                break
            try:
                obj = json.loads(raw)
            except (ValueError, RecursionError):
                continue
            named = transcript.session_of(obj) if isinstance(obj, dict) else None
            if named:
                break
    base = os.path.basename(path)
    return harness_id(session or named or (base[: -len(".jsonl")] if base.endswith(".jsonl") else base))


def read(path: str, fmt: str, session: str, mark: Mark) -> Stretch:
    """The stretch after `mark` (see the module's rules)."""
    notes = transcript.Notes()
    skipped: list[Skipped] = []
    count, first, last, stamp, more = 0, 0, mark.line, "", False
    with open(path, "rb") as f:
        number, offset, rewritten = _start(f, mark)
        last = number
        begin = end = offset
        f.seek(offset)
        while True:
            raw: bytes | None = f.readline(MAX_LINE + 1)
            if not raw:
                break
            if len(raw) > MAX_LINE and not raw.endswith(b"\n"):
                size = len(raw) + _past_line(f)
                raw = None
                if not _ended(f):
                    break  # an oversized last line still being written
            elif not raw.endswith(b"\n"):
                break  # still being written: the next capture takes it
            else:
                size = len(raw)
            if first and (end - begin >= PART_BYTES or len(notes.statements) >= PART_STATEMENTS):
                more = True
                break
            number += 1
            line_start, end = end, end + size
            last = number
            if raw is not None and not raw.strip():
                continue
            obj, why = _parsed(raw)
            if obj is not None:
                if fmt == "auto":
                    fmt = transcript.detect(obj)
                stamp = stamp or (obj["timestamp"] if isinstance(obj.get("timestamp"), str) else "")
                found, why = _turns(obj, fmt, number)
            if why:
                count += 1
                if len(skipped) < SHOWN:
                    skipped.append(Skipped(number, why, _excerpt(raw)))
                continue
            if not first:
                first, begin = number, line_start
            for turn in found:
                notes.add(turn)
        head, tail = identity(f, end)
    return Stretch(session, fmt if fmt != "auto" else "claude-code", first, last, notes, count, skipped, stamp,
                   (begin, end), more, rewritten, Mark(last, end, head, tail))


def _start(f: BinaryIO, mark: Mark) -> tuple[int, int, bool]:
    """(line number, byte offset, rewritten) where reading starts after `mark`."""
    if mark.line == 0:
        return 0, 0, False
    size = os.fstat(f.fileno()).st_size
    if mark.offset >= 0:
        if size >= mark.offset and identity(f, mark.offset) == (mark.head, mark.tail):
            return mark.line, mark.offset, False
        return 0, 0, True
    f.seek(0)  # an older record: count lines
    offset = 0
    for _ in range(mark.line):
        raw = f.readline(MAX_LINE + 1)
        while raw and not raw.endswith(b"\n") and len(raw) > MAX_LINE:
            offset += len(raw)
            raw = f.readline(MAX_LINE + 1)
        if not raw.endswith(b"\n"):
            return 0, 0, True  # fewer lines than were captured: truncated
        offset += len(raw)
    return mark.line, offset, False


def _past_line(f: BinaryIO) -> int:
    """Bytes read past the rest of an oversized line (to its newline or the end of the file)."""
    size = 0
    while True:
        raw = f.readline(MAX_LINE)
        size += len(raw)
        if not raw or raw.endswith(b"\n"):
            return size


def _ended(f: BinaryIO) -> bool:
    """Whether the byte just read was a newline (the oversized line is complete)."""
    at = f.tell()
    if at == 0:
        return False
    f.seek(at - 1)
    complete = f.read(1) == b"\n"
    f.seek(at)
    return complete


def _parsed(raw: bytes | None) -> tuple[dict | None, str]:
    """(the line's object, or None with why it cannot be read)."""
    if raw is None:
        return None, f"longer than {MAX_LINE >> 20} MiB"
    try:
        obj = json.loads(raw)
    except RecursionError:
        return None, "nested too deeply"
    except ValueError:
        return None, "not JSON"
    return (obj, "") if isinstance(obj, dict) else (None, "not a JSON object")


def _turns(obj: dict, fmt: str, number: int) -> tuple[list[transcript.Turn], str]:
    try:
        found = transcript.turns(obj, fmt if fmt != "auto" else "claude-code", number)
    except RecursionError:  # a tool call's arguments, a JSON string inside the line, nested too deeply
        return [], "nested too deeply"
    return (found, "") if found is not None else ([], "not a line of a known kind")


def _excerpt(raw: bytes | None) -> str:
    """The line's start as the report quotes it: secrets redacted (in the whole first piece, so a
    secret is not cut short of its rule), then escaped."""
    if raw is None:
        return ""
    text = secrets.redact(raw[: secrets.PIECE * 4].decode("utf-8", "replace")[: secrets.PIECE], "[redacted: {rule}]")
    return transcript.safe(shown(text.rstrip("\n")[:EXCERPT]))
