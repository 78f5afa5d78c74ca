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

from strata_git import __version__
from strata_git.errors import StrataError

TYPE_CHECKING = False  # (typing and collections are not loaded before a sync's fetch starts: launch.py)
if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable
    from typing import Any, NoReturn


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

    class Formatter(argparse.HelpFormatter):
        """argparse's own, told the terminal's width: left to find it, argparse imports shutil (and
        bz2 and lzma with it, about 4 ms) whenever it checks an argument, in every command."""

        def __init__(self, prog: str, indent_increment: int = 2, max_help_position: int = 24,
                     width: int | None = None) -> None:
            super().__init__(prog, indent_increment, max_help_position, width or _columns() - 2)

    class Parser(argparse.ArgumentParser):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            kwargs.setdefault("formatter_class", Formatter)  # (the commands' parsers are Parsers too)
            super().__init__(*args, **kwargs)

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


def _columns() -> int:
    """The terminal's width as shutil.get_terminal_size() finds it: $COLUMNS, else the terminal's
    own, else 80."""
    try:
        columns = int(os.environ.get("COLUMNS", ""))
    except ValueError:
        columns = 0
    if columns > 0:
        return columns
    stream = sys.__stdout__
    if stream is None:
        return 80
    try:
        return os.get_terminal_size(stream.fileno()).columns or 80
    except (ValueError, OSError):  # closed, or not a terminal
        return 80


def _handler(path: str) -> Callable[..., Any]:
    """The function a dotted path names, its module imported now (the table names handlers lazily)."""
    import importlib

    module, _, name = path.rpartition(".")
    handler: Callable[..., Any] = getattr(importlib.import_module(module), name)
    return handler


def _crash_log() -> str:
    import tempfile
    import traceback

    fd, path = tempfile.mkstemp(prefix="git-strata-crash-", suffix=".log")
    with os.fdopen(fd, "w") as f:
        traceback.print_exc(file=f)
    return path


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:2] == ["hook", "agent"]:
        from strata_git.app import hooks

        return hooks.agent(argv[2:])
    if len(argv) >= 2 and argv[0] == "hook" and not any(a.startswith("-") for a in argv[1:]):
        # The hook path skips argparse: every commit pays for what is imported here.
        from strata_git.app import hooks

        return _run(lambda: hooks.git_hook(argv[1]), as_json=False)
    if argv == ["--version"]:  # what argparse would print, without building the parser
        print(f"git-strata {__version__}")
        return 0
    if argv[:1] == ["sync"]:  # its fetch starts before the command table is even read
        from strata_git.ops.sync import launch

        launch.begin(argv[1:])
    from strata_git.app.commands import BY_NAME

    command = BY_NAME.get(argv[0]) if argv else None
    if command is not None and command.first:
        _handler(command.first)(argv[1:])
    args = _parser(command.name if command else None).parse_args(argv)
    return _run(lambda: int(_handler(args.handler)(args)), as_json=args.json)


def run() -> NoReturn:
    """The `git-strata` command: main(), then the process ends without the interpreter's teardown
    (freeing every module's objects: 10-15 ms of a sync or a hook, bench/sync.py) when nothing is
    left for it to do: its output flushed, no other thread, no exit handler registered. Every file
    and the catalog are written and committed before main() returns."""
    import atexit

    code = main()
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):  # a closed pipe or stream: the usual exit says so as it always did
        sys.exit(code)
    threading = sys.modules.get("threading")
    handlers = getattr(atexit, "_ncallbacks", lambda: 1)()  # (CPython's count; elsewhere the usual exit)
    if handlers == 0 and (threading is None or threading.active_count() == 1):
        os._exit(code)
    sys.exit(code)


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
