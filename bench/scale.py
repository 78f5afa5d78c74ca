"""A million archived memories against 50,000, in one run: what grows with the archive.

    bash scripts/setup.sh bench
    .venv/bin/python bench/scale.py [--archived 1000000] [--baseline 50000] [--active 10000]
                                    [--commits 20000] [--samples 7] [--json] [--keep] [--large DIR]
                                    [--cooled N]

For each size a bare remote is generated with `git fast-import` (nothing of git-strata writes
it, so generating is not measured): two years of history, `--commits` commits in all. User
commits create memories (of 40-120 words from a Zipf law over 20,000 made-up words, in folders
fanned out by project and month); a daily janitor commit cools what falls out of the newest
`--active` and archives what falls out of the newest cooled ones, with git-strata's own
message (Strata-Move and Strata-Record trailers), and writes the archived memories' shadow
records (records.make, the janitor's own function) on its machine's shadow ref. At the end
the sizes are exact: `--archived` archived, 2% of that cooled (at least 500; `--cooled N` at
both sizes), `--active` active. Then `git gc` packs the remote as git keeps a bare repository (one pack and its
reachability bitmap, as hosted services keep theirs: fast-import's own packs are a draft its
manual says to repack). The remote is served by `git daemon` on 127.0.0.1.

Then, on each size, every step runs as a user runs it, and prints wall time and the peak
resident memory of its largest process (wait4's ru_maxrss):

- `git strata clone` (partial clone, sparse index, shadow records, the first build of the
  shadow index and index.md), and beside it what plain git alone takes to fetch the same (a
  partial clone without blobs, then the shadow records: the floor under the clone);
- a commit with hooks: `git strata write` of a new memory, and `git commit` of an edited one
  (git's hooks run git-strata's checks and index.md), median of `--samples`; beside it `git
  commit` with hooks off (git's own share, which grows with the live files);
- `git status`;
- the hook every `git pull` runs (post-merge), `git strata status`, a recall of one archived
  memory, and `git checkout` back over those recalls and forward again (their hooks included);
- search p50/p95 over fixed queries: in-process watched (`Vault.search` on a kept Vault, as
  the MCP server runs it) and `git strata search` (CLI);
- a sync bringing 100 changed active memories that another machine pushed, against plain git's
  `pull --rebase && push` of the same in a copy of the clone (median of at least 3 rounds);
- janitor plan (`git strata janitor --dry-run`) and apply (the next daily cycle);
- shadow rebuild in full (`git strata reindex`, which also rebuilds the catalog), and
  incremental (the shadow index brought forward after the janitor's commit);
- `.git` and catalog size.

Goals (issue 27): commit with hooks and search p50 at the large size within 1.3x of the
baseline; clone of a million within 5 minutes; no step above 4 GiB resident. Figures are
printed, never asserted.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from multiprocessing import Pool
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchlib import BIN, USER, git_daemon, hermetic_env, progress, sh

STRATA = str(BIN / "git-strata")
DAY = 86400
START = 1_700_000_000  # 2023-11-14; history spans two years from here
SPAN = 730 * DAY
MACHINE = "5ca1e5ca1e5ca1e5"  # the generated janitor's machine id
JANITOR_BATCH = 1_000  # at least this many active memories old enough to cool when the janitor is timed
GOAL_RATIO, GOAL_CLONE_S, GOAL_RSS_MIB = 1.3, 300, 4096
QUERIES = ["kalo", "minerpra", "quiret", "sazo", "tulven", "wyan", "zoel", "pranerzo", "retsa quitul",
           "venwy anlo", "kestrel", "harbor", "marker mk0000777", "mk0012345", "orchid glacier",
           "lantern meadow", "osprakaqui", "elzoan", "nerosla", "mizo retven"]


def vocabulary(rng: random.Random, size: int = 20000) -> tuple[list[str], list[float]]:
    """Made-up words with Zipf weights (1/rank), as word counts in real prose fall off."""
    syllables = ["ka", "lo", "mi", "ner", "os", "pra", "qui", "ret", "sa", "tul", "ven", "wy", "zo", "an", "el"]
    words = sorted({"".join(rng.choice(syllables) for _ in range(rng.randint(1, 4))) for _ in range(size * 2)})
    rng.shuffle(words)
    words = words[:size]
    cumulative, total = [], 0.0
    for rank in range(len(words)):
        total += 1 / (rank + 1)
        cumulative.append(total)
    return words, cumulative


VOCAB, CUMULATIVE = vocabulary(random.Random(11))
PLAIN = ("alpha bravo cobalt delta ember falcon garnet harbor indigo juniper kestrel lantern meadow nimbus "
         "orchid pylon quartz raven saffron tundra umber violet willow xenon yarrow zephyr glacier").split()
TOPICS = ("infra", "reading", "ideas", "health", "finance", "writing", "tools", "team", "ops", "ml")


def memory(i: int) -> tuple[str, bytes]:
    """Memory number i: its name (folder fanned out by kind, project and month) and its bytes; a
    pure function of i, so the records can be made again from i alone."""
    rng = random.Random(i * 7919 + 17)
    month = time.strftime("%Y-%m", time.gmtime(START + (i * 104729) % SPAN))
    kind = rng.random()
    if kind < 0.45:
        folder = f"projects/p{min(int(rng.paretovariate(1.1)) - 1, 199):03d}/{month}"
    elif kind < 0.75:
        folder = f"sessions/{month}"
    elif kind < 0.9:
        folder = f"notes/{rng.choice(TOPICS)}/{month[:4]}"
    else:
        folder = f"decisions/{month[:4]}"
    words = rng.choices(VOCAB, cum_weights=CUMULATIVE, k=rng.randint(40, 120))
    lines = "\n".join(" ".join(words[j:j + 12]) for j in range(0, len(words), 12))
    kind_name = "decision" if folder.startswith("decisions") else "note"
    text = (f"---\ntitle: Note {i} {rng.choice(PLAIN)} {rng.choice(PLAIN)}\ntype: {kind_name}\n"
            f"tags: [{rng.choice(PLAIN)}]\n---\n# Note {i}\n\nMarker mk{i:07d}.\n{lines}\n")
    return f"{folder}/m{i:07d}.md", text.encode()


def blob_id(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0%s" % (len(data), data)).hexdigest()


def _record(i: int) -> tuple[int, str, bytes]:
    from strata_git.store import records

    _, raw = memory(i)
    blob = blob_id(raw)
    return i, blob, records.make(raw, blob)


# -- the generated history --------------------------------------------------------------------


class Plan:
    """Which memory is created in which commit, and what each daily janitor moves: memories are
    numbered in creation order; a cycle cools all but the newest `active` and archives all but the
    newest `active + cooled`, so the last cycle leaves exactly the sizes asked for."""

    def __init__(self, archived: int, active: int, commits: int, cooled: int | None = None):
        self.cooled = max(500, archived // 50) if cooled is None else cooled
        self.total = archived + self.cooled + active
        self.archived, self.active = archived, active
        self.days = 730
        self.user_commits = commits  # and up to one janitor commit a day besides
        if self.user_commits < self.days:
            sys.exit(f"--commits must be at least {self.days}")

    def cycles(self) -> Iterator[tuple[int, list[tuple[int, int]], int, int]]:
        """(day, [(first, end) memories created by each user commit that day], cooled until, archived
        until), day by day."""
        per_day, extra = divmod(self.user_commits, self.days)
        made, commit = 0, 0
        for day in range(self.days):
            commits = per_day + (1 if day < extra else 0)
            batches = []
            for _ in range(commits):
                end = (commit + 1) * self.total // self.user_commits
                batches.append((made, end))
                made, commit = end, commit + 1
            yield day, batches, max(0, made - self.active), max(0, made - self.active - self.cooled)
        yield self.days - 1, [], made - self.active, made - self.active - self.cooled  # archives the last cooled


def _header(ref: str, when: int, who: tuple[str, str], message: str) -> bytes:
    msg = message.encode()
    return f"commit {ref}\ncommitter {who[0]} <{who[1]}> {when} +0000\ndata {len(msg)}\n".encode() + msg + b"\n"


def _move_trailer(action: str, name: str, src: str, dst: str, rule: str, age: int) -> str:
    from strata_git.core import contract

    record = {"action": action, "name": name[:-3], "from": src, "to": dst, "rule": rule, "age_days": age,
              "last_read": None, "reads": 0}
    return f"{contract.MOVE}: {contract.trailer_value(record)}"


def generate(base: Path, archived: int, active: int, commits: int, env: dict[str, str],
             cooled: int | None = None) -> tuple[Path, dict]:
    """A bare remote holding the generated history; (its path, what was made)."""
    from strata_git.core import contract

    plan = Plan(archived, active, commits, cooled)
    seed, remote = base / "seed", base / "remote.git"
    sh(["git", "init", "-q", "-b", "main", str(seed)], base, env)
    sh([STRATA, "init", "--json"], seed, env)
    sh(["git", "init", "-q", "--bare", "-b", "main", str(remote)], base, env)
    for key in ("uploadpack.allowFilter", "uploadpack.allowAnySHA1InWant"):
        sh(["git", "config", key, "true"], remote, env)
    sh(["git", "push", "-q", str(remote), "main"], seed, env)
    shadow_ref = contract.SHADOW_REFS + MACHINE
    janitor = ("git-strata janitor", "janitor@example.invalid")
    proc = subprocess.Popen(["git", "fast-import", "--quiet", "--done"], cwd=remote,
                            env=env, stdin=subprocess.PIPE)
    assert proc.stdin is not None
    out = proc.stdin
    names: list[str] = [""] * plan.total  # memory number -> its name (what the janitor moves)
    blobs: list[str] = [""] * plan.total
    tier = bytearray(plan.total)  # 0 active, 1 cooled, 2 archived
    cooled_until = archived_until = 0
    batch_at = 0  # when the memory that makes a janitor-sized batch of the oldest active ones was made
    first = True
    started = time.perf_counter()
    with Pool(2) as pool:
        for day, batches, cool_to, archive_to in plan.cycles():
            when = START + day * DAY
            for n, (lo, hi) in enumerate(batches):
                stamp = when + 600 + n * (DAY - 1200) // max(1, len(batches))
                ops = []
                if lo <= plan.total - active + JANITOR_BATCH - 1 < hi:
                    batch_at = stamp
                for i in range(lo, hi):
                    name, raw = memory(i)
                    names[i], blobs[i] = name, blob_id(raw)
                    ops.append(f"M 100644 inline active/{name}\ndata {len(raw)}\n".encode() + raw + b"\n")
                msg = f"capture: {hi - lo} memories\n\nStrata-Action: create\nStrata-Via: capture\n"
                out.write(_header("refs/heads/main", stamp, USER, msg))
                if first:
                    out.write(b"from refs/heads/main^0\n")
                    first = False
                out.write(b"".join(ops))
            # The day's janitor: cool, then archive, with the shadow records first (as janitor.py).
            # Only what an earlier cycle cooled is archived (the last day's cycle runs twice).
            stamp = when + DAY - 300
            cool = range(cooled_until, cool_to)
            archive = range(archived_until, min(archive_to, cooled_until))
            if not cool and not archive:
                continue
            recs = list(pool.imap(_record, archive, chunksize=256))
            if recs:
                out.write(_header(shadow_ref, stamp - 1, janitor, f"strata: {len(recs)} shadow records"))
                for _, blob, rec in recs:
                    out.write(f"M 100644 inline {blob[:2]}/{blob[2:]}\ndata {len(rec)}\n".encode() + rec + b"\n")
            trailers, ops = [], []
            for i in cool:
                if tier[i] == 0:
                    trailers.append(_move_trailer("cool", names[i], f"active/{names[i]}", f"cooled/{names[i]}",
                                                  "active_days", 30))
                    ops.append(f"R active/{names[i]} cooled/{names[i]}\n".encode())
                    tier[i] = 1
            for i, _, _ in recs:
                trailers.append(_move_trailer("archive", names[i], f"cooled/{names[i]}", f"archive/{names[i]}",
                                              "cooled_idle_days", 120))
                ops.append(f"R cooled/{names[i]} archive/{names[i]}\n".encode())
                tier[i] = 2
            counts = [f"{a} {n}" for a, n in (("cool", len(cool)), ("archive", len(recs))) if n]
            lines = trailers + [f"{contract.PLANNED_AT}: {stamp}"]
            lines += [f"{contract.RECORD}: {blob} {blob_id(rec)}" for _, blob, rec in recs]
            lines.append(f"{contract.MACHINE}: {MACHINE}")
            out.write(_header("refs/heads/main", stamp, janitor, f"strata: {', '.join(counts)}\n\n" + "\n".join(lines)
                              + "\n"))
            out.write(b"".join(ops))
            cooled_until, archived_until = max(cooled_until, cool_to), archive.stop
            if day % 30 == 0:
                progress(f"generating: day {day}/730, {archived_until:,} archived, "
                         f"{time.perf_counter() - started:.0f} s")
    out.write(b"done\n")
    out.close()
    if proc.wait() != 0:
        sys.exit("git fast-import failed")
    # A remote as git keeps one: fast-import's packs are a first draft (its manual says to repack
    # after it), and `git gc` on a bare repository writes one pack and its reachability bitmap,
    # as hosted services keep theirs. Without that, every clone's server side counted the whole
    # history object by object (250 s of the million's clone, beside 3 s with the bitmap).
    progress("generating: git gc of the remote")
    gc_started = time.perf_counter()
    sh(["git", "gc", "-q"], remote, env)
    gc_s = round(time.perf_counter() - gc_started, 1)
    counts = {"active": tier.count(0), "cooled": tier.count(1), "archived": tier.count(2),
              "commits": int(sh(["git", "rev-list", "--count", "main"], remote, env))}
    last = names[plan.total - 1]
    made = {**counts, "generate_s": round(time.perf_counter() - started, 1), "gc_s": gc_s, "end": START + SPAN,
            "edit": f"active/{last}", "cooled_example": names[plan.archived], "batch_at": batch_at}
    (base / MADE).write_text(json.dumps(made))  # beside remote.git: what `--large` takes again
    return remote, made


MADE = "made.json"


def reused(folder: Path, where: Path) -> dict:
    """What generate() made in `folder` (its remote.git and made.json), the remote copied into `where`
    (the rounds push to it): a million takes most of an hour to generate."""
    made = json.loads((folder / MADE).read_text())
    shutil.copytree(folder / "remote.git", where / "remote.git", symlinks=True)
    return made


# -- measuring ----------------------------------------------------------------------------------


def run(cmd: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, int, bytes]:
    """(wall seconds, peak resident MiB of its largest process, stdout) of one command, which
    must succeed. wait4 gives the rusage of that command and of every process it waited for."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        if proc.returncode != 0:
            sys.exit(f"failed ({proc.returncode}): {' '.join(cmd)}\n{out.read().decode(errors='replace')}"
                     f"{err.read().decode(errors='replace')}")
        return wall, usage.ru_maxrss // 1024, out.read()


