"""`git strata capture TRANSCRIPT`: the stenographer. It reads an agent's transcript from where
the last capture of that session stopped and commits what it finds as typed memories, in one
commit, so the agent does not have to remember to.

- **Idempotent.** The watermark is history itself: each capture's commit carries the session id
  (`Strata-Capture-Session`) and where it stopped in the transcript (`Strata-Capture`: the lines
  it covered, the byte after them and hashes of the file's identity, see ops/stretch.py). The
  transcript is read without a lock; the commit is made under the repository lock after checking
  that no other capture moved the watermark meanwhile (else the stretch is read again), so
  running it twice, from two hooks at once, or again after a kill never duplicates or loses a
  memory. A stretch that held nothing to capture (blank or junk lines) is remembered in this
  clone's own state (store/captures.py), so it is not read again.
- **No line stops it.** A line that cannot be read is counted, quoted (escaped, redacted) in the
  report and skipped; text that a title or a commit cannot hold (control characters, halves of
  a surrogate pair) is replaced, never refused. A capture that fails records why in this
  clone's state, which `status` lists until a capture of that session succeeds.
- **Bounded.** A stretch past PART_BYTES of transcript or PART_STATEMENTS statements ends a part: a
  long transcript is captured in several commits, each with its own line range.
- **Kills.** Files a capture wrote before it was killed short of its commit are not committed;
  the next capture of the same stretch (its memories name the same first line) takes them over
  by name, even if the transcript has grown since, rather than writing copies beside them.
- **No duplicates.** A statement that a captured memory already holds word for word (said again,
  or read again from a transcript that was truncated or replaced) is not written again.
- **No secrets in history.** Everything a capture writes, names, titles, bodies, the session id and
  the commit's trailers, goes through one redaction pass with the rules the pre-commit hook uses
  (core/secrets.py): a secret is replaced by `[redacted: RULE]`, and a line the rules still flag
  is replaced whole. The count is reported and recorded.
"""

from __future__ import annotations

import datetime
import hashlib
import itertools
import json
import os
import re
from collections.abc import Callable
from typing import NamedTuple

from strata_git.core import contract, memory, names, secrets, transcript
from strata_git.core.config import Config
from strata_git.core.entries import shown
from strata_git.errors import BadName, NotFound, Refused, StrataError
from strata_git.gitio import safefs
from strata_git.gitio.git import Repo, run
from strata_git.ops import locate, stretch, txn
from strata_git.store import access, captures
from strata_git.store.captures import Mark

PART_BYTES = stretch.PART_BYTES
PART_STATEMENTS = stretch.PART_STATEMENTS
COMMAND_TIMEOUT = 20  # seconds for `strata.captureCommand`: below the 30 s other writers wait for the lock
MAX_EXCERPT = 8 * 1024 * 1024  # a longer stretch of transcript is not handed to the command
FOLDERS = {"decision": "decisions", "rejection": "rejections", "lesson": "lessons", "task": "tasks"}
_SESSION = re.compile(r"[A-Za-z0-9._-]{1,100}")
REDACTED = "[redacted: {rule}]"
WATERMARKS = 100  # capture commits of one session looked through for this machine's newest


class Report(NamedTuple):
    session: str
    harness: str
    lines: tuple[int, int] | None  # the transcript lines this capture covered; None: nothing new
    memories: list[str]
    skipped: int  # corrupt, oversized or unknown lines
    redacted: int
    commit: str | None
    summarizer: str = ""  # what `strata.captureCommand` did ("" when none is set: the rules alone)
    commits: list[str] | None = None  # a capture in parts: every part's commit (`commit` is the last)
    skipped_lines: list[stretch.Skipped] = []  # the first few skipped, quoted escaped
    rewritten: bool = False  # the transcript was truncated or replaced: read again from its start
    duplicates: int = 0  # statements not written again: a captured memory already holds them

    def as_dict(self) -> dict:
        return {**self._asdict(), "lines": list(self.lines) if self.lines else None,
                "skipped_lines": [s._asdict() for s in self.skipped_lines]}


