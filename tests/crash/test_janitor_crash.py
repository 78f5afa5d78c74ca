"""The janitor under SIGKILL, next to a working user, and against a second janitor.

Everything runs the installed console script on real repositories: a crash can only be
observed across process boundaries, and the lock and recovery code exist for exactly the
states a killed process leaves behind.
"""

from __future__ import annotations

import collections
import fcntl
import json
import os
import random
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from pathlib import Path
from typing import NamedTuple

import pytest

from conftest import BIN, DEEP, git
from helpers.inventory import memory_files_on_disk, memory_names_in_head

STRATA = str(BIN / "git-strata")
DAY = 86400
# Old enough for projects/ to cool (14 days) yet younger than archive.idle_days (90): after a
# cycle every memory sits in active/ or cooled/, and a later run has nothing left to do.
MEM_DATE = "2026-04-01T00:00:00+00:00"
NOW = "2026-06-01"
FOLDERS, PER_FOLDER = 20, 25  # 500 memories
KILLS = 150 if DEEP else 50  # about a quarter land after the run has already finished
SEED = 20260601

KILL_STATES: collections.Counter[str] = collections.Counter()
RECOVERIES: collections.Counter[str] = collections.Counter()


def run_strata(cwd: Path, *args: str, env: dict | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([STRATA, *args], cwd=cwd, capture_output=True, stdin=subprocess.DEVNULL,
                          env=env, timeout=timeout)


def out(proc: subprocess.CompletedProcess) -> str:
    return (proc.stdout + proc.stderr).decode("utf-8", "replace")


def isolated_env(home: Path, date: str) -> dict[str, str]:
    """conftest's hermetic settings as a dict: a module-scoped fixture runs before the
    function-scoped autouse `hermetic` has patched os.environ."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("GIT_", "STRATA_")) and k not in ("EDITOR", "VISUAL")}
    home.mkdir(parents=True, exist_ok=True)
    env |= {"HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config"), "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_CONFIG_GLOBAL": str(home / ".gitconfig"), "LC_ALL": "C.UTF-8",
            "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}"}
    for role in ("AUTHOR", "COMMITTER"):
        env |= {f"GIT_{role}_NAME": "Test User", f"GIT_{role}_EMAIL": "test@example.invalid",
                f"GIT_{role}_DATE": date}
    return env


def sh_git(cwd: Path, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    proc = subprocess.run(["git", *args], cwd=cwd, capture_output=True, env=env)
    assert proc.returncode == 0, f"git {' '.join(args)}: {proc.stderr.decode()}"
    return proc


def copy_repo(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst, symlinks=True)
    return dst


class Template(NamedTuple):
    root: Path
    originals: dict[str, bytes]  # name under the tier -> bytes
    blobs: dict[str, str]  # name -> blob id
    old_head: str
    new_head: str  # the cycle's commit: deterministic (janitor identity, --now as its date)
    duration: float  # one uninterrupted `janitor --now`


@pytest.fixture(scope="module")
def scratch(tmp_path_factory: pytest.TempPathFactory):
    """Where the kill runs happen: tmpfs when there is one. Each kill creates some 2,000 files
    (a copy, then 500 moves twice) and on this machine's disk a file costs ~0.5 ms; a SIGKILL
    leaves the page cache intact, so tmpfs shows exactly what a disk would."""
    if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK):
        base = Path(tempfile.mkdtemp(prefix="strata-crash-", dir="/dev/shm"))
        yield base
        shutil.rmtree(base, ignore_errors=True)
    else:
        yield tmp_path_factory.mktemp("crash")


@pytest.fixture(scope="module")
def template(scratch: Path) -> Template:
    base = scratch
    env = isolated_env(base / "home", MEM_DATE)
    root = base / "template"
    assert run_strata(base, "init", str(root), env=env).returncode == 0
    originals = {}
    for p in range(FOLDERS):
        folder = root / "active" / "projects" / f"p{p:02d}"
        folder.mkdir(parents=True)
        for i in range(PER_FOLDER):
            name = f"projects/p{p:02d}/m{i:02d}.md"
            data = f"---\ntitle: memory {p}-{i}\n---\n# Memory {p}-{i}\n\nbody {p * 1000 + i}\n".encode()
            (folder / f"m{i:02d}.md").write_bytes(data)
            originals[name] = data
    sh_git(root, "add", "active", env=env)
    sh_git(root, "-c", "core.hooksPath=/dev/null", "commit", "-q", "-m", "500 memories", env=env)
    assert run_strata(root, "index", env=env).returncode == 0
    blobs = {name: entries[0][1] for name, entries in memory_names_in_head(root).items()}
    old_head = sh_git(root, "rev-parse", "HEAD", env=env).stdout.decode().strip()
    durations, heads = [], set()
    # The shortest run, not the median: this machine is shared, and a slow sample would put
    # many "kills" after the janitor has already exited.
    for attempt in range(6):  # the first warms the page cache and is not counted
        trial = copy_repo(root, base / f"measure{attempt}")
        start = time.monotonic()
        proc = start_janitor(trial, env)
        assert proc.wait(timeout=120) == 0
        durations.append(time.monotonic() - start)
        heads.add(sh_git(trial, "rev-parse", "HEAD", env=env).stdout.decode().strip())
        assert "cool 500" in sh_git(trial, "log", "-1", "--format=%s", env=env).stdout.decode()
        shutil.rmtree(trial)
    assert len(heads) == 1, "the cycle's commit should not depend on the wall clock"
    return Template(root, originals, blobs, old_head, heads.pop(), min(durations[1:]))


def start_janitor(root: Path, env: dict | None = None, *args: str) -> subprocess.Popen:
    """In its own process group, so one killpg reaches the git processes it runs as well."""
    return subprocess.Popen([STRATA, "janitor", "--now", NOW, *args], cwd=root, stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env,
                            start_new_session=True)


def kill_instant(i: int, duration: float) -> float:
    """Half uniform over the whole run, half in its last 40 %: the commit point and the
    index/working-tree update that follows it sit late in the run, after interpreter start-up."""
    rng = random.Random(SEED * 1000 + i)
    return rng.uniform(0.6 * duration, duration) if i % 2 else rng.uniform(0, duration)


def snapshot(root: Path, tpl: Template, rc: int | None) -> str:
    head = git(root, "rev-parse", "HEAD").stdout.decode().strip()
    where = {tpl.old_head: "old", tpl.new_head: "new"}.get(head, "other")
    journal = (root / ".git/strata/janitor.journal").exists()
    lock = (root / ".git/index.lock").exists()
    dirty = bool(git(root, "status", "--porcelain").stdout.strip())
    finished = "completed before the kill" if rc == 0 else "killed"
    return (f"{finished}: HEAD {where}, journal {'yes' if journal else 'no'}, "
            f"index.lock {'yes' if lock else 'no'}, status {'dirty' if dirty else 'clean'}")


def assert_consistent(root: Path, tpl: Template) -> None:
    fsck = git(root, "fsck", "--strict", check=False)
    assert fsck.returncode == 0, out(fsck)
    in_head = memory_names_in_head(root)
    assert set(in_head) == set(tpl.originals), "memories missing from or added to HEAD"
    for name, entries in in_head.items():
        assert len(entries) == 1 and entries[0][0] in ("active", "cooled"), (name, entries)
        assert entries[0][1] == tpl.blobs[name], f"{name}: content changed in HEAD"
    on_disk = memory_files_on_disk(root)
    assert set(on_disk) == set(tpl.originals), "memories missing from or added to the working tree"
    for name, entries in on_disk.items():
        assert len(entries) == 1 and entries[0][0] == in_head[name][0][0], (name, [t for t, _ in entries])
        assert entries[0][1] == tpl.originals[name], f"{name}: bytes changed on disk"
    status = git(root, "status", "--porcelain", "--untracked-files=all").stdout.decode()
    assert status == "", f"half-moved index or working tree:\n{status[:2000]}"
    assert not (root / ".git/index.lock").exists(), "stale .git/index.lock"
    assert not (root / ".git/strata/janitor.journal").exists(), "the journal outlived the recovery"


@pytest.mark.slow
@pytest.mark.parametrize("i", range(KILLS), ids=lambda i: f"kill{i:03d}")
def test_sigkill_at_any_instant_recovers(template: Template, scratch: Path, i: int) -> None:
    root = copy_repo(template.root, scratch / f"kill{i:03d}")
    proc = start_janitor(root)
    time.sleep(kill_instant(i, template.duration))
    try:
        os.killpg(proc.pid, signal.SIGKILL)  # the whole group: git children die mid-write too
    except ProcessLookupError:
        pass
    rc = proc.wait(timeout=60)
    KILL_STATES[snapshot(root, template, rc)] += 1

    again = run_strata(root, "janitor", "--now", NOW)
    assert again.returncode == 0, out(again)
    assert "Traceback" not in out(again)
    note = next((line for line in out(again).splitlines() if line.startswith("note:")), "note: none needed")
    RECOVERIES[note] += 1
    assert_consistent(root, template)
    third = run_strata(root, "janitor", "--now", NOW)
    assert third.returncode == 0 and third.stdout.decode().startswith("janitor: nothing to do"), out(third)
    shutil.rmtree(root)  # 150 copies of a 500-file repository add up


def test_stale_temporary_index_lock_does_not_block_the_janitor(mem: Path) -> None:
    """The state a SIGKILL inside `git update-index --index-info` (temporary index) leaves:
    the journal {old} and git's lock on the temporary index. The random kills above found it
    (every later cycle failed on janitor.index.lock); fixed in 035547e, kept exact here."""
    (mem / "active/projects/a.md").write_bytes(b"# a\n")
    git(mem, "add", "active/projects/a.md")
    git(mem, "-c", "core.hooksPath=/dev/null", "commit", "-q", "-m", "a")
    state = mem / ".git/strata"
    state.mkdir(exist_ok=True)
    old = git(mem, "rev-parse", "HEAD").stdout.decode().strip()
    (state / "janitor.journal").write_text(f'{{"old": "{old}", "moves": [], "pid": 999999999}}')
    (state / "janitor.index.lock").write_bytes(b"")
    proc = run_strata(mem, "janitor", "--now", "2027-01-01")
    assert proc.returncode == 0, out(proc)
    assert "cool 1" in out(proc)
    assert not (state / "janitor.index.lock").exists()


@pytest.mark.slow
def test_zz_kill_state_distribution(template: Template, capsys: pytest.CaptureFixture) -> None:
    """Named to run after the kills (pytest keeps file order); the counters are module-level."""
    with capsys.disabled():
        killed = sum(n for state, n in KILL_STATES.items() if state.startswith("killed"))
        print(f"\n{sum(KILL_STATES.values())} kill attempts, {killed} while the janitor ran; "
              f"uninterrupted run {template.duration * 1000:.0f} ms")
        for state, count in KILL_STATES.most_common():
            print(f"  {count:4d}  {state}")
        print("what the next run did:")
        for note, count in RECOVERIES.most_common():
            print(f"  {count:4d}  {note}")


# -- the janitor looping while a user works ------------------------------------------------

BASE = 1767225600  # 2026-01-01T00:00:00Z
SETUP_DAYS = 60
# Every cycle has something due: gtd cools after 7 days, projects 14, default 30, entities 60.
SETUP_FOLDERS = ("gtd", "projects/x", "misc", "entities")
CYCLES = 20
JANITOR_EMAIL = "janitor@git-strata.invalid"
AFTER_COMMIT_POINT = "failed after its commit point (index.lock)"
# git's words when the index.lock it held was deleted under it (after it had moved HEAD).
LOCK_STOLEN = b"repository has been updated, but unable to write"

def dated_env(stamp: int) -> dict[str, str]:
    return {**os.environ, "GIT_AUTHOR_DATE": f"@{stamp} +0000", "GIT_COMMITTER_DATE": f"@{stamp} +0000"}


class UserWork(NamedTuple):
    commits: list[tuple[str, str, bytes]]  # (subject, path, content), in order
    staged: dict[str, bytes]  # staged before the janitor started, never committed
    setup_memories: int
    stolen: list[str]  # user commits whose index.lock was deleted under them
    hook_races: list[str]  # user commits the pre-commit hook refused because the janitor moved a file


def user_git(*args: str, cwd: Path, work: UserWork) -> None:
    """A user's git command, retried while the janitor holds index.lock or HEAD.lock for a moment."""
    for _ in range(200):
        proc = subprocess.run(["git", *args], cwd=cwd, capture_output=True)
        if proc.returncode == 0:
            return
        if LOCK_STOLEN in proc.stderr:  # committed, but its index was not written: not to be retried
            work.stolen.append(" ".join(args))
            return
        # A scan that tripped over a moved file: a person retries.
        if b"git-strata: error: No such file or directory" in proc.stderr:
            work.hook_races.append(" ".join(args))
        else:
            assert b"index.lock" in proc.stderr or b"cannot lock ref" in proc.stderr, proc.stderr.decode()
        time.sleep(0.02)
    raise AssertionError(f"git {' '.join(args)} kept failing: {proc.stderr.decode()}")


def classify(proc: subprocess.CompletedProcess) -> str:
    """What one janitor run did; a traceback or exit 3 (a crash of git-strata itself) fails."""
    text = out(proc)
    assert proc.returncode in (0, 1) and "Traceback" not in text and "unexpected error" not in text, text
    if proc.returncode == 0:
        return "applied" if "(commit " in text else "nothing to do"
    if "HEAD moved" in text or "another git-strata process" in text:
        return "refused: HEAD moved" if "HEAD moved" in text else "refused: busy"
    if "git reset failed" in text or "git checkout failed" in text:  # only _roll_forward runs these
        return AFTER_COMMIT_POINT
    return f"refused: {text.strip().splitlines()[0]}"


def commit_one(root: Path, path: str, data: bytes, env: dict | None = None) -> None:
    (root / path).parent.mkdir(parents=True, exist_ok=True)
    (root / path).write_bytes(data)
    sh_git(root, "add", "--", path, env=env)
    sh_git(root, "-c", "core.hooksPath=/dev/null", "commit", "-q", "-m", f"add {path}", "--", path, env=env)


def check_user_work(mem: Path, work: UserWork) -> None:
    shas: dict[str, list[str]] = collections.defaultdict(list)
    janitor_commits = []
    for line in git(mem, "log", "--format=%H %ae %s").stdout.decode().splitlines():
        sha, email, subject = line.split(" ", 2)
        shas[subject].append(sha)
        if email == JANITOR_EMAIL:
            janitor_commits.append(sha)
    latest = {}
    for subject, path, content in work.commits:
        assert len(shas[subject]) == 1, f"{subject}: {len(shas[subject])} commits"
        assert git(mem, "show", f"{shas[subject][0]}:{path}").stdout == content, subject
        latest[path] = content
    for path, content in latest.items():
        assert git(mem, "show", f"HEAD:{path}").stdout == content, f"{path}: the user's last edit is not in HEAD"
    for sha in janitor_commits:  # nothing of the user's swallowed: renames only, and none of theirs
        lines = git(mem, "show", "-M", "--name-status", "--format=", sha).stdout.decode().splitlines()
        assert lines and all(line.startswith("R100\t") for line in lines), (sha, lines)
        assert not any("active/user/" in line for line in lines), (sha, "moved a user file")

    staged = git(mem, "diff", "--cached", "--name-only").stdout.decode().split()
    assert sorted(staged) == sorted(work.staged), f"staged now: {staged[:20]}"
    for path, data in work.staged.items():
        assert git(mem, "show", f":{path}").stdout == data, f"{path}: the staged change is gone"
        committed = git(mem, "show", f"HEAD:{path}", check=False).stdout
        assert committed != data, f"{path}: the staged change was committed"

    user_files = {path for path in latest if path.startswith("active/user/")} | {"active/user/pinned.md"}
    in_head = memory_names_in_head(mem)
    assert all(len(entries) == 1 for entries in in_head.values()), "a memory is in two tiers in HEAD"
    assert len(in_head) == work.setup_memories + len(user_files) - 1, "a memory was lost in HEAD"
    on_disk = memory_files_on_disk(mem)
    assert all(len(entries) == 1 for entries in on_disk.values()), "a memory is in two tiers on disk"
    assert len(on_disk) == len(in_head) + 1, "a memory was lost on disk"  # + the staged new file
    tracked = {p for p in work.staged if git(mem, "ls-tree", "--name-only", "HEAD", "--", p).stdout.strip()}
    expected = sorted(f"{'M' if p in tracked else 'A'}  {p}" for p in work.staged)
    status = git(mem, "status", "--porcelain", "--untracked-files=all").stdout.decode()
    assert sorted(status.splitlines()) == expected, f"half-moved index or working tree:\n{status[:2000]}"
    assert not (mem / ".git/strata/janitor.journal").exists() and not (mem / ".git/index.lock").exists()
    assert not work.stolen, f"git said 'unable to write new_index file' for: {work.stolen}"
    assert not work.hook_races, f"the pre-commit hook failed on a file the janitor moved: {work.hook_races}"


@pytest.mark.slow
def test_user_commits_while_the_janitor_loops(mem: Path, capsys: pytest.CaptureFixture) -> None:
    for day in range(SETUP_DAYS):
        for folder in SETUP_FOLDERS:
            path = mem / "active" / folder / f"d{day:02d}.md"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(f"# {folder} day {day}\n".encode())
        sh_git(mem, "add", "active", env=dated_env(BASE + day * DAY))
        sh_git(mem, "-c", "core.hooksPath=/dev/null", "commit", "-q", "-m", f"day {day}",
               env=dated_env(BASE + day * DAY))
    # User files are committed at conftest's FIXED_DATE, after every --now below: never due.
    pinned, fresh = "active/user/pinned.md", "active/user/staged-new.md"
    (mem / pinned).parent.mkdir(parents=True)
    (mem / pinned).write_bytes(b"# pinned\n")
    git(mem, "add", pinned)
    git(mem, "commit", "-q", "-m", "user: pinned")
    # The change that stays staged throughout: every user commit below names its paths.
    work = UserWork([], {pinned: b"# pinned\n\nstaged edit\n", fresh: b"# staged new\n"},
                    SETUP_DAYS * len(SETUP_FOLDERS) + 1, [], [])
    for path, data in work.staged.items():
        (mem / path).write_bytes(data)
    git(mem, "add", *work.staged)

    outcomes: collections.Counter[str] = collections.Counter()
    crashed: list[BaseException] = []

    def janitor_loop() -> None:
        try:
            for k in range(CYCLES):
                outcomes[classify(run_strata(mem, "janitor", "--now", f"@{BASE + (10 + 3 * k) * DAY}"))] += 1
        except BaseException as e:  # noqa: BLE001 - an assertion in a thread would otherwise vanish
            crashed.append(e)

    rng = random.Random(SEED)
    thread = threading.Thread(target=janitor_loop)
    thread.start()
    try:
        while thread.is_alive():
            n = len(work.commits)
            # New files, then edits of user files and of entities memories that are never due here.
            if n % 3 == 0:
                path = f"active/user/u{n:03d}.md"
            elif n % 3 == 1:  # one made at an earlier n % 3 == 0
                path = f"active/user/u{3 * rng.randrange(n // 3 + 1):03d}.md"
            else:
                path = f"active/entities/d{50 + n % 10:02d}.md"
            content = f"# user {n}\n\nedit {n} of {path}\n".encode()
            (mem / path).write_bytes(content)
            user_git("add", "--", path, cwd=mem, work=work)
            user_git("commit", "-q", "-m", f"user {n:03d}", "--", path, cwd=mem, work=work)
            work.commits.append((f"user {n:03d}", path, content))
            time.sleep(rng.uniform(0.0, 0.15))  # a person between commits; lets some cycles through
            runs = sum(outcomes.values())
            if runs >= 3 and not outcomes["applied"] + outcomes[AFTER_COMMIT_POINT]:
                # On a slow machine every cycle so far met a moved HEAD: the person steps away until
                # one whole cycle has run undisturbed (the one under way, then the next), so the
                # commits after it are made on top of a janitor commit, as the test means them to be.
                while thread.is_alive() and sum(outcomes.values()) < runs + 2:
                    time.sleep(0.02)
    finally:
        thread.join()
    if crashed:
        raise crashed[0]
    settle = run_strata(mem, "janitor", "--now", f"@{BASE + (10 + 3 * CYCLES) * DAY}")  # the next cycle
    outcomes[f"settling run: {classify(settle)}"] += 1
    with capsys.disabled():
        print(f"\nconcurrency: {len(work.commits)} user commits ({len(work.stolen)} had index.lock deleted under "
              f"them, {len(work.hook_races)} refused by the hook's scan race); janitor runs: {dict(outcomes)}")
    assert outcomes["applied"] + outcomes[AFTER_COMMIT_POINT] >= 1, "no janitor commit while the user worked"
    assert not work.stolen, "a user's index.lock was deleted under it"
    assert not work.hook_races, "the pre-commit hook's scan tripped over files the janitor moved"
    check_user_work(mem, work)


@pytest.mark.slow
def test_index_lock_held_at_the_commit_point_leaves_no_half_moved_tree(mem: Path) -> None:
    """Deterministic form of the race the loop above hits: a user's git holds index.lock while the
    janitor cycles (a plain file stands for it: git records no owner), then the user commits."""
    commit_one(mem, "active/projects/a.md", b"# a\n")
    (mem / ".git/index.lock").write_bytes(b"")
    first = run_strata(mem, "janitor", "--now", "2027-01-01")
    classify(first)  # exit 0 or 1 are both fine here; what it leaves behind is the question
    (mem / ".git/index.lock").unlink()  # the user's git finishes
    commit_one(mem, "active/u.md", b"# u\n")
    settle = run_strata(mem, "janitor", "--now", "2027-01-01")
    assert settle.returncode == 0, out(settle)
    status = git(mem, "status", "--porcelain", "--untracked-files=all").stdout.decode()
    assert status == "", f"after `{out(first).strip()}` and `{out(settle).strip()}`:\n{status}"
    on_disk = memory_files_on_disk(mem)
    assert set(on_disk) == {"projects/a.md", "u.md"} and all(len(v) == 1 for v in on_disk.values()), on_disk


@pytest.mark.slow
def test_recovery_leaves_a_later_index_lock_alone(mem: Path) -> None:
    """A janitor killed after its commit point (HEAD new, journal left: a state the kills above
    produce), then a user's git takes index.lock, then the next cycle starts."""
    commit_one(mem, "active/projects/a.md", b"# a\n")
    old = git(mem, "rev-parse", "HEAD").stdout.decode().strip()
    assert run_strata(mem, "janitor", "--now", "2027-01-01").returncode == 0
    new = git(mem, "rev-parse", "HEAD").stdout.decode().strip()
    journal = mem / ".git/strata/janitor.journal"
    journal.write_text(json.dumps({"old": old, "new": new, "pid": 999_999_999,  # above any pid_max
                                   "moves": [["active/projects/a.md", "cooled/projects/a.md"]]}))
    died = time.time() - 10
    os.utime(journal, (died, died))
    # A running git keeps its index.lock open while it works; holding it open here is that git.
    with open(mem / ".git/index.lock", "wb"):
        proc = run_strata(mem, "janitor", "--now", "2027-01-01")
        assert (mem / ".git/index.lock").exists(), f"the janitor deleted another process's index.lock: {out(proc)}"
    assert proc.returncode == 1 and b"index.lock" in proc.stderr
    os.unlink(mem / ".git/index.lock")  # that git finishes; the next cycle completes the interrupted one
    assert run_strata(mem, "janitor", "--now", "2027-01-01").returncode == 0
    assert git(mem, "status", "--porcelain").stdout == b""


@pytest.mark.slow
def test_a_scan_tolerates_files_moving_under_it(vault) -> None:
    """What the pre-commit hook meets while a janitor moves memories: plain renames, no git."""
    root = Path(vault.repo.root)
    pairs = [(root / f"active/projects/r/m{i}.md", root / f"cooled/projects/r/m{i}.md") for i in range(200)]
    for src, dst in pairs:
        src.parent.mkdir(parents=True, exist_ok=True)
        dst.parent.mkdir(parents=True, exist_ok=True)
        src.write_bytes(b"# m\n")
    stop = threading.Event()

    def mover() -> None:
        while not stop.is_set():
            for a, b in pairs + [(b, a) for a, b in pairs]:
                os.rename(a, b)

    thread = threading.Thread(target=mover)
    thread.start()
    try:
        for _ in range(200 if DEEP else 60):  # measured: about one scan in five hits the window
            vault.status()
    finally:
        stop.set()
        thread.join()


# -- one janitor at a time ------------------------------------------------------------------

def flock_holders(lock: Path) -> set[int]:
    """PIDs holding a flock on `lock`, from /proc/locks: looking must not take the lock."""
    ino = lock.stat().st_ino
    holders = set()
    with open("/proc/locks") as f:
        for line in f:
            fields = line.split()
            if fields[1] == "FLOCK" and fields[5].split(":")[-1] == str(ino):
                holders.add(int(fields[4]))
    return holders


@pytest.mark.slow
def test_a_second_janitor_refuses_at_once_while_the_lock_is_held(mem: Path) -> None:
    (mem / "active/projects/a.md").write_bytes(b"# a\n")
    git(mem, "add", "active/projects/a.md")
    git(mem, "-c", "core.hooksPath=/dev/null", "commit", "-q", "-m", "a")
    state = mem / ".git/strata"
    state.mkdir(exist_ok=True)
    # Exactly as a running janitor holds them: its role's lock and the repository lock (a janitor
    # waits for a write that holds only the repository lock: tests/test_repo_lock.py).
    role = os.open(state / "lock.janitor", os.O_RDWR | os.O_CREAT, 0o644)
    fd = os.open(state / "lock", os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(role, fcntl.LOCK_EX)
        fcntl.flock(fd, fcntl.LOCK_EX)
        start = time.monotonic()
        proc = run_strata(mem, "janitor", "--now", "2027-01-01")
        assert time.monotonic() - start < 5, "it waited for the lock instead of refusing"
        assert proc.returncode == 1 and "another git-strata process" in out(proc), out(proc)
        assert git(mem, "log", "-1", "--format=%s").stdout.decode().strip() == "a"
    finally:
        os.close(fd)
        os.close(role)
    proc = run_strata(mem, "janitor", "--now", "2027-01-01")
    assert proc.returncode == 0 and "cool 1" in out(proc), out(proc)


@pytest.mark.slow
@pytest.mark.skipif(not os.path.exists("/proc/locks"), reason="needs Linux /proc/locks")
def test_a_running_janitor_keeps_a_second_out_and_its_death_frees_the_lock(template: Template,
                                                                           scratch: Path) -> None:
    root = copy_repo(template.root, scratch / "two-janitors")
    lock = root / ".git/strata/lock"
    first = start_janitor(root)
    deadline = time.monotonic() + 30
    while not (lock.exists() and first.pid in flock_holders(lock)):
        assert first.poll() is None and time.monotonic() < deadline, "the first janitor never held the lock"
        time.sleep(0.002)
    os.killpg(first.pid, signal.SIGSTOP)  # freeze it mid-cycle, lock held, wherever it is
    try:
        start = time.monotonic()
        second = run_strata(root, "janitor", "--now", NOW)
        assert time.monotonic() - start < 5, "it waited for the lock instead of refusing"
        assert second.returncode == 1 and "another git-strata process" in out(second), out(second)
    finally:
        os.killpg(first.pid, signal.SIGKILL)  # dies holding the lock: the kernel must release it
        first.wait(timeout=60)
    third = run_strata(root, "janitor", "--now", NOW)
    assert third.returncode == 0, out(third)
    assert_consistent(root, template)
    shutil.rmtree(root)
