"""Agent transcripts (Claude Code and Codex JSONL) read into turns, and the stenographer's rules
that turn a stretch of them into memories. Pure: no git, no files.

Formats (README "Use it with Claude Code / Codex"):

- Claude Code, one JSON object a line: `type` user / assistant / system / summary, `message`
  with `role` and `content` (a string, or blocks: `text`, `tool_use` with `name` and `input`,
  `tool_result`), `sessionId`, `timestamp`; a compacted session goes on with a summary line.
  A subagent's lines carry `isSidechain: true`: their tool calls and statements count, but the
  prompt the main agent gave the subagent is not what the user asked, and the subagent's last
  words are not the session's outcome.
- Codex rollouts: `type` session_meta / turn_context / response_item / event_msg; a
  response_item's `payload` is a `message` (role, content blocks of input_text / output_text)
  or a `function_call` (`name`, `arguments` as a JSON string).

A line that is not JSON, not an object, or of a type not listed is skipped and counted.

The rules, deterministic and offline (what the tests pin down):

- one **session digest**: the first prompts asked, the files touched (tool inputs `file_path`,
  `path`, `notebook_path`; Codex `apply_patch` headers), the commands run (`Bash` / `shell`), and
  the outcome (the last thing the assistant said);
- a **decision**, **rejection**, **lesson** or **task** for each sentence, said by the user or the
  assistant, that states one explicitly: a line opening with `Decision:`, `Rejected:`,
  `Lesson:`, `TODO:` (and the few synonyms in RULES), or a sentence with "we decided to",
  "we will not", "ruled out", "lesson learned", "turns out", "left to do".
"""

from __future__ import annotations

import json
import re
from typing import NamedTuple

from strata_git.core.memory import UNSAFE_TO_DISPLAY

FORMATS = ("claude-code", "codex")
MAX_PROMPTS = 3
MAX_ITEMS = 50  # files, commands, statements of each kind kept per capture
MAX_STATEMENT = 200
RAW = 4096  # characters of a prompt, command or statement kept: redaction reads them whole, then they are cut
MAX_STATEMENTS = 2000  # kept from one stretch; a capture ends its stretch well before (capture.PART_STATEMENTS)

_OPENS = r"(?:^|(?<=[.!?])[ \t]+)[ \t]*(?:[-*][ \t]*)?"  # a line's or a sentence's start
_UNTIL = r"(?P<s>.+?)(?=[.!?](?:\s|$)|$)"  # to the end of the sentence
RULES: tuple[tuple[str, re.Pattern[str]], ...] = tuple((kind, re.compile(p, re.I | re.M)) for kind, p in (
    ("decision", _OPENS + r"(?:decision|decided)[ \t]*:[ \t]*" + _UNTIL),
    ("decision", r"\bwe(?:'ve| have)? decided (?:to |that |on )" + _UNTIL),
    ("rejection", _OPENS + r"(?:rejected|rejection|ruled out)[ \t]*:[ \t]*" + _UNTIL),
    ("rejection", r"\bwe (?:will not|won't|decided not to) " + _UNTIL),
    ("rejection", r"\bruled out (?!:)" + _UNTIL),
    ("lesson", _OPENS + r"(?:lesson|lesson learned|learned|til)[ \t]*:[ \t]*" + _UNTIL),
    ("lesson", r"\b(?:lesson learned|it turns out|turns out)[:,]? (?:that )?" + _UNTIL),
    ("task", _OPENS + r"(?:todo|to do|task|next step|follow[- ]up)[ \t]*:[ \t]*" + _UNTIL),
    ("task", r"\b(?:left to do|still to do)[:,]? " + _UNTIL),
))


class Turn(NamedTuple):
    line: int
    role: str  # user, assistant, tool (a tool's result), summary
    text: str
    tools: tuple[tuple[str, dict], ...] = ()  # (name, input) of each tool the assistant called
    side: bool = False  # a subagent's line (Claude Code `isSidechain`): its prompt is not the user's ask


class Digest(NamedTuple):
    asked: list[str]
    files: list[str]
    commands: list[str]
    outcome: str
    statements: list[tuple[str, str]]  # (kind, text)


def detect(first: dict) -> str:
    return "codex" if first.get("type") in ("session_meta", "turn_context", "response_item", "event_msg") \
        else "claude-code"


def session_of(obj: dict) -> str | None:
    """The session id a line names, if any (Claude Code `sessionId`, Codex session_meta `id`)."""
    session = obj.get("sessionId")
    if isinstance(session, str):
        return session
    payload = obj.get("payload")
    if obj.get("type") == "session_meta" and isinstance(payload, dict):
        session = payload.get("id")
        if isinstance(session, str):
            return session
    return None


def turns(obj: object, fmt: str, number: int) -> list[Turn] | None:
    """The turns one parsed line holds; None for a line of no known shape (counted as skipped)."""
    if not isinstance(obj, dict):
        return None
    return _claude(obj, number) if fmt == "claude-code" else _codex(obj, number)


