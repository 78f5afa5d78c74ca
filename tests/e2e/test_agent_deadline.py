"""Agent hooks answer within their deadline whatever holds the catalog: run exactly as a harness
runs them (`git-strata hook agent EVENT`, JSON on stdin), against other processes that really
hold SQLite's lock, the repository lock or the rebuild lock (this test's process: the hook is
another), with the catalog deleted, with stdin never closed, and with a newline in a path. Wall
times are not asserted tightly: each lock is held until the hook has answered, so an answer at
all shows that the hook did not wait for it."""

from __future__ import annotations

import fcntl
import json
import os
import re
import select
import shutil
import sqlite3
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from conftest import BIN, git
from strata_git.gitio.git import discover
from strata_git.ops import txn

pytestmark = pytest.mark.slow

PAYLOADS = {"SessionStart": {"source": "startup"}, "UserPromptSubmit": {"prompt": "when does the koda beta ship?"}}
SANE = 8.0  # seconds: only a guard against a hook that waits for the lock (held until it has answered)


@pytest.fixture
def memory(mem: Path) -> Path:
    """A memory repository with three memories, prompt hints on, and its catalog up to date."""
    from strata_git.app.vault import Vault

    vault = Vault.open(str(mem))  # the memories through the library: the hooks under test run as installed
    vault.write("projects/koda", b"# Koda\n\nThe koda beta ships on Friday.\n", via="cli")
    vault.reject("use MongoDB for the event store", why="we need transactions", via="cli")
    vault.write("decisions/postgres", b"We use Postgres 16.\n", type="decision", via="cli")
    cfg = mem / ".strata/config.toml"
    cfg.write_text(cfg.read_text().replace("prompt_hints = false", "prompt_hints = true")
                   .replace("prompt_min_score = 5.0", "prompt_min_score = 1.0"))
    git(mem, "commit", "-qam", "hints on")
    for event in PAYLOADS:
        assert answer(mem, event)[0], log(mem)
    return mem


def answer(memory: Path, event: str, payload: dict | None = None) -> tuple[dict, float]:
    """(the hook's answer, seconds it took), run as the harness runs it."""
    started = time.monotonic()
    proc = subprocess.run([str(BIN / "git-strata"), "hook", "agent", event, "--memory", str(memory)],
                          cwd=memory.parent, input=json.dumps(payload or PAYLOADS[event]).encode(),
                          capture_output=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout), time.monotonic() - started


def log(memory: Path) -> str:
    path = memory / ".git/strata/agent.log"
    return path.read_text() if path.exists() else ""


@contextmanager
def catalog_locked(memory: Path, mode: str) -> Iterator[None]:
    """This process (the hooks are others) in a `BEGIN mode` transaction on the catalog for the block."""
    db = sqlite3.connect(memory / ".git/strata/catalog.sqlite", isolation_level=None)
    db.execute(f"BEGIN {mode}")
    try:
        yield
    finally:
        db.close()


@contextmanager
def flocked(path: Path) -> Iterator[None]:
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def repository_locked(memory: Path):
    """The repository lock, as a janitor or a capture holds it."""
    return txn.locked(discover(str(memory)))


