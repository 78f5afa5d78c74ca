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
import shutil
import tempfile
from collections.abc import Callable
from typing import NamedTuple

from strata_git.core import contract, memory, names, projects, secrets, transcript
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
ASK_WORDS = 6  # words of the first ask a session digest is named by
WATERMARKS = 100  # capture commits of one session looked through for this machine's newest
SUBAGENT_SCAN = 500  # `agent-*.jsonl` files beside a transcript looked at for its subagents


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
    subagents: list[str] = []  # subagent transcripts followed from this one (file names)

    def as_dict(self) -> dict:
        return {**self._asdict(), "lines": list(self.lines) if self.lines else None,
                "skipped_lines": [s._asdict() for s in self.skipped_lines]}


class _Run(NamedTuple):
    agent: str | None
    digest: bool = True  # write the session's digest (not for a subagent's transcript)
    dry_run: bool = False  # find what would be written; write, commit and record nothing
    project: str | None = None  # the project every memory written records (core/projects.py)


def capture(repo: Repo, cfg: Config, path: str, fmt: str = "auto", session: str | None = None,
            agent: str | None = None, follow: bool = True, dry_run: bool = False,
            project: str | None = None) -> Report:
    """Capture what is new in the transcript: in one commit, or, past PART_BYTES of transcript or
    PART_STATEMENTS statements, in one commit per such part (the lock is let go between parts, and
    a kill between them loses nothing: the next capture starts after the last part committed).
    Then, with `follow`, what is new in its subagents' transcripts (`subagent_files`), each a
    session of its own (`SESSION.agent-ID`) whose statements count and which writes no digest.
    With `dry_run`, the report names what would be written and nothing is. Every memory written
    records `project` (a checked project name) in its frontmatter, if given.
    A failure is recorded in this clone's capture state (shown by `status`) before it is raised."""
    if fmt not in ("auto", *transcript.FORMATS):
        raise Refused(f"unknown transcript format {fmt!r}", f"use one of: auto, {', '.join(transcript.FORMATS)}")
    if not os.path.isfile(path):
        raise NotFound(f"{path}: no such transcript", "give the path the harness passed as transcript_path")
    project = None if project is None else projects.check(project)
    sid = stretch.session_of(path, session, _session_id)
    main = _captured(repo, cfg, path, fmt, sid, _Run(agent, True, dry_run, project))
    if not follow:
        return main
    subs = [(f, _captured(repo, cfg, f, fmt, f"{sid[:60]}.{_stem(f)}", _Run(agent, False, dry_run, project)))
            for f in subagent_files(path, sid)]
    parts = [main, *(r for _, r in subs)]
    done = [p for p in parts if p.lines]
    return main._replace(memories=[m for p in parts for m in p.memories],
                         commit=done[-1].commit if done else None,
                         commits=[c for p in parts for c in (p.commits or ([p.commit] if p.commit else []))] or None,
                         redacted=sum(p.redacted for p in parts), duplicates=sum(p.duplicates for p in parts),
                         subagents=[os.path.basename(f) for f, _ in subs])


def opted_out(project: str) -> bool:
    """Whether the code project in `project` turned capture off (`git config strata.capture false`
    in its repository; a folder that is not one has no say)."""
    proc = run(["config", "--type=bool", "--get", "strata.capture"], project, check=False)
    return proc.returncode == 0 and proc.stdout.strip() == b"false"


def _stem(path: str) -> str:
    base = os.path.basename(path)
    return base[: -len(".jsonl")] if base.endswith(".jsonl") else base


def subagent_files(path: str, sid: str) -> list[str]:
    """The transcripts of the subagents of the Claude Code session in `path`: Claude Code 2.1 keeps
    them in `SESSION/subagents/agent-*.jsonl` beside it; earlier versions as `agent-*.jsonl` in the
    same folder, their lines naming the main session's id (at most SUBAGENT_SCAN looked at)."""
    if _stem(path).startswith("agent-"):
        return []  # a subagent's own transcript
    folder = os.path.join(os.path.dirname(path), _stem(path), "subagents")
    found = []
    try:
        found = sorted(os.path.join(folder, n) for n in os.listdir(folder) if n.endswith(".jsonl"))
    except OSError:
        pass
    try:
        flat = sorted(n for n in os.listdir(os.path.dirname(path) or ".")
                      if n.startswith("agent-") and n.endswith(".jsonl"))[:SUBAGENT_SCAN]
    except OSError:
        flat = []
    for name in flat:
        other = os.path.join(os.path.dirname(path), name)
        if os.path.isfile(other) and stretch.session_of(other, None, _session_id) == sid:
            found.append(other)
    return found


def _captured(repo: Repo, cfg: Config, path: str, fmt: str, sid: str, run: _Run) -> Report:
    try:
        parts = _parts(repo, cfg, path, fmt, sid, run)
    except (StrataError, OSError) as e:
        if run.dry_run:
            raise
        _failed(repo, sid, path, str(e))
        raise
    except Exception as e:
        if not run.dry_run:
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


