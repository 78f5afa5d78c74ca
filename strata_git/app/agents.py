"""Agent harnesses: what `git strata hook agent EVENT` answers when Claude Code or Codex calls it
(the entries `git strata agent install` writes into their configuration: install.py, agentconfig.py).

Formats followed (docs/harnesses.md): Claude Code hooks as documented at
code.claude.com/docs/en/hooks (settings.json `hooks`, stdin JSON with `hook_event_name`,
`source`, `prompt`, `transcript_path`; `hookSpecificOutput.additionalContext`), its MCP servers
in `.mcp.json` / `~/.claude.json` (`mcpServers`); Codex hooks from codex-rs/hooks
(`hooks.json`, the same `hookSpecificOutput` shape) and `[mcp_servers.NAME]` in `config.toml`.

Every hook fails open: whatever goes wrong (no repository, a held lock, a broken transcript, a
slow disk, input that never ends), the harness gets a valid empty answer (`{}`, exit 0) within
DEADLINE seconds of the process's start and the reason goes to one line in `.git/strata/agent.log`,
never an error that stops the session. The catalog is read as it is (see catalog.impatient): a
hook waits for no other process past its deadline and builds nothing; a missing or unreadable
catalog is rebuilt by a process it starts in the background.
A hook writes nothing itself: capture (PreCompact, Stop, SessionEnd) runs `git strata capture` in
the background, which commits through the transaction or not at all.
"""

from __future__ import annotations

import fcntl
import json
import os
import select
import signal
import subprocess
import sys
import time
from typing import IO, TYPE_CHECKING, Any

from strata_git.app import where

if TYPE_CHECKING:
    from strata_git.app.vault import Vault
    from strata_git.gitio.git import Repo

HARNESSES = ("claude-code", "codex")
EVENTS = {"claude-code": ("SessionStart", "UserPromptSubmit", "PreCompact", "Stop", "SessionEnd"),
          "codex": ("SessionStart", "UserPromptSubmit", "PreCompact", "Stop")}  # Codex has no SessionEnd
TIMEOUTS = {"SessionStart": 10, "UserPromptSubmit": 5, "PreCompact": 10, "Stop": 10, "SessionEnd": 10}
# Seconds from the process's start (the interpreter's own start included) to the answer: with the
# answer written and the interpreter gone, a hook is done within 2 s, well below every timeout above.
DEADLINE = 1.5
STDIN_WAIT = 0.5  # seconds from the start that the harness's input is waited for, if it is not closed
MAX_STDIN = 1 << 20
# What a hook starts in the background when the catalog is missing, unreadable or far behind: what a
# checkout's git hook runs (index.md, the catalog and the shadow index brought to the working tree
# and HEAD, each built afresh if missing or unreadable, else only what changed is read again).
REBUILD = ("hook", "post-checkout")
PROMPT_HITS = 3
PROMPT_CHARS = 800
LOG_BYTES = 1 << 20  # agent.log is rotated past this (a line per hook call)
SERVER = "git-strata"  # the MCP server's name in the harness's configuration


class _Late(BaseException):  # not an Exception: no `except Exception` on the way may swallow it
    pass


# -- the hooks ----------------------------------------------------------------------------------------

def hook(event: str, harness: str, memory: str | None, stdin: IO[bytes] | None) -> str:
    """The answer to print for one hook call (always valid JSON; the exit code is always 0)."""
    started = _process_start()
    until = started + DEADLINE

    def late(*_: Any) -> None:
        raise _Late()

    previous = signal.signal(signal.SIGALRM, late)
    repo_dir = memory
    try:
        signal.setitimer(signal.ITIMER_REAL, max(0.001, until - time.monotonic()))
        try:
            payload = _payload(*_read_input(stdin, min(until, started + STDIN_WAIT)))
            found = where.memory(memory, payload["cwd"] if isinstance(payload.get("cwd"), str) else ".")
            if found.path is None:
                log(None, event, "answered without memory: " + where.MISSING, quiet=True)
                out = {"systemMessage": where.MISSING} if event == "SessionStart" else {}
            else:
                repo_dir = found.path
                out = _answer(event, harness, found, payload, until)
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)  # before anything below: no alarm in a handler
    except _Late:
        log(repo_dir, event, f"answered empty: no answer within {DEADLINE} s")
        out = {}
    except BaseException as e:  # noqa: BLE001 - fail open: a hook must never stop the session
        log(repo_dir, event, f"answered empty: {type(e).__name__}: {getattr(e, 'message', e)}")
        out = {}
    finally:
        signal.signal(signal.SIGALRM, previous)
    log(repo_dir, event, f"{time.monotonic() - started:.3f} s, {len(json.dumps(out))} bytes", quiet=True)
    return json.dumps(out, ensure_ascii=False)


