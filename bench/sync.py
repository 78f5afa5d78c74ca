"""`git strata sync` against plain `git pull --rebase && git push`, over `git daemon` on 127.0.0.1.

    bash scripts/setup.sh bench
    .venv/bin/python bench/sync.py [--memories 2000] [--samples 7] [--json]

Two identical remotes are served by one `git daemon`: one for git-strata, one for plain
git. Each has a writer clone that pushes the same changes to both, and a reader clone:
`a` (a git-strata memory repository with its hooks) and `p` (a plain clone, no hooks).
Every sample, in alternating order, times the same round on both:

- no change: nothing new on either side;
- bring 100: the writer pushed 100 edited memories, the reader brings them in;
- send 100: the reader committed 100 edited memories, and sends them;
- both 100: the writer pushed 100 edits and the reader committed 100 others
  (git-strata makes a merge commit; plain git rebases the local commit).

The goal is git-strata within 1.5x of plain git for each round.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchlib import BIN, emit, git_daemon, hermetic_env, progress, sh

GOAL = 1.5
ROUNDS = ("no change", "bring 100", "send 100", "both 100")




def _edit(clone: Path, env: dict, names: list[str], stamp: str) -> None:
    """Append a line to each memory and commit them all in one commit, as its user would (through
    git-strata's hooks where they are installed: they keep its indexes current). Not measured."""
    for name in names:
        with open(clone / name, "a", encoding="utf-8") as f:
            f.write(f"update {stamp}\n")
    sh(["git", "add", "--", *names], clone, env)
    sh(["git", "commit", "-q", "-m", f"edit {len(names)} ({stamp})"], clone, env)


def _time(cmd: list[str], cwd: Path, env: dict) -> float:
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, stdin=subprocess.DEVNULL, check=False)
    elapsed = (time.perf_counter() - start) * 1000
    if proc.returncode != 0:
        sys.exit(f"failed: {cmd}\n{proc.stdout.decode()}\n{proc.stderr.decode()}")
    return elapsed


def build(tmp: Path, memories: int, env: dict) -> dict[str, Path]:
    seed = tmp / "seed"
    sh([str(BIN / "git-strata"), "init", str(seed)], tmp, env)
    for i in range(memories):
        folder = seed / "active" / ("projects", "entities", "notes", "gtd")[i % 4]
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"m{i:05d}.md").write_text(f"---\ntitle: Memory {i}\n---\n# Memory {i}\n\n"
                                             f"Fact {i}: {'detail ' * (5 + i % 20)}\n")
    sh(["git", "add", "active"], seed, env)
    sh(["git", "-c", "core.hooksPath=/dev/null", "commit", "-q", "-m", "seed"], seed, env)
    served = tmp / "served"
    served.mkdir()
    for kind in ("strata", "plain"):
        sh(["git", "clone", "-q", "--bare", str(seed), str(served / f"{kind}.git")], tmp, env)
    return {"seed": seed, "served": served}


def run(memories: int, samples: int) -> dict:
    tmp = Path(tempfile.mkdtemp(prefix="strata-bench-sync-"))
    (tmp / "home").mkdir()
    env = hermetic_env(tmp / "home")
    progress(f"building {memories} memories")
    paths = build(tmp, memories, env)
    daemon, port = git_daemon(paths["served"])
    try:
        url = {kind: f"git://127.0.0.1:{port}/{kind}.git" for kind in ("strata", "plain")}
        for name, kind in (("a", "strata"), ("wa", "strata"), ("p", "plain"), ("wp", "plain")):
            sh(["git", "clone", "-q", url[kind], str(tmp / name)], tmp, env)
        sh([str(BIN / "git-strata"), "init"], tmp / "a", env)  # hooks, machine id
        sh([str(BIN / "git-strata"), "sync"], tmp / "a", env)
        sh(["git", "pull", "-q", "--rebase"], tmp / "p", env)
        names = sorted(str(p.relative_to(tmp / "seed")) for p in (tmp / "seed" / "active").rglob("*.md"))
        strata_cmd = [str(BIN / "git-strata"), "sync"]
        plain_cmd = ["sh", "-c", "git pull -q --rebase && git push -q"]
        times: dict[str, dict[str, list[float]]] = {r: {"git-strata": [], "plain git": []} for r in ROUNDS}
        for i in range(samples + 1):  # the first sample warms caches and is dropped
            for round_ in ROUNDS:
                progress(f"sample {i}/{samples}: {round_}")
                theirs = names[(i * 200) % len(names):][:100]
                mine = names[(i * 200 + 100) % len(names):][:100]
                stamp = f"{i}-{round_}"
                if round_ in ("bring 100", "both 100"):
                    for writer in ("wa", "wp"):
                        sh(["git", "pull", "-q", "--rebase"], tmp / writer, env)
                        _edit(tmp / writer, env, theirs, stamp)
                        sh(["git", "push", "-q"], tmp / writer, env)
                if round_ in ("send 100", "both 100"):
                    for reader in ("a", "p"):
                        _edit(tmp / reader, env, mine, stamp + "-local")
                order = [("git-strata", "a", strata_cmd), ("plain git", "p", plain_cmd)]
                for label, reader, cmd in (order if i % 2 else order[::-1]):
                    elapsed = _time(cmd, tmp / reader, env)
                    if i:
                        times[round_][label].append(elapsed)
        same = sh(["git", "rev-parse", "HEAD^{tree}"], tmp / "a", env) == sh(["git", "rev-parse", "HEAD^{tree}"],
                                                                                 tmp / "p", env)
    finally:
        daemon.terminate()
        daemon.wait()
    result = {"memories": memories, "samples": samples, "transport": "git daemon on 127.0.0.1",
              "same_tree_at_the_end": same, "rounds": {}}
    for round_, by in times.items():
        s, p = statistics.median(by["git-strata"]), statistics.median(by["plain git"])
        result["rounds"][round_] = {"git_strata_ms": round(s, 1), "plain_git_ms": round(p, 1),
                                    "ratio": round(s / p, 2), "goal": GOAL, "met": s / p <= GOAL}
    result["folder"] = str(tmp)
    return result


def report(result: dict) -> None:
    print(f"sync over {result['transport']}, {result['memories']} memories, median of {result['samples']} samples")
    print(f"{'round':<12}{'git strata sync':>18}{'pull --rebase && push':>24}{'ratio':>8}  goal <= {GOAL}x")
    for round_, r in result["rounds"].items():
        print(f"{round_:<12}{r['git_strata_ms']:>15.1f} ms{r['plain_git_ms']:>21.1f} ms{r['ratio']:>7.2f}x  "
              f"{'met' if r['met'] else 'MISSED'}")
    print(f"trees equal at the end: {result['same_tree_at_the_end']}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--memories", type=int, default=2000)
    parser.add_argument("--samples", type=int, default=7)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    result = run(args.memories, args.samples)
    emit(result, args.json, report, result["folder"])


if __name__ == "__main__":
    main()