def _text(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(b["text"] for b in content if isinstance(b, dict) and isinstance(b.get("text"), str))
    return ""


def _claude(obj: dict, n: int) -> list[Turn] | None:
    kind = obj.get("type")
    if kind == "summary":
        return [Turn(n, "summary", obj["summary"])] if isinstance(obj.get("summary"), str) else []
    if kind in ("system", "file-history-snapshot", "progress"):
        return []
    message = obj.get("message")
    if kind not in ("user", "assistant") or not isinstance(message, dict):
        return None
    content = message.get("content")
    blocks = content if isinstance(content, list) else []
    tools = tuple((b["name"], b["input"]) for b in blocks if isinstance(b, dict) and b.get("type") == "tool_use"
                  and isinstance(b.get("name"), str) and isinstance(b.get("input"), dict))
    results = [_text(b.get("content")) for b in blocks if isinstance(b, dict) and b.get("type") == "tool_result"]
    side = obj.get("isSidechain") is True
    out = []
    text = _text(content)
    if text or tools:
        out.append(Turn(n, "assistant" if kind == "assistant" else "user", text, tools, side))
    out += [Turn(n, "tool", r, (), side) for r in results if r]
    return out


def _codex(obj: dict, n: int) -> list[Turn] | None:
    kind, payload = obj.get("type"), obj.get("payload")
    if kind in ("session_meta", "turn_context", "event_msg", "compacted"):
        return []
    if kind != "response_item" or not isinstance(payload, dict):
        return None
    if payload.get("type") == "message" and payload.get("role") in ("user", "assistant"):
        return [Turn(n, payload["role"], _text(payload.get("content")))]
    if payload.get("type") in ("function_call", "custom_tool_call") and isinstance(payload.get("name"), str):
        raw = payload.get("arguments", payload.get("input", ""))
        try:
            args = json.loads(raw) if isinstance(raw, str) and raw.startswith("{") else {"input": raw}
        except (ValueError, RecursionError):
            args = {"input": raw}
        return [Turn(n, "assistant", "", ((payload["name"], args if isinstance(args, dict) else {}),))]
    if payload.get("type") == "function_call_output":
        out = payload.get("output")
        return [Turn(n, "tool", out if isinstance(out, str) else "")]
    return []


class Notes:
    """The stenographer's notes, taken turn by turn, so a transcript of any length is read in
    bounded memory: a few prompts, files and commands, the last outcome, and every statement."""

    def __init__(self) -> None:
        self.asked: list[str] = []
        self.files: dict[str, None] = {}
        self.commands: dict[str, None] = {}
        self.outcome = ""
        self.statements: dict[tuple[str, str], None] = {}
        self.turns = 0

    def add(self, t: Turn) -> None:
        self.turns += 1
        if t.role == "user" and not t.side and t.text.strip() and len(self.asked) < MAX_PROMPTS \
                and not t.text.startswith(("<command-", "Caveat:", "This session is being continued")):
            self.asked.append(collapsed(t.text))
        if t.role == "assistant" and not t.side and t.text.strip():
            self.outcome = collapsed(t.text)
        for name, args in t.tools:
            _tool(name, args, self.files, self.commands)
        if t.role in ("user", "assistant"):
            for kind, pattern in RULES:
                for m in pattern.finditer(t.text):
                    said = collapsed(m.group("s")).rstrip(" .;:")
                    if len(said) >= 8 and len(self.statements) < MAX_STATEMENTS:
                        self.statements.setdefault((kind, said), None)

    def digest(self) -> Digest:
        return Digest(self.asked, [safe(f) for f in list(self.files)[:MAX_ITEMS]], list(self.commands)[:MAX_ITEMS],
                      self.outcome, list(self.statements))


def digest(all_turns: list[Turn]) -> Digest:
    """What the stenographer keeps of a stretch of turns (see the module's rules)."""
    notes = Notes()
    for t in all_turns:
        notes.add(t)
    return notes.digest()


def _tool(name: str, args: dict, files: dict, commands: dict) -> None:
    for key in ("file_path", "path", "notebook_path"):
        if isinstance(args.get(key), str) and len(files) < MAX_ITEMS:
            files.setdefault(args[key], None)
    command = args.get("command")
    if isinstance(command, list):
        command = " ".join(str(c) for c in command)
    if name in ("Bash", "shell", "exec_command", "local_shell") and isinstance(command, str) \
            and len(commands) < MAX_ITEMS:
        commands.setdefault(collapsed(command), None)
    patch = args.get("input")
    if name == "apply_patch" and isinstance(patch, str):
        for m in re.finditer(r"^\*\*\* (?:Add|Update|Delete) File: (.+)$", patch, re.MULTILINE):
            if len(files) < MAX_ITEMS:
                files.setdefault(m.group(1).strip(), None)


def collapsed(text: str) -> str:
    """`text` on one line, made safe, its first RAW characters: what the notes keep. It is cut to
    what a memory shows (`cut`) only after redaction, so a secret is never cut short of its rule."""
    return safe(" ".join(text[: RAW * 2].split()))[:RAW]


def cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


_UNSAFE = re.compile(f"[\ud800-\udfff{UNSAFE_TO_DISPLAY.pattern[1:-1]}]")


def safe(text: str) -> str:
    """`text` with what a memory's title or a commit cannot hold replaced by U+FFFD: control and
    direction-changing characters, and halves of a surrogate pair (a JSON `\\ud800` escape)."""
    return _UNSAFE.sub("\ufffd", text)
