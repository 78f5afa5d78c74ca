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


class Statement(NamedTuple):
    kind: str  # decision, rejection, lesson, task
    text: str
    line: int  # the transcript line it was said on (0: not known, e.g. a note-taker's)


class Digest(NamedTuple):
    asked: list[str]
    files: list[str]
    commands: list[str]
    outcome: str
    statements: list[Statement]


# Text the harness put in a user turn, not what the user typed: slash-command echoes, hook output,
# notifications, skill bodies, compaction summaries, instructions files (Claude Code and Codex).
HARNESS = ("<command-name>", "<command-message>", "<command-args>", "<local-command-", "Caveat:",
           "<system-reminder>", "<task-notification>", "<user-prompt-submit-hook>", "Stop hook feedback",
           "[Request interrupted", "This session is being continued", "Base directory for this skill",
           "<bash-input>", "<bash-stdout>", "<bash-stderr>", "<ide_opened_file>", "<ide_selection>",
           "<environment_context>", "<user_instructions>", "# AGENTS.md instructions", "<INSTRUCTIONS>",
           "<turn_aborted>", "<user_action>", "<permissions instructions>", "<hook", "Hook ", "<subagent",
           "<post-tool-use-hook>", "<session-start-hook>", "<collaboration_mode>")
_REMINDER = re.compile(r"<(system-reminder|user-prompt-submit-hook)>.*?</\1>\s*", re.S)


def harness_text(text: str) -> bool:
    """Whether a user turn's text is the harness's, not typed by the user (see HARNESS)."""
    return text.lstrip().startswith(HARNESS)


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
    if kind in ("system", "file-history-snapshot", "progress", "queue-operation"):
        return []
    message = obj.get("message")
    if kind not in ("user", "assistant") or not isinstance(message, dict):
        return None
    if obj.get("isMeta") is True or obj.get("isCompactSummary") is True:
        return []  # text the harness injected (a skill's body, a compaction summary), not the user's
    content = message.get("content")
    blocks = content if isinstance(content, list) else []
    tools = tuple((b["name"], b["input"]) for b in blocks if isinstance(b, dict) and b.get("type") == "tool_use"
                  and isinstance(b.get("name"), str) and isinstance(b.get("input"), dict))
    results = [_text(b.get("content")) for b in blocks if isinstance(b, dict) and b.get("type") == "tool_result"]
    side = obj.get("isSidechain") is True
    out = []
    text = _REMINDER.sub("", _text(content)) if kind == "user" else _text(content)
    if text or tools:
        out.append(Turn(n, "assistant" if kind == "assistant" else "user", text, tools, side))
    out += [Turn(n, "tool", r, (), side) for r in results if r]
    return out


def _codex(obj: dict, n: int) -> list[Turn] | None:
    kind, payload = obj.get("type"), obj.get("payload")
    if kind == "event_msg" and isinstance(payload, dict) and payload.get("type") == "user_message":
        said = payload.get("message")  # what the user typed (some rollouts keep the prompt only here)
        return [Turn(n, "user", said)] if isinstance(said, str) else []
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
    bounded memory: a few prompts, files and commands, the last outcome, and every statement.

    A user turn that is the harness's text (`harness_text`) is never an ask and holds no
    statement; the assistant's replies to one (a background task's notification, hook feedback)
    until the user's next prompt are not the session's outcome."""

    def __init__(self) -> None:
        self.asked: list[str] = []
        self.files: dict[str, None] = {}
        self.commands: dict[str, None] = {}
        self.outcome = ""
        self.statements: dict[tuple[str, str], int] = {}  # (kind, text) -> the line first said on
        self.turns = 0
        self._aside = False  # the last user turn was the harness's: replies to it are not the outcome

    def add(self, t: Turn) -> None:
        self.turns += 1
        if t.role == "user" and not t.side and t.text.strip():
            self._aside = harness_text(t.text)
            ask = collapsed(t.text)
            if not self._aside and len(self.asked) < MAX_PROMPTS and not any(_same(ask, a) for a in self.asked):
                self.asked.append(ask)
        if t.role == "assistant" and not t.side and t.text.strip() and not self._aside:
            self.outcome = collapsed(t.text)
        for name, args in t.tools:
            _tool(name, args, self.files, self.commands)
        if t.role == "assistant" or (t.role == "user" and not harness_text(t.text)):
            for kind, pattern in RULES:
                for m in pattern.finditer(t.text):
                    said = collapsed(m.group("s")).rstrip(" .;:")
                    if len(said) >= 8 and len(self.statements) < MAX_STATEMENTS:
                        self.statements.setdefault((kind, said), t.line)

    def digest(self) -> Digest:
        return Digest(self.asked, [safe(f) for f in list(self.files)[:MAX_ITEMS]], list(self.commands)[:MAX_ITEMS],
                      self.outcome, [Statement(k, text, line) for (k, text), line in self.statements.items()])


def _same(a: str, b: str) -> bool:
    """The same prompt twice (Codex keeps it as a message and as an event, one sometimes longer)."""
    return a[:200].startswith(b[:200]) or b[:200].startswith(a[:200])


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
    command = args.get("command", args.get("cmd"))  # Codex exec_command: `cmd`
    if isinstance(command, list):  # Codex shell: ["bash", "-lc", "the command"]
        shell = command[:2] in (["bash", "-lc"], ["bash", "-c"], ["sh", "-c"], ["zsh", "-lc"]) and len(command) > 2
        command = " ".join(str(c) for c in (command[2:] if shell else command))
    if name in ("Bash", "shell", "shell_command", "exec_command", "local_shell") and isinstance(command, str) \
            and len(commands) < MAX_ITEMS and not _LOOKS.match(command):
        commands.setdefault(collapsed(command), None)
    patch = args.get("input")
    if name == "apply_patch" and isinstance(patch, str):
        for m in re.finditer(r"^\*\*\* (?:Add|Update|Delete) File: (.+)$", patch, re.MULTILINE):
            if len(files) < MAX_ITEMS:
                files.setdefault(m.group(1).strip(), None)


# Commands that only look (read a file, list, search, show state): not worth a line of the digest.
_LOOKS = re.compile(r"\s*(?:cd [^;&|]+(?:&&|;)\s*)?(?:ls|cat|head|tail|sed -n|nl|rg|grep|find|wc|pwd|date|file|which|"
                    r"echo|tree|stat|du|df|env|printenv|git (?:status|diff|log|show|branch|remote -v|rev-parse))"
                    r"(?:\s|$)(?![^|]*\|\s*(?:sh|bash|python3?)\b)(?![^>]*>)")


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
