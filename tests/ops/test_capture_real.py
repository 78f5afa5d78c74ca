"""Capture on real transcripts (tests/corpus, public sessions nobody on this project wrote) and on
the harness formats they showed: harness text never reaches a digest, Codex commands and prompts
are read, subagent transcripts are followed, digests are named and dated by their session, a dry
run writes nothing, a project can opt out, and a statement met in two sessions is one memory."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from conftest import git, strata
from helpers.harness import claude_line
from strata_git.ops import capture, stretch
from strata_git.store import captures

CORPUS = Path(__file__).resolve().parent.parent / "corpus"
TRANSCRIPTS = sorted(p.relative_to(CORPUS).as_posix() for p in CORPUS.rglob("*.jsonl"))
# Harness text, written here from the harnesses' formats (not from capture's own list).
HARNESS = re.compile(r"<(?:command-name|command-message|local-command-caveat|local-command-stdout|system-reminder|"
                     r"task-notification|environment_context|user_instructions|INSTRUCTIONS)>|Stop hook feedback|"
                     r"Base directory for this skill|# AGENTS\.md instructions|Caveat: The messages below|"
                     r"<agent-activation|## User Input|You \*\*MUST\*\* consider the user input")


def digests(path: Path) -> list[str]:
    sid = stretch.session_of(str(path), None, capture._session_id)
    out, mark, more = [], captures.NONE, True
    while more:
        s = stretch.read(str(path), "auto", sid, mark)
        if not s.first:
            break
        drafts, _ = capture._drafts(s.notes.digest(), sid, s.fmt, (s.first, s.last), s.stamp)
        out.append(drafts[0].content.decode())
        mark, more = s.end, s.more
    return out


def test_the_corpus_is_labelled_and_every_label_quotes_its_line():
    split = json.loads((CORPUS / "split.json").read_text())
    assert sorted(split["tuning"] + split["held_back"]) == TRANSCRIPTS and len(TRANSCRIPTS) >= 12
    for name in TRANSCRIPTS:
        labels = json.loads((CORPUS / "labels" / (name.replace("/", "__")[:-6] + ".json")).read_text())
        lines = (CORPUS / name).read_text(encoding="utf-8").split("\n")
        for item in labels["items"]:
            assert item["type"] in ("decision", "rejection", "lesson", "task"), (name, item)
            assert 1 <= item["line"] <= len(lines) and all(1 <= n <= len(lines) for n in item.get("also", []))


@pytest.mark.parametrize("name", [n for n in TRANSCRIPTS if "agent-" not in n])
def test_no_harness_text_reaches_the_digest_of_a_real_session(name: str):
    for text in digests(CORPUS / name):
        assert not HARNESS.search(text), (name, HARNESS.search(text))
        asked = text.split("## Asked\n", 1)[1].split("\n\n", 1)[0] if "## Asked" in text else ""
        assert "AGENTS.md" not in asked and "<" not in asked[:3], (name, asked)


def test_a_real_codex_rollout_lists_its_exec_commands_and_its_prompt(tmp_path: Path):
    [text] = digests(CORPUS / "codex/moonmind.jsonl")
    assert "## Commands run" in text and "`git checkout -b 001-codex-single-queue`" in text
    assert "- `ls specs`" not in text  # commands that only look are left out
    assert "I want to update my spec to remove this queue separation" in text
    # each prompt is kept as a message and as an event: listed once (the user asked twice, the second longer)
    assert text.count("\n- Responding to the note below") == 2


def test_a_codex_rollout_older_than_session_meta_is_read():
    """Codex CLI of mid-2025 wrote a header line (id, timestamp, instructions) and bare items
    between `record_type` lines: its session, day, prompts, commands and statements are read."""
    path = CORPUS / "codex/ocodex.jsonl"
    assert stretch.session_of(str(path), None, capture._session_id) == "e242c65b-c00b-46b3-bb89-80bbf0196c75"
    s = stretch.read(str(path), "auto", "e242c65b-c00b-46b3-bb89-80bbf0196c75", captures.NONE)
    assert (s.fmt, s.skipped, s.first) == ("codex", 0, 1)
    [text] = digests(path)
    assert "created: '2025-08-26'" in text and "- `cargo build -p orchestrator`" in text
    assert "- how would the shared dir be accessed by the docker ocodex agents?" in text
    assert "environment_context" not in text and "Current working directory" not in text
    assert any(st.kind == "decision" for st in s.notes.digest().statements)


def test_harness_text_is_not_an_ask_and_a_reply_to_a_notification_is_not_the_outcome(mem: Path, tmp_path: Path):
    t = tmp_path / "s.jsonl"
    t.write_text("".join([
        json.dumps({"type": "file-history-snapshot", "messageId": "m"}) + "\n",  # names no session
        claude_line("user", "<local-command-caveat>Caveat: The messages below were generated</local-command-caveat>",
                    "s-9"),
        claude_line("user", "Base directory for this skill: /x\n\n# Skill body", "s-9", isMeta=True),
        claude_line("user", "Port the parser to Rust please", "s-9"),
        claude_line("assistant", "Ported; all tests pass.", "s-9"),
        claude_line("user", "<task-notification><status>completed</status></task-notification>", "s-9"),
        claude_line("assistant", "The background build finished earlier.", "s-9"),
    ]))
    report = json.loads(strata(mem, "capture", str(t), "--json").stdout)
    assert report["session"] == "s-9"  # found past a first line that names none
    [name] = report["memories"]
    assert name == "sessions/2026-11-20-port-the-parser-to-rust-please"
    text = (mem / "active" / f"{name}.md").read_text()
    assert "- Port the parser to Rust please" in text and "Skill body" not in text and "Caveat" not in text
    assert text.split("## Outcome\n", 1)[1].startswith("Ported; all tests pass.")


def test_a_transcript_that_names_no_session_is_named_by_its_file_without_jsonl(mem: Path, tmp_path: Path):
    t = tmp_path / "abc-123.jsonl"
    t.write_text(json.dumps({"type": "response_item", "timestamp": "2024-03-01T10:00:00Z",
                             "payload": {"type": "message", "role": "user",
                                         "content": [{"type": "input_text", "text": "Tidy the docs"}]}}) + "\n")
    report = json.loads(strata(mem, "capture", str(t), "--json").stdout)
    assert report["session"] == "abc-123" and report["memories"] == ["sessions/2024-03-01-tidy-the-docs"]


@pytest.mark.parametrize("layout", ["folder", "flat"])
def test_subagent_transcripts_are_followed_and_write_no_digest_of_their_own(mem: Path, tmp_path: Path, layout: str):
    """Claude Code 2.1 keeps a subagent's lines in SESSION/subagents/agent-ID.jsonl; earlier
    versions in agent-ID.jsonl beside the session's file, naming its session id."""
    main = tmp_path / "main-1.jsonl"
    main.write_text(claude_line("user", "Find out why export is slow", "main-1"))
    sub = tmp_path / "main-1" / "subagents" / "agent-a1.jsonl" if layout == "folder" else tmp_path / "agent-a1.jsonl"
    sub.parent.mkdir(parents=True, exist_ok=True)
    sub.write_text(claude_line("assistant", "It turns out the export reads every row twice.", "main-1",
                               isSidechain=True))
    (tmp_path / "agent-other.jsonl").write_text(claude_line("assistant", "It turns out nothing.", "other-session"))
    report = json.loads(strata(mem, "capture", str(main), "--json").stdout)
    assert report["subagents"] == ["agent-a1.jsonl"]
    assert sorted(report["memories"]) == ["lessons/the-export-reads-every-row-twice",
                                          "sessions/2026-11-20-find-out-why-export-is-slow"]
    with open(sub, "a") as f:
        f.write(claude_line("assistant", "It turns out the index was missing too.", "main-1", isSidechain=True))
    again = json.loads(strata(mem, "capture", str(main), "--json").stdout)
    assert again["lines"] is None and again["memories"] == ["lessons/the-index-was-missing-too"]
    assert len(list((mem / "active/sessions").iterdir())) == 1


