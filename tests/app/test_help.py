"""Help the git way and every other way: man pages and `git strata help` made from the one command
table, `-h` on every command (`hook agent` too), and shell completion."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import strata
from strata_git.app import cli, manpage
from strata_git.app.commands import TABLE

ROOT = Path(__file__).resolve().parent.parent.parent


def test_the_shipped_man_pages_are_what_the_command_table_makes():
    folder = ROOT / "man" / "man1"
    shipped = {p.name: p.read_text(encoding="utf-8") for p in folder.glob("git-strata*.1")}
    assert shipped == manpage.pages(), "run `python scripts/man.py` and commit man/man1"
    assert len(shipped) == len(TABLE) + 1


@pytest.mark.parametrize("command", [c.name for c in TABLE])
def test_every_option_the_parser_takes_is_on_the_commands_page(command: str):
    parser = cli._parser(command)
    sub = next(a for a in parser._actions if a.dest == "command").choices[command]
    page = manpage.text(command)
    for action in sub._actions:
        for flag in action.option_strings:
            if flag not in ("-h", "--help"):
                assert flag in page, (command, flag)


def test_help_prints_the_page_and_refuses_an_unknown_command(tmp_path: Path):
    out = strata(tmp_path, "help", "search")
    assert out.returncode == 0 and out.stdout.startswith(b"NAME\n    git-strata-search - ")
    assert b"--rank {merged,cascade}" in out.stdout
    overview = strata(tmp_path, "help").stdout.decode()
    assert all(f"    {c.name} " in overview for c in TABLE)
    bad = strata(tmp_path, "help", "serch")
    assert bad.returncode == 1 and bad.stderr.startswith(b"git-strata: error: no command 'serch'")


@pytest.mark.parametrize("argv", [[c.name, "-h"] for c in TABLE] + [["hook", "agent", "-h"], ["-h"]])
def test_dash_h_works_everywhere(tmp_path: Path, argv: list[str]):
    out = strata(tmp_path, *argv)
    assert out.returncode == 0 and out.stdout.startswith(b"usage: git strata"), (argv, out.stdout[:80])


@pytest.mark.skipif(not shutil.which("man"), reason="no man on this machine")
def test_a_page_renders_with_man(tmp_path: Path):
    page = tmp_path / "git-strata-write.1"
    page.write_text(manpage.roff("write"))
    out = subprocess.run(["man", "-l", str(page)], capture_output=True, env={"MANPAGER": "cat", "MANWIDTH": "80",
                                                                         "PATH": "/usr/bin:/bin"})
    assert out.returncode == 0 and b"NAME" in out.stdout and b"--replace" in out.stdout


def test_bash_completion_completes_commands_and_options(tmp_path: Path):
    script = tmp_path / "c.bash"
    script.write_bytes(strata(tmp_path, "completion", "bash").stdout)
    probe = (f"source {script}\n"
             "COMP_WORDS=(git-strata sea); COMP_CWORD=1; _git_strata_direct; echo \"${COMPREPLY[@]}\"\n"
             "COMP_WORDS=(git strata search --r); COMP_CWORD=3; _git_strata; echo \"${COMPREPLY[@]}\"\n"
             "COMP_WORDS=(git strata help wr); COMP_CWORD=3; _git_strata; echo \"${COMPREPLY[@]}\"\n")
    out = subprocess.run(["bash", "-c", probe], capture_output=True, check=True).stdout.decode().splitlines()
    assert out == ["search", "--rank", "write"]


@pytest.mark.skipif(not shutil.which("zsh"), reason="no zsh on this machine")
def test_zsh_completion_parses(tmp_path: Path):
    script = tmp_path / "_git-strata"
    script.write_bytes(strata(tmp_path, "completion", "zsh").stdout)
    assert subprocess.run(["zsh", "-n", str(script)], capture_output=True).returncode == 0
