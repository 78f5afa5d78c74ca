"""A colleague on the same remote who means harm: what they push cannot rewrite what another
machine's archive says, silence its capture or weaken its checks.

Two clones of one bare remote (an honest one and the peer), plus a fresh clone made after the
peer pushed: forged shadow records for someone else's blob, records with huge counts, a forged
capture watermark, and a shared config that turns the secret check off.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
from pathlib import Path

import pytest

from conftest import bare_remote, git, strata
from helpers.archive import archived_blobs, seed_archive, shadow_rows
from helpers.harness import claude_line

pytestmark = pytest.mark.slow

TOKEN = "ghp_" + "Zt4Kq9WmB2xR7nLp" + "Vc3Hs8Jd5Fg1Ya6Eu0Qo"  # assembled at run time: this file holds none


def search(repo: Path, query: str) -> list[str]:
    proc = strata(repo, "search", query, "--json")
    assert proc.returncode == 0, proc.stderr
    return [hit["name"] for hit in json.loads(proc.stdout)]


def status(repo: Path) -> str:
    proc = strata(repo, "status")
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.decode()


def oid(raw: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(raw) + raw).hexdigest()


def push_records(peer: Path, machine: str, records: dict[str, bytes]) -> None:
    """Push records ({blob: bytes}) on a shadow ref of the peer's choosing, straight to the remote."""
    index = peer / ".git" / "forged-index"
    env = {**os.environ, "GIT_INDEX_FILE": str(index)}
    for blob, raw in records.items():
        note = git(peer, "hash-object", "-w", "--stdin", input=raw).stdout.decode().strip()
        subprocess.run(["git", "update-index", "--add", "--cacheinfo", f"100644,{note},{blob[:2]}/{blob[2:]}"],
                       cwd=peer, env=env, check=True)
    tree = subprocess.run(["git", "write-tree"], cwd=peer, env=env, check=True, capture_output=True).stdout
    commit = git(peer, "commit-tree", tree.decode().strip(), "-m", "records").stdout.decode().strip()
    ref = f"refs/strata/shadow/{machine}"
    git(peer, "update-ref", ref, commit)
    git(peer, "push", "-q", "origin", f"{ref}:{ref}")


@pytest.fixture
def team(mem: Path, tmp_path: Path):
    """(honest clone with 6 archived memories, pushed; the peer's clone)."""
    remote = bare_remote(tmp_path / "remote.git")
    git(mem, "remote", "add", "origin", str(remote))
    seed_archive(mem, 6)
    assert strata(mem, "sync").returncode == 0
    peer = tmp_path / "peer"
    assert strata(tmp_path, "clone", str(remote), str(peer)).returncode == 0
    return mem, peer, remote


def fresh_clone(repo: Path) -> Path:
    url = git(repo, "remote", "get-url", "origin").stdout.decode().strip()
    fresh = repo.parent / "fresh"
    assert strata(repo.parent, "clone", url, str(fresh)).returncode == 0
    return fresh


def forged_record(blob: str, real_note: str, words: str) -> bytes:
    """A valid-looking record for `blob` saying `words`, whose id sorts before the real one (so the
    old rule, first valid candidate in id order, would have taken it)."""
    for i in range(10_000):
        rec = {"v": 2, "b": blob, "s": 400, "t": f"Payroll {i}", "y": "note", "g": [], "p": words, "w": words.lower()}
        raw = json.dumps(rec, separators=(",", ":")).encode() + b"\n"
        if oid(raw) < real_note:
            return raw
    raise AssertionError("no forged record sorts first")


def test_a_forged_record_for_another_machines_blob_changes_nothing_anywhere(team, tmp_path: Path):
    mem, peer, remote = team
    path, blob = sorted(archived_blobs(mem).items())[0]
    own = git(mem, "for-each-ref", "--format=%(refname)", "refs/strata/shadow/").stdout.decode().split()[0]
    real_note = git(mem, "rev-parse", f"{own}:{blob[:2]}/{blob[2:]}").stdout.decode().strip()
    name = path[len("archive/"):-3]
    assert name in search(mem, "harbor token0000")
    before = [r[:2] + r[3:] for r in shadow_rows(mem)]  # all but the archiving commit, which is the clone's own
    push_records(peer, "f" * 16, {blob: forged_record(blob, real_note, "Payroll all salaries")})
    assert strata(mem, "sync").returncode == 0
    fresh = tmp_path / "fresh"
    assert strata(tmp_path, "clone", str(remote), str(fresh)).returncode == 0
    for repo in (mem, fresh):
        assert [r[:2] + r[3:] for r in shadow_rows(repo)] == before  # every row and term as before the push
        assert git(repo, "for-each-ref", "refs/strata-remotes/origin/shadow/" + "f" * 16).stdout  # it arrived
        assert search(repo, "payroll salaries") == []
        assert name in search(repo, "harbor token0000")
        assert f"ignored: history names {real_note[:12]}" in status(repo)


