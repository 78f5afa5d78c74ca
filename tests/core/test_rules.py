"""The janitor's rules as a pure function: a plan from memory states, reads and config, no git."""

from __future__ import annotations

import random

import pytest

from strata_git.core import rules
from strata_git.core.config import Config
from strata_git.core.rules import DAY, MemoryState

NOW = 1_800_000_000  # a fixed "now" for the pure tests


def state(name: str, tier: str = "active", age_days: float = 0, type: str = "note", dirty: bool = False):
    return MemoryState(name + ".md", tier, int(NOW - age_days * DAY), type, dirty)


DEFAULTS = Config()


def actions(memories, reads=None, cfg=DEFAULTS):
    return [(m.action, m.name[:-3]) for m in rules.plan(memories, reads or {}, cfg, NOW).moves]


@pytest.mark.parametrize("name,age,cools", [
    ("projects/koda", 13.9, False), ("projects/koda", 14, True),
    ("gtd/inbox", 7, True), ("gtd/inbox", 6, False),
    ("entities/mia", 59, False), ("entities/mia", 60, True),
    ("notes/idea", 29, False), ("notes/idea", 30, True),
    ("projects-old/x", 14, False),  # a prefix is a folder, not a string prefix
])
def test_cooling_thresholds_by_folder(name: str, age: float, cools: bool):
    assert actions([state(name, age_days=age)]) == ([("cool", name)] if cools else [])


def test_longest_folder_prefix_wins_and_never_disables():
    cfg = Config(cool_after_days=(("default", 30), ("projects", 14), ("projects/clients", 3), ("logs", None)))
    assert actions([state("projects/clients/acme", age_days=4), state("projects/koda", age_days=4),
                    state("logs/today", age_days=900)], cfg=cfg) == [("cool", "projects/clients/acme")]


def test_rejections_and_listed_types_never_cool():
    cfg = Config(never_cool_types=("rejection", "decision"))
    memories = [state("projects/no-x", age_days=400, type="rejection"),
                state("projects/yes-y", age_days=400, type="decision"),
                state("projects/note", age_days=400)]
    assert actions(memories, cfg=cfg) == [("cool", "projects/note")]


def test_archive_needs_idle_days_and_few_reads():
    old = state("projects/a", "cooled", age_days=91)
    assert actions([old]) == [("archive", "projects/a")]
    assert actions([old], {"projects/a.md": [NOW - 5 * DAY]}) == [("archive", "projects/a")]  # one stray read
    assert actions([old], {"projects/a.md": [NOW - 5 * DAY, NOW - 50 * DAY]}) == []
    assert actions([state("projects/a", "cooled", age_days=89)]) == []


def test_promotion_after_enough_recent_reads_wins_over_archiving():
    cooled = state("projects/a", "cooled", age_days=200)
    reads = {"projects/a.md": [NOW - DAY, NOW - 2 * DAY, NOW - 3 * DAY]}
    assert actions([cooled], reads) == [("promote", "projects/a")]
    stale = {"projects/a.md": [NOW - DAY, NOW - 2 * DAY, NOW - 20 * DAY]}  # one is outside 14 days
    assert actions([cooled], stale) == []  # two reads in 90 days keep it out of the archive too


def test_dirty_memories_are_skipped_with_the_reason():
    result = rules.plan([state("gtd/x", age_days=100, dirty=True)], {}, Config(), NOW)
    assert result.moves == () and "uncommitted changes (would cool)" in result.skipped[0].reason


def test_the_plan_is_the_same_whatever_the_input_order():
    rng = random.Random(7)
    memories = [state(f"{rng.choice(['projects', 'gtd', 'entities', 'x'])}/m{i}",
                      rng.choice(["active", "cooled"]), age_days=rng.uniform(0, 200)) for i in range(300)]
    reads = {m.name: [NOW - rng.randint(0, 100) * DAY for _ in range(rng.randint(0, 4))] for m in memories}
    first = rules.plan(memories, reads, Config(), NOW)
    rng.shuffle(memories)
    assert rules.plan(memories, reads, Config(), NOW) == first and first.moves


def test_a_standing_decision_in_cooled_is_never_archived_but_can_be_promoted():
    old = state("decisions/db", "cooled", age_days=400, type="decision")
    assert [m.action for m in rules.plan([old], {}, DEFAULTS, NOW).moves] == ["archive"]
    standing = old._replace(standing=True)
    assert rules.plan([standing], {}, DEFAULTS, NOW).moves == ()
    reads = {"decisions/db.md": [NOW - i * DAY for i in range(DEFAULTS.promote_reads)]}
    assert [m.action for m in rules.plan([standing], reads, DEFAULTS, NOW).moves] == ["promote"]
    assert "stays cooled while it stands" in rules.next_move(standing, [], DEFAULTS, NOW)
