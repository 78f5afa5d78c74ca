"""`git strata scan`: secrets already in history, and this clone's allowlist of false positives
(which the commit hook and `write` honour too). Real repositories, driven through the CLI.
Tokens are assembled at run time so this file holds none."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from conftest import bare_remote, git, head, strata

R = "Q7rZ2mPlX4nB8kDwT1yH"  # random-looking filler
TOKEN = "ghp_" + R + R[:16]
OTHER = "ghp_" + R[::-1] + R[4:20]
FALSE_POSITIVE = "build_" + "token = " + R + "9f"  # flagged (generic-secret), but say it is not a secret
ALLOW_FILE = ".git/strata/secrets-allow"


def commit_file(mem: Path, path: str, text: str, message: str = "by hand", verify: bool = False) -> str:
    (mem / path).parent.mkdir(parents=True, exist_ok=True)
    (mem / path).write_text(text)
    git(mem, "add", "--", path)
    proc = git(mem, "commit", "-q", "-m", message, *([] if verify else ["--no-verify"]), check=verify)
    assert proc.returncode == 0, proc.stderr.decode()
    return head(mem)


def scan_json(mem: Path) -> tuple[int, dict]:
    proc = strata(mem, "scan", "--json")
    return proc.returncode, json.loads(proc.stdout)


def no_secret_in(proc, *secrets: str) -> None:
    out = proc.stdout.decode() + proc.stderr.decode()
    for secret in secrets:
        assert secret not in out and secret[4:] not in out


@pytest.mark.slow
def test_a_repository_without_secrets_exits_0(mem: Path):
    commit_file(mem, "active/notes/plain.md", "we talked about the token budget\n", verify=True)
    proc = strata(mem, "scan")
    assert proc.returncode == 0, proc.stderr.decode()
    assert proc.stdout.decode().startswith("no secrets found in 2 commits")
    code, data = scan_json(mem)
    assert (code, data["findings"], data["advice"]) == (0, [], [])


@pytest.mark.slow
def test_a_secret_committed_three_commits_back_is_found_with_its_commit_and_path(mem: Path):
    commit_file(mem, "active/notes/plain.md", "nothing here\n", verify=True)
    leaked = commit_file(mem, "active/notes/leak.md", f"the deploy notes\nuse {TOKEN} for the API\n")
    for i in range(3):
        commit_file(mem, f"active/notes/later{i}.md", f"later {i}\n", verify=True)
    git(mem, "rm", "-q", "active/notes/leak.md")
    git(mem, "commit", "-q", "-m", "remove the leak (history still has it)")
    before = (head(mem), git(mem, "for-each-ref").stdout, git(mem, "status", "--porcelain").stdout)

    proc = strata(mem, "scan")

    out = proc.stdout.decode()
    assert proc.returncode == 1, proc.stderr.decode()
    assert re.search(rf"^{leaked[:12]} active/notes/leak\.md:2: a GitHub token \(rule github-token\), "
                     r"fingerprint [0-9a-f]{16}$", out, re.M), out
    assert "1 secret found in 7 commits" in out
    no_secret_in(proc, TOKEN)
    # what to do: rotate first, then the purge commands with the exact path, force-push, re-clone
    advice = out.split("what to do:", 1)[1]
    assert advice.index("Rotate") < advice.index("git filter-repo --replace-text")
    assert "git filter-repo --invert-paths --path active/notes/leak.md" in advice
    assert "git push --force --mirror URL" in advice and "re-cloned" in advice
    # nothing was changed
    assert (head(mem), git(mem, "for-each-ref").stdout, git(mem, "status", "--porcelain").stdout) == before


@pytest.mark.slow
def test_a_secret_in_a_commit_message_is_found(mem: Path):
    git(mem, "commit", "-q", "--allow-empty", "-m", "deploy", "-m", f"Deploy-Token: {TOKEN}")
    code, data = scan_json(mem)
    assert code == 1
    [found] = data["findings"]
    assert {k: found[k] for k in ("commit", "ref", "kind", "path", "line", "rule")} == {
        "commit": head(mem), "ref": "refs/heads/main", "kind": "commit message", "path": "", "line": 3,
        "rule": "github-token"}
    assert TOKEN not in json.dumps(data)
    assert any("--replace-message" in c for step in data["advice"] for c in step["commands"])


def test_git_stratas_own_refs_are_scanned_too(mem: Path):
    """A shadow record on another machine's ref holding a secret (a buggy or hostile machine)."""
    archived = "ab" + "c" * 38
    record = json.dumps({"v": 2, "b": archived, "p": f"a preview with {TOKEN}"}).encode()
    blob = git(mem, "hash-object", "-w", "--stdin", input=record).stdout.decode().strip()
    inner = git(mem, "mktree", input=f"100644 blob {blob}\t{archived[2:]}\n".encode()).stdout.decode().strip()
    tree = git(mem, "mktree", input=f"040000 tree {inner}\t{archived[:2]}\n".encode()).stdout.decode().strip()
    commit = git(mem, "commit-tree", tree, "-m", "strata: 1 shadow record").stdout.decode().strip()
    git(mem, "update-ref", "refs/strata-remotes/origin/shadow/0123456789abcdef", commit)

    proc = strata(mem, "scan")

    assert proc.returncode == 1
    assert (f"{commit[:12]} shadow record ab/{'c' * 38}:1 on refs/strata-remotes/origin/shadow/0123456789abcdef: "
            "a GitHub token") in proc.stdout.decode()
    assert "git strata reindex" in proc.stdout.decode()
    no_secret_in(proc, TOKEN)


