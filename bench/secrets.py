"""Secret detection, door by door, on a corpus written apart from git-strata's rules.

    bash scripts/setup.sh bench
    .venv/bin/python bench/secrets.py [--seed 15] [--limit N] [--doors write,hook,capture] [--jobs 2] [--json]

The corpus (bench/leaks/, see its README.md) places every secret format in a sentence
(`prose`), a shell command (`command`) and a config snippet (`config`), and adds ordinary
engineering notes that hold no secret. Each sample goes through the real product, end to end,
in a memory repository made by `git strata init` in a temp folder (hermetic environment):

- write: `git strata write notes/sample-N --message=TEXT`; caught if refused (non-zero exit) or
  if the secret did not reach `git log -p --all`; a refused ordinary note is a false positive;
- hook: TEXT in active/notes/sample-N.md, `git add` and a plain `git commit` (the pre-commit
  hook `init` installed); caught if the commit is refused;
- capture: a Claude Code transcript whose first prompt is TEXT (and, for a command, also a Bash
  tool call running it), `git strata capture`; caught if the secret did not reach
  `git log -p --all --format=%B%n%H` (messages and trailers included); an ordinary note is a
  false positive if what capture committed or printed holds "[redacted". One probe more: a
  transcript whose session id is shaped like a secret.

"Reached" is `leaks.leaked`: any 12 characters in a row of the secret's random part. The same
run scores detect-secrets' own scanner (its CLI defaults: every plugin, default filters), each
sample in a file of its own, as the reference. Goals: >= 98 % caught in every placement, <= 1 %
false positives, for every door.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections import defaultdict
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import NamedTuple

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchlib import emit, hermetic_env, progress
from leaks import FORMATS, Sample, leaked, samples
from leaks.placements import PLACEMENTS

DOORS = ("write", "hook", "capture")
GOAL_CAUGHT, GOAL_FALSE_POSITIVES = 0.98, 0.01
WHEN = "2026-11-20T10:00:00Z"
PROBES = ("GitHub personal access token", "AWS secret access key", "Slack bot token")


class Outcome(NamedTuple):
    flagged: bool  # a secret caught, or an ordinary note flagged (a false positive)
    detail: str  # how: refused (and why), redacted, leaked, committed


class Memory(NamedTuple):
    root: Path
    env: dict[str, str]
    scratch: Path  # transcripts go here


def run(cmd: list[str], memory: Memory) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, cwd=memory.root, env=memory.env, capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, check=False)


def first_line(text: str) -> str:
    return next((line.strip() for line in text.splitlines() if line.strip()), "")[:160]


def make_memory(folder: Path) -> Memory:
    home, root, scratch = folder / "home", folder / "memory", folder / "transcripts"
    for path in (home, scratch):
        path.mkdir(parents=True)
    env = hermetic_env(home)
    subprocess.run(["git", "strata", "init", str(root)], env=env, check=True, capture_output=True)
    return Memory(root, env, scratch)


def tips(memory: Memory) -> list[str]:
    return run(["git", "for-each-ref", "--format=%(objectname)"], memory).stdout.split()


def new_history(memory: Memory, before: list[str]) -> str:
    """`git log -p --all` of the commits made since `before` (the tips of every ref then)."""
    return run(["git", "log", "-p", "--all", "--format=%B%n%H", "--not", *before], memory).stdout


def judged(sample: Sample, stored: str, how: str) -> Outcome:
    """A text that was committed: a secret is caught unless it leaked into `stored`."""
    if sample.secret is None:
        return Outcome(True, "redacted") if "[redacted" in stored else Outcome(False, how)
    return Outcome(False, "leaked") if leaked(sample.secret, stored) else Outcome(True, "redacted")


def door_write(memory: Memory, n: int, sample: Sample) -> Outcome:
    before = tips(memory)
    proc = run(["git", "strata", "write", f"notes/sample-{n}", f"--message={sample.text}"], memory)
    if proc.returncode != 0:
        return Outcome(True, "refused: " + first_line(proc.stderr or proc.stdout))
    outcome = judged(sample, new_history(memory, before), "committed")
    return outcome._replace(flagged=outcome.flagged and sample.secret is not None)  # write never redacts a note


def door_hook(memory: Memory, n: int, sample: Sample) -> Outcome:
    rel = f"active/notes/sample-{n}.md"
    path = memory.root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(sample.text + "\n", encoding="utf-8")
    run(["git", "add", "--", rel], memory)
    proc = run(["git", "commit", "-q", "-m", f"sample {n}"], memory)
    if proc.returncode == 0:
        return Outcome(False, "committed")
    run(["git", "rm", "-q", "--cached", "-f", "--", rel], memory)
    path.unlink()
    return Outcome(True, "refused: " + first_line(proc.stderr or proc.stdout))


def transcript(session: str, prompt: str, command: str | None) -> str:
    def line(kind: str, content: object) -> str:
        return json.dumps({"type": kind, "sessionId": session, "timestamp": WHEN,
                           "message": {"role": kind, "content": content}})
    said: list[dict] = [{"type": "text", "text": "Done, I noted it."}]
    if command is not None:
        said.append({"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": command}})
    return line("user", prompt) + "\n" + line("assistant", said) + "\n"


def capture(memory: Memory, session: str, prompt: str, command: str | None) -> tuple[str, str]:
    """(what capture printed, what it committed) for a one-turn session."""
    path = memory.scratch / f"{len(list(memory.scratch.iterdir()))}.jsonl"
    path.write_text(transcript(session, prompt, command), encoding="utf-8")
    before = tips(memory)
    proc = run(["git", "strata", "capture", str(path)], memory)
    printed = proc.stdout + proc.stderr if proc.returncode == 0 else f"capture failed: {first_line(proc.stderr)}"
    return printed, new_history(memory, before)


def door_capture(memory: Memory, n: int, sample: Sample) -> Outcome:
    command = sample.text if sample.placement == "command" else None
    printed, stored = capture(memory, f"bench-{n:04d}", sample.text, command)
    if printed.startswith("capture failed"):
        return Outcome(sample.secret is not None, printed)
    if sample.secret is None:
        return judged(sample, stored + printed, "captured")
    return judged(sample, stored, "captured")


DOOR_RUN: dict[str, Callable[[Memory, int, Sample], Outcome]] = {
    "write": door_write, "hook": door_hook, "capture": door_capture}


class Progress:
    def __init__(self, total: int) -> None:
        self.total, self.done, self.lock = total, 0, threading.Lock()

    def step(self, door: str) -> None:
        with self.lock:
            self.done += 1
            if self.done % 100 == 0 or self.done == self.total:
                progress(f"{self.done}/{self.total} samples through the doors (now: {door})")


def run_shard(door: str, corpus: list[Sample], shard: int, jobs: int, folder: Path, ticks: Progress) -> dict:
    memory = make_memory(folder / f"{door}-{shard}")
    out = {}
    for n in range(shard, len(corpus), jobs):
        out[n] = DOOR_RUN[door](memory, n, corpus[n])
        ticks.step(door)
    return out


def run_doors(doors: list[str], corpus: list[Sample], jobs: int) -> dict[str, list[Outcome]]:
    """Every sample through every door, `jobs` memory repositories per door worked at once."""
    ticks = Progress(len(doors) * len(corpus))
    with tempfile.TemporaryDirectory(prefix="strata-leaks-") as tmp, ThreadPoolExecutor(jobs) as pool:
        futures = {(door, shard): pool.submit(run_shard, door, corpus, shard, jobs, Path(tmp), ticks)
                   for door in doors for shard in range(jobs)}
        results: dict[str, dict[int, Outcome]] = defaultdict(dict)
        for (door, _), future in futures.items():
            results[door].update(future.result())
    return {door: [results[door][n] for n in range(len(corpus))] for door in doors}


def probe_sessions(seed: int) -> list[dict]:
    """Capture a harmless session whose id is shaped like a secret: does the id leak?"""
    import random

    rng = random.Random(seed)
    out = []
    with tempfile.TemporaryDirectory(prefix="strata-probe-") as tmp:
        memory = make_memory(Path(tmp))
        for fmt in (f for f in FORMATS if f.name in PROBES):
            session = fmt.make(rng)
            printed, stored = capture(memory, session, "Summarize the deploy checklist for Friday.", None)
            out.append({"session_id_format": fmt.name, "leaked": leaked(session, stored),
                        "capture": first_line(printed)})
    return out


def reference(corpus: list[Sample]) -> list[Outcome]:
    """detect-secrets' scanner with its CLI defaults, each sample in a file of its own."""
    from detect_secrets import SecretsCollection
    from detect_secrets.settings import default_settings

    def flagged(text: str, folder: str) -> Outcome:
        path = os.path.join(folder, "note.md")
        with open(path, "w", encoding="utf-8") as f:
            f.write(text + "\n")
        found = SecretsCollection()
        found.scan_file(path)
        types = sorted({s.type for name in found.files for s in found[name]})
        return Outcome(bool(types), ", ".join(types))

    with tempfile.TemporaryDirectory() as folder, default_settings():
        return [flagged(s.text, folder) for s in corpus]


