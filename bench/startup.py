"""Start-up of the CLI and the agent hooks: `git strata --version` and the SessionStart hook, the
package at an earlier commit against the package now, in alternating runs of one session.

    .venv/bin/python bench/startup.py [--before 686568b] [--runs 30] [--json]

The earlier package is checked out into a temporary worktree and run with PYTHONPATH pointing at
it (`python -m strata_git`), exactly as today's is run, so both pay the same interpreter start;
the SessionStart hook answers for a memory repository of 20 decisions, as Claude Code calls it
(its JSON on stdin). Bytecode caches are warmed first; medians are reported.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchlib import emit

ROOT = Path(__file__).resolve().parent.parent


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--before", default="686568b", help="the earlier commit (default: before the command table)")
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    with tempfile.TemporaryDirectory() as tmp:
        old = os.path.join(tmp, "before")
        subprocess.run(["git", "worktree", "add", "-q", "--detach", old, args.before], cwd=ROOT, check=True)
        try:
            trees = {"before": old, "after": str(ROOT)}
            mem = os.path.join(tmp, "mem")

            def run(tree: str, argv: list[str], stdin: bytes = b"", cwd: str | None = None) -> float:
                start = time.perf_counter()
                proc = subprocess.run([sys.executable, "-m", "strata_git", *argv], input=stdin, cwd=cwd,
                                      env={**env, "PYTHONPATH": trees[tree]}, capture_output=True)
                if proc.returncode != 0:
                    raise SystemExit(f"{tree}: git strata {' '.join(argv)} failed: {proc.stderr.decode()}")
                return (time.perf_counter() - start) * 1000

            run("after", ["init", mem])
            for i in range(20):
                run("after", ["write", f"decisions/d{i:02d}", "-m", f"# Decision {i}\n\nDecision: use plan {i}.\n"],
                    cwd=mem)
            hook = json.dumps({"hook_event_name": "SessionStart", "source": "startup", "cwd": mem}).encode()
            cases = {"--version": (["--version"], b""),
                     "SessionStart hook": (["hook", "agent", "SessionStart", "--harness", "claude-code",
                                            "--memory", mem], hook)}
            for tree in trees:
                for argv, stdin in cases.values():
                    run(tree, argv, stdin)
            times: dict[str, dict[str, list[float]]] = {c: {t: [] for t in trees} for c in cases}
            for _ in range(args.runs):
                for case, (argv, stdin) in cases.items():
                    for tree in trees:
                        times[case][tree].append(run(tree, argv, stdin))
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", old], cwd=ROOT, check=False)
    result = {case: {tree: round(statistics.median(t), 1) for tree, t in by_tree.items()}
              for case, by_tree in times.items()}
    lines = [f"{case}: before ({args.before}) p50 {r['before']} ms, now p50 {r['after']} ms, "
             f"now/before {r['after'] / r['before']:.2f} ({args.runs} alternating runs)" for case, r in result.items()]
    emit(result, args.json, lambda _: print("\n".join(lines)))


if __name__ == "__main__":
    main()
