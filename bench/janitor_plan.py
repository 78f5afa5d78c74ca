"""Benchmark: planning and applying janitor cycles on a 5,000-memory, 20,000-commit history.

A synthetic memory repository is generated through `git fast-import` (fan-out folders under
active/, two years of monotonic commit dates, 1-3 memories changed per commit, a simulated
daily janitor whose rename commits carry `Strata-Move:` trailers exactly as
`migrate.message()` writes them, access records in a per-machine ref and the spool). Then,
in one run and with the variants interleaved round-robin so machine noise falls on each alike:

  a. a full plan with a cold history cache (in-process `vault.janitor(dry_run=True)` after
     deleting `<git dir>/strata/changes.cache`);
  b. the naive baseline: one `git log -1 --format=%ct -- <path>` per memory, sampled and
     extrapolated to every memory at HEAD;
  c. one raw `git log --no-renames --name-only --format=%x01%ct HEAD` pass (output discarded);
  d. an incremental plan after 100 new commits, the cache warm from before them;
  e. applying about 500 moves (`--now` tuned on the generated dates) on fresh copies: in-process
     `vault.janitor(dry_run=False)` with its steps, and the whole `git strata janitor` command.

Goals (issue 3): naive / full plan >= 200; full plan / raw pass <= 1.2; incremental <= 100 ms.
Figures are printed, never asserted.

    .venv/bin/python bench/janitor_plan.py [--memories 5000] [--commits 20000] [--samples 5]
                                           [--moves 500] [--json] [--keep]
"""

from __future__ import annotations

import argparse
import collections
import heapq
import os
import platform
import random
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

from benchlib import BIN, USER, emit, hermetic_env, progress, round_robin, sh, stats, timed

STRATA = str(BIN / "git-strata")
HERE = Path(__file__).resolve().parent
DAY = 86400
START = 1704067200  # 2024-01-01T00:00:00Z; commit dates span START .. START + SPAN_DAYS
SPAN_DAYS = 730
WORDS = ("launch", "plan", "review", "budget", "client", "meeting", "follow-up", "decision", "owner", "deadline",
         "risk", "api", "schema", "migration", "release", "notes", "customer", "feedback", "metric", "latency",
         "cache", "deploy", "rollback", "design", "draft", "contract", "vendor", "invoice", "hiring", "roadmap",
         "retro", "incident", "alert", "oncall")
TOPICS = ("infra", "reading", "ideas", "health", "finance", "writing", "tools", "travel", "team", "ops", "ml", "home")
# (share of memories, folder under the tier: a function of rng and memory number, types to draw from)
FOLDERS = (
    (45, lambda r, i: f"projects/p{min(int(r.paretovariate(1.2)) - 1, 39):02d}",  # a few big projects
     ("note", "decision", "task", "lesson")),
    (20, lambda r, i: f"entities/{r.choice(('people', 'orgs', 'products', 'places'))}", ("entity",)),
    (10, lambda r, i: f"gtd/{r.choice(('inbox', 'next', 'waiting', 'someday'))}", ("task",)),
    (15, lambda r, i: f"notes/{r.choice(TOPICS)}", ("note", "lesson")),
    (5, lambda r, i: "decisions", ("decision", "decision", "rejection")),
    (5, lambda r, i: "lessons", ("lesson",)),
)


def ms(fn) -> tuple[float, object]:
    start = time.perf_counter()
    value = fn()
    return (time.perf_counter() - start) * 1000, value


def iso(stamp: int) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(stamp))


# -- the synthetic history ------------------------------------------------------------------


class Memory:
    __slots__ = ("changed", "name", "text", "tier", "type", "version")

    def __init__(self, name: str, type_: str, text: str, changed: int):
        self.name, self.tier, self.type, self.text, self.changed, self.version = name, "active", type_, text, changed, 0

    @property
    def path(self) -> str:
        return f"{self.tier}/{self.name}"


