"""Driving the agent hooks exactly as a harness does, and writing Claude Code transcript lines."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from conftest import BIN


def run_hook(cwd: Path, event: str, payload: dict | bytes, memory: Path | None, harness: str = "claude-code"):
    args = [str(BIN / "git-strata"), "hook", "agent", event, "--harness", harness]
    if memory is not None:
        args += ["--memory", str(memory)]
    data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    proc = subprocess.run(args, cwd=cwd, input=data, capture_output=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def claude_line(kind: str, content, session: str = "sess-1", **extra) -> str:
    return json.dumps({"type": kind, "sessionId": session, "timestamp": "2026-11-20T10:00:00Z",
                       "message": {"role": kind, "content": content}, **extra}) + "\n"