def test_records_that_claim_more_than_a_blob_holds_cost_nothing(team, tmp_path: Path):
    mem, peer, remote = team
    # a memory archived by hand (no janitor commit names its record): any record may speak for it
    (peer / "archive/notes").mkdir(parents=True, exist_ok=True)
    (peer / "archive/notes/by-hand.md").write_text("# By hand\n\nkestrel notes\n")
    git(peer, "add", "--sparse", "archive/notes/by-hand.md")
    subprocess.run(["git", "commit", "-q", "-m", "archived by hand"], cwd=peer, check=True,
                   env={**os.environ, "STRATA_INTERNAL": "1"})
    git(peer, "push", "-q", "origin", "HEAD:main")
    blob = git(peer, "rev-parse", "HEAD:archive/notes/by-hand.md").stdout.decode().strip()
    huge = {"v": 2, "b": blob, "s": 1 << 39, "t": "Huge", "y": "note", "g": [], "p": "", "w": "boom:999999999"}
    many = {**huge, "s": 1000, "w": "boom:999999999"}
    long_title = {**huge, "s": 10, "t": "x" * 5000, "w": "boom"}
    push_records(peer, "e" * 16, {blob: json.dumps(huge).encode()})
    push_records(peer, "d" * 16, {blob: json.dumps(many).encode()})
    push_records(peer, "c" * 16, {blob: json.dumps(long_title).encode()})
    assert strata(mem, "sync").returncode == 0
    fresh = tmp_path / "fresh"
    assert strata(tmp_path, "clone", str(remote), str(fresh)).returncode == 0
    for repo in (mem, fresh):
        for command in (("status",), ("list", "--tier", "archive"), ("search", "boom")):
            proc = strata(repo, *command)
            assert proc.returncode == 0, proc.stderr
        assert search(repo, "boom") == [] and "notes/by-hand" in search(repo, "hand")  # found by its name
        said = status(repo)
        assert "over the 1048576-byte memory size limit" in said and "more than a blob of 1000 bytes holds" in said
        catalog = sum(f.stat().st_size for f in (repo / ".git/strata").glob("catalog*"))
        assert catalog < 4 << 20


def test_a_forged_capture_watermark_silences_nothing(mem: Path, tmp_path: Path):
    remote = bare_remote(tmp_path / "remote.git")
    git(mem, "remote", "add", "origin", str(remote))
    transcript = tmp_path / "t.jsonl"
    transcript.write_text(claude_line("user", "hello") + claude_line("assistant", "hi"))
    proc = strata(mem, "capture", str(transcript), "--json")
    assert proc.returncode == 0, proc.stderr
    session = json.loads(proc.stdout)["session"]
    assert strata(mem, "sync").returncode == 0
    peer = tmp_path / "peer"
    assert strata(tmp_path, "clone", str(remote), str(peer)).returncode == 0
    machine = (mem / ".git/strata/machine-id").read_text().strip()  # public: it names refs
    for lines, extra in (([1, 1 << 39], {}), ([1, 4], {}), ([1, 4], {"Strata-Machine": machine})):
        record = json.dumps({"harness": "claude-code", "transcript": "t.jsonl", "lines": lines, "redacted": 0})
        trailers = {"Strata-Action": "capture", "Strata-Capture-Session": session, "Strata-Capture": record, **extra}
        git(peer, "commit", "-q", "--allow-empty", "-m", "strata: capture 0 memories",
            "-m", "\n".join(f"{k}: {v}" for k, v in trailers.items()))
    git(peer, "push", "-q", "origin", "HEAD:main")
    assert strata(mem, "sync").returncode == 0
    with transcript.open("a") as f:
        f.write(claude_line("user", "Decision: we deploy on Fridays only after the freeze lifts.")
                + claude_line("user", "TODO: write the freeze calendar.")
                + claude_line("assistant", "Noted."))
    report = json.loads(strata(mem, "capture", str(transcript), "--json").stdout)
    assert report["lines"] == [3, 5]  # after its own watermark (line 2), not the peer's
    held = git(mem, "ls-files", "active").stdout.decode()
    assert "active/decisions/" in held and "active/tasks/write-the-freeze-calendar.md" in held
    said = status(mem)
    assert "not trusted: it names this machine but not the transcript's bytes" in said
    assert said.count("capture watermark in commit") == 3  # every forged one newer than its own


