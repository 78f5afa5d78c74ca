"""The model note-taker: what capture sends a language model (the harness's own CLI, or any
command) and how it reads the answer back. Pure: no processes, no files.

The model gets one versioned prompt (PROMPT, its version in PROMPT_VERSION) followed by what was
said in the stretch of transcript, one turn a paragraph, each opening with its line number
(`L123 user: ...`); tool output is never sent, and the caller redacts secrets before it leaves.
It must answer with one JSON object, `{"items": [{"type": ..., "text": ..., "line": ...}]}`,
checked by `parse`: a type capture knows, a text of 8 to MAX_TEXT characters, a line inside the
stretch (else 0). Anything else is refused whole, and capture falls back to its rules.
"""

from __future__ import annotations

import json
import re

from strata_git.core.transcript import Statement

PROMPT_VERSION = 1
TYPES = ("decision", "rejection", "lesson", "task")
MAX_TEXT = 300
MAX_ITEMS = 200
MAX_INPUT = 400_000  # characters of what was said sent at most (about 100,000 tokens); the rest is left out

PROMPT = f"""You are a note-taker for a software project's memory (git-strata note-taker prompt v{PROMPT_VERSION}).
Below is what a user and a coding agent said in one working session, one turn a paragraph, each
opening with its transcript line number (L<number>). Extract only what a later session must know:

- decision: a choice about the project, its design, tools, scope or process that was made or
  accepted (a user's "yes" to an offer counts: write what was accepted, not "yes");
- rejection: an option explicitly turned down or forbidden, with the reason if one was given;
- lesson: a non-obvious fact learned from experience (a root cause, a tool's limitation, a gotcha);
- task: an action item left open for later (next steps, follow-ups, to-dos), not work done at once.

Each text must stand alone (name the thing), in English, at most {MAX_TEXT} characters. Leave out
routine steps, greetings, and text the tools or the harness injected. Use the line where the item
was first said or accepted. Answer with JSON only, exactly this shape, nothing before or after it:
{{"items": [{{"type": "decision", "text": "use a single queue for all jobs", "line": 45}}]}}
If there is nothing to note, answer {{"items": []}}.

The session:
"""


def render(said: list[tuple[int, str, str]]) -> str:
    """The prompt and what was said ((line, role, text) of each turn), at most MAX_INPUT characters
    of the turns (the first ones: the rest is left out, and the text says so)."""
    parts: list[str] = []
    size = 0
    for line, role, text in said:
        entry = f"L{line} {role}: {text.strip()}\n\n"
        if size + len(entry) > MAX_INPUT:
            parts.append(f"[{len(said) - len(parts)} later turns left out]\n")
            break
        parts.append(entry)
        size += len(entry)
    return PROMPT + "\n" + "".join(parts)


def parse(reply: str, first: int, last: int) -> list[Statement] | str:
    """The statements in a model's reply, or why it is refused (one line). The JSON object may sit
    in a Markdown code fence; every item must be well-formed, or none is taken."""
    start, end = reply.find("{"), reply.rfind("}")
    if start < 0 or end < start:
        return "its answer holds no JSON object"
    try:
        data = json.loads(reply[start:end + 1])
    except (ValueError, RecursionError):
        return "its answer is not valid JSON"
    items = data.get("items") if isinstance(data, dict) else None
    if not isinstance(items, list):
        return 'its answer has no "items" list'
    if len(items) > MAX_ITEMS:
        return f"its answer has {len(items)} items, over {MAX_ITEMS}"
    found: list[Statement] = []
    for i, item in enumerate(items):
        if not isinstance(item, dict) or item.get("type") not in TYPES or not isinstance(item.get("text"), str):
            return f"item {i + 1} of its answer is not {{type, text, line}} with a known type"
        text = " ".join(item["text"].split())
        if not 8 <= len(text) <= MAX_TEXT * 2:
            return f"item {i + 1} of its answer has a text of {len(text)} characters"
        line = item.get("line")
        line = line if type(line) is int and first <= line <= last else 0
        found.append(Statement(item["type"], re.sub(r"^[\"'`]|[\"'`]$", "", text)[: MAX_TEXT * 2], line))
    return found