def du(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file() and not f.is_symlink())


def pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))]


def _watched_search(clone: Path, env: dict[str, str]) -> tuple[list[float], list[float], int]:
    """Search times (ms) in one process that keeps its Vault (watched), as the MCP server does: three
    rounds of the queries after a first one, and that first round's times."""
    script = f"""
import json, time, resource
from strata_git.app.vault import Vault
vault = Vault.open({str(clone)!r})
vault.watch_files()
queries = {QUERIES!r}
first = []  # the first time each query is asked: a word's list is made then (store/toplists.py)
for q in queries:
    t = time.perf_counter()
    vault.search(q, limit=10)
    first.append((time.perf_counter() - t) * 1000)
times = []
for _ in range(3):
    for q in queries:
        t = time.perf_counter()
        vault.search(q, limit=10)
        times.append((time.perf_counter() - t) * 1000)
print(json.dumps([times, first, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024]))
"""
    _, _, out = run([sys.executable, "-c", script], clone, env)
    times, first, peak = json.loads(out)
    return times, first, peak


def _search(clone: Path, env: dict[str, str]) -> dict:
    cli, peaks = [], []
    for q in QUERIES[:7]:
        wall, peak, _ = run([STRATA, "search", q, "--json"], clone, env)
        cli.append(wall * 1000)
        peaks.append(peak)
    watched, first, watched_peak = _watched_search(clone, env)
    return {"search_watched_p50_ms": round(pct(watched, 0.5), 2), "search_watched_p95_ms": round(pct(watched, 0.95), 2),
            "search_first_p50_ms": round(pct(first, 0.5), 1), "search_first_max_ms": round(max(first), 1),
            "search_cli_p50_ms": round(pct(cli, 0.5), 1), "search_cli_p95_ms": round(pct(cli, 0.95), 1),
            "search_peak_mib": max(max(peaks), watched_peak)}


