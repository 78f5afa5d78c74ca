"""Benchmark: what git-strata's hooks add to `git commit` in a 5,000-memory repository.

In one run, on identical repositories, the median wall time of committing one changed
memory (a) with git-strata's hooks, (b) with hooks disabled and (c) with only a no-op
hook run through the pre-commit framework, interleaved a,b,c,a,b,c,... so machine noise
falls on every variant alike; then `git strata read NAME` end to end, with
`git show HEAD:<path>` and `python -c pass` for reference.

Goal: git-strata adds at most half of what the framework's no-op adds ((a-b)/(c-b) <= 0.5).
Stretch: a commit with git-strata's hooks within 2x of a bare commit (a/b <= 2.0).

    .venv/bin/python bench/commit_hooks.py [--samples 21] [--memories 5000] [--json] [--keep]
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchlib import BIN, emit, hermetic_env, progress, round_robin, sh, stats, timed

STRATA = str(BIN / "git-strata")
NOOP_CONFIG = """repos:
- repo: local
  hooks:
  - {id: noop, name: noop, entry: "true", language: system, pass_filenames: false, always_run: true}
"""
WORDS = ("launch plan review budget client meeting follow-up decision owner deadline risk api "
         "schema migration release notes customer feedback metric latency cache deploy rollback "
         "design draft contract vendor invoice hiring roadmap retro incident alert oncall").split()
TYPES = ("note", "decision", "lesson", "task", "entity", "rejection")
FOLDERS = (("projects", "p", 40), ("entities", "e", 20), ("gtd", "g", 8))  # (folder, prefix, fan-out)


def memory_text(rng: random.Random, i: int) -> str:
    tags = ", ".join(rng.sample(WORDS, rng.randint(1, 4)))
    title = " ".join(rng.sample(WORDS, rng.randint(2, 6))).capitalize()
    head = f"---\ntitle: {title} {i}\ntags: [{tags}]\ntype: {rng.choice(TYPES)}\n---\n\n# {title}\n\n"
    size, lines = rng.randint(300, 1500), []
    while sum(len(line) + 1 for line in lines) < size:
        lines.append(" ".join(rng.choice(WORDS) for _ in range(rng.randint(6, 14))) + ".")
    return head + "\n".join(lines) + "\n"


def build_repo(root: Path, count: int, env: dict[str, str]) -> list[str]:
    """A memory repository with `count` committed memories; returns their paths (relative)."""
    sh([STRATA, "init", str(root)], root.parent, env)
    rng, paths = random.Random(20261101), []
    for i in range(count):
        folder, prefix, fan = FOLDERS[i % len(FOLDERS)]
        rel = f"active/{folder}/{prefix}{rng.randrange(fan):02d}/m{i:05d}.md"
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(memory_text(rng, i), encoding="utf-8")
        paths.append(rel)
    sh(["git", "add", "-A"], root, env)
    sh(["git", "-c", "core.hooksPath=/dev/null", "commit", "-q", "-m", "bulk"], root, env)
    sh([STRATA, "index"], root, env)  # warm the caches under .git/strata/, as the hooks keep them
    return paths


def pre_commit_available() -> bool:
    try:
        import pre_commit  # noqa: F401
        return True
    except ImportError:
        pass
    print("pre-commit is not installed; installing it into this venv (pip install 'pre-commit>=3')", file=sys.stderr)
    proc = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "pre-commit>=3"], capture_output=True)
    if proc.returncode != 0:
        print("could not install pre-commit; variant (c) is skipped. Install it with "
              f"`{sys.executable} -m pip install -e '.[bench]'`", file=sys.stderr)
        return False
    return True


def build_bare_copy(root: Path, copy: Path, env: dict[str, str]) -> None:
    """An identical copy for the hook-less commits. Kept apart from `root` because a commit
    that runs no hook leaves git-strata's catalog behind HEAD, and the next hooked commit
    there would rightly rescan everything: a cost of mixing, not of either variant."""
    sh(["cp", "-a", str(root), str(copy)], root.parent, env)


def build_framework_copy(root: Path, copy: Path, env: dict[str, str]) -> None:
    """An identical copy of `root` whose only hook is a no-op run by the pre-commit framework."""
    sh(["cp", "-a", str(root), str(copy)], root.parent, env)
    sh([STRATA, "uninstall-hooks"], copy, env)
    (copy / ".pre-commit-config.yaml").write_text(NOOP_CONFIG, encoding="utf-8")
    sh(["git", "add", ".pre-commit-config.yaml"], copy, env)
    sh(["git", "-c", "core.hooksPath=/dev/null", "commit", "-q", "-m", "pre-commit config"], copy, env)
    sh([sys.executable, "-m", "pre_commit", "install"], copy, env)
    sh([sys.executable, "-m", "pre_commit", "run", "--all-files"], copy, env)


class Committer:
    """Changes one memory, stages it (untimed), then times `git commit`.

    By default the edit appends to the body, the common case; with frontmatter=True it adds a
    key to the frontmatter, which the hook has never validated and must parse with PyYAML.
    """

    def __init__(self, paths: list[str], env: dict[str, str]):
        self.paths, self.env, self.n = paths, env, 0

    def sample(self, repo: Path, git_args: list[str], frontmatter: bool = False) -> float:
        self.n += 1
        rel = self.paths[(self.n * 7919) % len(self.paths)]  # a different memory every time
        text = (repo / rel).read_text(encoding="utf-8")
        if frontmatter:
            text = text.replace("---\n", f"---\nbench: {self.n}\n", 1)
        else:
            text += f"bench edit {self.n}\n"
        (repo / rel).write_text(text, encoding="utf-8")
        sh(["git", "add", "--", rel], repo, self.env)
        return timed(["git", *git_args, "commit", "-q", "-m", f"bench {self.n}"], repo, self.env)


def derive(c: dict[str, dict]) -> dict[str, object]:
    a, b = c["a_strata_hooks"]["median_ms"], c["b_no_hooks"]["median_ms"]
    out: dict[str, object] = {"added_by_strata_ms": round(a - b, 1), "ratio_a_over_b": round(a / b, 2)}
    out["stretch_a_over_b_le_2"] = "PASS" if a / b <= 2.0 else "MISS"
    if "c_precommit_noop" in c:
        fw = c["c_precommit_noop"]["median_ms"] - b
        out["added_by_framework_ms"] = round(fw, 1)
        out["ratio_strata_over_framework"] = round((a - b) / fw, 2) if fw > 0 else None
        out["goal_ratio_le_0_5"] = "PASS" if fw > 0 and (a - b) / fw <= 0.5 else "MISS"
        if "a2_strata_hooks_new_frontmatter" in c and fw > 0:
            a2 = c["a2_strata_hooks_new_frontmatter"]["median_ms"]
            out["ratio_new_frontmatter_over_framework"] = round((a2 - b) / fw, 2)
    return out


def environment() -> dict[str, object]:
    git = subprocess.run(["git", "--version"], capture_output=True, text=True).stdout.strip()
    info: dict[str, object] = {"git": git, "python": platform.python_version(), "cpus": os.cpu_count(),
                               "platform": platform.platform()}
    try:
        from importlib.metadata import version
        info["pre_commit"] = version("pre-commit")
    except Exception:  # noqa: BLE001 - any failure: the version is just not shown
        info["pre_commit"] = None
    info["reproduce"] = f"cd {shlex.quote(os.getcwd())} && {shlex.join([sys.executable, *sys.argv])}"
    return info


def report(result: dict) -> None:
    env, d = result["environment"], result["derived"]
    print(f"git-strata commit-hook benchmark: {result['memories']} memories, {result['samples']} samples per row")
    print(f"{env['git']}, Python {env['python']}, {env['cpus']} CPUs, pre-commit {env['pre_commit']}, "
          f"{env['platform']}")
    print(f"\n{'variant':<44} {'median ms':>10} {'min ms':>8}")
    for name, row in {**result["commit"], **result["read"]}.items():
        print(f"{name:<44} {row['median_ms']:>10.1f} {row['min_ms']:>8.1f}")
    print(f"\nadded_by_strata    = a - b = {d['added_by_strata_ms']:.1f} ms")
    if "added_by_framework_ms" in d:
        print(f"added_by_framework = c - b = {d['added_by_framework_ms']:.1f} ms")
        print(f"added_by_strata / added_by_framework = {d['ratio_strata_over_framework']}"
              f"   goal <= 0.5: {d['goal_ratio_le_0_5']}")
        if "ratio_new_frontmatter_over_framework" in d:
            print(f"with new frontmatter: (a2 - b) / added_by_framework = {d['ratio_new_frontmatter_over_framework']}")
    else:
        print("added_by_framework: not measured (pre-commit unavailable)")
    print(f"a / b = {d['ratio_a_over_b']}   stretch <= 2.0: {d['stretch_a_over_b_le_2']}")
    print(f"\nbuild {result['build_s']} s, total {result['total_s']} s")
    print(f"reproduce: {env['reproduce']}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--samples", type=int, default=21, help="timed runs per variant (default 21)")
    parser.add_argument("--memories", type=int, default=5000, help="memories in the repository (default 5000)")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--keep", action="store_true", help="keep the temporary repositories")
    args = parser.parse_args()
    started, tmp = time.perf_counter(), Path(tempfile.mkdtemp(prefix="strata-bench-"))
    (tmp / "home").mkdir()
    env = hermetic_env(tmp / "home")
    try:
        progress(f"building {args.memories} memories in {tmp}")
        root, copy, bare = tmp / "mem", tmp / "mem-precommit", tmp / "mem-bare"
        paths = build_repo(root, args.memories, env)
        committer = Committer(paths, env)
        build_bare_copy(root, bare, env)
        variants = {"a_strata_hooks": lambda: committer.sample(root, []),
                    "b_no_hooks": lambda: committer.sample(bare, ["-c", "core.hooksPath=/dev/null"]),
                    "a2_strata_hooks_new_frontmatter": lambda: committer.sample(root, [], frontmatter=True)}
        if pre_commit_available():
            progress("building the pre-commit framework copy")
            build_framework_copy(root, copy, env)
            variants["c_precommit_noop"] = lambda: committer.sample(copy, [])
        build_s = round(time.perf_counter() - started, 1)
        commit = {k: stats(v) for k, v in round_robin(variants, args.samples, "commit").items()}
        name = paths[1][len("active/"):-len(".md")]
        reads = {f"git-strata read {name}": lambda: timed([STRATA, "read", name], root, env),
                 f"git show HEAD:{paths[1]}": lambda: timed(["git", "show", f"HEAD:{paths[1]}"], root, env),
                 "git-strata index (full rescan)": lambda: timed([STRATA, "index"], root, env),
                 "python -c pass": lambda: timed([sys.executable, "-c", "pass"], root, env)}
        read = {k: stats(v) for k, v in round_robin(reads, args.samples, "read").items()}
        result = {"memories": args.memories, "samples": args.samples, "commit": commit, "read": read,
                  "derived": derive(commit), "environment": environment(), "build_s": build_s,
                  "total_s": round(time.perf_counter() - started, 1), "kept": str(tmp) if args.keep else None}
    finally:
        if not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)
    emit(result, args.json, report, tmp if args.keep else None)
    return 0


if __name__ == "__main__":
    sys.exit(main())
