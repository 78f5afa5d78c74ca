"""Every hint is a command that works when pasted: each `git strata ...` quoted in an error's hint
parses with the real parser, and each `git config ...` is valid git syntax (KEY VALUE, no `=`)."""

from __future__ import annotations

import ast
import re
import shlex
from pathlib import Path

import pytest

from strata_git.app import cli

PACKAGE = Path(__file__).resolve().parents[2] / "strata_git"
ERRORS = {"StrataError", "Refused", "NotFound", "BadName", "BadMemory", "BadConfig", "GitFailed", "Unavailable",
          "Conflict"}


def _text(node: ast.AST) -> str | None:
    """A string literal or f-string, each placeholder as `x`."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(v.value if isinstance(v, ast.Constant) else "x" for v in node.values)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _text(node.left), _text(node.right)
        return None if left is None or right is None else left + right
    return None


def hints() -> list[tuple[str, str]]:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", "")) in ERRORS:
                args = [*node.args[1:2], *(k.value for k in node.keywords if k.arg == "hint")]
                for arg in args:
                    text = _text(arg)
                    if text:
                        found.append((f"{path.relative_to(PACKAGE.parent)}:{node.lineno}", text))
    return found


QUOTED = [(where, span) for where, text in hints() for span in re.findall(r"`([^`]+)`", text)]


def test_there_are_hints_to_check():
    assert len([s for _, s in QUOTED if s.startswith("git strata ")]) >= 20


@pytest.mark.parametrize("where, span", [q for q in QUOTED if q[1].startswith("git strata ")])
def test_a_quoted_git_strata_command_parses(where: str, span: str):
    words = [w.split("|")[0] for w in shlex.split(span.replace("...", "x"))[2:]]  # a|b: the first choice
    try:
        cli._parser().parse_args(words)
    except SystemExit as e:
        pytest.fail(f"{where}: `{span}` does not parse ({e})")


@pytest.mark.parametrize("where, span", [q for q in QUOTED if q[1].startswith("git config ")])
def test_a_quoted_git_config_command_is_valid_syntax(where: str, span: str):
    for part in span.split("&&"):
        words = shlex.split(part.replace("...", "x"))
        key = next((w for w in words[2:] if not w.startswith("-")), "")
        assert "=" not in key, f"{where}: `{span}` (git config takes KEY VALUE, not KEY=VALUE)"
