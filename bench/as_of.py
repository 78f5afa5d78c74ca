"""A search as of a past commit against a search now, on the same memory, in one process.

    .venv/bin/python bench/as_of.py CLONE [--back 200] [--samples 5] [--cli N] [--json]

CLONE is any memory repository (a kept `bench/scale.py --keep` clone holds 10,000 active and
50,000 or more archived memories). Each fixed query is asked now (`Vault.search`, a kept Vault
watching its files and reading objects in-process, as the MCP server and the page ask) and as
of the commit `--back` first-parent commits before HEAD (`Vault.search(as_of=...)`: the memories
then, the versions the index lacks added for the search and rolled back), interleaved,
`--samples` times; p50 and p95 of each, and their ratio. The goal (issue 28): as of within 3x
of now.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from scale import QUERIES

GOAL = 3.0


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("clone", type=Path)
    p.add_argument("--back", type=int, default=200)
    p.add_argument("--samples", type=int, default=5)
    p.add_argument("--json", action="store_true")
    p.add_argument("--cli", type=int, default=0, metavar="N",
                   help="also time N queries as `git strata search` commands, now and as of")
    args = p.parse_args()
    from strata_git.app.vault import Vault
    from strata_git.gitio import git

    vault = Vault.open(str(args.clone))
    vault.watch_files()
    git.use_libgit2()  # as the MCP server and the page read objects: in-process
    point = vault.as_of(f"HEAD~{args.back}")
    changed = len(vault.repo.git("diff", "--name-only", point.commit, "HEAD", "--", "active", "cooled",
                                 "archive").split(b"\n")) - 1
    now: list[float] = []
    then: list[float] = []
    for q in QUERIES:  # warm both (the catalog brought up to date, the as-of tree read once)
        vault.search(q)
        vault.search(q, as_of=point.commit)
    for _ in range(args.samples):
        for q in QUERIES:
            start = time.perf_counter()
            vault.search(q)
            now.append((time.perf_counter() - start) * 1000)
            start = time.perf_counter()
            vault.search(q, as_of=point.commit)
            then.append((time.perf_counter() - start) * 1000)
    found = {"as_of": point.as_dict(), "paths_changed_since": changed, "queries": len(QUERIES),
             "samples": args.samples,
             "now_p50_ms": round(statistics.median(now), 1), "now_p95_ms": round(pct(now, 0.95), 1),
             "as_of_p50_ms": round(statistics.median(then), 1), "as_of_p95_ms": round(pct(then, 0.95), 1)}
    found["ratio_p50"] = round(found["as_of_p50_ms"] / found["now_p50_ms"], 2)
    if args.cli:  # one command a search, as a person or a script runs them: nothing kept between
        cli_now: list[float] = []
        cli_then: list[float] = []
        command = [str(Path(sys.executable).parent / "git-strata"), "search"]
        for q in QUERIES[:args.cli]:
            for extra, into in (((), cli_now), (("--as-of", point.commit), cli_then)):
                start = time.perf_counter()
                subprocess.run([*command, q, *extra], cwd=args.clone, check=True, capture_output=True)
                into.append((time.perf_counter() - start) * 1000)
        found |= {"cli_queries": args.cli, "cli_now_p50_ms": round(statistics.median(cli_now), 1),
                  "cli_as_of_p50_ms": round(statistics.median(cli_then), 1)}
        found["cli_ratio_p50"] = round(found["cli_as_of_p50_ms"] / found["cli_now_p50_ms"], 2)
    if args.json:
        print(json.dumps(found, indent=2))
        return
    print(f"as of {point.commit[:12]} ({found['as_of']['date']}, {args.back} first-parent commits back; "
          f"{changed} paths changed since), {len(QUERIES)} queries x {args.samples}")
    print(f"now    p50 {found['now_p50_ms']:>8} ms   p95 {found['now_p95_ms']:>8} ms")
    print(f"as of  p50 {found['as_of_p50_ms']:>8} ms   p95 {found['as_of_p95_ms']:>8} ms")
    print(f"goal as of <= {GOAL}x now (p50): {found['ratio_p50']}x {'met' if found['ratio_p50'] <= GOAL else 'MISSED'}")
    if args.cli:
        print(f"CLI, {args.cli} queries: now p50 {found['cli_now_p50_ms']} ms, as of p50 "
              f"{found['cli_as_of_p50_ms']} ms ({found['cli_ratio_p50']}x)")


if __name__ == "__main__":
    main()