def test_a_dry_run_lists_what_it_would_write_and_writes_nothing(mem: Path, tmp_path: Path):
    t = tmp_path / "d.jsonl"
    t.write_text(claude_line("user", "Decision: we ship on Tuesdays.", "d-1"))
    before = git(mem, "rev-parse", "HEAD").stdout
    out = strata(mem, "capture", str(t), "--dry-run")
    assert out.returncode == 0 and b"decisions/we-ship-on-tuesdays" in out.stdout
    assert git(mem, "rev-parse", "HEAD").stdout == before and git(mem, "status", "--porcelain").stdout == b""
    report = json.loads(strata(mem, "capture", str(t), "--json").stdout)  # the real one is not held back by it
    assert "decisions/we-ship-on-tuesdays" in report["memories"] and report["commit"]


def test_a_project_can_turn_capture_off(mem: Path, tmp_path: Path):
    project = tmp_path / "code"
    project.mkdir()
    git(project, "init", "-q")
    git(project, "config", "strata.capture", "false")
    t = tmp_path / "p.jsonl"
    t.write_text(claude_line("user", "Decision: keep it private.", "p-1"))
    before = git(mem, "rev-parse", "HEAD").stdout
    out = strata(mem, "capture", str(t), "--workdir", str(project))
    assert out.returncode == 0 and b"capture is off" in out.stdout and git(mem, "rev-parse", "HEAD").stdout == before
    git(project, "config", "strata.capture", "true")
    assert b"decisions/keep-it-private" in strata(mem, "capture", str(t), "--workdir", str(project)).stdout