@pytest.mark.slow
def test_one_fingerprint_for_the_same_line_anywhere_and_none_reveals_it(mem: Path):
    first = commit_file(mem, "active/a.md", f"key {TOKEN}\n")
    second = commit_file(mem, "active/b.md", f"intro\n   key {TOKEN}  \n")  # same line, other spacing
    commit_file(mem, "active/c.md", f"{OTHER}\n")
    code, data = scan_json(mem)
    places = {(f["path"], f["commit"], f["line"]): f["fingerprint"] for f in data["findings"]}
    assert set(places) == {("active/a.md", first, 1), ("active/b.md", second, 2), ("active/c.md", head(mem), 1)}
    assert places["active/a.md", first, 1] == places["active/b.md", second, 2] != places["active/c.md", head(mem), 1]
    assert all(re.fullmatch(r"[0-9a-f]{16}", fp) for fp in places.values())


def test_binary_and_large_blobs_are_skipped_and_counted(mem: Path):
    (mem / "data.bin").write_bytes(b"\0\1\2" + TOKEN.encode())
    (mem / "huge.txt").write_text(("x" * 99 + "\n") * 90_000 + TOKEN + "\n")  # over 8 MiB
    git(mem, "add", "data.bin", "huge.txt")
    git(mem, "commit", "-q", "--no-verify", "-m", "binary and huge")
    proc = strata(mem, "scan")
    assert proc.returncode == 0, proc.stdout.decode()
    assert "skipped 1 over 8,388,608 bytes, 1 binary" in proc.stdout.decode()


@pytest.mark.slow
def test_blobs_a_pruned_clone_lacks_are_counted_and_never_fetched(tmp_path: Path, mem: Path):
    commit_file(mem, "active/old.md", f"old {TOKEN}\n")
    git(mem, "rm", "-q", "active/old.md")
    git(mem, "commit", "-q", "-m", "gone")
    remote = bare_remote(tmp_path / "remote.git")
    git(mem, "push", "-q", str(remote), "main")
    git(tmp_path, "clone", "-q", "--filter=blob:none", f"file://{remote}", "partial")
    partial = tmp_path / "partial"
    remote.rename(tmp_path / "gone.git")  # a fetch would now fail loudly
    objects = git(partial, "cat-file", "--batch-all-objects", "--batch-check").stdout

    code, data = scan_json(partial)

    assert (code, data["findings"], data["missing"]) == (0, [], 1)
    assert git(partial, "cat-file", "--batch-all-objects", "--batch-check").stdout == objects


