"""The janitor on real repositories with history at chosen dates (its rules alone: tests/core/test_rules.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import commit_count, git, head, strata

pytestmark = pytest.mark.slow


def at(day: str) -> dict:
    return {"GIT_AUTHOR_DATE": f"{day}T12:00:00+00:00", "GIT_COMMITTER_DATE": f"{day}T12:00:00+00:00"}


def run(mem: Path, *args: str, env: dict | None = None):
    proc = strata(mem, *args, env=env)
    assert proc.returncode == 0, proc.stderr.decode()
    return json.loads(proc.stdout) if "--json" in args else proc.stdout.decode()


def janitor_json(mem: Path, now: str, *extra: str) -> dict:
    return run(mem, "janitor", "--json", "--now", now, *extra)


@pytest.fixture
def aged(mem: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Memories written on 2026-01-01 in folders with different thresholds, plus a rejection
    (through the library: `write` through the console script is tested in tests/e2e)."""
    from strata_git.app.vault import Vault

    vault = Vault.open(str(mem))
    with monkeypatch.context() as mp:
        for key, value in at("2026-01-01").items():
            mp.setenv(key, value)
        for name in ("projects/koda", "gtd/inbox", "entities/mia", "notes/idea"):
            vault.write(name, f"# {name}\n".encode(), via="cli")
        vault.write("projects/no-to-x", b"---\ntype: rejection\n---\nwe said no\n", via="cli")
    return mem


def test_dry_run_changes_nothing_and_shows_rules_and_evidence(aged: Path):
    before = head(aged)
    plan = janitor_json(aged, "2026-01-20", "--dry-run")
    assert plan["summary"] == "cool 2" and not plan["applied"]
    assert [m["name"] for m in plan["moves"]] == ["gtd/inbox", "projects/koda"]
    assert plan["moves"][0]["rule"] == "cool.after_days.gtd = 7" and plan["moves"][0]["age_days"] == 18
    assert head(aged) == before and git(aged, "status", "--porcelain").stdout == b""
    assert "cool     active/gtd/inbox.md -> cooled/gtd/inbox.md" in run(aged, "janitor", "--dry-run", "--now",
                                                                             "2026-01-20")


def test_apply_is_one_janitor_commit_of_pure_renames_with_trailers(aged: Path):
    count = commit_count(aged)
    result = janitor_json(aged, "2026-01-20")
    assert result["applied"] and commit_count(aged) == count + 1
    assert git(aged, "log", "-1", "--format=%an <%ae>|%s").stdout.decode().strip() == \
        "git-strata janitor <janitor@git-strata.invalid>|strata: cool 2"
    status = git(aged, "show", "-M", "--name-status", "--format=", "HEAD").stdout.decode().split("\n")
    assert [line.split("\t")[0] for line in status if line] == ["R100", "R100"]
    assert (aged / "cooled/gtd/inbox.md").exists() and not (aged / "active/gtd/inbox.md").exists()
    assert git(aged, "status", "--porcelain").stdout == b""
    log = run(aged, "log", "--json")
    assert {(m["action"], m["name"], m["rule"]) for m in log} == {
        ("cool", "gtd/inbox", "cool.after_days.gtd = 7"), ("cool", "projects/koda", "cool.after_days.projects = 14")}
    assert "Cooled (2)" in (aged / "index.md").read_text()


def test_moves_do_not_make_memories_young_and_rejections_stay(aged: Path):
    janitor_json(aged, "2026-01-20")  # cools gtd/inbox and projects/koda
    result = janitor_json(aged, "2026-04-02")  # 91 days after the last change, not after the move
    assert {(m["action"], m["name"]) for m in result["moves"]} == {
        ("archive", "gtd/inbox"), ("archive", "projects/koda"), ("cool", "entities/mia"), ("cool", "notes/idea")}
    assert (aged / "active/projects/no-to-x.md").exists()


def test_a_revert_of_a_janitor_commit_is_respected(aged: Path):
    janitor_json(aged, "2026-01-20")
    git(aged, "-c", "core.hooksPath=/dev/null", "revert", "--no-edit", "HEAD")  # dated 2026-11-01 by the fixture
    assert (aged / "active/gtd/inbox.md").exists()
    moved = [m["name"] for m in janitor_json(aged, "2026-11-05")["moves"]]
    assert "gtd/inbox" not in moved and "projects/koda" not in moved  # aging restarted at the revert
    assert "gtd/inbox" in [m["name"] for m in janitor_json(aged, "2026-11-09", "--dry-run")["moves"]]