def score(corpus: list[Sample], outcomes: list[Outcome]) -> dict:
    caught: dict[str, list[bool]] = {p: [] for p in PLACEMENTS}
    missed: dict[str, list[str]] = defaultdict(list)
    false_positives, negatives = [], 0
    for sample, outcome in zip(corpus, outcomes, strict=True):
        if sample.secret is None:
            negatives += 1
            if outcome.flagged:
                false_positives.append(f"{sample.format}: {outcome.detail}")
            continue
        caught[sample.placement].append(outcome.flagged)
        if not outcome.flagged:
            missed[sample.format].append(sample.placement)
    rates = {p: round(sum(v) / len(v), 4) if v else None for p, v in caught.items()}
    fp_rate = round(len(false_positives) / negatives, 4) if negatives else None
    return {
        "caught": rates, "false_positive_rate": fp_rate,
        "goals": {"caught_ge_98_every_placement": all(r is None or r >= GOAL_CAUGHT for r in rates.values()),
                  "false_positives_le_1": fp_rate is None or fp_rate <= GOAL_FALSE_POSITIVES},
        "missed": {f: sorted(set(p), key=PLACEMENTS.index) for f, p in sorted(missed.items())},
        "false_positives": sorted(set(false_positives)),
        "failed_captures": sum(o.detail.startswith("capture failed") for o in outcomes),
    }