class History:
    """Simulates two years of an agent's memory and writes it as a fast-import stream.

    Each user commit changes 1-3 memories: a new one (creations spread evenly so that exactly
    `memories` exist at the end), or an edit, mostly of something touched recently, sometimes
    of any memory; a cooled or archived one is first brought back by a recall commit, as
    `git strata recall` makes it (git-strata's hook refuses edits in cooled/ and archive/).
    On the first commit of each day a janitor cycle moves what the default rules call for
    (cool, then archive; no reads, so no promotion) as one rename commit with git-strata's own
    message and `Strata-Move` trailers, except in the last `pause_days` days: the daemon was
    paused, so the next cycle has a backlog to catch up on (a daily cycle moves about a dozen
    memories; a 500-move cycle is a catch-up).
    """

    def __init__(self, memories: int, commits: int, seed: int, pause_days: int):
        from strata_git.core.config import Config

        self.rng = random.Random(seed)
        self.target, self.commits, self.cfg = memories, commits, Config()
        self.pause_days = pause_days
        self.mems: list[Memory] = []
        self.index: dict[str, int] = {}  # name -> position in mems
        self.recent: collections.deque[int] = collections.deque(maxlen=300)
        self.due: list[tuple[int, int, int]] = []  # (when, memory, version): a move falls due
        self.counts = collections.Counter()

    # text
    def _sentence(self) -> str:
        return " ".join(self.rng.choice(WORDS) for _ in range(self.rng.randint(6, 14))).capitalize() + "."

    def _new_text(self, i: int, type_: str) -> str:
        r = self.rng
        title = " ".join(r.sample(WORDS, r.randint(2, 6))).capitalize()
        tags = ", ".join(r.sample(WORDS, r.randint(1, 4)))
        body, size = [], r.randint(300, 1500)
        while sum(len(line) + 1 for line in body) < size:
            body.append(self._sentence())
        return f"---\ntitle: {title} {i}\ntags: [{tags}]\ntype: {type_}\n---\n\n# {title}\n\n" + "\n".join(body) + "\n"

    def _edit_text(self, text: str) -> str:
        if self.rng.random() < 0.3 and text.count("\n") > 12:  # rewrite the last line
            return text[:text.rstrip("\n").rfind("\n") + 1] + self._sentence() + "\n"
        return text + self._sentence() + "\n"

    # bookkeeping
    def _schedule(self, i: int) -> None:
        m = self.mems[i]
        m.version += 1
        if m.tier == "active":
            if m.type in self.cfg.never_cool_types:
                return
            days = self.cfg.cool_days_for(m.name)
            if days is None:
                return
            heapq.heappush(self.due, (m.changed + days * DAY, i, m.version))
        elif m.tier == "cooled":
            heapq.heappush(self.due, (m.changed + self.cfg.archive_idle_days * DAY, i, m.version))

    def _create(self, when: int) -> Memory:
        i = len(self.mems)
        r = self.rng
        _, folder, types = r.choices(FOLDERS, weights=[f[0] for f in FOLDERS])[0]
        type_ = "rejection" if r.random() < 0.01 else r.choice(types)
        name = f"{folder(r, i)}/{'-'.join(r.sample(WORDS, 2))}-{i:05d}.md"
        m = Memory(name, type_, self._new_text(i, type_), when)
        self.index[name] = i
        self.mems.append(m)
        self._schedule(i)
        self.recent.append(i)
        return m

    def _pick_edit(self, taken: set[int], recalls_left: int) -> int | None:
        """Mostly something touched recently; sometimes any memory, which may need a recall first."""
        for _ in range(20):
            if not self.mems:
                return None
            if self.recent and self.rng.random() < 0.85:
                i = self.rng.choice(self.recent)
            else:
                i = self.rng.randrange(len(self.mems))
            if i not in taken and (self.mems[i].tier == "active" or recalls_left > 0):
                return i
        return None

    # commits
    @staticmethod
    def _header(when: int, who: tuple[str, str], message: str, parent: str | None) -> bytes:
        msg = message.encode()
        head = (f"commit refs/heads/main\nauthor {who[0]} <{who[1]}> {when} +0000\n"
                f"committer {who[0]} <{who[1]}> {when} +0000\ndata {len(msg)}\n").encode() + msg + b"\n"
        return head + (f"from {parent}\n".encode() if parent else b"")

    @staticmethod
    def _put(path: str, data: bytes) -> bytes:
        return f"M 100644 inline {path}\ndata {len(data)}\n".encode() + data + b"\n"

    def scaffold(self, when: int) -> bytes:
        """The first commit: what `git strata init` commits (config, ignore, attributes, .gitkeep)."""
        from strata_git.app import init, shipped
        from strata_git.core import contract

        source = HERE.parent / ".strata" / "config.toml"
        config = source.read_text(encoding="utf-8") if source.is_file() else shipped.config_template()
        files = {".strata/config.toml": config, ".gitignore": f"# generated by git-strata, never committed\n"
                 f"/{contract.INDEX_MD}\n", ".gitattributes": init.ATTRIBUTES,
                 **{f"{folder}/.gitkeep": "" for folder in init.FOLDERS}}
        out = self._header(when, USER, "strata: init memory repository\n\nStrata-Action: init\n", None)
        return out + b"".join(self._put(p, t.encode()) for p, t in files.items())

    def _recall(self, i: int, when: int, parent: str | None) -> bytes:
        """What `git strata recall` commits: a pure rename back to active/ (it counts as a change)."""
        m = self.mems[i]
        shown = m.name[:-3]
        message = (f"strata: recall {shown}\n\nStrata-Action: recall\nStrata-Name: {shown}\n"
                   f"Strata-From: {m.tier}\nStrata-Via: cli\n")
        out = self._header(when, USER, message, parent) + f"R {m.path} active/{m.name}\n".encode()
        m.tier, m.changed = "active", when
        self.counts["recalls"] += 1
        return out

    def user_commit(self, when: int, slots_left: int, parent: str | None = None) -> tuple[bytes, int]:
        """A commit changing 1-3 memories, after a recall commit for each cooled or archived one it
        edits (editing them in place is refused by git-strata's hook); (stream, commits made)."""
        k = self.rng.choices((1, 2, 3), weights=(55, 30, 15))[0]
        ops, taken, verbs, recalls = [], set(), [], []
        for f in range(k):
            remaining = self.target - len(self.mems)
            # Creations spread evenly (about 1.25 file slots per commit slot, net of janitor and
            # recall commits); the last slots create whatever is still missing.
            if remaining > 0 and (remaining >= slots_left - f or
                                  self.rng.random() < remaining / max(1.0, 1.25 * slots_left - f)):
                m = self._create(when)
                taken.add(len(self.mems) - 1)
                verbs.append(f"add {m.name[:-3]}")
                self.counts["creations"] += 1
            else:
                i = self._pick_edit(taken, slots_left - 1 - len(recalls))
                if i is None:
                    continue
                m = self.mems[i]
                taken.add(i)
                if m.tier != "active":
                    recalls.append(self._recall(i, when, parent if not recalls else None))
                m.text, m.changed = self._edit_text(m.text), when
                self._schedule(i)
                self.recent.append(i)
                verbs.append(f"update {m.name[:-3]}")
                self.counts["edits"] += 1
            ops.append(self._put(m.path, m.text.encode()))
        if not ops:  # nothing to edit yet: the first memory
            m = self._create(when)
            ops.append(self._put(m.path, m.text.encode()))
            verbs.append(f"add {m.name[:-3]}")
            self.counts["creations"] += 1
        self.counts["user_commits"] += 1
        self.counts["file_changes"] += len(ops)
        commit = self._header(when, USER, "; ".join(verbs) + "\n", None if recalls else parent) + b"".join(ops)
        return b"".join(recalls) + commit, len(recalls) + 1

    def janitor_commit(self, when: int) -> bytes | None:
        """A janitor cycle at `when`: one rename commit, its message made by git-strata itself."""
        from strata_git.core import rules
        from strata_git.ops import janitor

        states = []
        while self.due and self.due[0][0] <= when:
            _, i, version = heapq.heappop(self.due)
            m = self.mems[i]
            if version == m.version:
                states.append(rules.MemoryState(m.name, m.tier, m.changed, m.type))
        if not states:
            return None
        plan = rules.plan(states, {}, self.cfg, when)
        ops = []
        for move in plan.moves:
            src, dst = move.paths
            ops.append(f"R {src} {dst}\n".encode())
            self.counts[f"janitor_{move.action}"] += 1
            i = self.index[move.name]
            m = self.mems[i]
            m.tier = move.dst
            self._schedule(i)
        self.counts["janitor_commits"] += 1
        who = (self.cfg.janitor_name, self.cfg.janitor_email)
        return self._header(when, who, janitor.message(plan), None) + b"".join(ops)

    def stream(self, out) -> None:
        """The whole history into `out` (fast-import's stdin)."""
        r = self.rng
        span = SPAN_DAYS * DAY
        stamps = sorted(START + int(r.random() * span) for _ in range(self.commits))
        for n in range(1, len(stamps)):  # strictly increasing
            stamps[n] = max(stamps[n], stamps[n - 1] + 1)
        self.head_time = stamps[-1]
        self.last_janitor = 0
        pause_from = self.head_time - self.pause_days * DAY
        out.write(self.scaffold(stamps[0]))
        day, n = stamps[0] // DAY, 1
        while n < len(stamps):
            when = self.head_time = stamps[n]
            if n // 5000 != (n - 1) // 5000:
                progress(f"generating commit {n}/{len(stamps)}")
            if when // DAY != day and when < pause_from:
                day = when // DAY
                data = self.janitor_commit(when)
                if data is not None:
                    out.write(data)
                    self.last_janitor = when
                    n += 1
                    continue
            data, count = self.user_commit(when, len(stamps) - n)
            out.write(data)
            n += count  # its recall commits share its time and take the slots after it
        self.counts["commits"] = n
        out.write(b"done\n")

    def more(self, out, parent: str, count: int, start: int, step: int = 600) -> int:
        """`count` further commits on top of `parent` (no janitor); the last commit time."""
        made, when = 0, start
        while made < count:
            when = start + made * step
            data, n = self.user_commit(when, count - made, parent if made == 0 else None)
            out.write(data)
            made += n
        out.write(b"done\n")
        return when


