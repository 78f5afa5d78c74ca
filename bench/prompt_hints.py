"""Prompt hints: where should `agent.prompt_min_score` sit, so that a prompt about something
memory holds gets a hint and most other prompts get nothing?

The labelled corpus of bench/retrieval.py (bench/corpus.py) is generated and split in two:
half the memories are written to a repository, half are left out. Three kinds of prompt are
then searched exactly as the UserPromptSubmit hook searches (`Vault.search`, 3 hits):

- **held**: a question whose one answer is a memory the repository holds (a hint helps);
- **absent**: a question whose answer was left out; it shares the corpus's projects, people
  and common words with what is held, so any hint it gets is noise;
- **coding**: everyday coding-agent prompts that name nothing memory holds.

For each threshold it prints the share of held questions whose answer is among the hints it
would show (useful), and the share of absent and coding prompts that would get any hint at
all (noise). The hook's default is marked.

    bash scripts/setup.sh bench
    .venv/bin/python bench/prompt_hints.py [--seed 11] [--memories 1000] [--json]
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import corpus
from benchlib import emit, hermetic_env, progress, sh

NOW = 1_800_000_000
HITS = 3  # what the hook shows (app/agents.PROMPT_HITS)
THRESHOLDS = (0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 10.0, 12.0)
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
    (tmp / "home").mkdir()
    env = hermetic_env(tmp / "home")
    os.environ.clear()
    os.environ.update(env)
    progress("generating the corpus")
    memories = corpus.generate(rng, [rng.randint(0, 5) for _ in range(args.memories)], NOW)
    questions = corpus.questions(rng, memories, 1)
    rng.shuffle(memories)
    held = memories[: len(memories) // 2]
    names = {m.name for m in held}
    prompts = {"held": [q for q in questions if q.answer in names],
               "absent": [q for q in questions if q.answer not in names],
               "coding": [corpus.Question(p, "", "coding") for p in CODING]}
    build(tmp / "mem", held, env)
    vault = Vault.open(str(tmp / "mem"))
    found: dict[str, list[list[tuple[str, float]]]] = {}
    for kind, qs in prompts.items():
        progress(f"searching {len(qs)} {kind} prompts")
        found[kind] = [[(h.name, h.score) for h in vault.search(q.text[:2000], limit=HITS)] for q in qs]
    rows = []
    for t in THRESHOLDS:
        pairs = zip(prompts["held"], found["held"], strict=True)
        useful = sum(any(n == q.answer and s >= t for n, s in hits) for q, hits in pairs)
        row = {"threshold": t, "held_useful": round(useful / len(prompts["held"]), 3)}
        for kind in ("held", "absent", "coding"):
            row[f"{kind}_any"] = round(sum(any(s >= t for _, s in hits) for hits in found[kind]) / len(found[kind]), 3)
        rows.append(row)
    from strata_git.core.config import Config

    return {"seed": args.seed, "memories_held": len(held), "prompts": {k: len(v) for k, v in prompts.items()},
            "default": Config().agent_prompt_min_score, "rows": rows}


def report(r: dict) -> None:
    print(f"{r['memories_held']} memories held; prompts: {r['prompts']} (seed {r['seed']})")
    print(f"{'min score':>9}  {'held: answer hinted':>19}  {'held: any hint':>14}  {'absent: any hint':>16}  "
          f"{'coding: any hint':>16}")
    for row in r["rows"]:
        mark = "  <- default" if row["threshold"] == r["default"] else ""
        print(f"{row['threshold']:>9.1f}  {row['held_useful']:>19.1%}  {row['held_any']:>14.1%}  "
              f"{row['absent_any']:>16.1%}  {row['coding_any']:>16.1%}{mark}")


def main() -> None:
    args = arguments()
    with tempfile.TemporaryDirectory(prefix="strata-prompt-hints-") as tmp:
        result = run(args, Path(tmp))
    emit(result, args.json, report)


if __name__ == "__main__":
    main()