def rebuilt(memory: Path, timeout: float = 120.0) -> dict:
    """Poll until SessionStart answers again and the background rebuild has ended; the answer."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        out = answer(memory, "SessionStart")[0]
        if out:
            with flocked(memory / ".git/strata/rebuild.lock"):  # the rebuild holds it while it runs
                return out
        time.sleep(0.3)
    raise AssertionError(f"no answer {timeout} s after the catalog was deleted:\n{log(memory)}")


# -- another process holds a lock --------------------------------------------------------------------

@pytest.mark.parametrize("event", PAYLOADS)
def test_an_exclusive_lock_on_the_catalog_gets_an_empty_answer_while_it_is_held(memory: Path, event: str):
    with catalog_locked(memory, "EXCLUSIVE"):
        out, seconds = answer(memory, event)  # (and the lock is held until the hook has answered)
    assert out == {} and seconds < SANE
    assert f"{event}: answered empty: another process holds the catalog's lock" in log(memory)
    assert answer(memory, event)[0]  # the lock gone, the answer is back


def test_a_write_transaction_on_the_catalog_lets_hooks_read_what_is_there(memory: Path):
    """A writer between its first write and its commit blocks no reader: the hooks answer from the
    rows as they are; only a hook that must bring rows up to date itself answers empty."""
    with catalog_locked(memory, "IMMEDIATE"):
        start = answer(memory, "SessionStart")[0]
        hints = answer(memory, "UserPromptSubmit")[0]
        (memory / "active/projects/koda.md").write_text("# Koda\n\nThe koda beta ships on Monday now.\n")
        stale, seconds = answer(memory, "SessionStart")
    assert "ships on Friday" in start["hookSpecificOutput"]["additionalContext"]
    assert "projects/koda" in hints["hookSpecificOutput"]["additionalContext"]
    assert stale == {} and seconds < SANE
    assert "another process holds the catalog's lock" in log(memory)
    assert "ships on Monday" in answer(memory, "SessionStart")[0]["hookSpecificOutput"]["additionalContext"]


def test_the_repository_lock_held_does_not_hold_up_a_hook(memory: Path):
    with repository_locked(memory):
        answers = {event: answer(memory, event) for event in PAYLOADS}
    for event, (out, seconds) in answers.items():
        assert out["hookSpecificOutput"]["hookEventName"] == event and seconds < SANE
    assert "answered empty" not in log(memory)


# -- the catalog deleted, or far behind: rebuilt in the background -----------------------------------

def test_a_deleted_catalog_is_rebuilt_in_the_background(memory: Path):
    catalog = memory / ".git/strata/catalog.sqlite"
    catalog.unlink()
    for event in PAYLOADS:
        out, seconds = answer(memory, event)
        assert out == {} or out["hookSpecificOutput"]  # the rebuild may have finished already
        assert seconds < SANE
    assert re.search(r"SessionStart: answered empty: the catalog is missing; rebuilding it in the background "
                     r"\(pid \d+, `git strata hook post-checkout`\)", log(memory))
    out = rebuilt(memory)
    assert "ships on Friday" in out["hookSpecificOutput"]["additionalContext"] and catalog.is_file()


@pytest.mark.parametrize("lock, why", [
    ("rebuild.lock", "a rebuild a hook started is still running"),
    ("lock", "another git-strata process holds the repository lock: no rebuild is started before it lets go")])
def test_a_rebuild_is_started_once_and_not_while_another_process_works(memory: Path, lock: str, why: str):
    """While the rebuild a hook started runs (it holds rebuild.lock), or a janitor or a capture holds
    the repository lock, hooks start no other rebuild; the next hook after it lets go does."""
    catalog = memory / ".git/strata/catalog.sqlite"
    catalog.unlink()
    with repository_locked(memory) if lock == "lock" else flocked(catalog.parent / lock):
        outs = [answer(memory, event)[0] for event in [*PAYLOADS, *PAYLOADS]]
    assert outs == [{}] * 4 and not catalog.exists()
    assert log(memory).count(f"the catalog is missing; {why}") == 4
    assert "rebuilding it in the background" not in log(memory)
    assert answer(memory, "SessionStart")[0] == {}
    assert log(memory).count("rebuilding it in the background") == 1
    rebuilt(memory)


def test_a_catalog_far_behind_the_working_tree_is_brought_up_to_date_in_the_background(memory: Path):
    folder = memory / "active/bulk"
    folder.mkdir()
    for i in range(600):  # more than a hook parses in its time (catalog.HOOK_READS)
        (folder / f"note-{i:03d}.md").write_text(f"# Note {i}\n\nBulk note number {i}.\n")
    out, seconds = answer(memory, "SessionStart")
    assert out == {} and seconds < SANE
    assert re.search(r"answered empty: the catalog is 60\d memories behind, more than a hook reads in its time; "
                     r"rebuilding it in the background", log(memory))
    assert "(HEAD " in rebuilt(memory)["hookSpecificOutput"]["additionalContext"]
    assert re.search(r"\(HEAD \w+, 60\d active\)", answer(memory, "SessionStart")[0]["hookSpecificOutput"]
                     ["additionalContext"])


# -- the harness's input, and the log ----------------------------------------------------------------

@pytest.mark.parametrize("whole", [True, False])
def test_stdin_held_open_does_not_hold_up_a_hook(memory: Path, whole: bool):
    """A harness that writes its JSON and never closes stdin gets its answer at once; one whose JSON
    never ends gets an empty one within the deadline, and the log says why."""
    data = json.dumps(PAYLOADS["SessionStart"]).encode()
    proc = subprocess.Popen([str(BIN / "git-strata"), "hook", "agent", "SessionStart", "--memory", str(memory)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        proc.stdin.write(data if whole else data[:-3])
        proc.stdin.flush()
        assert select.select([proc.stdout], [], [], SANE)[0], "no answer while stdin was open"
        out = json.loads(proc.stdout.read())  # to its end: the hook exited with stdin still open
        assert proc.wait(timeout=SANE) == 0
    finally:
        proc.kill()
        proc.stdin.close()
    if whole:
        assert "ships on Friday" in out["hookSpecificOutput"]["additionalContext"]
    else:
        assert out == {}
        assert ("answered empty: ValueError: the harness's input was still open after 0.5 s, and the "
                f"{len(data) - 3} bytes that came are not a whole JSON object") in log(memory)


def test_a_newline_in_a_path_cannot_split_or_forge_a_log_line(memory: Path, tmp_path: Path):
    forged = tmp_path / "mem\n2026-01-01T00:00:00Z SessionStart: forged\r\x1b[2K"
    shutil.copytree(memory, forged, symlinks=True)
    (forged / ".strata/config.toml").unlink()  # a git repository, but not a memory repository: the log says where
    (forged / ".git/strata/agent.log").unlink()
    for event in PAYLOADS:  # SessionStart tells the person in one line, the path escaped like the log's
        said = answer(forged, event)[0]
        assert said == {} if event != "SessionStart" else \
            re.fullmatch(r"git-strata: --memory names [^\n\r\x1b]*mem\\u000a2026[^\n\r\x1b]*", said["systemMessage"])
    lines = (forged / ".git/strata/agent.log").read_text().split("\n")
    assert len(lines) == 5 and lines[-1] == ""  # two lines a call: why it answered empty, and its time
    for line in lines[:-1]:
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ (SessionStart|UserPromptSubmit): [^\r\x1b]*", line)
    assert "mem\\u000a2026-01-01T00:00:00Z SessionStart: forged\\u000d\\u001b[2K is a git repository but not a " \
           "memory repository" in lines[-3]
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["home", "mem", forged.name])  # no stray state
