"""index.md follows what git did by rebuilding only the folders that changed: after commits git-strata
never saw (hooks off), a commit with hooks, a checkout and git-strata's own commits take a step,
never a rebuild of every folder, and write what a rebuild of every folder writes."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import FIXED_DATE, git
from strata_git.core import config
from strata_git.store import catalog, index_md


def _plain_commit(mem: Path, files: dict[str, str], message: str) -> None:
    """A commit no git-strata hook sees (as a tool that turns hooks off makes)."""
    for rel, text in files.items():
        (mem / rel).parent.mkdir(parents=True, exist_ok=True)
        (mem / rel).write_text(text)
    git(mem, "add", "-A", "active")
    git(mem, "-c", "core.hooksPath=/dev/null", "commit", "-q", "-m", message)


def _rebuilt(vault) -> str:
    """index.md as a rebuild of every folder writes it (the catalog told it reflects no tree)."""
    with catalog.connect(vault.repo) as db:
        catalog.set_meta(db, "tree", "")
    index_md.refresh(vault.repo, config.load(vault.repo.root, vault.repo.state_dir()).max_memory_bytes)
    return (Path(vault.repo.root) / "index.md").read_text()


@pytest.fixture
def stepped(vault, mem: Path, monkeypatch):
    """The vault with a few memories in two folders, and a rebuild of every folder refused from
    here on (it raises), so that whatever the test does next must take a step."""
    for name in ("notes/a", "notes/b", "plans/c"):
        vault.write(name, f"# {name}\n\nSomething about {name}.\n".encode())
    def refused(*args, **kwargs):
        raise AssertionError("every folder was rebuilt")

    monkeypatch.setattr(index_md, "_full", refused)
    return vault


def test_a_commit_with_hooks_after_commits_without_them_is_a_step(stepped, mem: Path, monkeypatch):
    from strata_git.app import hooks

    _plain_commit(mem, {"active/notes/a.md": "# A, edited without hooks\n", "active/plans/d.md": "# D\n"}, "plain")
    (mem / "active/notes/b.md").write_text("# B, edited with hooks\n")
    (mem / "active/notes/a.md").write_text("# A, edited again with hooks\n")  # (in both commits)
    git(mem, "add", "active/notes")
    cfg = config.load(stepped.repo.root, stepped.repo.state_dir())
    monkeypatch.setenv("GIT_COMMITTER_DATE", FIXED_DATE)  # (as the commit below is dated)
    assert hooks.run(stepped.repo, cfg, "pre-commit") == []
    git(mem, "-c", "core.hooksPath=/dev/null", "commit", "-q", "-m", "with hooks")  # (pre-commit ran above)
    text = (mem / "index.md").read_text()
    assert "**A, edited again with hooks**" in text and "**D**" in text and "**B, edited with hooks**" in text
    monkeypatch.undo()
    assert text == _rebuilt(stepped)


def test_a_pull_s_hook_and_git_strata_s_own_commit_after_commits_without_hooks_are_steps(stepped, mem: Path,
                                                                                        monkeypatch):
    from strata_git.app import hooks

    cfg = config.load(stepped.repo.root, stepped.repo.state_dir())
    _plain_commit(mem, {"active/plans/e.md": "# E\n"}, "plain")
    hooks.run(stepped.repo, cfg, "post-merge")  # what a pull runs
    assert "**E**" in (mem / "index.md").read_text()
    _plain_commit(mem, {"active/notes/f.md": "# F\n"}, "plain again")
    stepped.write("plans/g", b"# G\n")  # git-strata's own commit, on a tree the catalog never saw
    text = (mem / "index.md").read_text()
    assert "**F**" in text and "**G**" in text
    git(mem, "-c", "core.hooksPath=/dev/null", "checkout", "-q", "HEAD~2")
    hooks.run(stepped.repo, cfg, "post-checkout")
    back = (mem / "index.md").read_text()
    assert "**E**" in back and "**F**" not in back and "**G**" not in back
    monkeypatch.undo()
    assert back == _rebuilt(stepped)
