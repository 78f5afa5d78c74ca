"""Prompt hints: where should `agent.prompt_min_score` and `agent.prompt_min_coverage` sit, so
that a prompt about something memory holds gets a hint and most other prompts get nothing?

The labelled corpus of bench/retrieval.py (bench/corpus.py) is generated and split in two:
half the memories are written to a repository, half are left out. Three kinds of prompt are
then searched exactly as the UserPromptSubmit hook searches (`Vault.search`, 3 hits):

- **held**: a question whose one answer is a memory the repository holds (a hint helps);
- **absent**: a question whose answer was left out; it shares the corpus's projects, people
  and common words with what is held, so any hint it gets is noise;
- **coding**: everyday coding-agent prompts that name nothing memory holds;
- **real**: what people really typed to Claude Code and Codex, every prompt typed by hand in the
  capture corpus's real sessions (tests/corpus): their answers are not in this memory.

A hit is shown when its score is at least `prompt_min_score` and it holds at least
`prompt_min_coverage` of the prompt's words, weighted by idf (search.Hit.coverage: a prompt
whose rare words no memory holds is not about this memory). For each pair of thresholds it
prints the share of held questions whose answer is among the hints (useful), and the share of
real, absent and coding prompts that would get any hint at all (noise). The defaults are marked.

    bash scripts/setup.sh bench
    .venv/bin/python bench/prompt_hints.py [--seed 11] [--memories 1000] [--json]
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import corpus
from benchlib import emit, hermetic_process, progress, sh

NOW = 1_800_000_000
HITS = 3  # what the hook shows (app/agents.PROMPT_HITS)
THRESHOLDS = (0.0, 3.0, 4.0, 5.0, 6.0, 8.0, 12.0)
COVERAGES = (0.0, 0.2, 0.25, 0.3, 0.35, 0.4, 0.5, 0.6)
CORPUS = Path(__file__).resolve().parent.parent / "tests" / "corpus"
CODING = [
    "run the tests and fix whatever fails", "refactor this function into two smaller ones",
    "why does the build fail on CI?", "add type hints to the parser module", "write a unit test for the retry logic",
    "rename the variable tmp to something clearer", "make the linter happy", "explain this stack trace",
    "bump the version and update the changelog", "the docker image is too big, can you slim it down?",
    "add a --verbose flag to the command line", "convert this loop into a list comprehension",
    "what does this regex match?", "speed up the slow query in the report", "fix the off-by-one error in pagination",
    "add logging around the HTTP client", "split the README into sections", "remove the dead code in utils",
    "set up pre-commit with black and isort", "why is this test flaky?", "document the public API",
    "migrate the config from YAML to TOML", "handle the case where the file is empty",
    "review my diff and point out bugs", "write a GitHub Actions workflow for the tests",
    "the function returns None sometimes, why?", "sort the imports", "add pagination to the list endpoint",
    "make the error message clearer", "upgrade the dependencies", "check for memory leaks in the worker",
    "implement a simple LRU cache", "translate this shell script into Python", "add retries with backoff",
    "format the JSON output nicely", "write a docstring for this class", "catch the KeyError here",
    "what is the time complexity of this?", "clean up the git history before I open the PR",
    "generate a .gitignore for a Python project",
]


def arguments() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--seed", type=int, default=11)
    p.add_argument("--memories", type=int, default=1000, help="generated; half are written to the repository")
    p.add_argument("--json", action="store_true")
    return p.parse_args()


def real_prompts() -> list[str]:
    """Every prompt typed by hand in the corpus's real sessions (harness text, subagents' prompts,
    pasted logs and templates over 2,000 characters, and one- or two-word replies left out)."""
    import json

    from strata_git.core import transcript

    found: dict[str, None] = {}
    for path in sorted(CORPUS.rglob("*.jsonl")):
        fmt = None
        for number, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            try:
                obj = json.loads(raw)
            except ValueError:
                continue
            fmt = fmt or (transcript.detect(obj) if isinstance(obj, dict) else None)
            for t in (transcript.turns(obj, fmt, number) or []) if fmt else []:
                text = t.text.strip()
                if t.role == "user" and not t.side and not transcript.harness_text(text) \
                        and len(text.split()) >= 3 and len(text) <= 2000:
                    found.setdefault(text, None)
    return list(found)


def build(root: Path, memories: list[corpus.Memory], env: dict[str, str]) -> None:
    from strata_git.app.init import init

    init(str(root))
    for m in memories:
        path = root / "active" / f"{m.name}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(m.text, encoding="utf-8")
    sh(["git", "add", "active"], root, env)
    sh(["git", "-c", "core.hooksPath=/dev/null", "commit", "-q", "-m", "memories"], root, env)


def run(args: argparse.Namespace, tmp: Path) -> dict:
    from strata_git.app.vault import Vault

    rng = random.Random(args.seed)
    env = hermetic_process(tmp)
    progress("generating the corpus")
    memories = corpus.generate(rng, [rng.randint(0, 5) for _ in range(args.memories)], NOW)
    questions = corpus.questions(rng, memories, 1)
    rng.shuffle(memories)
    held = memories[: len(memories) // 2]
    names = {m.name for m in held}
    prompts = {"held": [q for q in questions if q.answer in names],
               "absent": [q for q in questions if q.answer not in names],
               "coding": [corpus.Question(p, "", "coding") for p in CODING],
               "real": [corpus.Question(p, "", "real") for p in real_prompts()]}
    build(tmp / "mem", held, env)
    vault = Vault.open(str(tmp / "mem"))
    found: dict[str, list[list[tuple[str, float, float]]]] = {}
    for kind, qs in prompts.items():
        progress(f"searching {len(qs)} {kind} prompts")
        # as the hook asks (app/agents.prompt_hints): more than it shows, the best that pass shown
        found[kind] = [[(h.name, h.score, h.coverage) for h in vault.search(q.text[:2000], limit=HITS * 3)]
                       for q in qs]
    rows = []
    for t in THRESHOLDS:
        for c in COVERAGES:
            shown = {kind: [[n for n, s, cov in hits if s >= t and cov >= c][:HITS] for hits in found[kind]]
                     for kind in prompts}
            useful = sum(q.answer in names for q, names in zip(prompts["held"], shown["held"], strict=True))
            row = {"threshold": t, "coverage": c, "held_useful": round(useful / len(prompts["held"]), 3)}
            for kind in prompts:
                row[f"{kind}_any"] = round(sum(bool(n) for n in shown[kind]) / len(shown[kind]), 3)
            rows.append(row)
    from strata_git.core.config import Config

    return {"seed": args.seed, "memories_held": len(held), "prompts": {k: len(v) for k, v in prompts.items()},
            "default": [Config().agent_prompt_min_score, Config().agent_prompt_min_coverage], "rows": rows}


def report(r: dict) -> None:
    print(f"{r['memories_held']} memories held; prompts: {r['prompts']} (seed {r['seed']})")
    print(f"{'min score':>9}  {'coverage':>8}  {'held: answer hinted':>19}  {'real: any hint':>14}  "
          f"{'absent: any hint':>16}  {'coding: any hint':>16}")
    for row in r["rows"]:
        mark = "  <- default" if [row["threshold"], row["coverage"]] == r["default"] else ""
        print(f"{row['threshold']:>9.1f}  {row['coverage']:>8.2f}  {row['held_useful']:>19.1%}  "
              f"{row['real_any']:>14.1%}  {row['absent_any']:>16.1%}  {row['coding_any']:>16.1%}{mark}")


def main() -> None:
    args = arguments()
    with tempfile.TemporaryDirectory(prefix="strata-prompt-hints-") as tmp:
        result = run(args, Path(tmp))
    emit(result, args.json, report)


if __name__ == "__main__":
    main()
