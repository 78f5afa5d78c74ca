"""Memory over time (`stats --chart`, the page's picture): memories per tier at each week's end
and the week's moves, from history in one pass, checked against `git ls-tree` at each week's last
commit, and against what history's commits did."""

from __future__ import annotations

import datetime
import json
import os
import subprocess
from pathlib import Path

from conftest import git, strata
from helpers.dated import at, ok
from helpers.machines import make_machines


def _week(day: str) -> str:
    year, week, _ = datetime.date.fromisoformat(day).isocalendar()
    return f"{year}-W{week:02d}"


def _weeks(mem: Path, now: str, n: int = 60) -> dict[str, dict]:
    from strata_git.app.vault import Vault

    stamp = int(datetime.datetime.fromisoformat(f"{now}T12:00:00+00:00").timestamp())
    return {w.week: w for w in Vault.open(str(mem)).timeline(n, now=stamp)}


def _tiers_in_tree(mem: Path, rev: str) -> dict[str, int]:
    paths = git(mem, "ls-tree", "-r", "--name-only", "-z", rev).stdout.decode().split("\0")
    return {t: sum(1 for p in paths if p.startswith(f"{t}/") and p.endswith(".md"))
            for t in ("active", "cooled", "archive")}


def _last_commit_of_week(mem: Path, week: str) -> str | None:
    out = git(mem, "log", "--first-parent", "--format=%H %cI", "HEAD").stdout.decode().split("\n")
    for line in out:  # newest first: the first one dated in or before the week
        if line and _week(line.split()[1][:10]) <= week:
            return line.split()[0]
    return None


def test_each_weeks_tiers_match_the_tree_and_its_moves_match_the_janitors_commits(mem: Path):
    ok(mem, "write", "notes/db", "-m", "Postgres 15.", env=at("2026-03-02"))
    ok(mem, "write", "notes/cat", "-m", "The cat is Miso.", env=at("2026-03-04"))
    ok(mem, "write", "notes/keep", "-m", "Kept warm.", env=at("2026-04-10"))
    ok(mem, "janitor", "--now", "2026-04-20T12:00:00+00:00", env=at("2026-04-20"))
    ok(mem, "janitor", "--now", "2026-08-03T12:00:00+00:00", env=at("2026-08-03"))
    ok(mem, "recall", "notes/cat", env=at("2026-08-12"))
    weeks = _weeks(mem, "2026-08-20")
    assert _week("2026-03-02") in weeks
    for week, w in weeks.items():
        commit = _last_commit_of_week(mem, week)
        assert w.tiers == (_tiers_in_tree(mem, commit) if commit else {"active": 0, "cooled": 0, "archive": 0}), week
    subjects = git(mem, "log", "--format=%cI %s", "-E", "--grep", "^strata: (cool|archive) [0-9]"
                   ).stdout.decode().splitlines()
    said = {}  # what the janitor's own subjects say it did, by week: "strata: cool 2, archive 1"
    for line in subjects:
        day, _, subject = line.partition(" ")
        for part in subject.removeprefix("strata: ").split(", "):
            action, n = part.split()
            said[(_week(day[:10]), {"cool": "cooled", "archive": "archived"}[action])] = int(n)
    assert said[(_week("2026-04-20"), "cooled")] == 2 and said[(_week("2026-08-03"), "archived")] == 2
    for (week, move), n in said.items():
        assert weeks[week].moves[move] == n, (week, move)
    assert sum(w.moves["cooled"] for w in weeks.values()) == sum(n for (_, m), n in said.items() if m == "cooled")
    assert weeks[_week("2026-08-12")].moves["rehydrated"] == 1
    assert weeks[_week("2026-08-20")].tiers == _tiers_in_tree(mem, "HEAD")

    proc = ok(mem, "stats", "--chart", "--weeks", "4")
    chart = proc.stdout.decode().split("\n\n")[-1].splitlines()
    assert chart[0].startswith("memories at each week's end") and len(chart) == 1 + 4 + 1
    assert not any("archived" in line for line in chart)  # 08-03 is more than 4 weeks before now
    data = json.loads(ok(mem, "stats", "--chart", "--weeks", "3", "--json").stdout)
    assert len(data["weeks"]) == 3 and data["weeks"][-1]["tiers"] == _tiers_in_tree(mem, "HEAD")
    bad = strata(mem, "stats", "--chart", "--weeks", "0")
    assert bad.returncode != 0 and b"bad number of weeks" in bad.stderr


def test_captured_memories_count_by_the_paths_a_capture_commit_adds(mem: Path):
    (mem / "active/sessions").mkdir(parents=True)
    (mem / "active/sessions/2026-03-02-first.md").write_text("# First session\n")
    (mem / "active/sessions/2026-03-02-second.md").write_text("# Second session\n")
    git(mem, "add", "active/sessions")
    env = {**os.environ, **at("2026-03-03")}
    subprocess.run(["git", "commit", "-q", "-m", "capture: 2 memories\n\nStrata-Capture: {\"harness\": \"codex\"}"],
                   cwd=mem, env=env, check=True, capture_output=True)
    ok(mem, "write", "notes/plain", "-m", "Not captured.", env=at("2026-03-04"))
    weeks = _weeks(mem, "2026-03-05")
    assert weeks[_week("2026-03-03")].moves == {"cooled": 0, "archived": 0, "rehydrated": 0, "captured": 2}
    assert weeks[_week("2026-03-05")].tiers["active"] == 3