def fast_import(root: Path, env: dict[str, str], write) -> None:
    proc = subprocess.Popen(["git", "fast-import", "--quiet", "--done"], cwd=root, env=env,
                            stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        write(proc.stdin)
        proc.stdin.close()
    except BrokenPipeError:
        pass
    err = proc.stderr.read()
    if proc.wait() != 0:
        sys.exit(f"git fast-import failed:\n{err.decode(errors='replace')}")


def build(root: Path, env: dict[str, str], hist: History) -> dict[str, float]:
    """The memory repository at `root`; seconds per step."""
    from strata_git.app import init
    from strata_git.gitio.git import discover
    from strata_git.store import access

    steps: dict[str, float] = {}
    t = time.perf_counter()
    sh(["git", "init", "-q", "-b", "main", str(root)], root.parent, env)
    for key, value in init.LOCAL_CONFIG.items():  # what `git strata init` sets locally
        sh(["git", "config", key, value], root, env)
    fast_import(root, env, hist.stream)
    steps["history (python stream + git fast-import)"] = time.perf_counter() - t
    t = time.perf_counter()
    sh(["git", "reset", "-q", "--hard", "HEAD"], root, env)
    steps["check out the working tree"] = time.perf_counter() - t
    t = time.perf_counter()
    # Reads: 1,500 over the last 60 days (mostly of active memories), flushed to this machine's
    # access ref as a janitor cycle does, and 50 more still in the spool.
    repo, r, head = discover(str(root)), random.Random(7), hist.head_time
    present = [m for m in hist.mems if m.tier != "archive"]
    active = [m for m in present if m.tier == "active"]
    for n in range(1550):
        m = r.choice(active if r.random() < 0.9 else present)
        access.record(repo, m.name[:-3], m.tier, "bench", now=head - r.random() * 60 * DAY)
        if n == 1499:
            access.flush(repo, (hist.cfg.janitor_name, hist.cfg.janitor_email))
    steps["access records (1,500 flushed to the access ref, 50 in the spool)"] = time.perf_counter() - t
    t = time.perf_counter()
    sh([STRATA, "index"], root, env)  # warm the catalog under .git/strata/, as the hooks keep it
    steps["git strata index (warm the catalog)"] = time.perf_counter() - t
    return {k: round(v, 2) for k, v in steps.items()}


# -- instrumentation: time spent per library step and per git command, without touching the library


class Steps:
    """Wraps library functions (and every git subprocess) to time them, nested by caller."""

    def __init__(self) -> None:
        self.times: dict[str, float] = collections.defaultdict(float)
        self.calls: dict[str, int] = collections.Counter()
        self.stack: list[str] = []

    def _record(self, label: str, fn, *a, **k):
        self.stack.append(label)
        key = " > ".join(self.stack)
        start = time.perf_counter()
        try:
            return fn(*a, **k)
        finally:
            self.times[key] += (time.perf_counter() - start) * 1000
            self.calls[key] += 1
            self.stack.pop()

    def wrap(self, label: str, fn):
        return lambda *a, **k: self._record(label, fn, *a, **k)

    def wrap_git(self, fn):
        def run(args, *a, **k):
            words = list(args)
            while words and words[0] == "-c":
                words = words[2:]
            return self._record(f"git {words[0] if words else '?'}", fn, args, *a, **k)
        return run

    @contextmanager
    def active(self):
        from strata_git.core import rules
        from strata_git.gitio import git
        from strata_git.ops import janitor, txn
        from strata_git.store import access, history, index_md

        targets = [(history, "last_changed"), (history, "_scan"), (history, "head"), (janitor, "states"),
                   (janitor, "_tree"), (janitor, "_types"), (janitor, "_dirty"), (access, "reads_by_name"),
                   (access, "flush"), (rules, "plan"), (txn, "recover"), (txn, "refuse_unless_settled"),
                   (txn, "apply"), (txn, "_finish"), (index_md, "refresh")]
        saved = [(mod, attr, getattr(mod, attr)) for mod, attr in targets]
        for mod, attr, fn in saved:
            setattr(mod, attr, self.wrap(f"{mod.__name__.rsplit('.', 1)[-1]}.{attr}", fn))
        git_run = git.run
        git.run = self.wrap_git(git_run)
        try:
            yield self
        finally:
            git.run = git_run
            for mod, attr, fn in saved:
                setattr(mod, attr, fn)


def median_steps(runs: list[Steps]) -> list[dict]:
    keys = sorted({k for s in runs for k in s.times},
                  key=lambda k: min(list(s.times).index(k) for s in runs if k in s.times))
    rows = []
    for key in keys:
        values = [s.times.get(key, 0.0) for s in runs]
        rows.append({"step": key, "median_ms": round(statistics.median(values), 1),
                     "calls": max(s.calls.get(key, 0) for s in runs)})
    return rows


def order_tree(rows: list[dict]) -> list[dict]:
    """Parents before their children, siblings in first-seen order."""
    children: dict[str, list[dict]] = collections.defaultdict(list)
    for row in rows:
        parent = row["step"].rpartition(" > ")[0]
        children[parent].append(row)
    out: list[dict] = []

    def walk(parent: str) -> None:
        for row in children.get(parent, []):
            out.append(row)
            walk(row["step"])
    walk("")
    return out


# -- measurements ------------------------------------------------------------------------------


def changes_cache(root: Path) -> Path:
    return root / ".git" / "strata" / "changes.cache"


def cold(root: Path) -> None:
    try:
        changes_cache(root).unlink()
    except FileNotFoundError:
        pass


def tune_now(vault, target: int) -> tuple[int, dict]:
    """The earliest time at which the plan has at least `target` moves (a pure function: bisect it)."""
    from strata_git.core import rules
    from strata_git.ops import janitor
    from strata_git.store import access, history

    at = history.head(vault.repo)
    head_time = int(vault.repo.git("log", "-1", "--format=%ct", "HEAD").decode())
    # Every active memory a candidate, so every type is read once; then plan() alone per guess.
    states = janitor.states(vault.repo, vault.cfg, at, head_time + 3650 * DAY)
    reads = access.reads_by_name(vault.repo)

    def count(now: int) -> int:
        return len(rules.plan(states, reads, vault.cfg, now, at.commit).moves)

    lo, hi = head_time, head_time + 400 * DAY
    if count(hi) < target:
        lo = hi
    while hi - lo > 60:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if count(mid) >= target else (mid, hi)
    plan = rules.plan(states, reads, vault.cfg, hi, at.commit)
    return hi, {"summary": plan.summary(), "moves": len(plan.moves), "head_time": head_time,
                "days_after_head": round((hi - head_time) / DAY, 2)}


def naive_paths(root: Path, env: dict[str, str], count: int, seed: int) -> tuple[list[str], int]:
    out = sh(["git", "ls-tree", "-r", "--name-only", "HEAD", "--", "active", "cooled", "archive"], root, env)
    paths = [p for p in out.splitlines() if p.endswith(".md")]
    return random.Random(seed).sample(paths, min(count, len(paths))), len(paths)


def measure_full(root: Path, env: dict[str, str], vault, now: int, sample: list[str], samples: int,
                 label: str) -> dict:
    """a, b and c (and the history scan's own git call) interleaved; the naive sample is split
    over the rounds, one chunk per round."""
    chunks = [sample[i::samples] for i in range(samples)]
    per_path: list[float] = []
    state = {"round": 0}

    def plan_cold() -> float:
        cold(root)
        return ms(lambda: vault.janitor(dry_run=True, now=now))[0]

    def plan_warm() -> float:
        return ms(lambda: vault.janitor(dry_run=True, now=now))[0]

    def naive() -> float:
        chunk = chunks[state["round"] % samples]
        state["round"] += 1
        total = 0.0
        for path in chunk:
            one = timed(["git", "log", "-1", "--format=%ct", "--", path], root, env)
            per_path.append(one)
            total += one
        return total / max(1, len(chunk))

    from strata_git.store import history

    raw = ["git", "log", "--no-renames", "--name-only", "--format=%x01%ct", "HEAD"]
    # The history scan's own git call (history._scan's arguments, through the library), and the
    # same without its pathspec: to attribute the difference between a full plan and the raw pass.
    scan = ["log", "--no-renames", "--name-only", "-z", "--first-parent", "--diff-merges=first-parent",
            history._FORMAT, "HEAD"]
    variants = {"plan_cold": plan_cold, "raw_log": lambda: timed(raw, root, env),
                "naive_per_path": naive, "plan_warm": plan_warm,
                "scan_log": lambda: ms(lambda: vault.repo.git(*scan, "--", "active", "cooled", "archive"))[0],
                "scan_log_no_pathspec": lambda: ms(lambda: vault.repo.git(*scan))[0]}
    for name, run in variants.items():  # warm-up (the naive one on a path outside the sample)
        if name != "naive_per_path":
            run()
    timed(["git", "log", "-1", "--format=%ct", "--", sample[0]], root, env)
    times: dict[str, list[float]] = {name: [] for name in variants}
    for i in range(samples):
        progress(f"{label} round {i + 1}/{samples}")
        for name, run in variants.items():
            times[name].append(run())
    return {"plan_cold": stats(times["plan_cold"]), "plan_warm": stats(times["plan_warm"]),
            "raw_log": stats(times["raw_log"]), "scan_log": stats(times["scan_log"]),
            "scan_log_no_pathspec": stats(times["scan_log_no_pathspec"]),
            "naive": {"sample_paths": len(per_path), "sample_total_ms": round(sum(per_path), 1),
                      "mean_ms_per_path": round(statistics.fmean(per_path), 2),
                      "median_ms_per_path": round(statistics.median(per_path), 2)}}


def breakdown(vault, now: int, runs: int, prepare) -> list[dict]:
    """Per-step medians of `runs` instrumented dry runs, each after `prepare()`."""
    found = []
    for _ in range(runs):
        prepare()
        with Steps().active() as steps:
            steps._record("vault.janitor", vault.janitor, dry_run=True, now=now)
        found.append(steps)
    return order_tree(median_steps(found))


def copy_repo(src: Path, dst: Path, env: dict[str, str]) -> None:
    sh(["cp", "-a", str(src), str(dst)], src.parent, env)
    # cp gives every file a new inode: refresh the index's stat data (untimed), as a real clone would have it
    sh(["git", "update-index", "-q", "--refresh"], dst, env)


def measure_apply(root: Path, tmp: Path, env: dict[str, str], now: int, samples: int) -> dict:
    from strata_git.app.vault import Vault

    inproc, cli, runs, checks = [], [], [], {}
    for i in range(samples):
        for variant in ("inproc", "cli"):
            progress(f"apply {variant} {i + 1}/{samples}")
            copy = tmp / f"apply-{variant}-{i}"
            copy_repo(root, copy, env)
            os.sync()  # the copy's dirty pages must not be written back during the timed cycle
            if variant == "inproc":
                janitor = Vault.open(str(copy)).janitor
                with Steps().active() as steps:
                    start = time.perf_counter()
                    result = steps._record("vault.janitor", janitor, dry_run=False, now=now)
                    elapsed = (time.perf_counter() - start) * 1000
                inproc.append(elapsed)
                runs.append(steps)
                if i == 0:
                    status = sh(["git", "diff", "--name-status", "-M", "HEAD~1", "HEAD"], copy, env).splitlines()
                    checks = {"moves": len(result.plan.moves), "summary": result.plan.summary(),
                              "renames_r100": sum(1 for line in status if line.startswith("R100")),
                              "changed_paths": len(status),
                              "worktree_clean": not sh(["git", "status", "--porcelain", "--untracked-files=no"],
                                                       copy, env).strip(),
                              "subject": sh(["git", "log", "-1", "--format=%s"], copy, env).strip()}
            else:
                cli.append(timed([STRATA, "janitor", "--now", f"@{now}"], copy, env))
                subject = sh(["git", "log", "-1", "--format=%s"], copy, env).strip()
                if subject != checks.get("subject"):
                    sys.exit(f"the CLI made a different commit: {subject!r} vs {checks.get('subject')!r}")
            # The copies stay until the end: on ext4 without a journal (as on this machine), deleting
            # thousands of files makes the next file creations skip their recently freed inodes
            # one by one (ext4 recently_deleted()): that slowed read-tree -m -u here from ~120 to ~350 ms.
    steps = order_tree(median_steps(runs))
    top = {row["step"]: row["median_ms"] for row in steps}
    return {"inproc_total": stats(inproc), "cli_wall": stats(cli), "checks": checks, "steps": steps,
            "apply_ms": top.get("vault.janitor > txn.apply"),
            "router_ms": top.get("vault.janitor > index_md.refresh")}


def measure_incremental(root: Path, env: dict[str, str], vault, hist: History, now: int, count: int,
                        samples: int) -> dict:
    from strata_git.store import history

    cold(root)
    vault.janitor(dry_run=True, now=now)  # cache at HEAD0
    warm = changes_cache(root).read_bytes()
    head0 = sh(["git", "rev-parse", "HEAD"], root, env).strip()
    last = [0]

    def write(out) -> None:
        last[0] = hist.more(out, head0, count, hist.head_time + 600)
    fast_import(root, env, write)
    sh(["git", "read-tree", "-m", "-u", head0, "HEAD"], root, env)  # index and working tree follow HEAD
    when = max(now, last[0] + 60)

    def restore() -> None:
        changes_cache(root).write_bytes(warm)

    def incremental() -> float:
        restore()
        return ms(lambda: vault.janitor(dry_run=True, now=when))[0]

    raw = ["git", "log", "--no-renames", "--name-only", "--format=%x01%ct", f"{head0}..HEAD"]
    times = round_robin({"plan_incremental": incremental, "raw_log_new": lambda: timed(raw, root, env),
                         "plan_warm": lambda: ms(lambda: vault.janitor(dry_run=True, now=when))[0]},
                        samples, "incremental")
    restore()
    incremental_times = history.last_changed(vault.repo, history.head(vault.repo))
    cold(root)
    full_times = history.last_changed(vault.repo, history.head(vault.repo))
    return {"new_commits": count, "now": when, **{k: stats(v) for k, v in times.items()},
            "agrees_with_full_rescan": incremental_times == full_times,
            "steps": breakdown(vault, when, 3, restore)}


def truth_check(vault, hist: History) -> dict:
    """Does the library's history agree with the generator's own record of last changes?"""
    from strata_git.store import history

    times = history.last_changed(vault.repo, history.head(vault.repo))
    agree = sum(1 for m in hist.mems if times.get(m.name) == m.changed)
    return {"memories": len(hist.mems), "last_change_agrees": agree}


def environment() -> dict[str, object]:
    from importlib.metadata import PackageNotFoundError, version

    import strata_git

    git = subprocess.run(["git", "--version"], capture_output=True, text=True, check=False).stdout.strip()
    try:
        strata_version = version("git-strata")
    except PackageNotFoundError:
        strata_version = None
    return {"git": git, "python": platform.python_version(), "cpus": os.cpu_count(),
            "platform": platform.platform(), "strata_git": str(Path(strata_git.__file__).parent),
            "git_strata_version": strata_version,
            "reproduce": f"cd {shlex.quote(os.getcwd())} && {shlex.join([sys.executable, *sys.argv])}"}


def goal(ok: bool) -> str:
    return "PASS" if ok else "MISS"


def derive(r: dict) -> dict:
    full = r["full"]
    plan = full["plan_cold"]["median_ms"]
    naive_total = full["naive"]["mean_ms_per_path"] * r["repo"]["memories_at_head"]
    out = {"naive_extrapolated_ms": round(naive_total, 1),
           "naive_over_full_plan": round(naive_total / plan, 1),
           "full_plan_over_raw_pass": round(plan / full["raw_log"]["median_ms"], 2),
           "incremental_plan_ms": r["incremental"]["plan_incremental"]["median_ms"],
           "scan_log_over_raw_pass": round(full["scan_log"]["median_ms"] / full["raw_log"]["median_ms"], 2),
           "scan_pathspec_ms": round(full["scan_log"]["median_ms"] - full["scan_log_no_pathspec"]["median_ms"], 1),
           "plan_without_scan_ms": full["plan_warm"]["median_ms"]}
    out["goal_naive_over_full_ge_200"] = goal(out["naive_over_full_plan"] >= 200)
    out["goal_full_over_raw_le_1_2"] = goal(out["full_plan_over_raw_pass"] <= 1.2)
    out["goal_incremental_le_100_ms"] = goal(out["incremental_plan_ms"] <= 100)
    bloom = r.get("bloom")
    if bloom:
        b_naive = bloom["naive"]["mean_ms_per_path"] * r["repo"]["memories_at_head"]
        out["bloom_naive_extrapolated_ms"] = round(b_naive, 1)
        out["bloom_naive_over_full_plan"] = round(b_naive / bloom["plan_cold"]["median_ms"], 1)
        out["bloom_full_plan_over_raw_pass"] = round(bloom["plan_cold"]["median_ms"] / bloom["raw_log"]["median_ms"], 2)
    return out


def report(res: dict) -> None:
    env, p, repo, d = res["environment"], res["params"], res["repo"], res["derived"]
    full, inc, app = res["full"], res["incremental"], res["apply"]
    print(f"git-strata janitor benchmark: {p['memories']} memories, {p['commits']} commits (seed {p['seed']}), "
          f"{p['samples']} samples per row")
    print(f"{env['git']}, Python {env['python']}, {env['cpus']} CPUs, {env['platform']}")
    print(f"strata_git {env['git_strata_version']} from {env['strata_git']}")
    print(f"\nrepository: {repo['commits']} commits: {repo['user_commits']} user commits ({repo['file_changes']} "
          f"file changes: {repo['creations']} creations, {repo['edits']} edits), {repo['recalls']} recall commits, "
          f"{repo['janitor_commits']} janitor commits "
          f"({repo['janitor_cool']} cool, {repo['janitor_archive']} archive); {iso(repo['first_commit'])} .. "
          f"{iso(repo['head_time'])}; last janitor cycle {iso(repo['last_janitor_commit'])} "
          f"(paused for the last {repo['janitor_pause_days']} days)")
    print(f"at HEAD: {repo['memories_at_head']} memories (active {repo['tiers']['active']}, cooled "
          f"{repo['tiers']['cooled']}, archive {repo['tiers']['archive']}; {repo['rejections']} rejections), "
          f"{repo['objects']} objects, .git {repo['git_dir_mb']} MB, no commit-graph")
    print(f"history check: the library's last change agrees with the generator for "
          f"{res['truth']['last_change_agrees']}/{res['truth']['memories']} memories")
    print(f"generated in {res['generation_s']} s: "
          + ", ".join(f"{k} {v} s" for k, v in res["generation_steps"].items()))
    print(f"--now for a, e: {iso(res['now'])} = @{res['now']} (HEAD + {res['tuning']['days_after_head']} days): "
          f"plan {res['tuning']['summary']} ({res['tuning']['moves']} moves)")

    rows = [
        ("a  full plan, cold history cache (in-process dry run)", full["plan_cold"]),
        ("   plan, history cache already at HEAD (in-process)", full["plan_warm"]),
        ("c  raw git log --no-renames --name-only pass", full["raw_log"]),
        ("   the history scan's git log, output read (library call)", full["scan_log"]),
        ("   the same without its pathspec -- active cooled archive", full["scan_log_no_pathspec"]),
        (f"d  incremental plan after {inc['new_commits']} commits (in-process)", inc["plan_incremental"]),
        (f"   raw git log over the {inc['new_commits']} new commits", inc["raw_log_new"]),
        ("   plan, history cache already at the new HEAD", inc["plan_warm"]),
        (f"e  apply {app['checks']['moves']} moves: vault.janitor (in-process)", app["inproc_total"]),
        ("   git strata janitor --now @T (whole CLI command)", app["cli_wall"]),
    ]
    print(f"\n{'measurement':<58} {'median ms':>10} {'min ms':>9} {'n':>3}")
    for label, row in rows:
        print(f"{label:<58} {row['median_ms']:>10.1f} {row['min_ms']:>9.1f} {row['n']:>3}")
    nv = full["naive"]
    print(f"b  naive git log -1 -- <path>: {nv['sample_paths']} random paths took {nv['sample_total_ms']:.0f} ms "
          f"(mean {nv['mean_ms_per_path']} ms, median {nv['median_ms_per_path']} ms per path)")
    print(f"   extrapolated to all {repo['memories_at_head']} memories: {d['naive_extrapolated_ms'] / 1000:.1f} s")
    print(f"   apply step alone (txn.apply): {app['apply_ms']} ms; index.md refresh after it: "
          f"{app['router_ms']} ms (medians)")
    c = app["checks"]
    print(f"   applied: {c['subject']!r}; {c['renames_r100']}/{c['changed_paths']} paths R100, "
          f"worktree clean: {c['worktree_clean']}")
    print(f"   incremental cache equals a full rescan: {inc['agrees_with_full_rescan']}")

    print("\nratios (goals from issue 3)")
    print(f"naive / full plan      = {d['naive_over_full_plan']:>8}x   goal >= 200x:   "
          f"{d['goal_naive_over_full_ge_200']}")
    print(f"full plan / raw pass   = {d['full_plan_over_raw_pass']:>8}x   goal <= 1.2x:   "
          f"{d['goal_full_over_raw_le_1_2']}")
    print(f"incremental plan       = {d['incremental_plan_ms']:>8} ms  goal <= 100 ms: "
          f"{d['goal_incremental_le_100_ms']}")
    print(f"(the history scan's git log alone is {d['scan_log_over_raw_pass']}x the raw pass; its pathspec adds "
          f"{d['scan_pathspec_ms']} ms; the rest of a plan, with the cache at HEAD, takes "
          f"{d['plan_without_scan_ms']} ms)")
    bloom = res.get("bloom")
    if bloom:
        print(f"\nwith `git commit-graph write --reachable --changed-paths` ({bloom['write_ms']:.0f} ms to write):")
        print(f"  full plan (cold cache) {bloom['plan_cold']['median_ms']:.1f} ms, raw pass "
              f"{bloom['raw_log']['median_ms']:.1f} ms, naive mean {bloom['naive']['mean_ms_per_path']} ms/path "
              f"-> {d['bloom_naive_extrapolated_ms'] / 1000:.1f} s extrapolated")
        print(f"  naive / full plan = {d['bloom_naive_over_full_plan']}x, full plan / raw pass = "
              f"{d['bloom_full_plan_over_raw_pass']}x")

    for title, steps in (("full plan, cold cache (a)", res["full_steps"]),
                         ("incremental plan (d)", inc["steps"]), ("apply (e, in-process)", app["steps"])):
        print(f"\nwhere the time goes: {title}, medians of instrumented runs")
        for row in steps:
            depth = row["step"].count(" > ")
            name = row["step"].rsplit(" > ", 1)[-1]
            calls = f" x{row['calls']}" if row["calls"] > 1 else ""
            print(f"  {'  ' * depth}{name + calls:<{50 - 2 * depth}} {row['median_ms']:>9.1f} ms")
    print(f"\ntotal {res['total_s']} s")
    print(f"reproduce: {env['reproduce']}")


def du_mb(path: Path) -> float:
    return round(sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) / 1e6, 1)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--memories", type=int, default=5000, help="memories at HEAD (default 5000)")
    parser.add_argument("--commits", type=int, default=20000, help="commits in the history (default 20000)")
    parser.add_argument("--samples", type=int, default=5, help="timed runs per variant (default 5)")
    parser.add_argument("--naive-sample", type=int, default=200, help="paths timed with git log -1 (default 200)")
    parser.add_argument("--moves", type=int, default=500, help="moves the applied cycle should make (default 500)")
    parser.add_argument("--janitor-pause", type=int, default=21,
                        help="days before HEAD without janitor cycles, the backlog the applied cycle catches up on")
    parser.add_argument("--apply-samples", type=int, default=3, help="applies per variant, each on a fresh copy")
    parser.add_argument("--incremental", type=int, default=100, help="new commits for the incremental plan")
    parser.add_argument("--no-bloom", action="store_true", help="skip the commit-graph (Bloom filter) rows")
    parser.add_argument("--seed", type=int, default=20261102)
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--keep", action="store_true", help="keep the temporary repositories")
    args = parser.parse_args()
    started, tmp = time.perf_counter(), Path(tempfile.mkdtemp(prefix="strata-bench-janitor-"))
    (tmp / "home").mkdir()
    env = hermetic_env(tmp / "home")
    os.environ.clear()
    os.environ.update(env)  # the library runs git in-process with this environment
    from strata_git.app.vault import Vault

    try:
        root = tmp / "mem"
        progress(f"generating {args.memories} memories, {args.commits} commits in {root}")
        hist = History(args.memories, args.commits, args.seed, args.janitor_pause)
        t = time.perf_counter()
        gen_steps = build(root, env, hist)
        generation_s = round(time.perf_counter() - t, 1)
        tiers = collections.Counter(m.tier for m in hist.mems)
        objects = sh(["git", "count-objects", "-v"], root, env)
        count = {k: int(v) for k, v in (line.split(": ") for line in objects.splitlines()) if v.isdigit()}
        repo = {"commits": hist.counts["commits"], "recalls": hist.counts["recalls"],
                "user_commits": hist.counts["user_commits"], "janitor_commits": hist.counts["janitor_commits"],
                "janitor_cool": hist.counts["janitor_cool"], "janitor_archive": hist.counts["janitor_archive"],
                "file_changes": hist.counts["file_changes"], "janitor_pause_days": args.janitor_pause,
                "last_janitor_commit": hist.last_janitor, "creations": hist.counts["creations"],
                "edits": hist.counts["edits"], "first_commit": START, "head_time": hist.head_time,
                "memories_at_head": len(hist.mems),
                "tiers": {t: tiers.get(t, 0) for t in ("active", "cooled", "archive")},
                "rejections": sum(1 for m in hist.mems if m.type == "rejection"),
                "objects": count.get("count", 0) + count.get("in-pack", 0), "git_dir_mb": du_mb(root / ".git")}
        vault = Vault.open(str(root))
        truth = truth_check(vault, hist)
        progress("tuning --now")
        now, tuning = tune_now(vault, args.moves)
        sample, _ = naive_paths(root, env, args.naive_sample, args.seed)
        full = measure_full(root, env, vault, now, sample, args.samples, "full plan / naive / raw")
        full_steps = breakdown(vault, now, 3, lambda: cold(root))
        result: dict = {}
        if not args.no_bloom:
            progress("commit-graph with Bloom filters")
            write_ms = timed(["git", "commit-graph", "write", "--reachable", "--changed-paths"], root, env)
            result["bloom"] = {"write_ms": round(write_ms, 1),
                               **measure_full(root, env, vault, now, sample, max(3, args.samples // 2), "bloom")}
            shutil.rmtree(root / ".git" / "objects" / "info" / "commit-graphs", ignore_errors=True)
            (root / ".git" / "objects" / "info" / "commit-graph").unlink(missing_ok=True)
        vault.janitor(dry_run=True, now=now)  # the copies start with a warm history cache at HEAD
        applied = measure_apply(root, tmp, env, now, args.apply_samples)
        progress(f"incremental: {args.incremental} new commits")
        incremental = measure_incremental(root, env, vault, hist, now, args.incremental, args.samples * 2)
        result.update({
            "params": {"memories": args.memories, "commits": args.commits, "samples": args.samples,
                       "naive_sample": args.naive_sample, "moves": args.moves, "seed": args.seed},
            "environment": environment(), "generation_s": generation_s, "generation_steps": gen_steps,
            "repo": repo, "truth": truth, "now": now, "tuning": tuning, "full": full, "full_steps": full_steps,
            "apply": applied, "incremental": incremental})
        result["derived"] = derive(result)
        result["total_s"] = round(time.perf_counter() - started, 1)
        result["kept"] = str(tmp) if args.keep else None
    finally:
        if not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)
    emit(result, args.json, report, tmp if args.keep else None)
    return 0


if __name__ == "__main__":
    sys.exit(main())