def search_again(base: Path) -> None:
    """Search's figures again on the clones of a --keep run, both sizes in this run."""
    import sqlite3

    env = hermetic_env(base / "home")
    found = {}
    for label in ("baseline", "large"):
        clone = base / label / "clone"
        with sqlite3.connect(clone / ".git/strata/catalog.sqlite") as db:
            for table in ("tops", "top_terms"):
                if db.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (table,)).fetchone():
                    db.execute(f"DELETE FROM {table}")
        progress(f"{label}: search")
        found[label] = _search(clone, env)
        # A CLI search rescans the working tree first (every active file's stat, the cooled
        # folders'): clones a --keep run left after their janitors differ there, and so do its times.
        for tier in ("active", "cooled"):
            found[label][f"{tier}_files"] = sum(1 for _ in (clone / tier).rglob("*.md"))
    print(f"{'':34} {'baseline':>14} {'large':>14} {'ratio':>7}")
    for key, text in [*ROWS, ("active_files", "active memories on disk"), ("cooled_files", "cooled memories on disk")]:
        if key in found["baseline"]:
            a, b = found["baseline"][key], found["large"][key]
            print(f"{text:34} {a:>14,} {b:>14,} {b / a:6.2f}x")


def status_again(base: Path, samples: int) -> None:
    """`git strata status`'s figures again on the clones of a --keep run, both sizes in this run: its
    first run after the archive changed (what it keeps of the archive deleted first), the runs
    after it, and the one after a memory is written (a new commit, new loose objects)."""
    import sqlite3

    from strata_git.store.tally import KEPT

    env = hermetic_env(base / "home")
    found: dict[str, dict[str, float]] = {}
    for label in ("baseline", "large"):
        clone = base / label / "clone"
        progress(f"{label}: status")
        with sqlite3.connect(clone / ".git/strata/catalog.sqlite") as db:
            db.execute("DELETE FROM meta WHERE key = ?", (KEPT,))
        first, peak, _ = run([STRATA, "status", "--json"], clone, env)
        kept = [run([STRATA, "status", "--json"], clone, env)[0] for _ in range(samples)]
        subprocess.run([STRATA, "write", f"projects/status-check-{time.time_ns()}", "--title", "status check"],
                       cwd=clone, env=env, input=b"written to see status after a commit\n", capture_output=True,
                       check=True)
        written, _, _ = run([STRATA, "status", "--json"], clone, env)
        found[label] = {"first": first, "kept": statistics.median(kept), "written": written, "peak": peak}
    print(f"{'git strata status (s)':34} {'baseline':>14} {'large':>14} {'ratio':>7}")
    for key, text in (("first", "first, counting the archive"), ("kept", f"then (median of {samples})"),
                      ("written", "after a memory is written")):
        a, b = found["baseline"][key], found["large"][key]
        print(f"{text:34} {a:>14.2f} {b:>14.2f} {b / a:6.2f}x")
    print(f"{'peak resident, first (MiB)':34} {found['baseline']['peak']:>14,} {found['large']['peak']:>14,}")


