"""Mirroring to object storage: git-remote-s3 against a moto S3 server on 127.0.0.1 that the
test starts and stops. A mirror is a backup copy: every sync pushes the branch and this
machine's access records to it as a full bundle, and `git clone s3://...` restores it."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import pytest

from conftest import BIN, bare_remote, free_port, git, strata

pytestmark = pytest.mark.slow

BUCKET = "strata-backup"


@pytest.fixture
def s3(monkeypatch: pytest.MonkeyPatch):
    port = free_port()
    proc = subprocess.Popen([str(BIN / "moto_server"), "-H", "127.0.0.1", "-p", str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    endpoint = f"http://127.0.0.1:{port}"
    for key, value in {"AWS_ENDPOINT_URL": endpoint, "AWS_ACCESS_KEY_ID": "testing",
                       "AWS_SECRET_ACCESS_KEY": "testing", "AWS_DEFAULT_REGION": "us-east-1"}.items():
        monkeypatch.setenv(key, value)
    import boto3

    client = boto3.client("s3")
    for _ in range(100):
        try:
            client.create_bucket(Bucket=BUCKET)
            break
        except Exception:  # noqa: BLE001 - the server is still starting
            time.sleep(0.1)
    else:
        proc.kill()
        pytest.fail("the moto S3 server did not start")
    yield proc
    proc.terminate()
    proc.wait(timeout=10)


def machine(tmp_path: Path):
    from strata_git.app.init import init
    from strata_git.app.vault import Vault

    remote = bare_remote(tmp_path / "remote.git")
    init(str(tmp_path / "a"))
    git(tmp_path / "a", "remote", "add", "origin", str(remote))
    return Vault.open(str(tmp_path / "a")), remote


def test_sync_mirrors_to_s3_and_a_clone_from_s3_restores_everything(tmp_path: Path, s3):
    a, remote = machine(tmp_path)
    root = Path(a.repo.root)
    for i in range(5):
        a.write(f"notes/n{i}", f"# Note {i}\n\nbacked up\n".encode())
    a.read("notes/n1")  # an access record, pushed to the mirror too
    git(root, "remote", "add", "s3", f"s3://{BUCKET}/memory")
    git(root, "config", "--add", "strata.mirror", "s3")
    result = a.sync()
    assert result.mirrors == {"s3": "pushed"}, result.mirrors
    a.write("notes/later", b"# Later\n")
    assert a.sync().mirrors == {"s3": "pushed"}
    git(tmp_path, "clone", "-q", f"s3://{BUCKET}/memory", "restored")
    restored = tmp_path / "restored"
    tree = git(restored, "rev-parse", "HEAD^{tree}").stdout
    assert tree == git(root, "rev-parse", "HEAD^{tree}").stdout
    refs = git(restored, "ls-remote", "origin").stdout.decode()
    assert "refs/strata/access/" in refs
    assert git(restored, "fsck", "--no-progress").returncode == 0


def test_a_mirror_that_is_down_is_reported_and_the_sync_still_lands(tmp_path: Path, s3):
    a, remote = machine(tmp_path)
    root = Path(a.repo.root)
    git(root, "remote", "add", "s3", f"s3://{BUCKET}/memory")
    git(root, "config", "--add", "strata.mirror", "s3")
    s3.terminate()
    s3.wait(timeout=10)
    a.write("notes/n", b"# N\n")
    out = strata(root, "sync", env={"AWS_MAX_ATTEMPTS": "1", "AWS_RETRY_MODE": "standard"})
    assert out.returncode == 1, out.stdout
    assert b"mirror s3: failed" in out.stdout
    assert git(remote, "rev-parse", "main").stdout.decode().strip() == a.repo.head()  # origin got it


def test_a_partial_clone_skips_the_mirror_with_the_reason(tmp_path: Path, s3):
    from strata_git.app.vault import Vault
    from strata_git.ops import clone

    a, remote = machine(tmp_path)
    a.sync()
    clone.clone(str(remote), str(tmp_path / "b"))
    b = Vault.open(str(tmp_path / "b"))
    git(tmp_path / "b", "remote", "add", "s3", f"s3://{BUCKET}/memory")
    git(tmp_path / "b", "config", "--add", "strata.mirror", "s3")
    [(name, state)] = b.sync().mirrors.items()
    assert name == "s3" and state.startswith("skipped: this clone is partial")
    import boto3

    assert boto3.client("s3").list_objects_v2(Bucket=BUCKET).get("KeyCount", 0) == 0
