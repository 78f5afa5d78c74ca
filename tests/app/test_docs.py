"""Docs are executable: every command has help and is documented in the README."""

from __future__ import annotations

import re
from pathlib import Path

from strata_git.app.cli import COMMANDS, _parser

README = (Path(__file__).parents[2] / "README.md").read_text()


def _commands_section() -> str:
    return README.split("## Commands", 1)[1].split("\n## ", 1)[0]


def test_every_command_is_in_the_readme_commands_section():
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