def test_changes_merged_from_a_branch_count_at_their_own_time(aged: Path):
    """A merge makes nothing young: the branch's edit is as old as its commit (so merges made by
    sync on two machines agree, and the other machine's janitor moves never reset an age)."""
    import os
    import subprocess

    git(aged, "checkout", "-q", "-b", "side")
    (aged / "active/gtd/inbox.md").write_text("# inbox, edited on a branch long ago\n")
    subprocess.run(["git", "commit", "-q", "-am", "edit on side"], cwd=aged, check=True,
                   env={**os.environ, **at("2026-01-02")})
    git(aged, "checkout", "-q", "main")
    git(aged, "merge", "-q", "--no-ff", "--no-edit", "side")  # dated 2026-11-01 by the fixture
    names = [m["name"] for m in janitor_json(aged, "2026-11-05", "--dry-run")["moves"]]
    assert "gtd/inbox" in names and "projects/koda" in names
    (aged / "active/gtd/inbox.md").write_text("# inbox, edited after the merge\n")
    git(aged, "commit", "-q", "-am", "edit after the merge")  # dated 2026-11-01
    names = [m["name"] for m in janitor_json(aged, "2026-11-05", "--dry-run")["moves"]]
    assert "gtd/inbox" not in names


def test_reads_promote_a_cooled_memory(aged: Path):
    janitor_json(aged, "2026-01-20")
    for _ in range(3):
        run(aged, "read", "projects/koda")
    result = janitor_json(aged, "+0d")
    assert ("promote", "projects/koda") in [(m["action"], m["name"]) for m in result["moves"]]
    assert (aged / "active/projects/koda.md").exists()
    assert git(aged, "for-each-ref", "refs/strata/access").stdout  # the reads were flushed to this machine's ref


def test_uncommitted_memories_are_skipped_and_staged_work_is_left_alone(aged: Path):
    (aged / "active/gtd/inbox.md").write_text("# inbox\nunsaved\n")
    (aged / "mine.txt").write_text("staged by the user\n")
    git(aged, "add", "mine.txt")
    result = janitor_json(aged, "2026-01-20")
    assert [m["name"] for m in result["moves"]] == ["projects/koda"]
    assert result["skipped"] == [{"name": "gtd/inbox", "reason": "it has uncommitted changes (would cool)"}]
    assert (aged / "active/gtd/inbox.md").read_text() == "# inbox\nunsaved\n"
    assert git(aged, "diff", "--cached", "--name-only").stdout.decode().split() == ["mine.txt"]
    assert "mine.txt" not in git(aged, "show", "--name-only", "--format=", "HEAD").stdout.decode()


def test_a_file_in_the_way_is_never_overwritten(aged: Path):
    (aged / "cooled/gtd").mkdir(parents=True)
    (aged / "cooled/gtd/inbox.md").write_text("untracked, mine\n")
    result = janitor_json(aged, "2026-01-20")
    assert [m["name"] for m in result["moves"]] == ["projects/koda"]
    assert "already exists on disk" in result["skipped"][0]["reason"]
    assert (aged / "cooled/gtd/inbox.md").read_text() == "untracked, mine\n"


def test_refuses_during_a_merge_and_on_a_detached_head(aged: Path):
    git(aged, "checkout", "-q", "--detach")
    proc = strata(aged, "janitor", "--now", "2026-01-20")
    assert proc.returncode == 1 and b"detached HEAD" in proc.stderr
    git(aged, "checkout", "-q", "main")
    (aged / ".git/MERGE_HEAD").write_text(head(aged) + "\n")
    proc = strata(aged, "janitor", "--now", "2026-01-20")
    assert proc.returncode == 1 and b"during a merge" in proc.stderr


def test_why_explains_place_rule_and_next_move(aged: Path):
    janitor_json(aged, "2026-01-20")
    info = run(aged, "why", "projects/koda", "--json", "--now", "2026-01-25")
    assert info["tier"] == "cooled" and info["in_tier_since"] == "2026-01-20"
    assert info["moved_by"]["rule"] == "cool.after_days.projects = 14" and info["age_days"] == 23
    assert "archived once unchanged for 90 days" in info["next"]
    rejection = run(aged, "why", "projects/no-to-x", "--json", "--now", "2027-01-01")
    assert rejection["would_move_now"] is None and "never cools" in rejection["next"]