def capture(repo: Repo, cfg: Config, path: str, fmt: str = "auto", session: str | None = None,
            agent: str | None = None) -> Report:
    """Capture what is new in the transcript: in one commit, or, past PART_BYTES of transcript or
    PART_STATEMENTS statements, in one commit per such part (the lock is let go between parts, and
    a kill between them loses nothing: the next capture starts after the last part committed).
    A failure is recorded in this clone's capture state (shown by `status`) before it is raised."""
    if fmt not in ("auto", *transcript.FORMATS):
        raise Refused(f"unknown transcript format {fmt!r}", f"use one of: auto, {', '.join(transcript.FORMATS)}")
    if not os.path.isfile(path):
        raise NotFound(f"{path}: no such transcript", "give the path the harness passed as transcript_path")
    sid = stretch.session_of(path, session, _session_id)
    try:
        parts = _parts(repo, cfg, path, fmt, sid, agent)
    except (StrataError, OSError) as e:
        _failed(repo, sid, path, str(e))
        raise
    except Exception as e:
        _failed(repo, sid, path, f"unexpected error: {type(e).__name__}")
        raise
    if len(parts) == 1:
        return parts[0]
    done = [p for p in parts if p.lines]
    spans = [p.lines for p in done if p.lines]  # done's (first, last) lines
    said = "; ".join(sorted({p.summarizer for p in parts} - {""}))
    return Report(parts[0].session, parts[0].harness, (spans[0][0], spans[-1][1]),
                  [m for p in parts for m in p.memories], sum(p.skipped for p in parts),
                  sum(p.redacted for p in parts), done[-1].commit, said, [p.commit for p in done if p.commit],
                  [s for p in parts for s in p.skipped_lines][: stretch.SHOWN], any(p.rewritten for p in parts),
                  sum(p.duplicates for p in parts))


def _parts(repo: Repo, cfg: Config, path: str, fmt: str, sid: str, agent: str | None) -> list[Report]:
    parts: list[Report] = []
    more = True
    while more:
        report, more = _part(repo, cfg, path, fmt, sid, agent)
        before = parts[-1].lines if parts else None  # a part followed by more covered lines
        if more and parts and report.lines and before is not None and report.lines[0] <= before[1]:
            raise Refused(f"capture of {path} did not move past line {report.lines[0]}",
                          "see `git log --grep Strata-Capture`; the last capture's trailer is not readable")
        parts.append(report)
    return parts


def _failed(repo: Repo, sid: str, path: str, why: str) -> None:
    committed, ignored = _watermark(repo, sid)
    captures.save(repo, captures.State(sid, _redacted(os.path.basename(path)), committed.line,
                                       committed, _redacted(why), "", tuple(ignored)))


def _resume(repo: Repo, sid: str) -> tuple[Mark, Mark, tuple[str, ...]]:
    """(the last commit's mark, where to resume, watermarks not trusted): this clone's own state
    when it read further past that same commit, else the commit's mark."""
    committed, ignored = _watermark(repo, sid)
    state = captures.load(repo, sid)
    if state and state.committed == committed.line and state.mark.line >= committed.line and state.mark.offset >= 0:
        return committed, state.mark, tuple(ignored)
    return committed, committed, tuple(ignored)


def _part(repo: Repo, cfg: Config, path: str, fmt: str, sid: str, agent: str | None) -> tuple[Report, bool]:
    committed, mark, ignored = _resume(repo, sid)
    s = stretch.read(path, fmt, sid, mark)  # no lock held while the transcript is read
    if s.first:
        with txn.locked(repo):
            now = _resume(repo, sid)
            if now[:2] != (committed, mark):  # another capture committed meanwhile: read on from its mark
                committed, mark, ignored = now
                s = stretch.read(path, fmt, sid, mark)
            if s.first:
                return _commit(repo, cfg, path, s, agent, committed, ignored), s.more
    captures.save(repo, captures.State(sid, _redacted(os.path.basename(path)), committed.line, s.end, "", "",
                                       ignored))
    return Report(sid, s.fmt, None, [], s.skipped, 0, None, skipped_lines=s.shown, rewritten=s.rewritten), False


