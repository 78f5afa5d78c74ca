"""What a newcomer's first hour met, each fixed: output that says what happened."""

from __future__ import annotations

from pathlib import Path

from conftest import bare_remote, git, strata


def out(proc) -> str:
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.decode()


def test_sync_says_what_it_brought_in_and_pushed(mem: Path, tmp_path: Path):
    git(mem, "remote", "add", "origin", str(bare_remote(tmp_path / "r.git")))
    out(strata(mem, "write", "a", "-m", "first"))
    text = out(strata(mem, "sync"))
    assert "nothing new on origin/main" in text and "pushed " in text and "up to date" not in text
    assert "nothing to push" in out(strata(mem, "sync"))


def test_status_says_when_the_sync_remote_does_not_exist(mem: Path):
    text = out(strata(mem, "status"))
    assert "sync: no git remote named origin (`git remote add origin URL`" in text and "never synced" not in text


def test_why_of_an_uncommitted_memory_never_says_none(mem: Path):
    (mem / "active/draft.md").write_text("# Draft\n")
    text = out(strata(mem, "why", "draft"))
    assert "None" not in text and "(not committed yet)" in text and "never committed" in text


def test_the_same_rejection_twice_is_recorded_once(mem: Path):
    first = out(strata(mem, "reject", "use MongoDB for events"))
    again = out(strata(mem, "reject", "use  MongoDB for events"))
    assert "already recorded" in again and first != again
    assert [p.name for p in (mem / "active/rejections").iterdir()] == ["use-mongodb-for-events.md"]
    out(strata(mem, "reject", "use MongoDB for events, ever"))  # another text: its own memory
    out(strata(mem, "reject", "use MongoDB for events", "--why", "no transactions"))  # a new reason is kept
    assert len(list((mem / "active/rejections").iterdir())) == 3
    assert "already recorded" in out(strata(mem, "reject", "use MongoDB for events", "--why", "no transactions"))


def test_the_janitor_says_in_how_many_days_it_counted_reads(mem: Path):
    out(strata(mem, "write", "gtd/inbox", "-m", "- [ ] call Mia\n"))
    out(strata(mem, "read", "gtd/inbox"))
    later = "+30d"
    plan = out(strata(mem, "janitor", "--dry-run", "--now", later))
    assert " 0 read(s) in 7 days, last read " in plan  # the read was 30 days before: outside the 7
    why = out(strata(mem, "why", "gtd/inbox", "--now", later))
    assert "1 read(s) in 90 days" in why