def test_two_clones_plan_the_same_and_share_reads_through_a_bare_remote(aged: Path, tmp_path: Path):
    janitor_json(aged, "2026-01-20")
    bare = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(bare))
    git(aged, "remote", "add", "origin", str(bare))
    git(aged, "push", "-q", "origin", "main")
    other = tmp_path / "other"
    git(tmp_path, "clone", "-q", str(bare), str(other))
    run(other, "install-hooks")
    assert janitor_json(aged, "2026-02-01", "--dry-run")["moves"] == \
        janitor_json(other, "2026-02-01", "--dry-run")["moves"]
    # two reads here, one there: only together are they enough to promote
    run(aged, "read", "projects/koda")
    run(aged, "read", "projects/koda")
    janitor_json(aged, "2026-01-21")  # flushes this machine's reads to its ref (nothing to move)
    git(aged, "push", "-q", "origin", "refs/strata/access/*:refs/strata/access/*")
    git(other, "fetch", "-q", "origin", "+refs/strata/access/*:refs/strata-remotes/origin/access/*")
    run(other, "read", "projects/koda")
    promotions = [m["name"] for m in janitor_json(other, "+0d", "--dry-run")["moves"] if m["action"] == "promote"]
    assert promotions == ["projects/koda"]


# -- the daemon --------------------------------------------------------------------------------

def _start_serve(mem: Path, *args: str):
    import os
    import subprocess
    import sys
    import time

    proc = subprocess.Popen([str(Path(sys.executable).parent / "git-strata"), "serve", *args], cwd=mem,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=dict(os.environ))
    log = mem / ".git/strata/serve.log"
    deadline = time.monotonic() + 30
    while not (log.exists() and log.read_text().strip()) and time.monotonic() < deadline:
        time.sleep(0.05)
    return proc


def test_serve_first_cycle_is_dry_and_sigterm_stops_it_cleanly(aged: Path):
    import signal

    before = head(aged)
    proc = _start_serve(aged, "--interval", "1h")
    first = json.loads((aged / ".git/strata/serve.log").read_text().splitlines()[0])
    assert first["dry_run"] and first["summary"] == "cool 4" and head(aged) == before
    status = run(aged, "status", "--json")
    assert status["daemon"] == proc.pid
    second = strata(aged, "serve", "--once")
    assert second.returncode == 1 and b"already runs" in second.stderr
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=30) == 0
    assert run(aged, "status", "--json")["daemon"] is None
    assert not (aged / ".git/strata/serve.pid").exists()


def test_serve_live_applies_and_stop_ends_it(aged: Path):
    proc = _start_serve(aged, "--interval", "1s", "--live")
    entry = json.loads((aged / ".git/strata/serve.log").read_text().splitlines()[0])
    assert not entry["dry_run"] and entry["commit"] and entry["summary"] == "cool 4"
    assert "stopped the daemon" in run(aged, "serve", "--stop")
    assert proc.wait(timeout=30) == 0
    assert run(aged, "serve", "--stop").strip() == "no daemon was running"


def test_serve_rejects_a_bad_interval(aged: Path):
    proc = strata(aged, "serve", "--interval", "soon")
    assert proc.returncode == 1 and b"cannot read the interval" in proc.stderr


def test_stale_ref_locks_of_a_killed_janitor_are_cleared_but_live_ones_kept(aged: Path):
    """A janitor killed inside `git update-ref` leaves refs/heads/main.lock: it blocks every
    commit, the user's included, until someone deletes it."""
    old = head(aged)
    journal = aged / ".git/strata/janitor.journal"
    journal.write_text(json.dumps({"old": old, "moves": [], "pid": 999_999_999}))
    lock = aged / ".git/refs/heads/main.lock"
    with open(lock, "wb"):  # held open: a running git's, to be left alone
        proc = strata(aged, "janitor", "--now", "2026-01-20")
        assert proc.returncode == 1 and b"refs/heads/main.lock" in proc.stderr and lock.exists()
    assert janitor_json(aged, "2026-01-20")["summary"] == "cool 2"  # now nobody holds it: stale
    assert not lock.exists() and not journal.exists()
    assert git(aged, "status", "--porcelain").stdout == b""