def test_a_shared_config_cannot_turn_the_secret_check_off(team):
    mem, peer, _ = team
    config = peer / ".strata/config.toml"
    config.write_text(config.read_text().replace("secrets = true", "secrets = false")
                      .replace("max_memory_bytes = 1048576", "max_memory_bytes = 99999999"))
    git(peer, "commit", "-q", "-am", "relax the checks")
    git(peer, "push", "-q", "origin", "HEAD:main")
    proc = strata(mem, "sync")
    assert proc.returncode == 0 and "fast-forward" in proc.stdout.decode()
    warned = proc.stderr.decode()
    assert "hooks.secrets = false" in warned and "limits.max_memory_bytes = 99999999" in warned
    assert "ignored" in warned
    for repo in (mem, fresh_clone(mem)):
        said = status(repo)
        assert "hooks.secrets = false" in said and ".git/strata/config.toml" in said
        assert strata(repo, "write", "notes/key", input=f"the key is {TOKEN}\n".encode()).returncode != 0
    # write, the commit hook and capture all still refuse or redact the token
    assert strata(mem, "write", "notes/key", input=f"the key is {TOKEN}\n".encode()).returncode != 0
    (mem / "active/notes").mkdir(parents=True, exist_ok=True)
    (mem / "active/notes/by-hand.md").write_text(f"# Key\n\n{TOKEN}\n")
    git(mem, "add", "active/notes/by-hand.md")
    assert git(mem, "commit", "-q", "-m", "by hand", check=False).returncode != 0
    git(mem, "reset", "-q", "HEAD", "--", "active/notes/by-hand.md")
    os.unlink(mem / "active/notes/by-hand.md")
    transcript = mem.parent / "t.jsonl"
    transcript.write_text(claude_line("user", f"Decision: the deploy token is {TOKEN} from now on."))
    assert strata(mem, "capture", str(transcript)).returncode == 0
    assert TOKEN not in git(mem, "log", "-p", "--all").stdout.decode()
    # this clone's own file may turn it off, for this clone only
    (mem / ".git/strata/config.toml").write_text("[hooks]\nsecrets = false\n")
    assert strata(mem, "write", "notes/key", input=f"the key is {TOKEN}\n".encode()).returncode == 0
    assert "hooks.secrets" not in status(mem)


def test_every_commit_names_the_machine_that_made_it(team, tmp_path: Path):
    mem, peer, _ = team
    assert strata(peer, "write", "notes/from-peer", input=b"# Peer\n\nhello\n").returncode == 0
    assert strata(peer, "sync").returncode == 0
    assert strata(mem, "write", "notes/from-mem", input=b"# Mem\n\nhello\n").returncode == 0
    assert strata(mem, "sync").returncode == 0  # a merge
    transcript = tmp_path / "t.jsonl"
    transcript.write_text(claude_line("user", "TODO: name the machines."))
    assert strata(mem, "capture", str(transcript)).returncode == 0
    ids = {repo: (repo / ".git/strata/machine-id").read_text().strip() for repo in (mem, peer)}
    log = git(mem, "log", "--format=%s%x00%(trailers:key=Strata-Machine,valueonly)%x01").stdout.decode()
    made = [item.strip().split("\0") for item in log.split("\x01") if item.strip()]
    ours = [(subject, machine.strip()) for subject, machine in made if subject.startswith("strata:")]
    assert len(ours) >= 6 and all(machine in ids.values() for _, machine in ours)
    assert {machine for _, machine in ours} == set(ids.values())
    kinds = {subject.split()[1].rstrip(",") for subject, _ in ours}
    assert {"create", "sync", "capture", "cool", "init"} <= kinds, kinds
