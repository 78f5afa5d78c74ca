"""Anonymise a real agent transcript for the corpus, keeping its line numbers.

    python tests/corpus/anonymise.py SOURCE.jsonl DEST.jsonl [--lines A-B] [--also TEXT ...]

Every line stays one line (a line that is JSON is rewritten as compact JSON, another line is
rewritten as text), so a label's line number means the same line in the source (after `--lines
A-B`, which keeps lines A to B and nothing else: line A becomes line 1). In every string, and in
every key, it replaces:

- a home folder (`/Users/NAME`, `/home/NAME`, `C:\\Users\\NAME`, and Claude Code's folder form
  `-Users-NAME-`) with `/home/user`, and NAME wherever else it stands as a word;
- an e-mail address with `user@example.com`;
- each `--also` text (a person's or a machine's name met in the transcript; given on the command
  line, so the names never reach the repository) with `person`;
- a secret the project's own rules find with `[redacted: RULE]`;
- with `--trim N`, a string over N characters that is not what a person or the agent said (a
  tool's output, a file's content, an injected instructions file) with its first N characters
  and `[trimmed: M characters]`: the corpus keeps what is labelled, not megabytes of tool output.
  A Codex `request_user_input` call and its output (the person's answers) are never trimmed.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from typing import Any

from strata_git.core import secrets

HOME = re.compile(r"(?:/Users/|/home/|[A-Za-z]:\\\\?Users\\\\?)([A-Za-z0-9._-]+)")
FOLDER = re.compile(r"-(?:Users|home)-([A-Za-z0-9._]+)-")
EMAIL = re.compile(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}")
KEEP = {"user", "runner", "root", "shared", "ubuntu", "node", "vscode", "codespace"}  # not a person


def people(text: str) -> set[str]:
    """The user names the home folders in `text` give away."""
    found = {m.group(1) for m in HOME.finditer(text)} | {m.group(1) for m in FOLDER.finditer(text)}
    return {n for n in found if n.lower() not in KEEP and len(n) >= 2}


def scrub(text: str, names: list[str]) -> str:
    text = HOME.sub(lambda m: m.group(0)[: -len(m.group(1))] + "user" if m.group(1).lower() not in KEEP
                    else m.group(0), text)
    text = re.sub(r"(?:/Users/user|[A-Za-z]:\\\\?Users\\\\?user)", "/home/user", text)
    text = FOLDER.sub(lambda m: "-home-user-" if m.group(1).lower() not in KEEP else m.group(0), text)
    text = EMAIL.sub("user@example.com", text)
    for name in names:
        text = re.sub(rf"(?<![A-Za-z0-9]){re.escape(name)}(?![A-Za-z0-9])", "person", text, flags=re.I)
    return secrets.redact(text, "[redacted: {rule}]")


SAID = ("text", "input_text", "output_text", "user_message", "agent_message")  # blocks that hold what was said


def _said(parent: dict, key: str) -> bool:
    """Whether `parent[key]` is words a person or the agent said (never trimmed)."""
    return (key in ("text", "message") and parent.get("type") in SAID) \
        or (key == "content" and "role" in parent and isinstance(parent[key], str)) \
        or key in ("summary", "questions", "answers", "plan")


def walk(value: Any, names: list[str], trim: int = 0, keep: bool = False) -> Any:
    if isinstance(value, str):
        text = scrub(value, names)
        if keep or not trim or len(text) <= trim:
            return text
        return f"{text[:trim]}[trimmed: {len(text) - trim} characters]"
    if isinstance(value, list):
        return [walk(v, names, trim, keep) for v in value]
    if isinstance(value, dict):
        return {scrub(k, names): walk(v, names, trim, keep or _said(value, k)) for k, v in value.items()}
    return value


ASKS = ("request_user_input",)  # Codex tools whose arguments ask the person and whose output is the answer


def _asks(lines: list[str]) -> set[str]:
    """The call ids of the questions put to the person (their outputs hold what the person said)."""
    ids = set()
    for line in lines:
        if '"request_user_input"' in line:
            try:
                payload = json.loads(line).get("payload")
            except (ValueError, AttributeError):
                continue
            if isinstance(payload, dict) and payload.get("name") in ASKS:
                ids.add(payload.get("call_id"))
    return ids


def _asked(obj: Any, asks: set[str]) -> bool:
    """Whether a line is a question put to the person or the person's answer (never trimmed)."""
    payload = obj.get("payload") if isinstance(obj, dict) else None
    return isinstance(payload, dict) and (payload.get("name") in ASKS or (
        payload.get("type") == "function_call_output" and payload.get("call_id") in asks))


def anonymise(lines: list[str], also: list[str], trim: int = 0) -> list[str]:
    names = sorted(set(also) | people("\n".join(lines)), key=len, reverse=True)
    asks = _asks(lines)
    out = []
    for line in lines:
        try:
            obj = json.loads(line)
            out.append(json.dumps(walk(obj, names, trim, _asked(obj, asks)), ensure_ascii=False, separators=(",", ":")))
        except ValueError:
            out.append(scrub(line, names))
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("source")
    p.add_argument("dest")
    p.add_argument("--lines", help="A-B: keep lines A to B (1-based, inclusive)")
    p.add_argument("--also", nargs="*", default=[], help="names to replace with `person`")
    p.add_argument("--trim", type=int, default=0, help="cut strings over N characters that nobody said")
    args = p.parse_args(argv)
    with open(args.source, encoding="utf-8", errors="replace", newline="\n") as f:
        lines = f.read().split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    if args.lines:
        a, b = (int(x) for x in args.lines.split("-"))
        lines = lines[a - 1: b]
    done = anonymise(lines, args.also, args.trim)
    with open(args.dest, "w", encoding="utf-8", newline="\n") as f:
        f.write("\n".join(done) + "\n")
    print(f"{args.dest}: {len(done)} lines", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
