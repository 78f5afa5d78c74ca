"""`git strata capture TRANSCRIPT`: the stenographer. It reads an agent's transcript from where
the last capture of that session stopped and commits what it finds as typed memories, in one
commit, so the agent does not have to remember to.

- **Idempotent.** The watermark is history itself: each capture's commit carries the session id
  (`Strata-Capture-Session`) and the transcript lines it covered (`Strata-Capture`). A capture
  starts after the last line a commit of that session covered, under the repository lock, so
  running it twice, from two hooks at once, or again after a kill never duplicates or loses a
  memory: the commit either happened (and the watermark moved with it) or did not.
- **Bounded.** The file is read line by line; a line over MAX_LINE bytes, a line that is not JSON
  or of an unknown type is skipped and counted; a last line without its newline is still being
  written and is left for the next capture. What is kept while reading is the notes
  (transcript.Notes): a few prompts, files and commands, the outcome, and the statements. A
  stretch of new transcript past PART_BYTES, or with PART_STATEMENTS statements, ends a part:
  a long transcript is captured in several commits, each with its own line range.
- **Kills.** Files a capture wrote before it was killed short of its commit are not committed;
  the next capture of the same stretch (its memories name the same first line) takes them over
  by name, even if the transcript has grown since, rather than writing copies beside them.
- **No secrets in history.** Every memory's text goes through the secret rules the pre-commit
  hook uses: a token is replaced by `[redacted: rule]`, and a line the rules still flag is
  replaced whole. The count is reported and recorded.
"""

from __future__ import annotations

import datetime
import hashlib
import itertools
import json
import os
import re
from typing import NamedTuple

from strata_git.core import contract, memory, names, secrets, transcript
from strata_git.core.config import Config
from strata_git.errors import BadName, NotFound, Refused
from strata_git.gitio import safefs
from strata_git.gitio.git import Repo, run
from strata_git.ops import locate, txn

MAX_LINE = 8 * 1024 * 1024
PART_BYTES = 32 * 1024 * 1024  # a longer stretch of new transcript is captured in parts, a commit each
PART_STATEMENTS = 1000
COMMAND_TIMEOUT = 20  # seconds for `strata.captureCommand`: below the 30 s other writers wait for the lock
MAX_EXCERPT = 8 * 1024 * 1024  # a longer stretch of transcript is not handed to the command
FOLDERS = {"decision": "decisions", "rejection": "rejections", "lesson": "lessons", "task": "tasks"}
_SESSION = re.compile(r"[A-Za-z0-9._-]{1,100}")


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

    def as_dict(self) -> dict:
        return {**self._asdict(), "lines": list(self.lines) if self.lines else None}


def capture(repo: Repo, cfg: Config, path: str, fmt: str = "auto", session: str | None = None,
            agent: str | None = None) -> Report:
    """Capture what is new in the transcript: in one commit, or, past PART_BYTES of transcript or
    PART_STATEMENTS statements, in one commit per such part (the lock is let go between parts, and
    a kill between them loses nothing: the next capture starts after the last part committed)."""
    if fmt not in ("auto", *transcript.FORMATS):
        raise Refused(f"unknown transcript format {fmt!r}", f"use one of: auto, {', '.join(transcript.FORMATS)}")
    if not os.path.isfile(path):
        raise NotFound(f"{path}: no such transcript", "give the path the harness passed as transcript_path")
    parts: list[Report] = []
    more = True
    while more:
        report, more = _part(repo, cfg, path, fmt, session, agent)
        if more and parts and report.lines and report.lines[0] <= parts[-1].lines[1]:
            raise Refused(f"capture of {path} did not move past line {report.lines[0]}",
                          "see `git log --grep Strata-Capture`; the last capture's trailer is not readable")
        parts.append(report)
    if len(parts) == 1:
        return parts[0]
    done = [p for p in parts if p.lines]
    said = "; ".join(sorted({p.summarizer for p in parts} - {""}))
    return Report(parts[0].session, parts[0].harness, (done[0].lines[0], done[-1].lines[1]),
                  [m for p in parts for m in p.memories], sum(p.skipped for p in parts),
                  sum(p.redacted for p in parts), done[-1].commit, said, [p.commit for p in done if p.commit])