def _parts(repo: Repo, cfg: Config, path: str, fmt: str, sid: str, run: _Run) -> list[Report]:
    parts: list[Report] = []
    more, after = True, None
    while more:
        report, more, after = _part(repo, cfg, path, fmt, sid, run, after)
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


def _part(repo: Repo, cfg: Config, path: str, fmt: str, sid: str, run: _Run,
          after: Mark | None = None) -> tuple[Report, bool, Mark]:
    """(this part's report, more follows, where it ended). A dry run reads on from `after` (where
    its last part ended), as nothing records it."""
    committed, mark, ignored = _resume(repo, sid)
    s = stretch.read(path, fmt, sid, after or mark)  # no lock held while the transcript is read
    if run.dry_run:
        planned = _commit(repo, cfg, path, s, run, committed) if s.first else None
        return planned or _nothing(s), s.more, s.end
    if s.first:
        noted = _noted(repo, path, s)  # a model note-taker may take a minute: never under the lock
        with txn.locked(repo):
            now = _resume(repo, sid)
            if now[:2] != (committed, mark):  # another capture committed meanwhile: read on from its mark
                committed, mark, ignored = now
                s = stretch.read(path, fmt, sid, mark)
                noted = (None, "another capture moved on meanwhile: the rules were used") if noted[1] else noted
            if s.first:
                done = _commit(repo, cfg, path, s, run, committed, ignored, noted)
                if done is not None:
                    return done, s.more, s.end
    captures.save(repo, captures.State(sid, _redacted(os.path.basename(path)), committed.line, s.end, "", "",
                                       ignored))
    return _nothing(s), s.more, s.end


def _nothing(s: stretch.Stretch) -> Report:
    return Report(s.session, s.fmt, None, [], s.skipped, 0, None, skipped_lines=s.shown, rewritten=s.rewritten)


def _commit(repo: Repo, cfg: Config, path: str, s: stretch.Stretch, run: _Run, committed: Mark,
            ignored: tuple[str, ...] = (), noted: tuple[list[transcript.Statement] | None, str] = (None, "")
            ) -> Report | None:
    """Write and commit the stretch's memories (under the repository lock); None when there is
    nothing to write (a subagent's stretch without statements: no digest is written for it). A
    dry run stops before writing, its report naming what would be written."""
    if not run.dry_run:
        txn.clear_killed(repo, contract.CAPTURE_COMMITTING)  # a capture killed inside `git commit`
    sid, harness, first, last = s.session, s.fmt, s.first, s.last
    d = s.notes.digest()
    said, summarizer = noted if not run.dry_run else (None, "a dry run does not call a note-taker")
    if said is not None:
        d = d._replace(statements=said)
    drafts, redacted = _drafts(d, sid, harness, (first, last), s.stamp, run.project)
    if not run.digest:
        drafts = drafts[1:]
        if not drafts:
            return None
    known = locate.known(repo)
    writes: dict[str, bytes] = {}
    leftovers: set[str] = set()
    taken = {names.collision_key(n) for held in known[0].values() for _, n in held}
    mark = _where(harness, sid, first).encode()
    duplicates = 0
    changed: set[str] | None = None  # active/ files changed since committed: asked of git once, when first needed
    source = f"{_where(harness, sid, first)}{last}.\n".encode()
    for draft in drafts:
        base, content = draft.base, draft.content
        held = _holder(repo, base, draft.statement, taken) if draft.statement else None
        if held is not None:  # said before, here or in another session: that memory gains this source
            duplicates += 1
            path_, raw = held
            if changed is None:
                changed = {path for _, path in repo.status("active", untracked="no")}
            if path_ in changed:  # changed since committed: only a killed capture of this stretch is taken over
                if mark in raw:
                    writes[path_] = raw
                    leftovers.add(path_)
            elif _source(harness, sid) not in raw:
                writes[path_] = raw.rstrip(b"\n") + b"\n" + source
                leftovers.add(path_)
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
    if run.dry_run:
        return Report(sid, harness, (first, last), [names.display(p.partition("/")[2]) for p in writes], s.skipped,
                      redacted, None, summarizer, skipped_lines=s.shown, rewritten=s.rewritten,
                      duplicates=duplicates)
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
        commit = txn.commit(repo, list(writes), stage, subject, trailers, agent=run.agent)
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


NOTETAKERS = ("claude", "codex", "command")
# The harnesses' own non-interactive CLIs, told to answer once with text: both append what comes
# on stdin (the note-taker's prompt and the session) to the instruction given as an argument.
INSTRUCTION = "Follow the note-taker instructions at the start of the input, and answer with JSON only."
_CLI = {"claude": ["claude", "-p", INSTRUCTION, "--output-format", "text", "--max-turns", "1"],
        "codex": ["codex", "exec", "--skip-git-repo-check", "--sandbox", "read-only", "--color", "never"]}
_MODEL = {"claude": ("--model", "haiku"), "codex": ("-m", "")}
NOTETAKER_TIMEOUT = 120  # seconds for a model note-taker (git config strata.captureTimeout)
NOTETAKER_ENV = "STRATA_NOTETAKER"  # set for a note-taker: the agent hooks of its own session do nothing