def test_a_statement_met_in_two_sessions_is_one_memory_with_both_sources(mem: Path, tmp_path: Path):
    for sid in ("first-1", "second-2"):
        t = tmp_path / f"{sid}.jsonl"
        t.write_text(claude_line("user", f"Hello from {sid}.", sid) + claude_line("assistant",
                     "Decision: the queue lives in Postgres.", sid))
        assert strata(mem, "capture", str(t)).returncode == 0
        assert strata(mem, "capture", str(t)).returncode == 0  # again: no third source line
    [memory] = (mem / "active/decisions").iterdir()
    text = memory.read_text()
    assert text.count("Captured from claude-code session first-1") == 1
    assert text.count("Captured from claude-code session second-2") == 1
    assert git(mem, "status", "--porcelain").stdout == b""


def test_a_codex_prompt_kept_only_as_an_event_is_the_ask(mem: Path, tmp_path: Path):
    t = tmp_path / "rollout-e.jsonl"
    lines = [{"type": "session_meta", "timestamp": "2025-10-01T08:00:00Z", "payload": {"id": "ev-1"}},
             {"type": "response_item", "payload": {"type": "message", "role": "user", "content": [
                 {"type": "input_text", "text": "# AGENTS.md instructions for /w\n\n<INSTRUCTIONS>be brief"}]}},
             {"type": "event_msg", "payload": {"type": "user_message", "message": "Rename the export job. Next: "
                                                                                  "update the cron docs."}},
             {"type": "response_item", "payload": {"type": "function_call", "name": "exec_command",
                                                   "arguments": json.dumps({"cmd": "git mv a.py export.py"})}}]
    t.write_text("".join(json.dumps(line) + "\n" for line in lines))
    report = json.loads(strata(mem, "capture", str(t), "--json").stdout)
    assert sorted(report["memories"]) == ["sessions/2025-10-01-rename-the-export-job-next-update",
                                          "tasks/update-the-cron-docs"]
    text = (mem / "active/sessions/2025-10-01-rename-the-export-job-next-update.md").read_text()
    assert "AGENTS.md" not in text and "- Rename the export job." in text and "`git mv a.py export.py`" in text