def janitor_again(base: Path, days: int) -> None:
    """What a janitor's archive batch costs `git strata status` after it, on the million's clone a
    --keep run left: status (what it keeps of the archive counted), the janitor `days` after the
    clone's last commit, status (what is kept brought along by the janitor), and status counting
    again (what is kept deleted) for the same answer. The clone and its catalog are put back after."""
    import sqlite3

    from strata_git.store.tally import KEPT

    env = hermetic_env(base / "home")
    clone = base / "large" / "clone"
    state = clone / ".git" / "strata"
    head = sh(["git", "rev-parse", "HEAD"], clone, env).strip()
    now = int(sh(["git", "log", "-1", "--format=%ct"], clone, env)) + days * DAY
    run([STRATA, "status", "--json"], clone, env)
    saved = base / "saved-state"
    shutil.copytree(state, saved, dirs_exist_ok=True)
    try:
        progress(f"janitor at @{now}")
        janitor, peak, out = run([STRATA, "janitor", "--now", f"@{now}", "--json"], clone, env)
        moves = json.loads(out).get("moves", [])
        kept, _, kept_out = run([STRATA, "status", "--json"], clone, env)
        with sqlite3.connect(state / "catalog.sqlite") as db:
            db.execute("DELETE FROM meta WHERE key = ?", (KEPT,))
        counted, _, counted_out = run([STRATA, "status", "--json"], clone, env)
    finally:
        sh(["git", "reset", "-q", "--hard", head], clone, env)
        shutil.rmtree(state)
        shutil.move(saved, state)
    same = {k: v for k, v in json.loads(kept_out).items() if k != "derived"} == \
        {k: v for k, v in json.loads(counted_out).items() if k != "derived"}
    archived = sum(1 for m in moves if m.get("action") == "archive")
    print(f"janitor: {len(moves):,} moves ({archived:,} archived) in {janitor:.1f} s, peak {peak} MiB")
    print(f"status after it: {kept:.2f} s from what the janitor brought along, {counted:.2f} s counting again; "
          f"the same answer: {same}")