def _part(repo: Repo, cfg: Config, path: str, fmt: str, session: str | None,
          agent: str | None) -> tuple[Report, bool]:
    with txn.locked(repo):
        txn.clear_killed(repo, contract.CAPTURE_COMMITTING)  # a capture killed inside `git commit`
        found = _read(path, fmt, session, lambda sid: _watermark(repo, sid))
        sid, harness, first, last, notes, skipped, stamp, span, more = found
        if not notes.turns:
            return Report(sid, harness, None, [], skipped, 0, None), False
        d = notes.digest()
        said, summarizer = _summarized(repo, path, span)
        if said is not None:
            d = d._replace(statements=said)
        drafts, redacted = _drafts(d, sid, harness, (first, last), stamp)
        known = locate.known(repo)
        writes: dict[str, bytes] = {}
        leftovers: set[str] = set()
        taken = {names.collision_key(n) for held in known[0].values() for _, n in held}
        mark = _where(harness, sid, first).encode()
        for base, content in drafts:
            if len(content) > cfg.max_memory_bytes:
                content = content[: cfg.max_memory_bytes - 64].decode("utf-8", "ignore").encode() + b"\n[cut]\n"
            name, left = _free(base, taken, lambda p: _leftover(repo, p, mark, writes))
            if left:  # written by a capture of this same stretch killed before its commit: taken over
                leftovers.add(name)
            writes[name] = content
        # A new name is held by no file, tracked or not (locate.known lists both): only a .gitignore
        # rule can stand in the way, asked of git once for all of them.
        fresh = [p for p in writes if p not in leftovers]
        ignored = _ignored(repo, fresh)
        if ignored:
            raise Refused(f"capture would write {ignored[0]}, which a .gitignore rule matches; nothing was changed",
                          f"see `git check-ignore -v {ignored[0]}`; remove the rule")
        repo.require_identity()

        def stage() -> None:
            for folder in sorted({p.rpartition("/")[0] for p in writes}):
                safefs.clear_dead_temps_in(repo.root, folder)  # what a killed capture left mid-write
            for p, content in writes.items():
                safefs.write(repo.root, p, content, sweep=False)  # new names: no killed writer of theirs
            repo.git("add", "--", *writes)

        record = {"harness": harness, "transcript": os.path.basename(path), "lines": [first, last],
                  "redacted": redacted}
        trailers = {contract.ACTION: "capture", contract.VIA: "capture", contract.CAPTURE_SESSION: sid,
                    contract.CAPTURE: contract.trailer_value(record)}
        count = f"{len(writes)} memor{'y' if len(writes) == 1 else 'ies'}"
        subject = f"strata: capture {count} from {harness} session {sid[:12]}"
        before = repo.head()
        with txn.marked(repo, contract.CAPTURE_COMMITTING):
            commit = txn.commit(repo, list(writes), stage, subject, trailers, agent=agent)
        txn.follow_head(repo, cfg, since=before, paths=list(writes))  # only the new files: no full scan
        return Report(sid, harness, (first, last), [names.display(p.partition("/")[2]) for p in writes], skipped,
                      redacted, commit, summarizer), more


def _watermark(repo: Repo, session: str) -> int:
    """The last transcript line a capture of `session` committed (0: none yet)."""
    out = repo.git("log", "-1", contract.grep(contract.CAPTURE_SESSION, session),
                   f"--format={contract.log_field(contract.CAPTURE)}", "HEAD", "--", check=False)
    try:
        lines = json.loads(out.decode("utf-8", "replace").strip() or "{}").get("lines")
        return int(lines[1]) if isinstance(lines, list) and len(lines) == 2 and isinstance(lines[1], int) \
            and 0 <= lines[1] < 1 << 40 else 0
    except (ValueError, AttributeError):
        return 0  # a hand-written trailer: start from the beginning (captures are create-only)


