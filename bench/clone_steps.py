"""`git strata clone` of a large archive, step by step: how long each step takes, and how busy the
two cores are meanwhile (where one idles, work could move to it).

    bash scripts/setup.sh bench
    .venv/bin/python bench/clone_steps.py [--archived 1000000] [--active 10000] [--commits 20000]
                                          [--remote DIR] [--runs 1] [--json]

The remote is generated as `bench/scale.py` generates it (`git fast-import`, then `git gc`: not
measured, about 40 minutes at a million), or taken from `--remote DIR` (a folder holding a
`remote.git` a previous run kept), and served by `git daemon` on 127.0.0.1. Each run clones it in
a fresh process of this install (one thread, so the clone may fork), which is told each step as it
starts; a separate process reads `/proc/stat` every 2 s. Then plain git alone fetches the same
(`scale.plain_git_clone`: the partial clone and the records), the floor under the clone. Peak
memory is the largest process's (wait4's ru_maxrss). The goal (issue 27): a million in 5 minutes.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import scale

from benchlib import BIN, git_daemon, hermetic_env, progress

GOAL_S = 300

# What runs in the clone's own process: the clone, each step's start printed as it comes.
CLONE = """
import sys, time
from strata_git.ops import clone
def said(step):
    print(f"{time.time():.2f}\\t{step}", flush=True)
clone.clone(sys.argv[1], sys.argv[2], progress=said)
said("done")
"""

# The busy cores, every 2 s: (unix time, cores busy) lines on stdout.
SAMPLER = """
import time
def read():
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    return sum(v), v[3] + v[4]
cores = len(open("/proc/stat").read().split("\\ncpu")) - 1
last = read()
while True:
    time.sleep(2)
    now = read()
    total, idle = now[0] - last[0], now[1] - last[1]
    print(f"{time.time():.1f} {cores * (1 - idle / total) if total else 0:.2f}", flush=True)
    last = now
"""


def one_clone(url: str, target: Path, env: dict[str, str]) -> dict:
    """One clone: its steps (start, seconds, mean busy cores, text), wall time, peak MiB."""
    sampler = subprocess.Popen([sys.executable, "-c", SAMPLER], stdout=subprocess.PIPE, text=True)
    began = time.time()
    wall, peak, out = scale.run([sys.executable, "-c", CLONE, url, str(target)], target.parent, env)
    sampler.kill()
    lines = sampler.communicate()[0].splitlines()
    samples = [(float(t) - began, float(busy)) for t, busy in (line.split() for line in lines)]
    marks = [(float(at) - began, text) for at, text in (line.split("\t", 1) for line in out.decode().splitlines())]
    steps = []
    for (at, text), (until, _) in zip(marks, marks[1:], strict=False):
        inside = [busy for t, busy in samples if at <= t < until]
        steps.append({"step": text, "start_s": round(at, 1), "seconds": round(until - at, 1),
                      "busy_cores": round(sum(inside) / len(inside), 2) if inside else None})
    return {"clone_s": round(wall, 1), "steps": steps, "peak_mib": peak}


def run(args: argparse.Namespace) -> dict:
    base = Path(tempfile.mkdtemp(prefix="strata-bench-clone-"))
    (base / "home").mkdir()
    env = hermetic_env(base / "home")
    served = Path(args.remote) if args.remote else base / "served"
    if not args.remote:
        served.mkdir()
        progress(f"generating {args.archived:,} archived + {args.active:,} active, {args.commits:,} commits")
        (base / "gen").mkdir()
        remote, _ = scale.generate(base / "gen", args.archived, args.active, args.commits, env)
        shutil.move(str(remote), str(served / "remote.git"))
        shutil.rmtree(base / "gen", ignore_errors=True)
    daemon, port = git_daemon(served)
    url = f"git://127.0.0.1:{port}/remote.git"
    try:
        runs = []
        for n in range(args.runs):
            progress(f"clone {n + 1}/{args.runs}")
            runs.append(one_clone(url, base / f"clone-{n}", env))
            shutil.rmtree(base / f"clone-{n}", ignore_errors=True)
        progress("plain git alone")
        plain = round(scale.plain_git_clone(url, base, env), 1)
    finally:
        daemon.terminate()
        daemon.wait()
    return {"install": str(BIN), "remote": str(served), "runs": runs, "plain_git_s": plain, "goal_s": GOAL_S}


def report(result: dict) -> None:
    for n, r in enumerate(result["runs"], 1):
        print(f"clone {n}: {r['clone_s']} s, largest process {r['peak_mib']:,} MiB")
        for s in r["steps"]:
            busy = f"{s['busy_cores']:.2f}" if s["busy_cores"] is not None else "  - "
            print(f"  {s['seconds']:7.1f} s  busy cores {busy}  {s['step']}")
    best = min(r["clone_s"] for r in result["runs"])
    print(f"plain git alone (partial clone and the records): {result['plain_git_s']} s; "
          f"the clone {best / result['plain_git_s']:.2f}x that")
    print(f"goal clone <= {GOAL_S} s: {best} s {'met' if best <= GOAL_S else 'MISSED'}")
    print(f"the remote is kept for --remote: {result['remote']}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--archived", type=int, default=1_000_000)
    parser.add_argument("--active", type=int, default=10_000)
    parser.add_argument("--commits", type=int, default=20_000)
    parser.add_argument("--remote", metavar="DIR", help="a folder holding remote.git (from a run before)")
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    result = run(args)
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        report(result)


if __name__ == "__main__":
    main()
