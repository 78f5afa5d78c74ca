"""What the secret rules cost a commit: `secrets.scan` over ordinary text, now against the rules
of an earlier commit (read from git history into a module of their own), in the same run.

    .venv/bin/python bench/secrets_speed.py [--before efb5744] [--rounds 5] [--json]

The text is what a memory repository holds most of: prose and notes. Here, the project's own
Markdown (README, docs/, bench/leaks/README) and the ordinary notes of bench/leaks, and the
corpus's secrets as the lines that do hold one. Each round scans every line once with each set of
rules, alternating; the median round is reported.
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchlib import emit
from leaks import samples

ROOT = Path(__file__).resolve().parent.parent


def old_rules(rev: str):
    """secrets.py as it was at `rev`, loaded as a module beside today's package."""
    source = subprocess.run(["git", "show", f"{rev}:strata_git/core/secrets.py"], cwd=ROOT, capture_output=True,
                            check=True).stdout
    path = Path(f"/tmp/strata_secrets_{rev}.py")
    path.write_bytes(source)
    spec = importlib.util.spec_from_file_location(f"strata_secrets_{rev}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def timed(scan, lines: list[str]) -> float:
    started = time.perf_counter()
    for line in lines:
        scan(line)
    return time.perf_counter() - started


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--before", default="efb5744")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--json", action="store_true")
    args = p.parse_args()
    from strata_git.core import secrets

    positives, negatives = samples(15)
    prose = [line for name in ("README.md", *sorted(str(p.relative_to(ROOT)) for p in (ROOT / "docs").glob("*.md")),
                               "bench/leaks/README.md")
             for line in (ROOT / name).read_text(encoding="utf-8").splitlines()]
    prose += [line for n in negatives for line in n.text.splitlines()]
    held = [line for s in positives for line in s.text.splitlines()]
    before = old_rules(args.before)
    for rules in (secrets, before):  # warm: detect-secrets' patterns read and cached
        rules.scan("api_key = warm-up")
    results = {}
    for kind, lines in (("ordinary", prose), ("with secrets", held)):
        now, then = [], []
        for _ in range(args.rounds):
            now.append(timed(secrets.scan, lines))
            then.append(timed(before.scan, lines))
        results[kind] = {"lines": len(lines), "now_ms": round(statistics.median(now) * 1000, 1),
                         "before_ms": round(statistics.median(then) * 1000, 1),
                         "now_us_per_line": round(statistics.median(now) / len(lines) * 1e6, 2),
                         "before_us_per_line": round(statistics.median(then) / len(lines) * 1e6, 2)}
        results[kind]["ratio"] = round(results[kind]["now_ms"] / results[kind]["before_ms"], 2)

    def report(o: dict) -> None:
        print(f"secrets.scan, now against {args.before}, median of {args.rounds} rounds")
        for kind, r in o["results"].items():
            print(f"  {kind:13} {r['lines']:6} lines: now {r['now_ms']:8.1f} ms ({r['now_us_per_line']} us/line), "
                  f"before {r['before_ms']:8.1f} ms ({r['before_us_per_line']} us/line), ratio {r['ratio']}")

    emit({"before": args.before, "rounds": args.rounds, "results": results}, args.json, report)


if __name__ == "__main__":
    main()