def _read(path: str, fmt: str, session: str | None, watermark) -> tuple:
    """(session, format, first line, last line, notes, skipped, first timestamp, byte span, more)
    of the complete lines after the session's watermark, up to a part's size (more: the part ended
    early). The session is `session`, else the one the first line names, else the file's name."""
    sid: str | None = None
    start = 0
    notes = transcript.Notes()
    skipped, first, last, stamp, more = 0, 0, 0, "", False
    begin = end = 0  # byte offsets of the lines taken
    with open(path, "rb") as f:
        for number, raw in enumerate(_lines(f), start=1):
            before, end_of_line = end, f.tell()
            if raw is not None and not raw.endswith(b"\n"):
                break  # still being written: the next capture takes it
            if sid is not None and number <= start:  # captured before: read past, not parsed
                end = end_of_line
                continue
            if first and (end - begin >= PART_BYTES or len(notes.statements) >= PART_STATEMENTS):
                more = True
                break
            obj = None
            if raw is not None:
                try:
                    obj = json.loads(raw)
                except ValueError:
                    obj = None
            if sid is None:  # the first line says which session this is, and so where to resume
                named = transcript.session_of(obj) if isinstance(obj, dict) else None
                sid = _session_id(session or named or os.path.basename(path))
                start = watermark(sid)
            if isinstance(obj, dict):
                if fmt == "auto":
                    fmt = transcript.detect(obj)
                stamp = stamp or (obj["timestamp"] if isinstance(obj.get("timestamp"), str) else "")
            if number <= start:
                end = end_of_line
                continue
            found = transcript.turns(obj, fmt if fmt != "auto" else "claude-code", number)
            if found is None:
                skipped += 1
                end = end_of_line
                continue
            if not first:
                begin = before
            first = first or number
            last = number
            end = end_of_line
            for turn in found:
                notes.add(turn)
    return (sid or _session_id(session or os.path.basename(path)), fmt if fmt != "auto" else "claude-code",
            first, last, notes, skipped, stamp, (begin, end), more)


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
            found.setdefault((item["type"], " ".join(item["text"].split())[:transcript.MAX_STATEMENT]), None)
    return list(found), why


def _lines(f):
    """The file's lines; None for one longer than MAX_LINE (read past, never held whole)."""
    while True:
        raw = f.readline(MAX_LINE + 1)
        if not raw:
            return
        if len(raw) > MAX_LINE and not raw.endswith(b"\n"):
            while raw and not raw.endswith(b"\n"):
                raw = f.readline(MAX_LINE)
            yield None
            continue
        yield raw


def _ignored(repo: Repo, paths: list[str]) -> list[str]:
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
    return value if _SESSION.fullmatch(value) else hashlib.sha256(value.encode("utf-8", "replace")).hexdigest()[:32]


def _drafts(d: transcript.Digest, sid: str, harness: str, lines: tuple[int, int],
            stamp: str) -> tuple[list[tuple[str, bytes]], int]:
    """[(memory name, content)] and how many lines had a secret redacted."""
    day = stamp[:10] if re.fullmatch(r"\d{4}-\d{2}-\d{2}", stamp[:10] or "") else \
        datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d")
    where = f"{_where(harness, sid, lines[0])}{lines[1]}."
    redacted = 0

    def clean(text: str) -> str:
        """`text` with secrets replaced: a token by `[redacted: rule]`, a line still flagged whole."""
        nonlocal redacted
        out = []
        for line in text.splitlines():
            shown = secrets.redact(line, "[redacted: {rule}]")
            found = secrets.scan(shown)
            if found:
                shown = f"[redacted: {found[0].rule}]"
            redacted += shown != line
            out.append(shown)
        return "\n".join(out)

    drafts = []
    body = [f"# Session {sid[:12]} ({day})", "", where, ""]
    if d.asked:
        body += ["## Asked", *(f"- {a}" for a in d.asked), ""]
    if d.files:
        body += ["## Files touched", *(f"- `{f}`" for f in d.files), ""]
    if d.commands:
        body += ["## Commands run", *(f"- `{c}`" for c in d.commands), ""]
    if d.outcome:
        body += ["## Outcome", d.outcome, ""]
    meta = {"type": "session", "title": f"Session {sid[:12]}: {d.asked[0] if d.asked else harness}"[:200],
            "created": day}
    digest_text = clean("\n".join(body)) + "\n"
    drafts.append((f"sessions/{day}-{sid[:12]}-{lines[0]}", memory.compose(digest_text, meta, "capture")))
    for kind, said in d.statements:
        text = clean(said)
        meta = {"type": kind, "title": text[:200], "created": day}
        drafts.append((f"{FOLDERS[kind]}/{_slug(text)}", memory.compose(f"{text}\n\n{where}\n", meta, "capture")))
    return drafts, redacted


def _where(harness: str, sid: str, first: int) -> str:
    """How every memory of a capture begins its last paragraph (the end line follows)."""
    return f"Captured from {harness} session {sid}, transcript lines {first}-"


def _slug(text: str) -> str:
    slug = "-".join("".join(c if c.isalnum() else " " for c in text.lower()).split())[:60].strip("-")
    return slug or "note"


def _free(base: str, taken: set[str], leftover) -> tuple[str, bool]:
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
