"""Capture of a very long transcript: bounded memory, and every statement once.

    bash scripts/setup.sh bench
    .venv/bin/python bench/capture_large.py [--mb 200] [--json]

Writes a Claude Code transcript of `--mb` MiB and one of 10 MiB (bench/agent_hooks.py's
generator: prompts, answers with tool calls, tool results, a decision or a task every
fifteenth exchange) and captures each with `git strata capture` into a fresh memory
repository, from a small wrapper process that reports the capture's peak memory (max RSS of it
and its git children). Prints wall time, peak, the commits (a stretch over
capture.PART_BYTES or PART_STATEMENTS is committed in parts), the memories, and whether every
decision and task in the transcript became exactly one memory. The 10 MiB capture in the same
run is the baseline: peak memory should not grow with the transcript, time about linearly.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from agent_hooks import transcript, wrapped_capture

from benchlib import BIN, emit, hermetic_env, progress, sh


def capture(tmp: Path, mb: int, env: dict) -> dict:
    root = tmp / f"mem-{mb}"
    sh([str(BIN / "git-strata"), "init", str(root)], tmp, env)
    path = tmp / f"t-{mb}.jsonl"
    progress(f"writing a {mb} MiB transcript")
    lines = transcript(path, mb * 1024 * 1024, random.Random(mb))
    progress(f"capturing {mb} MiB")
    report, seconds, peak = wrapped_capture(root, path, env)
    exchanges = lines // 3
    expected = {f"decisions/plan-{n}-goes-ahead" for n in range(0, exchanges * 3, 30)} | \
               {f"tasks/follow-up-on-item-{n}" for n in range(15, exchanges * 3, 30)}
    names = [m for m in report["memories"] if not m.startswith("sessions/")]
    return {"mib": round(path.stat().st_size / 2**20, 1), "lines": lines, "seconds": round(seconds, 2),
            "peak_rss_mib": round(peak / 1024, 1),
            "commits": len(report.get("commits") or [report["commit"]]), "memories": len(report["memories"]),
            "each_statement_once": sorted(names) == sorted(expected)}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--mb", type=int, default=200)
    p.add_argument("--json", action="store_true")
    args = p.parse_args()
    with tempfile.TemporaryDirectory(prefix="strata-capture-large-") as tmp:
        (Path(tmp) / "home").mkdir()
        env = hermetic_env(Path(tmp) / "home")
        out = {"baseline": capture(Path(tmp), 10, env), "large": capture(Path(tmp), args.mb, env)}
    base, big = out["baseline"], out["large"]
    out["ratios"] = {"size": round(big["mib"] / base["mib"], 1), "time": round(big["seconds"] / base["seconds"], 1),
                     "peak": round(big["peak_rss_mib"] / base["peak_rss_mib"], 2)}

    def report(r: dict) -> None:
        for name in ("baseline", "large"):
            c = r[name]
            print(f"{name:<8} {c['mib']:>6.1f} MiB, {c['lines']} lines: {c['seconds']} s, "
                  f"peak {c['peak_rss_mib']} MiB, {c['commits']} commit(s), {c['memories']} memories, "
                  f"every statement once: {c['each_statement_once']}")
        x = r["ratios"]
        print(f"large / baseline: size {x['size']}x, time {x['time']}x, peak memory {x['peak']}x")

    emit(out, args.json, report)


if __name__ == "__main__":
    main()