def _process_start() -> float:
    """time.monotonic() when this process started (Linux: /proc/self/stat), so that the
    interpreter's start counts against the deadline; now, where that cannot be told, and at most
    a second back."""
    now = time.monotonic()
    try:
        with open("/proc/self/stat", "rb") as f:
            ticks = int(f.read().rpartition(b")")[2].split()[19])  # field 22, starttime
        age = time.clock_gettime(time.CLOCK_BOOTTIME) - ticks / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError, AttributeError):
        return now
    return now - min(max(age, 0.0), 1.0)


def _read_input(stdin: IO[bytes] | None, until: float) -> tuple[bytes, bool]:
    """(what the harness wrote, whether that is all of it): read until it closes its end, a whole
    JSON object has come (a harness may keep stdin open), more than MAX_STDIN bytes came, or
    `until` (time.monotonic())."""
    try:
        fd = stdin.fileno() if stdin is not None else -1
    except (OSError, ValueError):
        fd = -1
    data = b""
    while fd >= 0:
        left = until - time.monotonic()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            return data, False
        try:
            chunk = os.read(fd, 1 << 16)
        except OSError:  # (what came is all there is)
            break
        data += chunk
        if not chunk or len(data) > MAX_STDIN or (data.rstrip().endswith(b"}") and _whole(data)):
            break
    return data, True


def _whole(data: bytes) -> bool:
    try:
        return isinstance(json.loads(data.decode("utf-8")), dict)
    except ValueError:
        return False


def _payload(stdin: bytes, ended: bool = True) -> dict:
    if len(stdin) > MAX_STDIN:
        raise ValueError(f"hook input of {len(stdin)} bytes (more than {MAX_STDIN})")
    if not ended and stdin.strip() and not _whole(stdin):
        raise ValueError(f"the harness's input was still open after {STDIN_WAIT} s, and the {len(stdin)} bytes "
                         "that came are not a whole JSON object")
    data = json.loads(stdin.decode("utf-8")) if stdin.strip() else {}
    if not isinstance(data, dict):
        raise ValueError("hook input is not a JSON object")
    return data


def _answer(event: str, harness: str, found: where.Found, payload: dict, until: float) -> dict:
    from strata_git.app.vault import Vault
    from strata_git.errors import NotFound, Unavailable

    repo_dir = found.path or "."
    if event in ("SessionStart", "UserPromptSubmit"):
        try:
            vault = Vault.open(repo_dir)
        except NotFound as e:
            if event != "SessionStart":
                raise
            log(repo_dir, event, f"answered without memory: {e.message}")
            from strata_git.core.entries import shown  # (a path may hold a newline or a terminal escape)

            return {"systemMessage": f"git-strata: {found.source} names {shown(repo_dir)}, which is not a memory "
                                     "repository, so memory is off here: point it at one (`git strata init PATH` "
                                     "makes one)"}
        try:
            with vault.impatient(until):
                return _context(event, vault, payload)
        except Unavailable as e:  # the catalog is locked, missing or far behind: never waited for or built here
            why = f"{e.message}; {_rebuild_in_background(vault.repo)}" if e.rebuild else e.message
            log(repo_dir, event, f"answered empty: {why}")
            return {}
    if event in ("PreCompact", "Stop", "SessionEnd"):
        if event == "Stop" and payload.get("stop_hook_active") is True:
            return {}
        transcript = payload.get("transcript_path")
        session = payload.get("session_id")
        if isinstance(transcript, str) and os.path.isfile(transcript):
            Vault.open(repo_dir)  # a capture into something that is not a memory repository is refused here
            cwd = payload.get("cwd")
            _capture_in_background(repo_dir, transcript, session if isinstance(session, str) else None,
                                   cwd if isinstance(cwd, str) and os.path.isdir(cwd) else None)
        return {}
    raise ValueError(f"unknown event {event!r}")


def _context(event: str, vault: Vault, payload: dict[str, Any]) -> dict[str, Any]:
    """SessionStart's boot context, or UserPromptSubmit's hints: the session's project (the one its
    folder is in) first."""
    cwd = payload.get("cwd")
    if event == "SessionStart":
        source: str = payload["source"] if payload.get("source") in ("startup", "resume", "clear", "compact") \
            else "startup"
        return _context_answer(event, session_start(vault, source, _project(cwd)))
    prompt = payload.get("prompt")
    if not vault.cfg.agent_prompt_hints or not isinstance(prompt, str):
        return {}  # (before naming the project: that costs two git processes)
    return _context_answer(event, prompt_hints(vault, prompt, _project(cwd)))


def _project(cwd: object) -> str | None:
    return where.project(cwd) if isinstance(cwd, str) else None


def _context_answer(event: str, text: str) -> dict:
    if not text:
        return {}
    return {"hookSpecificOutput": {"hookEventName": event, "additionalContext": text}}