def spread(items: list[Sample], n: int | None, shift: float = 0.0) -> list[Sample]:
    """`n` items spread evenly over the list, starting `shift` of a step in (all without a limit)."""
    if n is None or n >= len(items):
        return items
    return [items[(i * len(items) + int(shift * len(items))) // n] for i in range(n)]


def limited(positives: list[Sample], negatives: list[Sample], n: int | None) -> list[Sample]:
    """About `n` secrets, as many in each placement and each placement from other formats, and `n`
    ordinary notes, spread over the corpus."""
    share = None if n is None else -(-n // len(PLACEMENTS))
    return [s for k, p in enumerate(PLACEMENTS)
            for s in spread([s for s in positives if s.placement == p], share, k / len(PLACEMENTS))] \
        + spread(negatives, n)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--seed", type=int, default=15)
    p.add_argument("--limit", type=int, help="at most N secrets and N ordinary notes, spread over the corpus")
    p.add_argument("--doors", default=",".join(DOORS), help="comma-separated: write, hook, capture")
    p.add_argument("--jobs", type=int, default=2, help="memory repositories worked at once per door")
    p.add_argument("--samples", type=Path, metavar="PATH",
                   help="also write each sample's outcome in each door to PATH (JSON lines)")
    p.add_argument("--json", action="store_true")
    args = p.parse_args()
    doors = [d for d in args.doors.split(",") if d]
    if unknown := set(doors) - set(DOORS):
        p.error(f"unknown door(s): {', '.join(sorted(unknown))} (choose from {', '.join(DOORS)})")
    started = time.perf_counter()
    positives, negatives = samples(args.seed)
    corpus = limited(positives, negatives, args.limit)
    progress("detect-secrets' scanner (the reference)")
    results = {"reference": reference(corpus)}
    results.update(run_doors(doors, corpus, max(1, args.jobs)))
    progress("probe: secret-shaped session ids")
    out = {
        "seed": args.seed,
        "corpus": corpus_counts(corpus, positives, negatives),
        "doors": {door: score(corpus, results[door]) for door in doors},
        "reference_detect_secrets": score(corpus, results["reference"]),
        "probes_capture_session_id": probe_sessions(args.seed) if "capture" in doors else [],
        "seconds": 0.0,
    }
    out["seconds"] = round(time.perf_counter() - started, 1)
    if args.samples:
        dump(args.samples, corpus, results)
    emit(out, args.json, report)


def dump(path: Path, corpus: list[Sample], results: dict[str, list[Outcome]]) -> None:
    with path.open("w", encoding="utf-8") as f:
        for door, outcomes in results.items():
            for sample, outcome in zip(corpus, outcomes, strict=True):
                f.write(json.dumps({"door": door, **sample._asdict(), **outcome._asdict()}) + "\n")


def corpus_counts(corpus: list[Sample], positives: list[Sample], negatives: list[Sample]) -> dict:
    used = [s for s in corpus if s.secret is not None]
    return {"formats": len({s.format for s in used}), "formats_in_corpus": len(FORMATS), "secrets": len(used),
            "per_placement": {p: sum(s.placement == p for s in used) for p in PLACEMENTS},
            "ordinary_notes": len(corpus) - len(used), "ordinary_kinds": len({s.format for s in corpus} -
                                                                              {s.format for s in used}),
            "full_corpus": {"secrets": len(positives), "ordinary_notes": len(negatives)}}


def report(o: dict) -> None:
    c = o["corpus"]
    placed = ", ".join(f"{n} {p}" for p, n in c["per_placement"].items())
    print(f"{c['secrets']} secrets of {c['formats']} formats ({placed}), {c['ordinary_notes']} ordinary notes "
          f"of {c['ordinary_kinds']} kinds (seed {o['seed']}, {o['seconds']} s)")
    print()
    rows = {**o["doors"], "reference": o["reference_detect_secrets"]}
    print(f"{'caught':<11}" + "".join(f"{p:>9}" for p in PLACEMENTS) + f"{'false pos.':>12}")
    for name, s in rows.items():
        cells = "".join(f"{pct(s['caught'][p]):>9}" for p in PLACEMENTS)
        print(f"{name:<11}{cells}{pct(s['false_positive_rate']):>12}")
    print("(reference: detect-secrets' own scanner, CLI defaults, the same samples)")
    print()
    print(f"goals: caught >= {GOAL_CAUGHT:.0%} in every placement, false positives <= {GOAL_FALSE_POSITIVES:.0%}")
    for name, s in rows.items():
        g = s["goals"]
        print(f"  {name:<10} caught {'met' if g['caught_ge_98_every_placement'] else 'MISSED'}, "
              f"false positives {'met' if g['false_positives_le_1'] else 'MISSED'}")
    for name, s in rows.items():
        print()
        missed = [f"{f} ({', '.join(p)})" for f, p in s["missed"].items()]
        print(f"{name}: {len(missed)} formats missed somewhere: {'; '.join(missed) or 'none'}")
        print(f"{name}: false positives: {'; '.join(s['false_positives']) or 'none'}")
        if s["failed_captures"]:
            print(f"{name}: {s['failed_captures']} captures failed (counted as caught for secrets)")
    for probe in o["probes_capture_session_id"]:
        print(f"\nprobe, capture of a session whose id is shaped like this format: {probe['session_id_format']}: "
              f"{'LEAKED' if probe['leaked'] else 'not leaked'} ({probe['capture']})")


def pct(rate: float | None) -> str:
    return "-" if rate is None else f"{rate:.1%}"


if __name__ == "__main__":
    main()