def _commit(repo: Repo, cfg: Config, path: str, s: stretch.Stretch, agent: str | None, committed: Mark,
            ignored: tuple[str, ...] = ()) -> Report:
    """Write and commit the stretch's memories (under the repository lock)."""
    txn.clear_killed(repo, contract.CAPTURE_COMMITTING)  # a capture killed inside `git commit`
    sid, harness, first, last = s.session, s.fmt, s.first, s.last
    d = s.notes.digest()
    said, summarizer = _summarized(repo, path, s.span)
    if said is not None:
        d = d._replace(statements=said)
    drafts, redacted = _drafts(d, sid, harness, (first, last), s.stamp)
    known = locate.known(repo)
    writes: dict[str, bytes] = {}
    leftovers: set[str] = set()
    taken = {names.collision_key(n) for held in known[0].values() for _, n in held}
    mark = _where(harness, sid, first).encode()
    duplicates = 0
    for draft in drafts:
        base, content = draft.base, draft.content
        if draft.statement and _already(repo, base, draft.statement, taken):
            duplicates += 1
            continue
        if len(content) > cfg.max_memory_bytes:
            content = content[: cfg.max_memory_bytes - 64].decode("utf-8", "ignore").encode() + b"\n[cut]\n"
        name, left = _free(base, taken, lambda p: _leftover(repo, p, mark, writes))
        if left:  # written by a capture of this same stretch killed before its commit: taken over
            leftovers.add(name)
        writes[name] = content
    # A new name is held by no file, tracked or not (locate.known lists both): only a .gitignore
    # rule can stand in the way, asked of git once for all of them.
    fresh = [p for p in writes if p not in leftovers]
    matched = _gitignored(repo, fresh)
    if matched:
        raise Refused(f"capture would write {matched[0]}, which a .gitignore rule matches; nothing was changed",
                      f"see `git check-ignore -v {matched[0]}`; remove the rule")
    repo.require_identity()

    def stage() -> None:
        for folder in sorted({p.rpartition("/")[0] for p in writes}):
            safefs.clear_dead_temps_in(repo.root, folder)  # what a killed capture left mid-write
        for p, content in writes.items():
            safefs.write(repo.root, p, content, sweep=False)  # new names: no killed writer of theirs
        repo.git("add", "--", *writes)

    end = s.end
    shown_name = _redacted(os.path.basename(path))
    record = {"harness": harness, "transcript": shown_name, "lines": [first, last],
              "redacted": redacted, "bytes": end.offset, "head": end.head, "tail": end.tail}
    trailers = {contract.ACTION: "capture", contract.VIA: "capture", contract.CAPTURE_SESSION: sid,
                contract.CAPTURE: contract.trailer_value(record)}
    count = f"{len(writes)} memor{'y' if len(writes) == 1 else 'ies'}"
    subject = f"strata: capture {count} from {harness} session {sid[:12]}"
    before = repo.head()
    with txn.marked(repo, contract.CAPTURE_COMMITTING):
        commit = txn.commit(repo, list(writes), stage, subject, trailers, agent=agent)
    txn.follow_head(repo, cfg, since=before, paths=list(writes))  # only the new files: no full scan
    captures.save(repo, captures.State(sid, shown_name, last, end, "", "", ignored))
    return Report(sid, harness, (first, last), [names.display(p.partition("/")[2]) for p in writes], s.skipped,
                  redacted, commit, summarizer, skipped_lines=s.shown, rewritten=s.rewritten, duplicates=duplicates)


def _watermark(repo: Repo, session: str) -> tuple[Mark, list[str]]:
    """(where the last capture of `session` committed on this machine stopped (line 0: none yet),
    one line for each newer watermark not trusted). A watermark counts only when its commit names
    this machine and carries the byte offset and hashes every capture now records (a peer who
    copies this machine's id cannot know them): a capture commit pushed by a peer says nothing of
    a transcript held here. One that names no machine (made before commits named theirs) counts
    when this clone's own record of the session agrees with it. A mark past the transcript's real
    end or with hashes the transcript does not match is caught by stretch.read (read from line 1,
    and nothing already committed is written again)."""
    out = repo.git("log", "-n", str(WATERMARKS), contract.grep(contract.CAPTURE_SESSION, session),
                   f"--format=%x01%H%x00{contract.log_field(contract.MACHINE)}%x00{contract.log_field(contract.CAPTURE)}",
                   "HEAD", "--", check=False)
    me, state = access.machine_id(repo), captures.load(repo, session)
    ignored: list[str] = []
    for item in out.decode("utf-8", "replace").split("\x01")[1:]:
        commit, machine, record = (item.split("\0") + ["", ""])[:3]
        mark, machine = _mark(record), machine.strip()
        if (machine == me and mark.offset >= 0) or (not machine and state is not None and state.committed == mark.line):
            return mark, ignored
        why = ("it names this machine but not the transcript's bytes" if machine == me else
               f"made on {'machine ' + shown(machine[:40]) if machine else 'no named machine'}, not this one")
        ignored.append(f"the capture watermark in commit {commit[:12]} (up to line {mark.line}) was not trusted: {why}")
    return captures.NONE, ignored