def sync_again(base: Path, samples: int) -> None:
    """The sync rounds of a full run again on the million's clone a --keep run left (its remote
    served by a `git daemon` of this run; the clone's url put back after): what a sync bringing 100
    changed memories costs against plain git in a copy of the same clone."""
    env = hermetic_env(base / "home")
    clone = base / "large" / "clone"
    url = sh(["git", "remote", "get-url", "origin"], clone, env).strip()
    daemon, port = git_daemon(base)
    sh(["git", "remote", "set-url", "origin", f"git://127.0.0.1:{port}/large/remote.git"], clone, env)
    try:
        synced, pulled, peak = sync_rounds(clone, base, env, samples)
    finally:
        sh(["git", "remote", "set-url", "origin", url], clone, env)
        daemon.terminate()
        daemon.wait()
    print(f"sync bringing 100 changed, {samples} rounds: median {statistics.median(synced):.1f} ms "
          f"({min(synced):.1f}-{max(synced):.1f}), peak {peak} MiB; plain git median "
          f"{statistics.median(pulled):.1f} ms: {statistics.median(synced) / statistics.median(pulled):.2f}x")
    rounds = ", ".join(f"{a:.0f}/{b:.0f}" for a, b in zip(synced, pulled, strict=True))
    print(f"each round (git-strata / plain git, ms): {rounds}")


def plain_git_clone(remote_url: str, base: Path, env: dict[str, str]) -> float:
    """What git alone takes for what `git strata clone` fetches: the history without blobs (a
    partial clone) and the shadow records (every archived memory's, one blob each, from each shadow
    ref's last commit). The floor under the clone's time, whatever git-strata does with them."""
    plain = base / "plain-clone"
    start = time.perf_counter()
    sh(["git", "clone", "-q", "--filter=blob:none", "--no-checkout", remote_url, str(plain)], base, env)
    sh(["git", "fetch", "-q", "--depth=1", "--filter=blob:limit=8388608", "origin",
        "+refs/strata/shadow/*:refs/remotes/origin/strata-shadow/*"], plain, env)
    wall = time.perf_counter() - start
    shutil.rmtree(plain, ignore_errors=True)
    return wall


