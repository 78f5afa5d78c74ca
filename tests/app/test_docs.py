"""Docs are executable: every command has help and a row in docs/commands.md, the quick start is two
commands, and the documentation site builds with every internal link and anchor resolved."""

from __future__ import annotations

import re
from pathlib import Path

from strata_git.app.cli import COMMANDS, _parser

ROOT = Path(__file__).parents[2]
README = (ROOT / "README.md").read_text()


def _commands_section() -> str:
    return (ROOT / "docs" / "commands.md").read_text().split("\n## ", 1)[0]


def test_every_command_is_in_the_commands_page():
    documented = set(re.findall(r"^\| `git strata ([a-z-]+)", _commands_section(), re.M))
    assert documented == set(COMMANDS)


def test_every_command_has_help_text():
    sub = next(a for a in _parser()._actions if a.dest == "command")
    for name, parser in sub.choices.items():
        assert parser.description and parser.format_help().count("--json") >= 1, name


def test_quick_start_is_two_commands_that_exist():
    block = README.split("## Quick start", 1)[1].split("```sh", 1)[1].split("```", 1)[0]
    commands = [line.split("#")[0].strip() for line in block.strip().splitlines()]
    assert commands == ["bash scripts/demo.sh", "bash scripts/test.sh"]
    ci = (Path(__file__).parents[2] / ".ci" / "run").read_text()
    assert "bash scripts/test.sh" in ci


def test_the_documentation_site_builds_with_every_link_and_anchor_resolved(tmp_path: Path):
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(ROOT / "mkdocs.yml"),
                           "-d", str(tmp_path / "site")], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    built = sorted(p.parent.name for p in (tmp_path / "site").rglob("index.html"))
    pages = sorted(p.stem for p in (ROOT / "docs").glob("*.md"))
    assert sorted(b if b != "site" else "index" for b in built) == pages


def test_the_readme_is_short_and_links_every_page():
    assert len(README.splitlines()) <= 100
    linked = set(re.findall(r"\(docs/([a-z-]+)\.md\)", README))
    assert linked == {p.stem for p in (ROOT / "docs").glob("*.md")} - {"quick-start"}


def test_the_sites_quick_start_is_the_readmes():
    ours = README.split("## Quick start", 1)[1].split("\n## ", 1)[0].strip()
    page = (ROOT / "docs" / "quick-start.md").read_text().split("# Quick start", 1)[1].strip()
    assert page == ours, "docs/quick-start.md repeats the README's quick start word for word"