def _noted(repo: Repo, path: str, s: stretch.Stretch) -> tuple[list[transcript.Statement] | None, str]:
    """(the statements this clone's note-taker found in the stretch, what happened); (None, why)
    when none is set or it fails: the rules stand. `git config strata.captureSummarizer` names a
    model note-taker (claude, codex, or command: `strata.captureCommand` fed the same prompt); with
    only `strata.captureCommand` set, that command is fed the raw stretch of transcript instead."""
    from strata_git.core import notetaker
    from strata_git.store import summary

    settings = _capture_settings(repo)
    kind = settings.get("strata.capturesummarizer", "")
    if not kind:
        return _summarized(repo, path, s.span)
    if kind not in NOTETAKERS:
        return None, (f"strata.captureSummarizer is {kind[:40]!r}, not one of {', '.join(NOTETAKERS)}: "
                      "the rules were used")
    if kind == "command":
        argv, why = summary.command(repo, "strata.captureCommand", "note-taker")
    else:
        found = shutil.which(kind)
        argv, why = ([found, *_CLI[kind][1:]], "") if found else ([], f"the {kind} CLI is not on PATH")
        model = settings.get("strata.capturemodel") or _MODEL[kind][1]
        argv += [_MODEL[kind][0], model] if argv and model else []
        argv += [INSTRUCTION] if argv and kind == "codex" else []
    if not argv:
        return None, why + "; the rules were used"
    text = _redacted(notetaker.render(s.notes.said))  # no secret leaves this machine
    timeout = _seconds(settings.get("strata.capturetimeout", ""))
    with tempfile.TemporaryDirectory() as scratch:  # no project's settings or instructions apply there
        out, why = summary.run_command(argv, text.encode(), timeout, scratch, "note-taker", cap=False,
                                       env={NOTETAKER_ENV: "1"})
    if out is None:
        return None, why + "; the rules were used instead"
    found_ = notetaker.parse(out, s.first, s.last)
    if isinstance(found_, str):
        return None, f"the note-taker's answer was refused ({found_}); the rules were used instead"
    return found_, f"noted by {kind} (prompt v{notetaker.PROMPT_VERSION}, {len(text):,} characters sent)"


def _capture_settings(repo: Repo) -> dict[str, str]:
    """This clone's `strata.capture*` settings, keys in lower case as git gives them, in one call."""
    out = repo.git("config", "--get-regexp", r"^strata\.capture", check=False).decode("utf-8", "replace")
    return {key: value.strip() for key, _, value in (line.partition(" ") for line in out.splitlines())}


def _seconds(value: str) -> float:
    try:
        found = float(value)
    except ValueError:
        return NOTETAKER_TIMEOUT
    return found if 1 <= found <= 3600 else NOTETAKER_TIMEOUT


def _summarized(repo: Repo, path: str, span: tuple[int, int]) -> tuple[list[transcript.Statement] | None, str]:
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
    return [transcript.Statement(kind, text, 0) for kind, text in found], why


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
            stamp: str, project: str | None = None) -> tuple[list[_Draft], int]:
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
    meta = {"type": "session", "title": transcript.safe(title), "created": day, projects.KEY: project}
    about = _slug(" ".join(_redacted(d.asked[0]).split()[:ASK_WORDS]))[:48].strip("-") if d.asked else ""
    drafts = [_Draft(base=f"sessions/{day}-{about if about != 'note' and about else sid[:8]}",
                     content=memory.compose(clean("\n".join(body)) + "\n", meta, "capture"), statement=None)]
    for kind, said, _ in d.statements:
        text = transcript.cut(transcript.safe(clean(said)), transcript.MAX_STATEMENT)
        meta = {"type": kind, "title": text[:200], "created": day, projects.KEY: project}
        drafts.append(_Draft(base=f"{FOLDERS[kind]}/{_slug(text)}",
                             content=memory.compose(f"{text}\n\n{where}\n", meta, "capture"), statement=text))
    return drafts, redacted


def _holder(repo: Repo, base: str, text: str, taken: set[str]) -> tuple[str, bytes] | None:
    """(path, bytes) of the committed memory named `base` or `base-N` that already holds the
    statement `text` word for word, if one does."""
    for candidate in itertools.chain([base], (f"{base}-{i}" for i in range(2, 1000))):
        try:
            norm = names.normalize(candidate)
        except BadName:
            return None
        if names.collision_key(norm) not in taken:
            return None
        path = names.tier_path("active", norm)
        if not repo.in_head(path):
            continue  # not committed: a killed capture's leftover, which `_free` takes over
        try:
            raw = safefs.read(repo.root, path, 1 << 20)
            body = memory.split(raw.decode("utf-8", "replace"), norm)[1]
        except StrataError:  # gone from active/, too large or not a memory: not this statement
            continue
        if body.startswith(f"{text}\n\n"):
            return path, raw
    return None


def _source(harness: str, sid: str) -> bytes:
    """What every memory captured from this session says (the first line and the end follow)."""
    return f"Captured from {harness} session {sid}, transcript lines ".encode()


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
