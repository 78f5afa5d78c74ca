"""A sync that brings 100 changed memories, taken in turns by two installs of git-strata on one
clone: what a change to the code is worth, without the drift between separate runs.

    .venv/bin/python bench/sync_ab.py --before OTHER/bin/git-strata [--samples 25] [--memories 2000]

`--before` is another install's `git-strata` (say, of the commit before: `git worktree add` it,
then `python -m venv` and `pip install` it there); the install running this script is "after".
One remote served by `git daemon` on 127.0.0.1, a writer clone that pushes 100 edited memories
before every sync, and one reader (a git-strata memory repository) that the two installs sync in
turn, in random order each sample. Prints each install's median and mean, and their difference.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from sync import _edit, _serve, _time, build

from benchlib import BIN, hermetic_env, progress, sh


def run(before: str, memories: int, samples: int) -> dict[str, list[float]]:
    tmp = Path(tempfile.mkdtemp(prefix="strata-bench-sync-ab-"))
    (tmp / "home").mkdir()
    env = hermetic_env(tmp / "home")
    progress(f"building {memories} memories")
    paths = build(tmp, memories, env)
    base, stop = _serve(paths["served"], "daemon", env)
    installs = {"before": before, "after": str(BIN / "git-strata")}
    times: dict[str, list[float]] = {label: [] for label in installs}
    try:
        url = f"{base}/strata.git"
        for name in ("reader", "writer"):
            sh(["git", "clone", "-q", url, str(tmp / name)], tmp, env)
        sh([installs["after"], "init"], tmp / "reader", env)
        sh([installs["after"], "sync"], tmp / "reader", env)
        names = sorted(str(p.relative_to(tmp / "seed")) for p in (tmp / "seed" / "active").rglob("*.md"))
        rng = random.Random(7)
        for i in range(samples + 1):  # the first sample warms caches and is dropped
            order = list(installs)
            rng.shuffle(order)
            for label in order:
                progress(f"sample {i}/{samples}: {label}")
                start = rng.randrange(len(names) - 100)
                sh(["git", "pull", "-q", "--rebase"], tmp / "writer", env)
                _edit(tmp / "writer", env, names[start:start + 100], f"{i}-{label}-{time.time_ns()}")
                sh(["git", "push", "-q"], tmp / "writer", env)
                elapsed = _time([installs[label], "sync"], tmp / "reader", env)
                if i:
                    times[label].append(elapsed)
    finally:
        stop()
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--before", required=True, help="the other install's git-strata")
    parser.add_argument("--memories", type=int, default=2000)
    parser.add_argument("--samples", type=int, default=25)
    args = parser.parse_args()
    times = run(args.before, args.memories, args.samples)
    print(f"sync bringing 100 changed memories, {args.memories} memories, {args.samples} samples each, in turns")
    for label, found in times.items():
        print(f"{label:<8} median {statistics.median(found):7.1f} ms   mean {statistics.mean(found):7.1f} ms")
    change = statistics.median(times["after"]) - statistics.median(times["before"])
    print(f"after - before: {change:+.1f} ms (medians)")


if __name__ == "__main__":
    main()