def sync_rounds(clone: Path, base: Path, env: dict[str, str], rounds: int) -> tuple[list[float], list[float], int]:
    """([ms of `git strata sync` in `clone`], [ms of `git pull --rebase && git push` in a copy of it,
    hooks off], the sync's peak MiB) for rounds in which another machine (a second copy, hooks off)
    pushed 100 changed active memories first: what a pruned clone pays to bring them in."""
    writer, plain = base / "sync-writer", base / "sync-plain"
    for copy in (writer, plain):
        shutil.copytree(clone, copy, symlinks=True)
    off = ["git", "-c", "core.hooksPath=/dev/null"]
    live = sorted(p for p in (writer / "active").rglob("*.md"))
    rng = random.Random(11)
    strata, git, peak = [], [], 0
    try:
        for n in range(rounds):
            for path in rng.sample(live, min(100, len(live))):
                with open(path, "a", encoding="utf-8") as f:
                    f.write(f"changed on another machine, round {n}\n")
            sh([*off, "commit", "-qam", f"another machine: 100 changed, round {n}"], writer, env)
            sh([*off, "push", "-q", "origin", "HEAD:main"], writer, env)
            wall, used, _ = run([STRATA, "sync", "--json"], clone, env)
            strata.append(wall * 1000)
            peak = max(peak, used)
            wall, _, _ = run(["sh", "-c", f"{' '.join(off)} pull -q --rebase && {' '.join(off)} push -q"], plain, env)
            git.append(wall * 1000)
    finally:
        for copy in (writer, plain):
            shutil.rmtree(copy, ignore_errors=True)
    return strata, git, peak