def test_out_of_order_dates_and_hostile_paths_are_counted_not_trusted(mem: Path):
    ok(mem, "write", "notes/a", "-m", "A.", env=at("2026-03-16"))
    (mem / "active/odd\x01name\nwith lines.md").write_text("odd\n")
    git(mem, "add", "-A", "active")
    env = {**os.environ, **at("2026-03-02")}  # dated two weeks before its parent
    subprocess.run(["git", "commit", "-q", "--no-verify", "-m", "odd"], cwd=mem, env=env, check=True,
                   capture_output=True)
    env = {**os.environ, "GIT_COMMITTER_DATE": "@99999999999 +0000", "GIT_AUTHOR_DATE": "@99999999999 +0000"}
    (mem / "active/late.md").write_text("late\n")
    git(mem, "add", "active/late.md")
    subprocess.run(["git", "commit", "-q", "--no-verify", "-m", "from the far future"], cwd=mem, env=env,
                   check=True, capture_output=True)
    weeks = _weeks(mem, "2026-03-20", n=520)
    # each change counts in the week its commit says, even before its parent's; the one from the far
    # future (and init's, dated in November) in the last week: the weeks run to now, not to year 5138
    assert list(weeks) == [_week("2026-03-02"), _week("2026-03-09"), _week("2026-03-16")]
    assert weeks[_week("2026-03-02")].tiers["active"] == 1
    assert weeks[_week("2026-03-16")].tiers == _tiers_in_tree(mem, "HEAD") == {"active": 3, "cooled": 0, "archive": 0}


def test_a_sync_merge_does_not_count_its_sides_moves_twice(tmp_path: Path):
    from conftest import bare_remote

    remote = bare_remote(tmp_path / "remote.git")
    a, b, _ = make_machines(tmp_path, str(remote), remote)
    b.write("notes/old", b"# Old\n\nwritten long ago\n")
    b.sync()
    a.sync()
    b.janitor(now=int(datetime.datetime(2027, 6, 1, tzinfo=datetime.UTC).timestamp()))
    b.sync()
    a.write("notes/mine", b"# Mine\n")
    a.sync()  # a merge: b's janitor commit is its second parent's
    root = Path(a.repo.root)
    assert git(root, "rev-list", "--merges", "--count", "HEAD").stdout.strip() != b"0"
    weeks = a.timeline(520, now=int(datetime.datetime(2027, 6, 2, tzinfo=datetime.UTC).timestamp()))
    cooled = git(Path(b.repo.root), "log", "--format=%s", "--grep", "strata: cool").stdout.decode()
    assert sum(w.moves["cooled"] for w in weeks) == sum(int(s.split("cool ")[1].split(",")[0])
                                                       for s in cooled.splitlines()) > 0
    assert weeks[-1].tiers == _tiers_in_tree(root, "HEAD")


def test_a_pruned_clone_draws_its_history_without_fetching_a_blob(mem: Path, tmp_path: Path):
    from helpers.archive import held, pruned_clone

    clone = pruned_clone(mem, tmp_path, {"notes/old": "An old note about the harbor.",
                                         "notes/older": "An older note about the lantern."})
    from helpers.archive import archived_blobs

    oids = list(archived_blobs(clone).values())
    assert oids and not any(held(clone, oid) for oid in oids)
    proc = strata(clone, "stats", "--chart", "--weeks", "60", "--json",
                  env={"GIT_TRACE": str(tmp_path / "trace"), "GIT_NO_LAZY_FETCH": "1"})
    assert proc.returncode == 0, proc.stderr
    weeks = json.loads(proc.stdout)["weeks"]
    assert weeks[-1]["tiers"] == _tiers_in_tree(clone, "HEAD") and weeks[-1]["tiers"]["archive"] == 2
    assert sum(w["moves"]["archived"] for w in weeks) == 2
    assert "fetch" not in (tmp_path / "trace").read_text() and not any(held(clone, oid) for oid in oids)


def test_stats_reads_only_the_weeks_it_shows_and_shows_what_every_move_would(mem: Path, monkeypatch):
    """`stats` shows the last 12 weeks with migrations; it reads the moves of those weeks (and as
    many again) only, and says the same as reading them all."""
    from collections import Counter, defaultdict

    from strata_git.app import stats
    from strata_git.app.vault import Vault
    from strata_git.ops import audit

    vault = Vault.open(str(mem))
    start = int(datetime.datetime(2025, 1, 6, 12, tzinfo=datetime.UTC).timestamp())
    for k in range(32):
        when = start + k * 7 * 86400
        monkeypatch.setenv("GIT_COMMITTER_DATE", f"@{when} +0000")
        monkeypatch.setenv("GIT_AUTHOR_DATE", f"@{when} +0000")
        vault.write(f"notes/w{k:02d}", f"Week {k}.".encode())
        vault.janitor(now=when + 86400)
    moves = audit.migrations(vault.repo, limit=1 << 30)
    every: dict[str, Counter] = defaultdict(Counter)
    for move in moves:
        every[stats._week(move.time)][move.action] += 1
    expected = [{"week": w, **dict(sorted(every[w].items()))} for w in sorted(every, reverse=True)[:stats.WEEKS]]
    since = stats._since(vault.repo)
    assert since is not None and len({stats._week(m.time) for m in moves}) > 2 * stats.WEEKS
    assert len(audit.migrations(vault.repo, limit=1 << 30, since=since)) < len(moves)
    assert vault.stats().migrations_per_week == expected and len(expected) == stats.WEEKS
