"""How well capture finds what real sessions decided: precision and recall against the labelled
corpus (tests/corpus), per type and per harness, on the tuning part and on the held-back part,
with 95 % Wilson intervals, and the harness text that reached a session digest.

    .venv/bin/python bench/capture_quality.py [--json] [--show]

Each transcript of the corpus is read as capture reads it (ops/stretch.py, part after part) and
its statements compared with the labels by hand (tests/corpus/labels/): a statement is right when
a label of the same type (for "decision+rejection": of either) names its line, first or in
`also`. Precision = right statements / statements; recall = labels found / labels. `--show`
prints the tuning part's misses and false finds (never the held-back part's: rules are not tuned
on it). The digest check looks for harness text in every session digest capture would write,
with markers written here, apart from the rules. Last, the largest transcript is captured into a
real memory repository by the console script: time and peak memory.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import resource
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from benchlib import hermetic_env, progress
from strata_git.ops import capture, stretch
from strata_git.store import captures

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "corpus"
TYPES = ("decision", "rejection", "lesson", "task")
# What harness text looks like in a digest: tags the harnesses wrap injected text in, and their
# fixed phrases (written from the harnesses' formats, not from capture's list).
NOISE = re.compile(r"<(?:command-(?:name|message|args)|local-command-[a-z]+|system-reminder|task-notification|"
                   r"environment_context|user_instructions|INSTRUCTIONS|turn_aborted|bash-(?:input|stdout|stderr)|"
                   r"ide_[a-z_]+|user-prompt-submit-hook)>|Stop hook feedback|Base directory for this skill|"
                   r"# AGENTS\.md instructions|This session is being continued|Caveat: The messages below|"
                   r"<agent-activation|## User Input|You \*\*MUST\*\* consider the user input")


def wilson(k: int, n: int) -> tuple[float, float]:
    if n == 0:
        return (0.0, 1.0)
    z, p = 1.96, k / n
    mid, half = p + z * z / (2 * n), z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return max(0.0, (mid - half) / (1 + z * z / n)), min(1.0, (mid + half) / (1 + z * z / n))


def statements(path: Path) -> tuple[list[tuple[str, int]], list[str]]:
    """([(kind, line)], [session digest texts]) as capture finds them in `path`."""
    found: list[tuple[str, int]] = []
    digests: list[str] = []
    mark, more = captures.NONE, True
    sid = stretch.session_of(str(path), None, capture._session_id)
    while more:
        s = stretch.read(str(path), "auto", sid, mark)
        if not s.first:
            break
        d = s.notes.digest()
        found += [(st.kind, st.line) for st in d.statements]
        drafts, _ = capture._drafts(d, sid, s.fmt, (s.first, s.last), s.stamp)
        digests.append(drafts[0].content.decode("utf-8", "replace"))
        mark, more = s.end, s.more
    return found, digests


def score(found: list[tuple[str, int]], labels: list[dict], kinds: tuple[str, ...]) -> tuple[int, int, int, int]:
    """(right statements, statements, labels found, labels) for the statements and labels of `kinds`."""
    mine = [(k, line) for k, line in found if k in kinds]
    theirs = [item for item in labels if item["type"] in kinds]
    lines: dict[int, set[int]] = defaultdict(set)  # line -> labels naming it
    for i, item in enumerate(theirs):
        for line in [item["line"], *item.get("also", [])]:
            lines[line].add(i)
    right = [line for _, line in mine if lines.get(line)]
    hit = {i for line in right for i in lines[line]}
    return len(right), len(mine), len(hit), len(theirs)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--show", action="store_true", help="the tuning part's misses and false finds")
    parser.add_argument("--tuning-only", action="store_true", help="measure the tuning part alone (while tuning)")
    args = parser.parse_args()
    split = json.loads((CORPUS / "split.json").read_text())
    rows: dict[tuple[str, str, str], list[int]] = defaultdict(lambda: [0, 0, 0, 0])
    noisy, digest_count, shown = [], 0, []
    for part in ("tuning",) if args.tuning_only else ("tuning", "held_back"):
        for name in split[part]:
            path = CORPUS / name
            progress(name)
            labels = json.loads((CORPUS / "labels" / (name.replace("/", "__")[: -len(".jsonl")] + ".json"))
                                .read_text())["items"]
            found, digests = statements(path)
            harness = name.split("/")[0]
            for kinds, label in [*(((t,), t) for t in TYPES), (("decision", "rejection"), "decision+rejection")]:
                got = score(found, labels, kinds)
                for key in ((part, harness, label), (part, "all", label)):
                    rows[key] = [a + b for a, b in zip(rows[key], got, strict=True)]
            digest_count += len(digests)
            noisy += [(name, m.group(0)) for text in digests for m in NOISE.finditer(text)]
            if args.show and part == "tuning":
                at = {line: item for item in labels for line in [item["line"], *item.get("also", [])]}
                shown += [f"{name}:{line} false {kind}" for kind, line in found if line not in at]
                said = {(kind, line) for kind, line in found}
                shown += [f"{name}:{item['line']} missed {item['type']}: {item['text']}" for item in labels
                          if not any((item["type"], line) in said for line in [item["line"], *item.get("also", [])])]
    perf = largest(split)
    perf |= plumbing(split, args.tuning_only)
    out = {"rows": [{"part": p, "harness": h, "type": t, "right": r, "statements": s, "found": f, "labels": n,
                     "precision": r / s if s else None, "precision_ci": wilson(r, s),
                     "recall": f / n if n else None, "recall_ci": wilson(f, n)}
                    for (p, h, t), (r, s, f, n) in sorted(rows.items())],
           "digests": digest_count, "digest_noise": noisy, **perf}
    if args.json:
        print(json.dumps(out, indent=2))
        return
    print(f"{'part':<10} {'harness':<7} {'type':<19} {'precision [95% CI] k/n':>24} {'recall [95% CI] k/n':>24}")
    for r in out["rows"]:
        p = _share(r["precision"], r["precision_ci"], r["right"], r["statements"])
        c = _share(r["recall"], r["recall_ci"], r["found"], r["labels"])
        print(f"{r['part']:<10} {r['harness']:<7} {r['type']:<19} {p:>24} {c:>24}")
    print(f"digests: {digest_count}, harness text in them: {len(noisy)}"
          + "".join(f"\n  {n}: {m}" for n, m in noisy[:20]))
    print(f"note-taker plumbing (a fake model that answers with the labels, through capture's prompt, "
          f"parse and checks): decisions+rejections precision {perf['plumbing_precision']:.2f}, "
          f"recall {perf['plumbing_recall']:.2f}; sent per main session: median {perf['tokens_median']:,} "
          f"tokens, largest {perf['tokens_max']:,}, all {perf['sessions']} sessions {perf['tokens_total']:,} "
          f"(about ${perf['tokens_total'] * PRICE / 1e6:.2f} at ${PRICE:g} per million input tokens)")
    print(f"largest transcript ({perf['largest']}, {perf['largest_bytes']:,} bytes): capture "
          f"{perf['capture_seconds']:.2f} s, peak {perf['capture_peak_mib']:.0f} MiB resident")
    print("\n".join(shown))


PRICE = 1.0  # US$ per million input tokens of a small model (Claude Haiku 4.5's list price, 2026-11): an estimate
FAKE = """import json, os, sys
sys.stdin.read()
items = json.load(open(os.environ["FAKE_LABELS"]))["items"]
print(json.dumps({"items": [{"type": i["type"], "text": i["text"], "line": i["line"]} for i in items]}))
"""


def plumbing(split: dict, tuning_only: bool) -> dict:
    """Capture's note-taker path with a fake model that answers with the hand labels: what the
    prompt, the parse and the checks keep of a perfect answer; and the tokens sent per session."""
    import os
    import statistics

    from strata_git.core import notetaker
    from strata_git.core.context import tokens
    from strata_git.gitio.git import discover

    names = split["tuning"] + ([] if tuning_only else split["held_back"])
    totals, sent = [0, 0, 0, 0], []
    with tempfile.TemporaryDirectory() as tmp:
        env = hermetic_env(Path(tmp))
        mem = Path(tmp) / "memory"
        subprocess.run(["git-strata", "init", str(mem)], env=env, check=True, capture_output=True)
        (Path(tmp) / "fake.py").write_text(FAKE)
        repo = discover(str(mem))
        repo.git("config", "strata.captureSummarizer", "command")
        repo.git("config", "strata.captureCommand", f"{sys.executable} {Path(tmp) / 'fake.py'}")
        for name in names:
            labels = CORPUS / "labels" / (name.replace("/", "__")[: -len(".jsonl")] + ".json")
            os.environ["FAKE_LABELS"] = str(labels)
            sid = stretch.session_of(str(CORPUS / name), None, capture._session_id)
            mark, more, found, chars = captures.NONE, True, [], 0
            while more:
                s = stretch.read(str(CORPUS / name), "auto", sid, mark)
                if not s.first:
                    break
                noted, _ = capture._noted(repo, str(CORPUS / name), s)
                found += [(st.kind, st.line) for st in noted or []]
                chars += tokens(notetaker.render(s.notes.said))
                mark, more = s.end, s.more
            got = score(found, json.loads(labels.read_text())["items"], ("decision", "rejection"))
            totals = [a + b for a, b in zip(totals, got, strict=True)]
            if "agent-" not in name:
                sent.append(chars)
    right, stated, hit, labelled = totals
    return {"plumbing_precision": right / stated if stated else 0.0,
            "plumbing_recall": hit / labelled if labelled else 0.0, "tokens_median": int(statistics.median(sent)),
            "tokens_max": max(sent), "tokens_total": sum(sent), "sessions": len(sent)}


def _share(value: float | None, ci: tuple[float, float], k: int, n: int) -> str:
    return "- 0/0" if value is None else f"{value:.2f} [{ci[0]:.2f}-{ci[1]:.2f}] {k}/{n}"


def largest(split: dict) -> dict:
    """Capture the corpus's largest transcript with the console script into a new memory repository."""
    name = max(split["tuning"] + split["held_back"], key=lambda n: (CORPUS / n).stat().st_size)
    with tempfile.TemporaryDirectory() as tmp:
        env = hermetic_env(Path(tmp))
        mem = Path(tmp) / "memory"
        subprocess.run(["git-strata", "init", str(mem)], env=env, check=True, capture_output=True)
        start = time.perf_counter()
        subprocess.run(["git-strata", "capture", str(CORPUS / name)], cwd=mem, env=env, check=True,
                       capture_output=True)
        seconds = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    return {"largest": name, "largest_bytes": (CORPUS / name).stat().st_size, "capture_seconds": seconds,
            "capture_peak_mib": peak}


if __name__ == "__main__":
    main()
