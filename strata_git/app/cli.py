"""`git strata ...`: parse the arguments, dispatch to the command's handler, map errors to exit codes.

Each command (its help, arguments and handler) is declared once, in commands.py; handlers.py calls
the library and render.py turns results into text. The hook path (`git strata hook NAME`, on every
commit) skips argparse and the command table.

Exit codes: 0 success, 1 refused or failed (a one-line error and a hint),
2 bad command-line usage, 3 unexpected error (a bug: the traceback goes to a log
file), 130 interrupted. With --json, results and errors are JSON on stdout.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NoReturn

from strata_git import __version__
from strata_git.errors import StrataError

if TYPE_CHECKING:
    import argparse


def __getattr__(name: str) -> Any:
    """COMMANDS (name -> help), read from the command table only when asked: the hook path never is."""
    if name == "COMMANDS":
        from strata_git.app.commands import TABLE

        return {c.name: c.help for c in TABLE}
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _parser(only: str | None = None) -> argparse.ArgumentParser:
    """The command line parser, built from the command table; with `only`, the other commands'
    parsers are not built (building all of them costs ~12 ms)."""
    import argparse

    from strata_git.app.commands import JSON, TABLE

    class Parser(argparse.ArgumentParser):
        def error(self, message: str) -> NoReturn:  # usage errors: exit 2, as JSON when asked
            if "--json" in sys.argv:
                import json

                print(json.dumps({"ok": False, "error": message, "hint": f"see `{self.prog} -h`", "kind": "usage"}))
                raise SystemExit(2)
            super().error(message)

    common = Parser(add_help=False)
    common.add_argument(*JSON.flags, **JSON.options)
    parser = Parser(prog="git strata", description="An AI agent's memory in a git repository: "
                                     "active/, cooled/ and archive/ strata of Markdown files.")
    parser.add_argument("--version", action="version", version=f"git-strata {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for command in TABLE:
        if only is not None and command.name != only:
            continue
        p = sub.add_parser(command.name, parents=[common], help=command.help, description=command.help,
                           prog=f"git strata {command.name}")
        p.set_defaults(handler=command.handler)
        for a in command.args:
            p.add_argument(*a.flags, **a.options)
    return parser


def _handler(path: str) -> Callable[[argparse.Namespace], int]:
    """The function a dotted path names, its module imported now (the table names handlers lazily)."""
    import importlib

    module, _, name = path.rpartition(".")
    handler: Callable[[argparse.Namespace], int] = getattr(importlib.import_module(module), name)
    return handler


def _crash_log() -> str:
    import tempfile
    import traceback

    fd, path = tempfile.mkstemp(prefix="git-strata-crash-", suffix=".log")
    with os.fdopen(fd, "w") as f:
        traceback.print_exc(file=f)
    return path


def run_agent_hook(args: list[str]) -> int:
    """`git strata hook agent EVENT [--harness H] [--memory PATH]`: the harness's JSON on stdin, the
    answer on stdout, exit 0 always (see agents.py: every hook fails open, bad arguments too)."""
    from strata_git.app import agents

    event = args[0] if args else ""
    options = dict(zip(args[1::2], args[2::2], strict=False))
    harness = options.get("--harness", "claude-code")
    stdin = sys.stdin.buffer if sys.stdin is not None else None  # read within the hook's deadline
    print(agents.hook(event, harness if harness in agents.HARNESSES else "claude-code", options.get("--memory"), stdin))
    return 0


def run_hook(hook: str, as_json: bool = False) -> int:
    """What the hook shims call; kept off argparse and heavy imports to keep commits fast."""
    from strata_git.app import hooks
    from strata_git.core import config
    from strata_git.core.contract import HOOKS
    from strata_git.gitio.git import discover

    if hook not in HOOKS:
        raise StrataError(f"unknown hook {hook!r}", f"use one of: {', '.join(HOOKS)}")
    if os.environ.get("STRATA_INTERNAL"):
        return 0
    repo = discover(".")
    has_config = os.path.isfile(os.path.join(repo.root, config.CONFIG_PATH))
    if not has_config and hook != "pre-commit":
        return 0  # a checkout without git-strata (another branch); the shim was installed here, so guard anyway
    try:
        cfg = config.load(repo.root, repo.state_dir()) if has_config else config.Config()
        problems = hooks.run(repo, cfg, hook)
    except StrataError as e:
        if hook == "pre-commit":
            raise
        print(f"git-strata: warning: {hook}: {e.message}", file=sys.stderr)
        return 0
    if as_json:
        import json

        print(json.dumps({"hook": hook, "ok": not problems, "problems": problems}, ensure_ascii=False))
    for problem in problems:
        print(f"git-strata: refused: {problem}", file=sys.stderr)
    if problems:
        print(f"git-strata: commit refused ({len(problems)} problem{'s' * (len(problems) > 1)}); "
              "nothing was committed", file=sys.stderr)
        return 1
    return 0


def cmd_hook(args: argparse.Namespace) -> int:
    """`git strata hook HOOK --json` (the shims take the faster path in main)."""
    return run_hook(args.hook_name, args.json)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:2] == ["hook", "agent"]:
        return run_agent_hook(argv[2:])
    if len(argv) >= 2 and argv[0] == "hook" and not any(a.startswith("-") for a in argv[1:]):
        # The hook path skips argparse: every commit pays for what is imported here.
        return _run(lambda: run_hook(argv[1]), as_json=False)
    if argv == ["--version"]:  # what argparse would print, without building the parser
        print(f"git-strata {__version__}")
        return 0
    from strata_git.app.commands import BY_NAME

    args = _parser(argv[0] if argv and argv[0] in BY_NAME else None).parse_args(argv)
    return _run(lambda: _handler(args.handler)(args), as_json=args.json)


def _fail(as_json: bool, kind: str, message: str, hint: str) -> None:
    from strata_git.core.secrets import redact

    message, hint = redact(message), redact(hint)  # an error never repeats a secret it was given
    if as_json:
        import json

        print(json.dumps({"ok": False, "error": message, "hint": hint, "kind": kind}, ensure_ascii=False))
    else:
        print(f"git-strata: error: {message}", file=sys.stderr)
        if hint:
            print(f"hint: {hint}", file=sys.stderr)


def _run(call: Callable[[], int], as_json: bool) -> int:
    try:
        return _call(call, as_json)
    finally:
        from strata_git.core import untrusted

        for line in untrusted.drain():  # values from history or another machine that were skipped
            from strata_git.core.entries import shown
            from strata_git.core.secrets import redact

            print(f"git-strata: warning: {shown(redact(line))}", file=sys.stderr)


def _call(call: Callable[[], int], as_json: bool) -> int:
    try:
        return call()
    except StrataError as e:
        _fail(as_json, type(e).__name__, e.message, e.hint)
        return 1
    except KeyboardInterrupt:
        print("git-strata: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        sys.stderr.close()
        return 0
    except OSError as e:  # the machine's doing (disk full, permissions), not a bug
        where = f" ({e.filename})" if e.filename else ""
        _fail(as_json, "OSError", f"{e.strerror or e}{where}", "check free space and permissions, then try again")
        return 1
    except Exception as e:  # noqa: BLE001 - a bug: say so plainly and keep the details
        _fail(as_json, "unexpected", f"unexpected error: {type(e).__name__}: {e}", f"details in {_crash_log()}")
        return 3