def after_git(clone: Path, env: dict[str, str], samples: int) -> dict:
    """What follows git moving HEAD and the everyday reports: the hook every `git pull` runs
    (post-merge), `git strata status`, a recall of one archived memory (fetched), and `git checkout`
    (its hook included) back over those recalls, then forward again."""
    follow, reports, recalls, peaks = [], [], [], []
    for _ in range(samples):
        wall, peak, _ = run([STRATA, "hook", "post-merge"], clone, env)
        follow.append(wall * 1000)
        peaks.append(peak)
        wall, peak, _ = run([STRATA, "status", "--json"], clone, env)
        reports.append(wall)
        peaks.append(peak)
    listed = sh(["git", "ls-tree", "-r", "--name-only", "HEAD", "--", "archive"], clone, env).split("\n")
    archived = [p.removeprefix("archive/").removesuffix(".md") for p in listed if p.endswith(".md")]
    for name in archived[len(archived) // 2:][:samples]:
        wall, peak, _ = run([STRATA, "recall", name, "--json"], clone, env)
        recalls.append(wall * 1000)
        peaks.append(peak)
    back, peak, _ = run(["git", "checkout", "-q", f"HEAD~{samples}"], clone, env)
    peaks.append(peak)
    forward, peak, _ = run(["git", "checkout", "-q", "main"], clone, env)
    return {"post_merge_ms": round(statistics.median(follow), 1),
            "strata_status_s": round(statistics.median(reports), 2), "recall_ms": round(statistics.median(recalls), 1),
            "checkout_back_s": round(back, 2), "checkout_forward_s": round(forward, 2),
            "after_git_peak_mib": max(peaks + [peak])}


def measure(label: str, remote_url: str, made: dict, base: Path, env: dict[str, str], samples: int) -> dict:
    found: dict[str, object] = {"size": label, **made}
    clone = base / "clone"
    progress(f"{label}: git strata clone")
    wall, peak, _ = run([STRATA, "clone", remote_url, str(clone), "--json"], base, env)
    found["clone_s"], found["clone_peak_mib"] = round(wall, 1), peak
    found["git_clone_s"] = round(plain_git_clone(remote_url, base, env), 1)
    found["index_bytes"] = (clone / ".git/index").stat().st_size
    progress(f"{label}: commits with hooks")
    writes, commits, plain, statuses, peaks = [], [], [], [], []
    edit = clone / made["edit"]
    for n in range(samples):
        wall, peak, _ = run([STRATA, "write", f"bench/new-{n}", "-m", f"A new memory {n} about kestrel."], clone, env)
        writes.append(wall * 1000)
        peaks.append(peak)
        with open(edit, "a", encoding="utf-8") as f:
            f.write(f"edited {n}\n")
        sh(["git", "add", "--", str(edit.relative_to(clone))], clone, env)
        wall, peak, _ = run(["git", "commit", "-q", "-m", f"edit {n}"], clone, env)
        commits.append(wall * 1000)
        peaks.append(peak)
        wall, _, _ = run(["git", "status", "--porcelain"], clone, env)
        statuses.append(wall * 1000)
        with open(edit, "a", encoding="utf-8") as f:
            f.write(f"edited {n} again\n")
        sh(["git", "add", "--", str(edit.relative_to(clone))], clone, env)
        wall, _, _ = run(["git", "-c", "core.hooksPath=/dev/null", "commit", "-q", "-m", f"plain {n}"], clone, env)
        plain.append(wall * 1000)
    run([STRATA, "hook", "post-commit"], clone, env)  # (the catalog follows the plain commits)
    found |= {"write_ms": round(statistics.median(writes), 1), "commit_hooks_ms": round(statistics.median(commits), 1),
              "commit_plain_ms": round(statistics.median(plain), 1),
              "status_ms": round(statistics.median(statuses), 1), "commit_peak_mib": max(peaks)}
    found |= after_git(clone, env, samples)
    progress(f"{label}: search")
    found |= _search(clone, env)
    progress(f"{label}: sync bringing 100 changed memories")
    synced, pulled, sync_peak = sync_rounds(clone, base, env, max(3, min(samples, 5)))
    found |= {"sync_bring_ms": round(statistics.median(synced), 1), "git_pull_ms": round(statistics.median(pulled), 1),
              "sync_peak_mib": sync_peak}
    progress(f"{label}: janitor")
    # The janitor runs when at least the oldest JANITOR_BATCH active memories are past the 30 days
    # that cool them: at a million the 10,000 active were all made in the last week, so two days
    # after the end moved nothing there.
    now = f"@{max(made['end'] + 2 * DAY, made.get('batch_at', 0) + 30 * DAY + 3600)}"
    wall, peak, _ = run([STRATA, "janitor", "--dry-run", "--now", now, "--json"], clone, env)
    found |= {"janitor_plan_s": round(wall, 2), "janitor_plan_peak_mib": peak}
    wall, peak, out = run([STRATA, "janitor", "--now", now, "--json"], clone, env)
    moved = len(json.loads(out).get("moves", []))
    found |= {"janitor_apply_s": round(wall, 2), "janitor_moves": moved, "janitor_apply_peak_mib": peak}
    progress(f"{label}: shadow index")
    wall, peak, _ = run([STRATA, "search", "kalo", "--json"], clone, env)  # brings the shadow index forward
    found |= {"shadow_incremental_s": round(wall, 2)}
    wall, peak, _ = run([STRATA, "reindex", "--json"], clone, env)
    found |= {"reindex_s": round(wall, 1), "reindex_peak_mib": peak}
    found["git_bytes"] = du(clone / ".git" / "objects") + du(clone / ".git" / "refs")
    catalog = clone / ".git" / "strata" / "catalog.sqlite"
    found["catalog_bytes"] = catalog.stat().st_size if catalog.exists() else 0
    return found




ROWS = [("clone_s", "git strata clone (s)"), ("git_clone_s", "plain git clone + records fetch (s)"),
        ("index_bytes", "index file (bytes)"),
        ("write_ms", "git strata write (ms)"), ("commit_hooks_ms", "git commit with hooks (ms)"),
        ("commit_plain_ms", "git commit, hooks off (ms)"), ("post_merge_ms", "post-merge hook (ms)"),
        ("strata_status_s", "git strata status (s)"), ("recall_ms", "recall of one archived (ms)"),
        ("checkout_back_s", "git checkout back over recalls (s)"), ("checkout_forward_s", "git checkout forward (s)"),
        ("status_ms", "git status (ms)"), ("search_watched_p50_ms", "search watched p50 (ms)"),
        ("search_watched_p95_ms", "search watched p95 (ms)"), ("search_first_p50_ms", "search first asked p50 (ms)"),
        ("search_first_max_ms", "search first asked, slowest (ms)"), ("search_cli_p50_ms", "search CLI p50 (ms)"),
        ("search_cli_p95_ms", "search CLI p95 (ms)"), ("janitor_plan_s", "janitor plan (s)"),
        ("sync_bring_ms", "sync bringing 100 changed (ms)"), ("git_pull_ms", "git pull --rebase && push (ms)"),
        ("janitor_apply_s", "janitor apply (s)"), ("janitor_moves", "janitor moves"),
        ("shadow_incremental_s", "shadow incremental + search (s)"), ("reindex_s", "reindex (s)"),
        ("git_bytes", ".git objects+refs (bytes)"), ("catalog_bytes", "catalog (bytes)"),
        ("generate_s", "generating (s, not git-strata)"), ("gc_s", "git gc of the remote (s, not git-strata)"),
        ("commits", "commits")]
PEAKS = ["clone_peak_mib", "commit_peak_mib", "after_git_peak_mib", "search_peak_mib", "sync_peak_mib",
         "janitor_plan_peak_mib", "janitor_apply_peak_mib", "reindex_peak_mib"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--archived", type=int, default=1_000_000)
    ap.add_argument("--baseline", type=int, default=50_000)
    ap.add_argument("--active", type=int, default=10_000)
    ap.add_argument("--cooled", type=int, help="cooled memories at both sizes (default: 2%% of the archived count, "
                    "at least 500): the live files then differ only by the archive")
    ap.add_argument("--commits", type=int, default=20_000)
    ap.add_argument("--samples", type=int, default=7)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--keep", action="store_true", help="keep the generated repositories")
    ap.add_argument("--large", metavar="DIR", help="take the large size's remote from a folder a --keep run left "
                    "(its large/, holding remote.git and made.json) instead of generating it again")
    ap.add_argument("--search", metavar="DIR", help="only measure search again, both sizes, in the folder a "
                    "--keep run left (the word lists dropped first: the first round makes them)")
    ap.add_argument("--status", metavar="DIR", help="only measure `git strata status` again, both sizes, in the "
                    "folder a --keep run left")
    ap.add_argument("--janitor", metavar="DIR", help="only measure a janitor's archive batch and status after it, "
                    "on the million's clone a --keep run left in DIR (put back after)")
    ap.add_argument("--days", type=int, default=100, help="with --janitor: its --now, days after the last commit")
    ap.add_argument("--sync", metavar="DIR", help="only measure the sync rounds again, on the million's clone a "
                    "--keep run left in DIR")
    args = ap.parse_args()
    if args.sync:
        sync_again(Path(args.sync), args.samples)
        return
    if args.janitor:
        janitor_again(Path(args.janitor), args.days)
        return
    if args.status:
        status_again(Path(args.status), args.samples)
        return
    if args.search:
        search_again(Path(args.search))
        return
    base = Path(tempfile.mkdtemp(prefix="strata-bench-scale-"))
    home = base / "home"
    home.mkdir()
    env = hermetic_env(home)
    daemon, port = git_daemon(base)
    results = []
    try:
        for label, archived in (("baseline", args.baseline), ("large", args.archived)):
            where = base / label
            where.mkdir()
            if label == "large" and args.large:
                progress(f"{label}: copying the remote generated in {args.large}")
                made = reused(Path(args.large), where)
                if args.cooled is not None and made["cooled"] != args.cooled:
                    sys.exit(f"{args.large} holds {made['cooled']:,} cooled memories, not the {args.cooled:,} "
                             "asked for: generate it again, or leave --cooled out")
            else:
                progress(f"{label}: generating {archived:,} archived + {args.active:,} active, "
                         f"{args.commits:,} commits")
                _, made = generate(where, archived, args.active, args.commits, env, args.cooled)
            results.append(measure(label, f"git://127.0.0.1:{port}/{label}/remote.git", made, where, env,
                                   args.samples))
            print(json.dumps(results[-1]), file=sys.stderr, flush=True)  # a long run's figures as they come
    finally:
        daemon.terminate()
        daemon.wait()
    small, large = results
    if args.json:
        print(json.dumps({"baseline": small, "large": large}, indent=2))
    else:
        print(f"scale: {small['archived']:,} vs {large['archived']:,} archived memories, {args.active:,} active, "
              f"{large['commits']:,} commits each; {args.samples} samples")
        print(f"{'':34} {'baseline':>14} {'large':>14} {'ratio':>7}")
        for key, text in ROWS:
            a, b = small[key], large[key]
            ratio = f"{b / a:6.2f}x" if isinstance(a, (int, float)) and a else ""
            print(f"{text:34} {a:>14,} {b:>14,} {ratio:>7}")
        print(f"{'peak resident (MiB)':34} {max(small[k] for k in PEAKS):>14,} {max(large[k] for k in PEAKS):>14,}")
        for key in PEAKS:
            print(f"  {key:32} {small[key]:>14,} {large[key]:>14,}")
        for key, text in (("commit_hooks_ms", "commit with hooks"), ("write_ms", "git strata write"),
                          ("search_watched_p50_ms", "search watched p50"), ("search_cli_p50_ms", "search CLI p50")):
            ratio = large[key] / small[key]
            print(f"goal {text} <= {GOAL_RATIO}x: {ratio:.2f}x {'met' if ratio <= GOAL_RATIO else 'MISSED'}")
        for what in (small, large):
            ratio = what["sync_bring_ms"] / what["git_pull_ms"]
            print(f"sync bringing 100 against plain git, {what['archived']:,} archived: {ratio:.2f}x")
        print(f"goal clone <= {GOAL_CLONE_S} s: {large['clone_s']} s "
              f"{'met' if large['clone_s'] <= GOAL_CLONE_S else 'MISSED'}")
        peak = max(large[k] for k in PEAKS)
        print(f"goal every step <= {GOAL_RSS_MIB} MiB: {peak} MiB {'met' if peak <= GOAL_RSS_MIB else 'MISSED'}")
    if args.keep:
        print(f"kept: {base}")
    else:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
