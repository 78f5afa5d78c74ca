"""Print what was said in a transcript, one entry per line number, for labelling by hand.

    python tests/corpus/view.py FILE.jsonl

Shows user and assistant text (Claude Code `message` blocks, Codex `message` items, bare in
rollouts older than `session_meta`, and `event_msg` user messages), the questions the agent asked
with AskUserQuestion (Claude Code) or request_user_input (Codex), with the answers, and the plans
it put up with ExitPlanMode, and short tool results (where a user's answer comes back). Tool calls,
their long outputs and reasoning are left out. Each entry starts with its line number: the number
a label gives. Independent of git-strata's capture rules on purpose.
"""

from __future__ import annotations

import json
import sys

SHORT = 600


def _blocks(content: object) -> list[dict]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


def entries(obj: dict) -> list[tuple[str, str]]:
    found: list[tuple[str, str]] = []
    kind, payload, message = obj.get("type"), obj.get("payload"), obj.get("message")
    if kind in ("message", "function_call", "function_call_output") and "payload" not in obj:
        kind, payload = "response_item", obj  # an older Codex rollout: bare items, no envelope
    side = " (subagent)" if obj.get("isSidechain") else ""
    meta = " (injected)" if obj.get("isMeta") or obj.get("isCompactSummary") else ""
    if kind in ("user", "assistant") and isinstance(message, dict):
        for b in _blocks(message.get("content")):
            if b.get("type") == "text" and b.get("text", "").strip():
                found.append((f"{kind}{side}{meta}", b["text"]))
            elif b.get("type") == "tool_use" and b.get("name") in ("AskUserQuestion", "ExitPlanMode", "TodoWrite"):
                found.append((f"{kind} calls {b['name']}", json.dumps(b.get("input"), ensure_ascii=False)))
            elif b.get("type") == "tool_result":
                text = b.get("content")
                text = "\n".join(x.get("text", "") for x in _blocks(text)) if not isinstance(text, str) else text
                if text and len(text) <= SHORT:
                    found.append(("tool result", text))
    if kind == "summary" and isinstance(obj.get("summary"), str):
        found.append(("summary", obj["summary"]))
    if isinstance(payload, dict):
        said = payload.get("type") == "message" and payload.get("role") in ("user", "assistant")
        if kind == "response_item" and said:
            text = "\n".join(b.get("text", "") for b in _blocks(payload.get("content")))
            if text.strip():
                found.append((payload["role"], text))
        elif kind == "event_msg" and payload.get("type") == "user_message" and isinstance(payload.get("message"), str):
            found.append(("user (event_msg)", payload["message"]))
        elif kind == "response_item" and payload.get("name") == "request_user_input":
            found.append(("assistant calls request_user_input", str(payload.get("arguments"))))
        elif kind == "response_item" and payload.get("type") == "function_call_output" \
                and '"answers"' in str(payload.get("output"))[:40]:
            found.append(("user answers (request_user_input)", str(payload.get("output"))))
    return found


def main(path: str) -> None:
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            try:
                obj = json.loads(line)
            except ValueError:
                continue
            for who, text in entries(obj) if isinstance(obj, dict) else []:
                print(f"{number} {who}: {text.strip()}\n")


if __name__ == "__main__":
    main(sys.argv[1])
