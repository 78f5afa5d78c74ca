"""Every command through the installed `git-strata` script, against real repositories."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest

from conftest import commit_count, git, head, strata


def ok(proc) -> str:
    assert proc.returncode == 0, proc.stderr.decode()
    return proc.stdout.decode()


def refused(proc, *words: str) -> str:
    err = proc.stderr.decode()
    assert proc.returncode == 1, (proc.returncode, err)
    assert err.startswith("git-strata: error: ") and "Traceback" not in err
    for word in words:
        assert word in err
    return err


def test_init_creates_layout_in_one_commit(tmp_path: Path):
    out = ok(strata(tmp_path, "init", "mem"))
    root = tmp_path / "mem"
    assert "initialized memory repository" in out
    for folder in ("active/projects", "active/entities", "active/gtd", "cooled", "archive"):
        assert (root / folder).is_dir()
    assert (root / ".strata/config.toml").is_file()
    assert (root / "index.md").is_file()
    assert commit_count(root) == 1
    assert git(root, "status", "--porcelain").stdout == b""
    assert git(root, "check-ignore", "-q", "index.md").returncode == 0
    assert "git-strata hook shim" in (root / ".git/hooks/pre-commit").read_text()


def test_second_init_changes_nothing(mem: Path):
    before = head(mem)
    out = ok(strata(mem, "init"))
    assert "nothing changed" in out
    assert head(mem) == before


def test_init_existing_repository_keeps_files_and_staged_work(tmp_path: Path):
    root = tmp_path / "proj"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    (root / "notes.txt").write_bytes(b"keep me\r\n")
    (root / ".gitignore").write_text("*.log\n")
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "user work")
    (root / "staged.txt").write_text("staged, not for init\n")
    git(root, "add", "staged.txt")
    out = ok(strata(root, "init"))
    assert (root / "notes.txt").read_bytes() == b"keep me\r\n"
    assert (root / ".gitignore").read_text() == "*.log\n"
    assert "ignored in this clone only" in out
    assert "staged.txt" not in git(root, "show", "--name-only", "HEAD").stdout.decode()
    assert git(root, "diff", "--cached", "--name-only").stdout.decode().split() == ["staged.txt"]
    assert git(root, "status", "--porcelain", "--", "index.md").stdout == b""


def test_init_refuses_subfolder_of_a_repository(tmp_path: Path):
    git(tmp_path, "init", "-q")
    (tmp_path / "sub").mkdir()
    refused(strata(tmp_path / "sub", "init"), "inside the git repository")
    assert not (tmp_path / "sub" / ".strata").exists()


def test_init_refuses_a_users_index_md(tmp_path: Path):
    root = tmp_path / "r"
    root.mkdir()
    (root / "index.md").write_text("# my own index\n")
    refused(strata(root, "init"), "index.md already exists")
    assert (root / "index.md").read_text() == "# my own index\n"
    assert not (root / ".strata").exists()


@pytest.mark.slow
def test_write_read_round_trip_from_stdin_file_and_message(mem: Path, tmp_path: Path):
    ok(strata(mem, "write", "projects/a", input=b"from stdin\n"))
    src = tmp_path / "b.md"
    src.write_bytes(b"---\ntitle: B\n---\nfrom file\n")
    ok(strata(mem, "write", "projects/b.md", "--file", str(src)))
    ok(strata(mem, "write", "gtd/c", "-m", "from -m"))
    assert strata(mem, "read", "projects/a").stdout == b"from stdin\n"
    assert strata(mem, "read", "projects/b").stdout == src.read_bytes()
    assert (mem / "active/gtd/c.md").read_bytes() == b"from -m"
    assert commit_count(mem) == 4


def test_write_makes_one_commit_with_trailers_and_leaves_staged_work(mem: Path):
    (mem / "other.txt").write_text("mine\n")
    git(mem, "add", "other.txt")
    ok(strata(mem, "write", "projects/koda", "-m", "plan"))
    message = git(mem, "log", "-1", "--format=%B").stdout.decode()
    assert message.startswith("strata: create projects/koda")
    assert "Strata-Action: create" in message and "Strata-Name: projects/koda" in message
    assert git(mem, "show", "--name-only", "--format=", "HEAD").stdout.decode().split() == ["active/projects/koda.md"]
    assert git(mem, "diff", "--cached", "--name-only").stdout.decode().split() == ["other.txt"]


def test_write_with_metadata_builds_frontmatter(mem: Path):
    ok(strata(mem, "write", "projects/koda", "-m", "# Koda\n", "--title", "Koda plan", "--tags", "launch, q3",
              "--type", "decision"))
    data = json.loads(ok(strata(mem, "read", "projects/koda", "--json")))
    assert data["meta"] == {"title": "Koda plan", "tags": ["launch", "q3"], "type": "decision"}
    assert data["content"].endswith("---\n# Koda\n")


def test_write_unchanged_makes_no_commit(mem: Path):
    ok(strata(mem, "write", "x", "-m", "same"))
    before = head(mem)
    assert "unchanged" in ok(strata(mem, "write", "x", "-m", "same", "--replace"))
    assert head(mem) == before


def test_write_refuses_to_replace_uncommitted_changes(mem: Path):
    ok(strata(mem, "write", "x", "-m", "v1"))
    (mem / "active/x.md").write_text("my unsaved edit")
    refused(strata(mem, "write", "x", "-m", "v2", "--replace"), "uncommitted changes")
    assert (mem / "active/x.md").read_text() == "my unsaved edit"


def test_write_asks_before_replacing_and_says_what_would_be_lost(mem: Path):
    ok(strata(mem, "write", "koda", "-m", "line one\nline two", "--title", "Koda", "--tags", "launch",
              "--type", "decision"))
    before = head(mem)
    err = refused(strata(mem, "write", "koda", "-m", "new"), "koda already exists in active/",
                  "would lose its title 'Koda', tags launch, type decision and 2 line(s) of text", "--replace")
    assert head(mem) == before and "line two" in (mem / "active/koda.md").read_text() and err
    ok(strata(mem, "write", "koda", "-m", "line three", "--append"))
    text = (mem / "active/koda.md").read_text()
    assert text.endswith("line one\nline two\n\nline three\n") and "title: Koda" in text
    refused(strata(mem, "write", "koda", "-m", "---\ntitle: x\n---\nbody", "--append"), "opens with frontmatter")
    refused(strata(mem, "write", "koda", "-m", "x", "--append", "--replace"), "say different things")
    ok(strata(mem, "write", "koda", "-m", "replaced", "--replace"))
    assert (mem / "active/koda.md").read_text() == "replaced"
    assert "line three" in git(mem, "show", "HEAD~1:active/koda.md").stdout.decode()  # history keeps it
    ok(strata(mem, "write", "fresh", "-m", "new one", "--append"))  # append creates a new memory


def test_write_refuses_secrets_without_echoing_them(mem: Path):
    token = "ghp_" + "a1B2c3D4" * 5
    err = refused(strata(mem, "write", "x", "-m", f"token {token}"), "GitHub token", "x.md:1")
    assert token not in err
    assert not (mem / "active/x.md").exists()


def test_write_refuses_empty_content(mem: Path):
    refused(strata(mem, "write", "x", "-m", "  \n"), "empty")


def test_write_to_a_cooled_memory_says_how_to_recall(mem: Path):
    (mem / "cooled/old.md").write_text("cold")
    git(mem, "add", "cooled/old.md")
    git(mem, "-c", "core.hooksPath=/dev/null", "commit", "-q", "-m", "seed cooled")
    refused(strata(mem, "write", "old", "-m", "new"), "cooled/", "git strata recall old")
    assert (mem / "cooled/old.md").read_text() == "cold"


def test_read_records_an_access_and_missing_names_suggest(mem: Path):
    ok(strata(mem, "write", "projects/koda", "-m", "k"))
    ok(strata(mem, "read", "projects/koda"))
    log = (mem / ".git/strata/access.log").read_text().splitlines()
    assert json.loads(log[-1])["name"] == "projects/koda"
    assert json.loads(log[-1])["via"] == "cli"
    refused(strata(mem, "read", "projects/kod"), "no memory named", "did you mean 'projects/koda'")


@pytest.mark.slow
def test_list_filters_by_tier_and_type(mem: Path):
    ok(strata(mem, "write", "projects/d", "-m", "d", "--type", "decision"))
    ok(strata(mem, "write", "projects/n", "-m", "n"))
    names = [e["name"] for e in json.loads(ok(strata(mem, "list", "--json", "--type", "decision")))]
    assert names == ["projects/d"]
    assert json.loads(ok(strata(mem, "list", "--json", "--tier", "cooled"))) == []
    assert "projects/n" in ok(strata(mem, "list"))


def test_status_reports_tiers_hooks_config_and_problems(mem: Path):
    ok(strata(mem, "write", "a", "-m", "12345"))
    (mem / "active/stray.txt").write_text("not a memory")
    data = json.loads(ok(strata(mem, "status", "--json")))
    assert data["tiers"]["active"] == {"memories": 1, "bytes": 5}
    assert data["hooks"]["pre-commit"] == "installed"
    assert data["config"]["cool"]["after_days"]["projects"] == 14
    assert any("stray.txt" in p for p in data["problems"])
    assert "active/stray.txt" in data["uncommitted"]


def _editor(tmp_path: Path, script: str) -> dict:
    path = tmp_path / "editor.sh"
    path.write_text("#!/bin/sh\n" + script + "\n")
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return {"EDITOR": str(path)}


def test_edit_commits_a_valid_change(mem: Path, tmp_path: Path):
    ok(strata(mem, "write", "x", "-m", "one\n"))
    ok(strata(mem, "edit", "x", env=_editor(tmp_path, 'printf "two\\n" >> "$1"')))
    assert (mem / "active/x.md").read_text() == "one\ntwo\n"
    assert git(mem, "log", "-1", "--format=%s").stdout.decode().strip() == "strata: edit x"


def test_edit_keeps_an_invalid_edit_and_commits_nothing(mem: Path, tmp_path: Path):
    ok(strata(mem, "write", "x", "-m", "one\n"))
    before = head(mem)
    refused(strata(mem, "edit", "x", env=_editor(tmp_path, 'printf -- "---\\ntitle: [\\n" > "$1"')),
            "your edit is kept in active/x.md")
    assert head(mem) == before
    assert (mem / "active/x.md").read_text() == "---\ntitle: [\n"


def test_edit_on_cooled_explains_recall(mem: Path, tmp_path: Path):
    (mem / "cooled/c.md").write_text("cold")
    git(mem, "add", ".")
    git(mem, "-c", "core.hooksPath=/dev/null", "commit", "-q", "-m", "seed")
    refused(strata(mem, "edit", "c", env=_editor(tmp_path, "exit 0")), "read-only", "git strata recall c")


def test_forget_removes_in_a_commit_and_history_keeps_it(mem: Path):
    ok(strata(mem, "write", "projects/old", "-m", "remember me"))
    out = ok(strata(mem, "forget", "projects/old"))
    assert "git revert" in out
    assert not (mem / "active/projects/old.md").exists()
    assert git(mem, "show", "HEAD~1:active/projects/old.md").stdout == b"remember me"


@pytest.mark.slow
def test_forget_refuses_uncommitted_and_unknown(mem: Path):
    ok(strata(mem, "write", "x", "-m", "v1"))
    (mem / "active/x.md").write_text("edited")
    refused(strata(mem, "forget", "x"), "uncommitted changes")
    assert (mem / "active/x.md").read_text() == "edited"
    refused(strata(mem, "forget", "nope"), "no memory named")


def test_recall_moves_cooled_back_as_a_pure_rename(mem: Path):
    (mem / "cooled/projects").mkdir()
    (mem / "cooled/projects/c.md").write_bytes(b"cold\n")
    git(mem, "add", ".")
    git(mem, "-c", "core.hooksPath=/dev/null", "commit", "-q", "-m", "seed")
    ok(strata(mem, "recall", "projects/c"))
    status = git(mem, "show", "-M", "--name-status", "--format=", "HEAD").stdout.decode().split()
    assert status == ["R100", "cooled/projects/c.md", "active/projects/c.md"]


@pytest.mark.slow
def test_every_command_speaks_json(mem: Path, tmp_path: Path):
    ok(strata(mem, "write", "x", "-m", "x"))
    runs = [("write", "y", "-m", "y"), ("read", "x"), ("list",), ("status",), ("index",), ("install-hooks",),
            ("forget", "y"), ("recall", "x"), ("edit", "x"), ("hook", "post-checkout"), ("uninstall-hooks",),
            ("init",)]
    for args in runs:
        proc = strata(mem, *args, "--json", env=_editor(tmp_path, "exit 0"))
        assert proc.returncode == 0, (args, proc.stderr)
        json.loads(proc.stdout)
    err = strata(mem, "read", "nope", "--json")
    assert err.returncode == 1 and json.loads(err.stdout)["error"].startswith("no memory named")


def test_works_as_a_git_subcommand_from_a_subfolder(mem: Path):
    ok(strata(mem, "write", "projects/x", "-m", "hi"))
    proc = git(mem / "active" / "projects", "strata", "read", "projects/x")
    assert proc.stdout == b"hi"
    assert git(mem.parent, "-C", str(mem), "strata", "list").stdout.decode().startswith("active")


def test_usage_errors_exit_2_and_outside_a_repo_exits_1(tmp_path: Path):
    assert strata(tmp_path, "frobnicate").returncode == 2
    refused(strata(tmp_path, "list"), "not inside a git repository", "git strata init")
    refused(strata(tmp_path, "hook", "frobnicate"), "unknown hook")


@pytest.mark.slow
def test_help_for_every_command():
    from strata_git.app.cli import COMMANDS

    for command in COMMANDS:
        proc = strata(Path("."), command, "-h")
        assert proc.returncode == 0 and b"--json" in proc.stdout, command


def test_missing_identity_refuses_before_writing(mem: Path, monkeypatch: pytest.MonkeyPatch):
    for role in ("AUTHOR", "COMMITTER"):
        monkeypatch.delenv(f"GIT_{role}_NAME")
        monkeypatch.delenv(f"GIT_{role}_EMAIL")
    monkeypatch.setenv("EMAIL", "")
    proc = strata(mem, "write", "x", "-m", "hi", env={"GIT_AUTHOR_NAME": "", "GIT_COMMITTER_NAME": ""})
    if proc.returncode == 0:
        pytest.skip("this machine's git derives an identity from the host")
    refused(proc, "who you are")
    assert not (mem / "active/x.md").exists()
    assert git(mem, "status", "--porcelain").stdout == b""


@pytest.mark.slow
def test_concurrent_writers_lose_nothing(mem: Path):
    import subprocess

    procs = [subprocess.Popen([str(Path(__import__("sys").executable).parent / "git-strata"), "write",
                               f"projects/p{i}", "-m", f"writer {i}\n"], cwd=mem,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE) for i in range(6)]
    results = [(p.wait(timeout=120), p.stderr.read().decode()) for p in procs]
    assert all(code == 0 for code, _ in results), results
    assert commit_count(mem) == 7
    for i in range(6):
        assert git(mem, "show", f"HEAD:active/projects/p{i}.md").stdout == f"writer {i}\n".encode()
    assert git(mem, "status", "--porcelain").stdout == b""


@pytest.mark.parametrize("handler", [False, True])
def test_the_command_skips_the_interpreters_teardown_only_when_nothing_is_left_to_run(tmp_path: Path, handler: bool):
    """`git-strata` (cli.run) ends the process at once after main() when no exit handler is
    registered and no other thread runs (an object left for the teardown is never freed); an exit
    handler someone registered still runs, with the teardown. The output is whole either way."""
    import subprocess
    import sys

    ran = tmp_path / "ran"
    register = f"atexit.register(lambda: open({str(ran)!r}, 'w').write('ran'))" if handler else "pass"
    script = ("import atexit, sys\n"
              f"{register}\n"
              "class Left:\n"
              "    def __del__(self, say=sys.stderr.write): say('freed\\n')\n"
              "left = Left()\n"
              "sys.argv = ['git-strata', '--version']\n"
              "from strata_git.app import cli\n"
              "cli.run()\n")
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("git-strata ") and proc.stdout.endswith("\n")
    assert ran.exists() == handler
    assert ("freed" in proc.stderr) == handler
