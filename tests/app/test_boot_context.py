"""The boot context tells what was decided: each standing decision with its gist, each rejection
with its why, cooled ones still there, superseded or retired ones gone, all within the budget."""

from __future__ import annotations

from pathlib import Path

from conftest import strata


def _write(mem: Path, name: str, text: str) -> None:
    proc = strata(mem, "write", name, "-m", text)
    assert proc.returncode == 0, proc.stderr


def _context(mem: Path, *args: str) -> str:
    proc = strata(mem, "context", *args)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.decode()


def test_decisions_come_with_their_gist_and_rejections_with_their_why(mem: Path):
    _write(mem, "decisions/koda-auth", "---\ntype: decision\ntitle: Koda auth\n---\n# Auth\n\nPasskeys and magic "
                                        "links, no passwords.\nSupport tickets were mostly resets.\n\nDetails below.\n")
    assert strata(mem, "reject", "adopt Kubernetes", "--why", "one VM is enough").returncode == 0
    text = _context(mem)
    assert "- `decisions/koda-auth` · Koda auth · decision · " in text
    assert ": Passkeys and magic links, no passwords. Support tickets were mostly resets.\n" in text
    assert "Details below" not in text.split("## Decisions", 1)[1].split("<<end", 1)[0]
    assert "- `rejections/adopt-kubernetes`: adopt Kubernetes (why: one VM is enough)\n" in text


def test_a_superseded_or_retired_decision_leaves_the_context(mem: Path):
    _write(mem, "decisions/db-old", "---\ntype: decision\ntitle: Events in MongoDB\n---\nMongoDB for events.\n")
    _write(mem, "decisions/db", "---\ntype: decision\ntitle: Events in Postgres\nsupersedes: [decisions/db-old]\n"
                                "---\nPostgres: we need transactions.\n")
    _write(mem, "decisions/cron", "---\ntype: decision\ntitle: Nightly cron\nstatus: retired\n---\nAt 2am.\n")
    text = _context(mem)
    assert "decisions/db`" in text and "decisions/db-old" not in text and "decisions/cron" not in text


def test_a_cooled_decision_still_stands_in_the_context(mem: Path):
    _write(mem, "decisions/db", "---\ntype: decision\ntitle: Events in Postgres\n---\nPostgres 16.\n")
    plan = strata(mem, "janitor", "--now", "+400d")
    assert plan.returncode == 0 and (mem / "cooled/decisions/db.md").exists(), plan.stdout
    assert "- `decisions/db` · Events in Postgres · decision · " in _context(mem)
    hook = _context(mem, "--budget", "1000")
    assert ": Postgres 16." in hook


def test_a_small_budget_drops_gists_before_it_drops_decisions(mem: Path):
    for i in range(6):
        _write(mem, f"decisions/d{i}", f"---\ntype: decision\ntitle: Choice {i}\n---\n" + "A long reason. " * 15)
    roomy, small = _context(mem, "--budget", "2000"), _context(mem, "--budget", "150")
    assert roomy.count(": A long reason.") == 6
    assert "A long reason" not in small and small.count(" · decision · ") >= 3  # titles kept, gists dropped


def test_a_gist_does_not_repeat_the_title(mem: Path):
    _write(mem, "decisions/q", "---\ntype: decision\ntitle: Use one codex queue\n---\nUse one codex queue.\n")
    _write(mem, "decisions/r", "---\ntype: decision\ntitle: Use one queue\n---\nUse one queue: workers share it.\n")
    text = _context(mem)
    assert [line.split(" · ", 3)[-1] for line in text.splitlines() if line.startswith("- `decisions/")] == \
        ["2026-11-01", "2026-11-01: workers share it."]


def test_a_standing_decision_cools_but_never_archives_until_it_is_retired(mem: Path):
    _write(mem, "decisions/db", "---\ntype: decision\ntitle: Events in Postgres\n---\nPostgres: transactions.\n")
    _write(mem, "decisions/old-db", "---\ntype: decision\ntitle: Events in MongoDB\n---\nMongoDB.\n")
    _write(mem, "decisions/cron", "---\ntype: decision\ntitle: Nightly cron\nstatus: retired\n---\nAt 2am.\n")
    _write(mem, "decisions/queue", "---\ntype: decision\ntitle: Kafka\nsupersedes: [decisions/old-db]\n---\nKafka.\n")
    _write(mem, "notes/plain", "A note about nothing in particular.\n")
    assert strata(mem, "janitor", "--now", "+40d").returncode == 0
    assert (mem / "cooled/decisions/db.md").exists()  # cooling moves the file...
    assert "decisions/db`" in _context(mem)  # ...not its presence
    why = strata(mem, "why", "decisions/db", "--now", "+200d").stdout.decode()
    assert "stays cooled while it stands" in why
    assert strata(mem, "janitor", "--now", "+200d").returncode == 0
    assert (mem / "cooled/decisions/db.md").exists() and (mem / "cooled/decisions/queue.md").exists()
    for gone in ("decisions/old-db", "decisions/cron", "notes/plain"):  # retired, superseded, no decision
        assert (mem / f"archive/{gone}.md").exists(), gone
    text = _context(mem)
    assert "decisions/db`" in text and "decisions/queue`" in text and "old-db" not in text
