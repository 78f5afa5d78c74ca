"""Retrieval check: recall@5 of `merged` and `cascade` ranking on queries with known answers.

A generated memory repository of engineering notes (projects, components, technologies,
reasons), a third in each tier after real janitor cycles (archived ones are searched
through the shadow index, so from their recorded keywords and preview only). Every
memory states one decision; each query asks about one memory's decision in other words
(a question, with words from the memory and words that are not in it), and many other
memories share its project, component or technology as distractors.

    .venv/bin/python bench/retrieval.py [--per-tier 200] [--queries 60] [--json]

Prints recall@5 (and MRR) for both rankings, overall and by the tier holding the answer.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchlib import hermetic_env, progress, sh  # noqa: E402

PROJECTS = ["koda", "atlas", "heron", "pylon", "quill", "ember", "falcon", "juniper", "nimbus", "orbit",
            "prism", "relay", "summit", "tango", "umbra", "vertex", "willow", "zephyr", "cobalt", "delta"]
COMPONENTS = ["billing service", "search index", "login flow", "build pipeline", "cache layer", "job queue",
              "mobile client", "admin dashboard", "payment webhook", "email sender", "image resizer",
              "audit log", "feature flags", "rate limiter", "backup job"]
TECH = ["PostgreSQL", "SQLite", "Redis", "Kafka", "RabbitMQ", "Elasticsearch", "Rust", "Go", "TypeScript",
        "Terraform", "Kubernetes", "Nomad", "S3", "GraphQL", "gRPC", "Celery", "Temporal", "DuckDB"]
REASONS = ["latency spikes under load", "the licence cost", "operational burden on call", "missing transactions",
           "poor observability", "memory leaks in production", "slow cold starts", "vendor lock-in worries",
           "schema migrations that kept failing", "a security audit finding", "flaky integration tests",
           "the team's existing expertise"]
GENERIC = ("review meeting budget timeline customer release staging rollout metric alert incident runbook "
           "owner sprint roadmap estimate risk dependency vendor contract region cluster replica shard index "
           "latency throughput error retry timeout backlog ticket design document diagram prototype benchmark "
           "migration schema version upgrade patch hotfix deploy canary rollback monitor trace span log sample "
           "quota limit capacity cost forecast invoice team handover onboarding training").split()
FILLER = ("Notes from the weekly sync. Owners agreed to revisit in a quarter. Follow-up tickets were filed "
          "and linked from the tracker. Metrics dashboards were updated to match.")


def memory(rng: random.Random, i: int) -> tuple[str, dict]:
    fact = {"project": rng.choice(PROJECTS), "component": rng.choice(COMPONENTS),
            "old": rng.choice(TECH), "new": rng.choice(TECH), "reason": rng.choice(REASONS)}
    while fact["new"] == fact["old"]:
        fact["new"] = rng.choice(TECH)
    title = f"{fact['project'].title()} {fact['component']}: {fact['new']}"
    # Half the memories open with a long context section, so the decision is not in the archive
    # preview and its words compete with many others for the recorded keywords.
    context = (f"## Context\n\n{' '.join(rng.choice(GENERIC) for _ in range(rng.randint(80, 200)))}\n\n## Decision\n\n"
               if rng.random() < 0.5 else "")
    text = (f"---\ntitle: {title}\ntags: [{fact['project']}, decision]\ntype: decision\n---\n# {title}\n\n"
            f"{context}We moved the {fact['project']} {fact['component']} from {fact['old']} to {fact['new']} because of "
            f"{fact['reason']}. Ticket ref-{i:05d}.\n\n{FILLER}\n")
    return text, fact


def question(rng: random.Random, fact: dict) -> str:
    forms = [f"why did {fact['project']} switch the {fact['component']} to {fact['new']}?",
             f"what replaced {fact['old']} in the {fact['project']} {fact['component']}",
             f"{fact['project']} {fact['component']} {fact['reason']} decision",
             f"did we drop {fact['old']} for the {fact['component']} on {fact['project']} because of "
             f"{fact['reason'].split()[-1]}?",
             f"what did we decide about the {fact['component']} in {fact['project']}?",
             f"anything on {fact['old']} being replaced over {fact['reason']}?"]
    return rng.choice(forms)


def build(root: Path, per_tier: int, rng: random.Random, env: dict[str, str]) -> dict[str, tuple[str, dict]]:
    """{name: (tier, fact)}: three batches committed 300, 60 and 0 days before 'now'."""
    from strata_git.init import init
    from strata_git.vault import Vault

    os.environ.update(env)
    init(str(root))
    now = 1_800_000_000
    answers: dict[str, tuple[str, dict]] = {}
    for tier, age in (("archive", 300), ("cooled", 60), ("active", 0)):
        folder = root / "active" / tier
        folder.mkdir(parents=True)
        for i in range(per_tier):
            text, fact = memory(rng, len(answers))
            (folder / f"m{i:04d}.md").write_text(text)
            answers[f"{tier}/m{i:04d}"] = (tier, fact)
        stamp = f"@{now - age * 86400} +0000"
        sh(["git", "add", "active"], root, env)
        sh(["git", "-c", "core.hooksPath=/dev/null", "commit", "-q", "-m", f"{tier} batch"], root,
           {**env, "GIT_AUTHOR_DATE": stamp, "GIT_COMMITTER_DATE": stamp})
    vault = Vault.open(str(root))
    vault.janitor(now=now)  # the two older batches cool
    vault.janitor(now=now)  # the oldest is archived
    return answers


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-tier", type=int, default=200)
    parser.add_argument("--queries", type=int, default=60, help="queries per tier")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    from strata_git.vault import Vault

    rng = random.Random(args.seed)
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "home"
        home.mkdir()
        root = Path(tmp) / "mem"
        progress("building the repository")
        answers = build(root, args.per_tier, rng, hermetic_env(home))
        vault = Vault.open(str(root))
        counts = {t: sum(1 for e in vault.list() if e.tier == t) for t in ("active", "cooled", "archive")}
        names = {t: [n for n, (tier, _) in answers.items() if tier == t] for t in counts}
        queries = [(n, question(rng, answers[n][1])) for t in names for n in rng.sample(names[t], args.queries)]
        result: dict = {"memories": counts, "queries": len(queries), "rankings": {}}
        for rank in ("merged", "cascade"):
            found = {t: [] for t in names}
            for name, q in queries:
                hits = [f"{h.name.split('/')[-2]}/{h.name.split('/')[-1]}" for h in vault.search(q, limit=10, rank=rank)]
                found[answers[name][0]].append(hits.index(name) + 1 if name in hits else None)
            every = [r for ranks in found.values() for r in ranks]

            def at5(ranks: list) -> float:
                return round(sum(1 for r in ranks if r and r <= 5) / len(ranks), 3)

            result["rankings"][rank] = {
                "recall@5": at5(every), "mrr@10": round(sum(1 / r for r in every if r) / len(every), 3),
                "recall@5_by_answer_tier": {t: at5(r) for t, r in found.items()}}
    if args.json:
        print(json.dumps(result, indent=2))
        return
    print(f"memories per tier: {counts}; {len(queries)} queries, {args.queries} per answer tier")
    for rank, r in result["rankings"].items():
        by = ", ".join(f"{t} {v:.3f}" for t, v in r["recall@5_by_answer_tier"].items())
        print(f"{rank:8} recall@5 {r['recall@5']:.3f}  MRR@10 {r['mrr@10']:.3f}  by answer tier: {by}")


if __name__ == "__main__":
    main()