def test_capture_finds_what_real_sessions_decided(mem: Path):
    """On real sessions of the corpus's tuning part: the user's choice in their own words, their
    constraints, an answer to the agent's question, an approved plan."""
    found = {}
    for name in ("codex/moonmind.jsonl", "codex/behaviour-lab.jsonl", "claude/pai-loop.jsonl"):
        report = json.loads(strata(mem, "capture", str(CORPUS / name), "--json").stdout)
        found[name] = report["memories"]
    assert any(m.startswith("decisions/update-my-spec-to-remove-this-queue-separation")
               for m in found["codex/moonmind.jsonl"])
    assert any(m.startswith("rejections/add-new-dependencies") for m in found["codex/behaviour-lab.jsonl"])
    assert any(m.startswith("decisions/approved-plan") for m in found["claude/pai-loop.jsonl"])
    assert any(m.startswith("decisions/der-plan-hat-5-phasen") for m in found["claude/pai-loop.jsonl"])


def test_codex_answers_to_request_user_input_and_an_approved_proposed_plan_are_decisions(mem: Path, tmp_path: Path):
    """Codex asks with request_user_input (the answers come back as the call's output, a note the
    person typed as `user_note: ...`) and, in plan mode, puts a `<proposed_plan>` in its reply that
    the person approves with "Implement the plan."."""
    asked = {"questions": [
        {"id": "store", "header": "Store", "question": "Where should sessions be kept?",
         "options": [{"label": "SQLite (Recommended)", "description": "one file"}, {"label": "Postgres"}]},
        {"id": "name", "header": "Name", "question": "What is the project called?"}]}
    answers = {"answers": {"store": {"answers": ["SQLite (Recommended)",
                                                 "user_note: keep it local. Avoid any hosted database"]},
                           "name": {"answers": ["Ledger"]}}}
    lines = [{"type": "session_meta", "timestamp": "2026-07-10T08:00:00Z", "payload": {"id": "ask-1"}},
             {"type": "response_item", "payload": {"type": "message", "role": "user", "content": [
                 {"type": "input_text", "text": "Plan the session store."}]}},
             {"type": "response_item", "payload": {"type": "function_call", "name": "request_user_input",
                                                   "arguments": json.dumps(asked), "call_id": "c1"}},
             {"type": "response_item", "payload": {"type": "function_call_output", "call_id": "c1",
                                                   "output": json.dumps(answers)}},
             {"type": "response_item", "payload": {"type": "message", "role": "assistant", "content": [
                 {"type": "output_text", "text": "<proposed_plan>\n# Local session ledger\n- one SQLite file\n"
                                                 "</proposed_plan>"}]}},
             {"type": "response_item", "payload": {"type": "message", "role": "user", "content": [
                 {"type": "input_text", "text": "Implement the plan."}]}}]
    t = tmp_path / "rollout-ask.jsonl"
    t.write_text("".join(json.dumps(line) + "\n" for line in lines))
    report = json.loads(strata(mem, "capture", str(t), "--json").stdout)
    made = report["memories"]
    assert any(m.startswith("decisions/where-should-sessions-be-kept-sqlite") for m in made)
    assert any(m.startswith("decisions/where-should-sessions-be-kept-keep-it-local") for m in made)
    assert any(m.startswith("rejections/any-hosted-database") for m in made)  # the note is read as the user's words
    assert any(m.startswith("decisions/approved-plan-local-session-ledger") for m in made)
    assert not any("project-called" in m for m in made)  # a question without options asks for a fact


def test_text_built_to_make_the_rules_backtrack_is_read_in_linear_time(mem: Path, tmp_path: Path):
    """A line of 20,000 blanks after a full stop made one rule's overlapping blanks cost minutes (a
    hostile web page an agent read is enough to get it into a transcript). The capture must finish:
    the subprocess timeout is a hang guard, far above what linear time needs."""
    hostile = ["." + " " * 20000 + "x", ".\t" * 10000, ("word " * 30 + "is not ") * 500, "<system-reminder>" * 20000]
    t = tmp_path / "h.jsonl"
    t.write_text("".join(claude_line(role, text, "h-1") for text in hostile for role in ("user", "assistant")))
    proc = strata(mem, "capture", str(t), "--json")  # strata() gives up after 120 s
    assert proc.returncode == 0 and json.loads(proc.stdout)["lines"] == [1, 8]