@pytest.mark.slow
def test_an_allowed_fingerprint_is_not_reported_and_passes_the_hook_and_write(mem: Path):
    commit_file(mem, "active/config-notes.md", f"the build uses\n{FALSE_POSITIVE}\n")
    _, data = scan_json(mem)
    [found] = data["findings"]

    allowed = strata(mem, "scan", "--allow", found["fingerprint"])
    assert allowed.returncode == 0 and found["fingerprint"] in allowed.stdout.decode()
    assert strata(mem, "scan", "--allow", found["fingerprint"]).stdout.decode().strip() == \
        "already allowed; nothing changed"
    assert (mem / ALLOW_FILE).read_text().count(found["fingerprint"]) == 1

    proc = strata(mem, "scan")
    assert proc.returncode == 0 and "1 allowed by .git/strata/secrets-allow" in proc.stdout.decode()
    # that exact line may be committed now, by git commit (the hook) and by write
    commit_file(mem, "active/again.md", f"again:\n{FALSE_POSITIVE}\n", verify=True)
    assert strata(mem, "write", "notes/fp", "-m", f"{FALSE_POSITIVE}\n").returncode == 0
    # a different secret is still refused by both
    (mem / "active/leak.md").write_text(f"{FALSE_POSITIVE}\n{OTHER}\n")
    git(mem, "add", "active/leak.md")
    refused = git(mem, "commit", "-q", "-m", "leak", check=False)
    assert refused.returncode != 0 and "active/leak.md:2: looks like a GitHub token" in refused.stderr.decode()
    git(mem, "reset", "-q", "active/leak.md")
    written = strata(mem, "write", "notes/leak", "-m", f"{OTHER}\n")
    assert written.returncode == 1 and "looks like a GitHub token" in written.stderr.decode()
    no_secret_in(written, OTHER)


@pytest.mark.slow
def test_a_refusal_names_the_fingerprint_that_allows_it(mem: Path):
    (mem / "active/fp.md").write_text(f"{FALSE_POSITIVE}\n")
    git(mem, "add", "active/fp.md")
    refused = git(mem, "commit", "-q", "-m", "fp", check=False)
    [fingerprint] = re.findall(r"git strata scan --allow ([0-9a-f]{16})", refused.stderr.decode())
    assert strata(mem, "scan", "--allow", fingerprint).returncode == 0
    assert git(mem, "commit", "-q", "-m", "fp", check=False).returncode == 0


@pytest.mark.slow
def test_a_bad_allowlist_line_is_skipped_with_a_warning(mem: Path):
    commit_file(mem, "active/a.md", f"{FALSE_POSITIVE}\n")
    _, data = scan_json(mem)
    fingerprint = data["findings"][0]["fingerprint"]
    (mem / ALLOW_FILE).write_text(f"# false positives\n{OTHER}\n{fingerprint.upper()}\n{fingerprint}  # ok\n")
    proc = strata(mem, "scan")
    err = proc.stderr.decode()
    assert proc.returncode == 0, proc.stdout.decode()
    assert f"{ALLOW_FILE}:2: not a fingerprint" in err and f"{ALLOW_FILE}:3: not a fingerprint" in err
    assert ":1:" not in err and ":4:" not in err
    no_secret_in(proc, OTHER)


@pytest.mark.slow
def test_allow_refuses_anything_but_a_fingerprint(mem: Path):
    for value in ("abc", "0123456789ABCDEF", "0123456789abcdef0", TOKEN):
        proc = strata(mem, "scan", "--allow", value)
        err = proc.stderr.decode()
        assert proc.returncode == 1 and err.startswith("git-strata: error: --allow takes a fingerprint"), err
        assert len(err.splitlines()) == 2 and TOKEN not in err  # the error and its hint
    assert not (mem / ALLOW_FILE).exists()
