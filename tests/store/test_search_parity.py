"""Archiving moves a memory, it does not hide it: one ranking over every tier.

A randomized corpus (Zipf-distributed vocabulary, some CJK, some memories sharing rare
words) is searched three ways with the same queries: (a) every memory live, (b) the same
memories spread over active/, cooled/ and archive/ by the real janitor, archive pushed and
pruned, (c) a fresh `git strata clone` of that remote with lazy fetching off. The top-10
lists (names and scores) must be identical.
"""

from __future__ import annotations

import datetime
import os
import random
import subprocess
from pathlib import Path

import pytest

from conftest import FIXED_DATE, bare_remote, git, strata

pytestmark = pytest.mark.slow

DAY = 86400
T0 = int(datetime.datetime.fromisoformat(FIXED_DATE).timestamp())
CJK = ["记忆系统", "数据库迁移", "検索エンジン", "東京の会議", "서버 배포"]


def vocabulary(rng: random.Random, n: int = 900) -> list[str]:
    letters = "abcdefghijklmnoprstuvw"
    words = {"".join(rng.choice(letters) for _ in range(rng.randint(3, 9))) for _ in range(n * 2)}
    return sorted(words)[:n]


def corpus(seed: int, count: int) -> dict[str, str]:
    """{name: Markdown}: bodies drawn from a Zipf law over the vocabulary, plus inflected forms,
    a rare word shared by a few memories, and CJK text in some."""
    rng = random.Random(seed)
    vocab = vocabulary(rng)
    weights = [1 / (rank + 1) for rank in range(len(vocab))]
    rare = [f"zq{rng.randrange(10**6):06d}" for _ in range(count // 5)]
    out = {}
    for i in range(count):
        words = rng.choices(vocab, weights, k=rng.randint(20, 400))
        words += [w + rng.choice(["ing", "ed", "s"]) for w in rng.sample(vocab[:200], 3)]
        if rng.random() < 0.3:
            words.insert(rng.randrange(len(words)), rng.choice(rare))  # once, somewhere in the body
        if rng.random() < 0.15:
            words.append(rng.choice(CJK))
        title = " ".join(rng.choices(vocab[:300], k=rng.randint(1, 4)))
        tags = rng.sample(vocab[:50], rng.randint(0, 3))
        kind = rng.choice(["note", "decision", "lesson"])
        body = "\n\n".join(" ".join(words[j:j + 40]) for j in range(0, len(words), 40))
        out[f"{rng.choice(['projects', 'notes', 'people'])}/m{i:03d}"] = (
            f"---\ntitle: {title}\ntags: [{', '.join(tags)}]\ntype: {kind}\n---\n# {title}\n\n{body}\n")
    return out


def queries(seed: int, texts: dict[str, str], n: int = 40) -> list[str]:
    rng = random.Random(seed + 1)
    words = sorted({w for t in texts.values() for w in t.split() if w.isalpha()})
    rare = sorted({w for t in texts.values() for w in t.split() if w.startswith("zq")})
    found = [" ".join(rng.sample(words, rng.randint(1, 4))) for _ in range(n)]
    found += [rng.choice(rare) for _ in range(5)] + ["记忆", "検索", "the of and", rng.choice(words) + " 系统"]
    return found


def commit_at(repo: Path, when: int, message: str) -> None:
    env = {**os.environ, "GIT_AUTHOR_DATE": f"@{when} +0000", "GIT_COMMITTER_DATE": f"@{when} +0000",
           "STRATA_INTERNAL": "1"}
    git(repo, "add", "-A")
    subprocess.run(["git", "commit", "-q", "--no-verify", "-m", message], cwd=repo, env=env, check=True)


def make_repo(root: Path, texts: dict[str, str], spread: bool) -> None:
    """A memory repository holding `texts`: all live, or (`spread`) in thirds committed 300, 60
    and 0 days before the janitor runs, so it archives, cools and keeps them."""
    from strata_git.app.init import init

    init(str(root))
    names = sorted(texts)
    batches = [names[0::3], names[1::3], names[2::3]] if spread else [names]
    for batch, age in zip(batches, (300, 60, 0), strict=False):
        for name in batch:
            path = root / "active" / f"{name}.md"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(texts[name], encoding="utf-8")
        commit_at(root, T0 - age * DAY, f"batch {age}")


def top(root: Path, qs: list[str]) -> list[list[tuple[str, float]]]:
    """Each query's top ten (name, score); and checks that the counts bm25 uses are exact: FTS5's N
    is the number of memories indexed, however many were deleted and re-added on the way."""
    from strata_git.app.vault import Vault
    from strata_git.store import catalog, search

    vault = Vault.open(str(root))
    found = [[(h.name, h.score) for h in vault.search(q, limit=10)] for q in qs]
    with catalog.connect(vault.repo) as db:
        rows = db.execute("SELECT (SELECT count(*) FROM live_docs) + (SELECT count(*) FROM archived)").fetchone()[0]
        assert search.indexed_count(db) == rows == len(vault.list())
    return found


@pytest.mark.parametrize("seed", [3, 17])
def test_live_archived_and_fresh_clone_rank_alike(tmp_path: Path, seed: int):
    from strata_git.app.vault import Vault

    texts = corpus(seed, 240)
    qs = queries(seed, texts)
    live, spread = tmp_path / "live", tmp_path / "spread"
    make_repo(live, texts, spread=False)
    make_repo(spread, texts, spread=True)
    remote = bare_remote(tmp_path / "remote.git")
    git(spread, "remote", "add", "origin", str(remote))
    vault = Vault.open(str(spread))
    vault.janitor(now=T0 + DAY)   # the two older thirds cool
    vault.janitor(now=T0 + DAY)   # the oldest is archived
    assert strata(spread, "archive").returncode == 0
    tiers = {e.tier for e in vault.list()}
    assert tiers == {"active", "cooled", "archive"} and not (spread / "archive").exists()

    expected = top(live, qs)
    assert sum(map(len, expected)) > 200  # the queries do find things
    assert top(spread, qs) == expected
    clone = tmp_path / "clone"
    proc = strata(tmp_path, "clone", str(remote), str(clone))
    assert proc.returncode == 0, proc.stderr
    os.environ["GIT_NO_LAZY_FETCH"] = "1"
    try:
        assert top(clone, qs) == expected
    finally:
        del os.environ["GIT_NO_LAZY_FETCH"]


def test_a_word_once_deep_in_an_archived_body_finds_it_on_a_fresh_clone(tmp_path: Path, monkeypatch):
    from strata_git.app.vault import Vault

    deep = "diary/deep"
    filler = " ".join(["routine"] * 300)
    texts = corpus(5, 60)
    texts[deep] = (f"---\ntitle: Quarterly notes\n---\n# Quarterly notes\n\n{filler}\n\n"
                   f"We hosted it on Wintermute.\n{filler}\n")
    spread = tmp_path / "spread"
    make_repo(spread, texts, spread=True)  # the deep one sorts first: it is in the oldest third
    remote = bare_remote(tmp_path / "remote.git")
    git(spread, "remote", "add", "origin", str(remote))
    vault = Vault.open(str(spread))
    vault.janitor(now=T0 + DAY)
    vault.janitor(now=T0 + DAY)
    assert strata(spread, "archive").returncode == 0
    clone = tmp_path / "clone"
    assert strata(tmp_path, "clone", str(remote), str(clone)).returncode == 0
    monkeypatch.setenv("GIT_NO_LAZY_FETCH", "1")
    hits = Vault.open(str(clone)).search("where is it hosting? wintermute")
    assert [(h.tier, h.name) for h in hits][:1] == [("archive", deep)]