def session_start(vault: Vault, source: str, project: str | None = None) -> str:
    """The boot context, within `agent.context_chars`, `project`'s memories first. After a compaction
    only the standing memory (rejections first, then decisions): the compaction summary already holds
    the session."""
    cap = vault.cfg.agent_context_chars
    if cap < 200:
        return ""
    ctx = vault.context(budget=max(100, min(cap // 3, 100_000)), standing_only=source == "compact", active_only=True,
                        project=project)
    text = ctx.text
    if len(text) > cap:  # rejections are kept whole even past the budget: cut at a line, say so
        text = text[: text.rfind("\n", 0, cap - 80) + 1] + f"[git-strata: cut at {cap} characters]\n"
    return text


def prompt_hints(vault: Vault, prompt: str, project: str | None = None) -> str:
    """Names and one-line gists of the few memories most relevant to `prompt` that score at least
    `agent.prompt_min_score` and hold at least `agent.prompt_min_coverage` of its words, or "" (most prompts):
    `project`'s and general ones before other projects' (a hit of another project is named only
    when too few of those pass the score)."""
    from strata_git.core import hygiene, projects

    asked = PROMPT_HITS * 3  # more than are shown: those that pass the thresholds, the project's first
    cfg = vault.cfg
    hits = [h for h in vault.search(prompt[:2000], limit=asked, mode="words")  # (a model would not fit 150 ms)
            if h.score >= cfg.agent_prompt_min_score and h.coverage >= cfg.agent_prompt_min_coverage]
    hits = sorted(hits, key=lambda h: projects.rank(h.project, project) == 2)[:PROMPT_HITS]  # (stable: by score)
    if not hits:
        return ""
    lines = [f"- {h.name} ({h.tier}): {h.title} · {h.snippet}"[:200] for h in hits]
    body = "Memories that may bear on this prompt (read one with the `read` tool or `git strata read`):\n"
    body += "\n".join(lines)
    token = hygiene.boundary([body])
    return hygiene.wrap(token, {"part": "prompt-hints", "flags": hygiene.flags(body)}, body)[:PROMPT_CHARS]


def _capture_in_background(repo_dir: str, transcript: str, session: str | None, workdir: str | None) -> None:
    """`git strata capture` detached: it commits whole or not at all, and resumes from its watermark;
    its memories record the project `workdir` is in."""
    args = [executable(), "capture", "--log", transcript]  # the format is told by the transcript's first line
    if session:
        args += ["--session", session]
    if workdir:
        args += ["--workdir", workdir]
    _detached(args, repo_dir)


def _rebuild_in_background(repo: Repo) -> str:
    """Start REBUILD detached, unless another git-strata process holds the repository lock (a
    janitor, a capture, a reindex: most bring the catalog up to date before they let go, and a
    rebuild would wait for it; a later hook starts one if it is still needed) or the rebuild a hook
    started last still runs: that one holds REBUILD_LOCK (an flock, which the kernel lets go when
    the process ends), so twenty hooks start one rebuild. What happened, for the log."""
    from strata_git.core import contract
    from strata_git.ops import txn

    if txn.held(repo):
        return "another git-strata process holds the repository lock: no rebuild is started before it lets go"
    fd = os.open(os.path.join(repo.state_dir(), contract.REBUILD_LOCK), os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        pid = _detached([executable(), *REBUILD], repo.root, keep=fd)  # the rebuild holds the lock from here on
    except BlockingIOError:
        return "a rebuild a hook started is still running"
    except OSError as e:
        return f"could not start a rebuild ({e})"
    finally:
        os.close(fd)
    return f"rebuilding it in the background (pid {pid}, `git strata {' '.join(REBUILD)}`)"


def _detached(args: list[str], cwd: str, keep: int | None = None) -> int:
    """Start `args` in a session of its own, its pid: the harness does not wait for it, and a kill
    of the harness does not kill it. `keep`: a descriptor it inherits (and a lock with it)."""
    with open(os.devnull, "rb") as devnull:
        return subprocess.Popen(args, cwd=cwd, stdin=devnull, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                start_new_session=True, pass_fds=() if keep is None else (keep,)).pid


def log(repo_dir: str | None, event: str, text: str, quiet: bool = False) -> None:
    """One line in .git/strata/agent.log (or stderr when there is no repository to log in): every
    character that could end or forge a line (in a path, a message, the event name) is escaped."""
    from strata_git.core.entries import shown

    said = shown(f"{event}: {text}").replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")
    line = f"{time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())} {said}\n"
    try:
        from strata_git.core.contract import AGENT_LOG
        from strata_git.gitio.git import discover

        repo = discover(repo_dir or ".")
        path = os.path.join(repo.state_dir(), AGENT_LOG)
        if os.path.exists(path) and os.path.getsize(path) > LOG_BYTES:  # one older log is kept beside it
            os.replace(path, path + ".1")
        with open(path, "a", encoding="utf-8") as f:
            f.write(line)
    except Exception:  # noqa: BLE001 - logging must not fail a hook either
        if not quiet:
            sys.stderr.write(f"git-strata: {line}")


def executable() -> str:
    """The git-strata beside this interpreter (a virtual environment's), else the one on PATH."""
    beside = os.path.join(os.path.dirname(sys.executable), "git-strata")
    return beside if os.access(beside, os.X_OK) else "git-strata"