def _mark(text: str) -> Mark:
    try:
        record = json.loads(text.strip() or "{}")
    except (ValueError, RecursionError):
        return captures.NONE  # a hand-written trailer: start from the beginning (captures are create-only)
    lines = record.get("lines") if isinstance(record, dict) else None
    if not (isinstance(lines, list) and len(lines) == 2 and type(lines[1]) is int and 0 <= lines[1] < 1 << 40):
        return captures.NONE
    offset, head, tail = record.get("bytes"), record.get("head"), record.get("tail")
    if type(offset) is int and 0 <= offset < 1 << 50 and all(isinstance(h, str) and re.fullmatch(r"[0-9a-f]{16}", h)
                                                             for h in (head, tail)):
        return Mark(lines[1], offset, head, tail)
    return Mark(lines[1])  # an older capture's record: no byte offset, lines are counted


def _summarized(repo: Repo, path: str, span: tuple[int, int]) -> tuple[list[tuple[str, str]] | None, str]:
    """The statements `strata.captureCommand` (this clone's git config) finds in the captured
    stretch of the transcript, fed on stdin; it prints one JSON object a line, {"type": decision,
    rejection, lesson or task, "text": ...}. (None, why) when none is set or it fails: the rules
    stand."""
    from strata_git.store import summary

    argv, why = summary.command(repo, "strata.captureCommand", "capture")
    if not argv:
        return None, ""
    if span[1] - span[0] > MAX_EXCERPT:
        return None, f"the stretch of transcript is over {MAX_EXCERPT >> 20} MiB: the rules alone were used"
    with open(path, "rb") as f:
        f.seek(span[0])
        excerpt = f.read(span[1] - span[0])
    out, why = summary.run_command(argv, excerpt, COMMAND_TIMEOUT, repo.root, "capture", cap=False)
    if out is None:
        return None, why + "; the rules were used instead"
    found: dict[tuple[str, str], None] = {}
    for line in out.splitlines():
        try:
            item = json.loads(line)
        except ValueError:
            continue
        if isinstance(item, dict) and item.get("type") in FOLDERS and isinstance(item.get("text"), str) \
                and len(" ".join(item["text"].split())) >= 8:
            found.setdefault((item["type"], transcript.collapsed(item["text"])), None)
    return list(found), why


def _gitignored(repo: Repo, paths: list[str]) -> list[str]:
    if not paths:
        return []
    proc = run(["check-ignore", "--no-index", "--stdin", "-z"], repo.root, check=False,
               input="\0".join(paths).encode("utf-8", "surrogateescape") + b"\0", env={"GIT_LITERAL_PATHSPECS": "0"})
    return [p for p in proc.stdout.decode("utf-8", "surrogateescape").split("\0") if p]


def _leftover(repo: Repo, path: str, mark: bytes, writes: dict[str, bytes]) -> bool:
    """Whether a capture of this same stretch (its memories carry `mark`), killed before its commit,
    left `path` behind, uncommitted: it is then taken over, not duplicated beside a new name."""
    if path in writes or safefs.kind(repo.root, path) != "file" or repo.in_head(path):
        return False
    try:
        return mark in safefs.read(repo.root, path, 1 << 20)
    except (NotFound, Refused):
        return False


def _session_id(value: str) -> str:
    """A session id a commit trailer and a file name can hold: the harness's own when it is a
    plain word that is not secret-shaped, else a hash of it."""
    if _SESSION.fullmatch(value) and not secrets.scan(value):
        return value
    return hashlib.sha256(value.encode("utf-8", "replace")).hexdigest()[:32]


def _redacted(text: str) -> str:
    """`text` with every secret replaced by `[redacted: RULE]`, a line the rules still flag whole."""
    out = []
    for line in secrets.redact(text, REDACTED).split("\n"):
        found = secrets.scan(line)
        out.append(REDACTED.format(rule=found[0].rule) if found else line)
    return "\n".join(out)


