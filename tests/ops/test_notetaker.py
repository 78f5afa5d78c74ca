"""The model note-taker, with fake `claude` and `codex` CLIs on PATH: the arguments and the prompt
they get, no secret in what leaves, the answer checked and redacted, a bad answer and a timeout
falling back to the rules, and the note-taker's own session not remembered."""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path

import pytest

from conftest import git, strata
from helpers.harness import claude_line, run_hook
from strata_git.core import notetaker
from strata_git.ops import capture

SECRET = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
FAKE = """#!{python}
import json, os, sys, time
log = os.environ["FAKE_LOG"]
with open(os.path.join(log, "argv.json"), "w") as f:
    json.dump(sys.argv[1:], f)
data = sys.stdin.read()
with open(os.path.join(log, "stdin.txt"), "w") as f:
    f.write(data)
with open(os.path.join(log, "env.json"), "w") as f:
    json.dump({{"STRATA_NOTETAKER": os.environ.get("STRATA_NOTETAKER"), "cwd": os.getcwd()}}, f)
mode = open(os.path.join(log, "mode")).read().strip()
if mode == "sleep":
    time.sleep(30)
elif mode == "garbage":
    print("Sure! Here are the notes: the team chose Postgres.")
else:
    print("```json")
    print(json.dumps({{"items": [
        {{"type": "decision", "text": "keep the event store in Postgres 16", "line": 2}},
        {{"type": "lesson", "text": "the staging token {secret} must be rotated", "line": 99}}]}}))
    print("```")
"""


@pytest.fixture
def fake_bin(tmp_path: Path) -> tuple[Path, dict]:
    bin_dir, log = tmp_path / "bin", tmp_path / "log"
    bin_dir.mkdir()
    log.mkdir()
    for name in ("claude", "codex"):
        script = bin_dir / name
        script.write_text(FAKE.format(python=sys.executable, secret=SECRET))
        script.chmod(script.stat().st_mode | stat.S_IEXEC)
    (log / "mode").write_text("answer")
    env = {"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "FAKE_LOG": str(log)}
    return log, env


def transcript(tmp_path: Path) -> Path:
    t = tmp_path / "n.jsonl"
    t.write_text(claude_line("user", f"Set up the deploy; the token is {SECRET}", "n-1")
                 + claude_line("assistant", "Want me to keep the event store in Postgres 16?", "n-1")
                 + claude_line("user", "yes please", "n-1"))
    return t


def test_install_names_the_notetaker_and_capture_asks_it_without_secrets(mem: Path, tmp_path: Path, fake_bin):
    log, env = fake_bin
    project = tmp_path / "proj"
    project.mkdir()
    out = strata(mem, "agent", "install", "claude-code", "--project", str(project), "--summarizer", "claude",
                 env=env)
    assert out.returncode == 0, out.stderr
    assert git(mem, "config", "strata.captureSummarizer").stdout.strip() == b"claude"
    report = json.loads(strata(mem, "capture", str(transcript(tmp_path)), "--json", env=env).stdout)
    assert report["summarizer"].startswith("noted by claude (prompt v1")
    argv = json.loads((log / "argv.json").read_text())
    assert argv[:2] == ["-p", capture.INSTRUCTION] and argv[-2:] == ["--model", "haiku"] and "--max-turns" in argv
    sent = (log / "stdin.txt").read_text()
    assert sent.startswith(notetaker.PROMPT) and "L1 user: Set up the deploy" in sent and SECRET not in sent
    assert "L3 user: yes please" in sent
    ran = json.loads((log / "env.json").read_text())
    assert ran["STRATA_NOTETAKER"] == "1" and not ran["cwd"].startswith(str(mem))
    assert sorted(report["memories"])[:2] == ["decisions/keep-the-event-store-in-postgres-16",
                                              "lessons/the-staging-token-redacted-generic-secret-must-be-rotated"]
    assert SECRET not in git(mem, "log", "-p", "--all").stdout.decode()


@pytest.mark.parametrize("mode, why", [("garbage", "answer was refused (its answer holds no JSON object)"),
                                       ("sleep", "timed out after 2 s")])
def test_a_bad_answer_or_a_timeout_falls_back_to_the_rules(mem: Path, tmp_path: Path, fake_bin, mode: str, why: str):
    log, env = fake_bin
    (log / "mode").write_text(mode)
    git(mem, "config", "strata.captureSummarizer", "codex")
    git(mem, "config", "strata.captureTimeout", "2")
    git(mem, "config", "strata.captureModel", "gpt-5-mini")
    report = json.loads(strata(mem, "capture", str(transcript(tmp_path)), "--json", env=env).stdout)
    assert why in report["summarizer"] and "rules were used" in report["summarizer"]
    assert "decisions/keep-the-event-store-in-postgres-16" in report["memories"]  # the rules found the yes
    argv = json.loads((log / "argv.json").read_text())
    assert argv[:1] == ["exec"] and argv[-3:] == ["-m", "gpt-5-mini", capture.INSTRUCTION]


def test_a_notetaker_that_is_not_there_is_refused_at_install_and_named_at_capture(mem: Path, tmp_path: Path):
    env = {"PATH": "/usr/bin:/bin"}  # no claude here
    out = strata(mem, "agent", "install", "claude-code", "--project", str(tmp_path), "--summarizer", "claude",
                 env={**env, "PATH": f"{Path(sys.executable).parent}:{env['PATH']}"})
    assert out.returncode == 1 and b"claude CLI is not on PATH" in out.stderr
    assert git(mem, "config", "strata.captureSummarizer", check=False).returncode == 1
    git(mem, "config", "strata.captureSummarizer", "claude")
    report = json.loads(strata(mem, "capture", str(transcript(tmp_path)), "--json",
                               env={"PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin"}).stdout)
    assert "the claude CLI is not on PATH; the rules were used" == report["summarizer"]


def test_the_notetakers_own_session_is_not_remembered(mem: Path, tmp_path: Path, monkeypatch):
    from strata_git.app.vault import Vault

    Vault.open(str(mem)).reject("use MongoDB for the event store", why="we need transactions", via="cli")
    seeded = mem
    payload = {"session_id": "x", "source": "startup", "hook_event_name": "SessionStart", "cwd": str(tmp_path)}
    assert run_hook(tmp_path, "SessionStart", payload, seeded) != {}
    monkeypatch.setenv("STRATA_NOTETAKER", "1")
    assert run_hook(tmp_path, "SessionStart", payload, seeded) == {}


def test_parse_takes_a_fenced_answer_and_refuses_a_malformed_one():
    ok = notetaker.parse('```json\n{"items": [{"type": "task", "text": "write the migration guide", "line": 7}]}\n```',
                         5, 9)
    assert ok == [notetaker.Statement("task", "write the migration guide", 7)]
    assert notetaker.parse('{"items": [{"type": "task", "text": "write the guide", "line": 70}]}', 5, 9)[0].line == 0
    for bad in ('{"items": [{"type": "wish", "text": "a pony for everyone"}]}', '{"items": "none"}', "[1, 2]",
                '{"items": [{"type": "task", "text": "short"}]}', "{not json}"):
        assert isinstance(notetaker.parse(bad, 1, 9), str), bad