class _Draft(NamedTuple):
    base: str  # the memory's name before a free one is found (`_free`)
    content: bytes
    statement: str | None  # the statement it holds; None for the session's digest


def _drafts(d: transcript.Digest, sid: str, harness: str, lines: tuple[int, int],
            stamp: str) -> tuple[list[_Draft], int]:
    """The memories to write (one _Draft each) and how many
    secrets were redacted. Everything written passes one redaction pass: bodies, titles, names."""
    day = stamp[:10] if re.fullmatch(r"\d{4}-\d{2}-\d{2}", stamp[:10] or "") else \
        datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d")
    where = f"{_where(harness, sid, lines[0])}{lines[1]}."
    redacted = 0

    def clean(text: str) -> str:
        nonlocal redacted
        shown = _redacted(text)
        redacted += shown.count("[redacted: ") - text.count("[redacted: ")
        return shown

    body = [f"# Session {sid[:12]} ({day})", "", where, ""]
    if d.asked:
        body += ["## Asked", *(f"- {transcript.cut(clean(a), 200)}" for a in d.asked), ""]
    if d.files:
        body += ["## Files touched", *(f"- `{transcript.cut(clean(f), 300)}`" for f in d.files), ""]
    if d.commands:
        body += ["## Commands run", *(f"- `{transcript.cut(clean(c), 200)}`" for c in d.commands), ""]
    if d.outcome:
        body += ["## Outcome", transcript.cut(clean(d.outcome), 300), ""]
    title = transcript.cut(_redacted(f"Session {sid[:12]}: {d.asked[0] if d.asked else harness}"), 200)
    meta = {"type": "session", "title": transcript.safe(title), "created": day}
    drafts = [_Draft(base=f"sessions/{day}-{sid[:12]}-{lines[0]}",
                     content=memory.compose(clean("\n".join(body)) + "\n", meta, "capture"), statement=None)]
    for kind, said in d.statements:
        text = transcript.cut(transcript.safe(clean(said)), transcript.MAX_STATEMENT)
        meta = {"type": kind, "title": text[:200], "created": day}
        drafts.append(_Draft(base=f"{FOLDERS[kind]}/{_slug(text)}",
                             content=memory.compose(f"{text}\n\n{where}\n", meta, "capture"), statement=text))
    return drafts, redacted


def _already(repo: Repo, base: str, text: str, taken: set[str]) -> bool:
    """Whether a committed memory named `base` or `base-N` already holds the statement `text` word
    for word."""
    for candidate in itertools.chain([base], (f"{base}-{i}" for i in range(2, 1000))):
        try:
            norm = names.normalize(candidate)
        except BadName:
            return False
        if names.collision_key(norm) not in taken:
            return False
        path = names.tier_path("active", norm)
        if not repo.in_head(path):
            continue  # not committed: a killed capture's leftover, which `_free` takes over
        try:
            body = memory.split(safefs.read(repo.root, path, 1 << 20).decode("utf-8", "replace"), norm)[1]
        except StrataError:  # gone from active/, too large or not a memory: not this statement
            continue
        if body.startswith(f"{text}\n\n"):
            return True
    return False


def _where(harness: str, sid: str, first: int) -> str:
    """How every memory of a capture begins its last paragraph (the end line follows)."""
    return f"Captured from {harness} session {sid}, transcript lines {first}-"


def _slug(text: str) -> str:
    slug = "-".join("".join(c if c.isalnum() else " " for c in text.lower()).split())[:60].strip("-")
    return slug or "note"


def _free(base: str, taken: set[str], leftover: Callable[[str], bool]) -> tuple[str, bool]:
    """(path, taken over) for `base`: the path of `base`, or `base-2`, `base-3`, ..., the first name
    no memory has (case and accents folded), or one a killed capture of this stretch left."""
    for candidate in itertools.chain([base], (f"{base}-{i}" for i in range(2, 1000))):
        try:
            norm = names.normalize(candidate)
        except BadName:
            norm = names.normalize(f"captured/{_slug(candidate)}-{hashlib.sha256(candidate.encode()).hexdigest()[:8]}")
        key, path = names.collision_key(norm), names.tier_path("active", norm)
        if key not in taken:
            taken.add(key)
            return path, False
        if leftover(path):
            return path, True
    raise Refused(f"999 memories are named {base}", "rename some of them")
