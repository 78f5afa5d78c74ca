"""What each `git strata` command does (commands.py names these): call the library once, then print
the result, as JSON with --json, else as render.py's text. Returns the exit code.

Imports stay inside the handlers: only the command that runs pays for its modules.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from strata_git.app import render
from strata_git.core.entries import shown
from strata_git.errors import Refused, StrataError

if TYPE_CHECKING:
    import argparse

    from strata_git.app.vault import Vault


def _emit(args: argparse.Namespace, data: Any, text: str) -> None:
    if args.json:
        import json

        print(json.dumps(data, ensure_ascii=False, indent=2, default=str))
    elif text:
        print(text)


def _vault() -> Vault:
    from strata_git.app.vault import Vault

    return Vault.open(".")


def _vault_or_the_machines() -> Vault:
    """The memory here, or, standing in a code repository, the one this machine names
    (STRATA_MEMORY or `git config strata.memory`): what `--as-of REV` of that code reads."""
    from strata_git.app import where
    from strata_git.app.vault import Vault
    from strata_git.errors import NotFound

    try:
        return Vault.open(".")
    except NotFound:
        found = where.memory(None, os.getcwd())
        if found.path is None or os.path.realpath(found.path) == os.path.realpath(os.getcwd()):
            raise
        return Vault.open(found.path)


def _content(args: argparse.Namespace) -> bytes:
    if args.message is not None and args.file is not None:
        raise StrataError("give the content once: -m or --file, not both", "choose one")
    if args.message is not None:
        message: str = args.message
        return message.encode("utf-8")
    if args.file not in (None, "-"):
        try:
            with open(args.file, "rb") as f:
                return f.read(64 * 1024 * 1024)
        except OSError as e:
            raise StrataError(f"cannot read {args.file}: {e.strerror}", "check the path") from None
    if args.file is None and sys.stdin.isatty():
        raise StrataError("no content given", "pass -m TEXT, --file PATH, or pipe the content on stdin")
    return sys.stdin.buffer.read(64 * 1024 * 1024)


def _when(args: argparse.Namespace) -> int | None:
    import time

    from strata_git.core.rules import parse_when

    return parse_when(args.now, int(time.time())) if args.now else None


def cmd_init(args: argparse.Namespace) -> int:
    from strata_git.app.init import init

    result = init(args.dir)
    _emit(args, result.as_dict(), render.init(result))
    return 0


def cmd_write(args: argparse.Namespace) -> int:
    from strata_git.errors import Refused

    if args.replace and args.append:
        raise Refused("--replace and --append say different things", "give one of them")
    tags = [t.strip() for t in args.tags.split(",") if t.strip()] if args.tags is not None else None
    mode = "replace" if args.replace else "append" if args.append else "create"
    change = _vault().write(args.name, _content(args), title=args.title, tags=tags, type=args.type, via="cli",
                            mode=mode, project=args.project)
    _emit(args, change.as_dict(), render.change(change))
    return 0


def cmd_read(args: argparse.Namespace) -> int:
    if args.as_of is not None:
        vault = _vault_or_the_machines()
        point = vault.as_of(args.as_of, os.getcwd())
        result = vault.read(args.name, as_of=point)
        if args.json:
            _emit(args, {**result.as_dict(), "as_of": point.as_dict()}, "")
        else:
            sys.stdout.buffer.write(result.raw)
            sys.stdout.flush()
        return 0
    if args.summary:
        tier, text = _vault().summary(args.name)
        _emit(args, {"name": args.name, "tier": tier, "summary": text}, text.rstrip("\n"))
        return 0
    result = _vault().read(args.name, via="cli")
    if args.json:
        _emit(args, result.as_dict(), "")
    else:
        sys.stdout.buffer.write(result.raw)
        sys.stdout.flush()
    return 0


def cmd_list(args: argparse.Namespace) -> int:
    vault = _vault() if args.as_of is None else _vault_or_the_machines()
    entries = vault.list(tier=args.tier, type=args.type, project=args.project, as_of=args.as_of, code_dir=os.getcwd())
    _emit(args, [e.as_dict() for e in entries], render.listing(entries))
    return 0


def cmd_status(args: argparse.Namespace) -> int:
    if args.as_of is not None:
        counted = _vault_or_the_machines().status_as_of(args.as_of, os.getcwd())
        _emit(args, counted.as_dict(), render.status_as_of(counted))
        return 0
    status = _vault().status()
    _emit(args, status.as_dict(), render.status(status))
    return 0


def _run_editor(path: str) -> None:
    import subprocess

    from strata_git.gitio.git import run

    editor = run(["var", "GIT_EDITOR"], os.path.dirname(path)).stdout.decode().strip() or "vi"
    code = subprocess.call(["sh", "-c", f'{editor} "$@"', editor, path])
    if code != 0:
        raise Refused(f"the editor ({editor}) exited with status {code}; nothing was committed",
                      "your changes, if any, are still in the file")


def cmd_edit(args: argparse.Namespace) -> int:
    vault = _vault()
    tier, _ = vault.locate(args.name)
    if tier in ("cooled", "archive"):
        asked = not args.recall and sys.stdin.isatty() and sys.stderr.isatty()
        if asked:
            print(f"{args.name} is in {tier}/ (read-only). Bring it back to active/ and edit it? [y/N] ",
                  end="", file=sys.stderr, flush=True)
        if args.recall or (asked and sys.stdin.readline().strip().lower() in ("y", "yes")):
            vault.recall(args.name, via="cli")
    change = vault.edit(args.name, _run_editor, via="cli")
    _emit(args, change.as_dict(), render.change(change))
    return 0


def cmd_forget(args: argparse.Namespace) -> int:
    change = _vault().forget(args.name, via="cli")
    _emit(args, change.as_dict(), render.forgotten(change))
    return 0


def cmd_recall(args: argparse.Namespace) -> int:
    from strata_git.store import meaning

    changes = _vault().recall(args.name, via="cli", match=args.query, mode=args.mode)
    for line in meaning.warnings():
        print(f"warning: {line}", file=sys.stderr)
    _emit(args, [c.as_dict() for c in changes], render.changes(changes))
    return 0


def cmd_search(args: argparse.Namespace) -> int:
    from strata_git.store import meaning

    vault = _vault() if args.as_of is None else _vault_or_the_machines()
    hits = vault.search(args.query, tier=args.tier, type=args.type, limit=args.limit, rank=args.rank,
                        project=args.project, mode=args.mode, as_of=args.as_of, code_dir=os.getcwd())
    for line in meaning.warnings():
        print(f"warning: {line}", file=sys.stderr)
    _emit(args, [h.as_dict() for h in hits], render.search(hits))
    return 0


def cmd_reject(args: argparse.Namespace) -> int:
    change = _vault().reject(args.text, name=args.name, why=args.why, via="cli", project=args.project)
    _emit(args, change.as_dict(), render.change(change))
    return 0


def cmd_context(args: argparse.Namespace) -> int:
    vault = _vault() if args.as_of is None else _vault_or_the_machines()
    ctx = vault.context(args.budget, type=args.type, project=args.project, as_of=args.as_of, code_dir=os.getcwd())
    if not args.json and ctx.over_budget:
        print(f"git-strata: warning: the header and the active rejections alone need {ctx.tokens} tokens, over "
              f"the budget of {ctx.budget}; every rejection is included all the same", file=sys.stderr)
    _emit(args, ctx.as_dict(), ctx.text.rstrip("\n"))
    return 0


def cmd_stats(args: argparse.Namespace) -> int:
    from strata_git.app import stats

    vault = _vault()
    found = vault.stats()
    if not args.chart:
        _emit(args, found.as_dict(), stats.render(found))
        return 0
    from strata_git.app import chart

    weeks = vault.timeline(args.weeks)
    _emit(args, {**found.as_dict(), "weeks": [w.as_dict() for w in weeks]},
          stats.render(found) + "\n\n" + chart.terminal(weeks))
    return 0


def cmd_mcp(args: argparse.Namespace) -> int:
    from strata_git.app import mcpserver, where

    # (a server started where no memory is set still answers: each tool says so, in one line)
    return mcpserver.main(agent=args.agent, path=where.memory(args.memory, ".").path)


def _memory(explicit: str | None) -> str:
    """The memory repository for what runs in a code project (where.memory), refused when none is set
    (the hint never proposes making the code project a memory repository)."""
    from strata_git.app import where
    from strata_git.errors import NotFound

    found = where.memory(explicit, ".")
    if found.path is None:
        raise NotFound(f"no memory repository is set on this machine, and {os.path.abspath('.')} is not one",
                       f"give one with --memory PATH, or once for every project: `git config --global "
                       f"{where.SETTING} PATH` (`git strata init PATH` makes one)")
    return found.path


def cmd_archive(args: argparse.Namespace) -> int:
    r = _vault().archive(dry_run=args.dry_run)
    _emit(args, r.as_dict(), render.archive(r))
    return 0


def cmd_sync(args: argparse.Namespace) -> int:
    from strata_git.app.vault import Vault
    from strata_git.ops.sync import early

    say = None
    if not args.json and sys.stderr.isatty():
        def say(text: str) -> None:
            print(f"{text}...", file=sys.stderr)
    try:
        vault = Vault.open(".", early.found("."))  # (the repository the early fetch found, if it started)
        r = vault.sync(args.remote, dry_run=args.dry_run, progress=say)
    finally:
        early.stop()  # (the fetch the command line started, if a round refused before taking it)
    weakened = [line for line in vault.config_now() if line not in vault.cfg.ignored]
    for line in weakened:  # a peer's change to the shared config that this clone does not apply
        print(f"warning: {line}", file=sys.stderr)
    _emit(args, {**r.as_dict(), "config_ignored": weakened}, render.sync(r))
    return 1 if any(state.startswith("failed") for state in r.mirrors.values()) else 0


def cmd_resolve(args: argparse.Namespace) -> int:
    c = _vault().resolve(args.name, args.keep, via="cli")
    _emit(args, c.as_dict(), render.resolved(c))
    return 0


def cmd_reindex(args: argparse.Namespace) -> int:
    def say(done: int, of: int) -> None:  # on a terminal: memories embedded so far
        if done == of or done % 25 == 0:
            print(f"\rembedding {done}/{of} memories", end="\n" if done == of else "", file=sys.stderr, flush=True)

    done = _vault().reindex(say if sys.stderr.isatty() and not args.json else None)
    _emit(args, done.as_dict(), render.reindex(done))
    return 0


def cmd_clone(args: argparse.Namespace) -> int:
    from strata_git.ops import clone

    say = counted = None
    if not args.json and sys.stderr.isatty():
        def say(text: str) -> None:
            print(f"{text}...", file=sys.stderr, flush=True)

        def counted(done: int, total: int) -> None:
            print(f"\rindexed {done}/{total} archived memories", end="\n" if done == total else "",
                  file=sys.stderr, flush=True)
    done = clone.clone(args.url, args.dir, say, counted)
    _emit(args, done.as_dict(), render.cloned(done))
    return 0


def cmd_index(args: argparse.Namespace) -> int:
    path, text = _vault().index()
    _emit(args, {"path": path, "content": text}, text.rstrip("\n"))
    return 0


def cmd_janitor(args: argparse.Namespace) -> int:
    result = _vault().janitor(dry_run=args.dry_run, now=_when(args))
    _emit(args, result.as_dict(), render.janitor(result, args.dry_run))
    return 0


def cmd_serve(args: argparse.Namespace) -> int:
    from strata_git.app import serve

    vault = _vault()
    if args.stop:
        pid = serve.stop(vault.repo)
        _emit(args, {"stopped": pid}, f"stopped the daemon (pid {pid})" if pid else "no daemon was running")
        return 0
    say = (lambda line: print(line, file=sys.stderr, flush=True)) if not args.json else (lambda _: None)
    cycles = vault.serve(serve.parse_interval(args.interval), live=args.live, once=args.once, say=say,
                         sync=args.sync)
    _emit(args, {"cycles": cycles}, f"stopped after {cycles} cycle(s)")
    return 0


def cmd_log(args: argparse.Namespace) -> int:
    moves = _vault().log(args.name, args.limit)
    _emit(args, [m.as_dict() for m in moves], render.log(moves))
    return 0


def cmd_history(args: argparse.Namespace) -> int:
    found = _vault().history(args.name, limit=args.limit, diff=args.diff)
    _emit(args, [v.as_dict() for v in found], render.history(found))
    return 0


def cmd_ui(args: argparse.Namespace) -> int:
    import json
    import signal
    import webbrowser

    from strata_git.app import ui

    def stop(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, stop)  # (before the URL: whoever reads it may stop us at once)
    server, url = ui.start(_vault(), args.port)
    try:
        print(json.dumps({"url": url}) if args.json else url, flush=True)  # the first line, at once
        if not args.json:
            print("serving a read-only page on 127.0.0.1; Ctrl-C stops it", file=sys.stderr, flush=True)
        if not args.no_browser:
            try:
                webbrowser.open(url)
            except webbrowser.Error:
                pass  # no browser here: the URL printed above is the way in
        server.serve_forever(poll_interval=0.2)
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


def cmd_why(args: argparse.Namespace) -> int:
    info = _vault().why(args.name, now=_when(args))
    _emit(args, info.as_dict(), render.why(info))
    return 0


def _scan_progress() -> Callable[[int, int], None]:
    """Objects read so far, on one stderr line, once a scan has run for a second."""
    import time

    start = time.monotonic()

    def show(done: int, total: int) -> None:
        if time.monotonic() - start > 1:
            print(f"\rscanning history: {done}/{total} objects", end="\n" if done >= total else "",
                  file=sys.stderr, flush=True)
    return show


def cmd_scan(args: argparse.Namespace) -> int:
    vault = _vault()
    if args.allow:
        added = vault.allow_secret(args.allow)
        _emit(args, {"allowed": added, "already": [a for a in args.allow if a not in added]}, render.allowed(added))
        return 0
    report = vault.scan(progress=_scan_progress() if not args.json and sys.stderr.isatty() else None)
    _emit(args, report.as_dict(), render.scan(report))
    return 1 if report.findings else 0


def cmd_install_hooks(args: argparse.Namespace) -> int:
    from strata_git.ops import hookshims

    done, note = hookshims.install(_vault().repo)
    _emit(args, {"hooks": done, "note": note}, render.hooks(done, note))
    return 0


def cmd_uninstall_hooks(args: argparse.Namespace) -> int:
    from strata_git.ops import hookshims

    done = hookshims.uninstall(_vault().repo)
    _emit(args, done, render.hooks(done))
    return 0


def cmd_capture(args: argparse.Namespace) -> int:
    from strata_git.core.secrets import redact
    from strata_git.ops import capture

    vault = _vault()
    if args.workdir and capture.opted_out(args.workdir):
        text = f"capture is off for {shown(args.workdir)} (its `git config strata.capture` is false): nothing written"
        if args.log:
            from strata_git.app import agents

            agents.log(vault.repo.root, "capture", text)
        _emit(args, {"captured": False, "workdir": args.workdir, "why": "strata.capture is false"}, text)
        return 0
    if args.project is None and args.workdir:
        from strata_git.app import where

        args.project = where.project(args.workdir)
    try:
        r = capture.capture(vault.repo, vault.cfg, args.transcript, args.format, args.session, dry_run=args.dry_run,
                            project=args.project)
    except Exception as e:
        if args.log:
            from strata_git.app import agents

            agents.log(vault.repo.root, "capture", redact(f"{shown(args.transcript)}: made no progress: "
                                                           f"{getattr(e, 'message', None) or type(e).__name__}"))
        raise
    text = render.captured(r, args.transcript)
    if args.log:
        from strata_git.app import agents

        agents.log(vault.repo.root, "capture", text.replace("\n", "; "))
    _emit(args, r.as_dict(), text)
    return 0


def cmd_agent(args: argparse.Namespace) -> int:
    from strata_git.app import install
    from strata_git.app.vault import Vault

    home, project = os.path.expanduser("~"), os.path.abspath(args.project or ".")
    if args.action == "status":
        found = install.status(args.harness, project, home)
        _emit(args, found.as_dict(), render.agent_status(found))
        return 0
    if args.harness is None:
        raise StrataError(f"agent {args.action} needs a harness: claude-code or codex",
                          f"git strata agent {args.action} claude-code")
    noted, notes = "", []
    if args.action == "install":
        vault = Vault.open(_memory(args.memory))
        memory = vault.repo.root
        noted = capture_noter(vault, args.summarizer) if args.summarizer else ""
        events = tuple(e for e in install.EVENTS[args.harness]
                       if vault.cfg.agent_prompt_hints or e != "UserPromptSubmit")
        if args.scope == "project":  # the project's files name no path: this machine's setting finds the memory
            notes = install.portable(memory, project, args.dry_run)
        changes = install.install(args.harness, args.scope, memory if args.scope == "user" else None, project, home,
                                  args.dry_run, events)
        if args.summarizer and not args.dry_run:
            vault.set_notetaker(args.summarizer)
    else:  # uninstall needs no memory repository: it removes whatever entries git-strata added
        memory = args.memory or ""
        changes = install.uninstall(args.harness, args.scope, project, home, args.dry_run)
    diff = install.diff(changes) if args.dry_run else ""
    _emit(args, {"action": args.action, "harness": args.harness, "scope": args.scope, "memory": memory,
                 "dry_run": args.dry_run, "files": [c.path for c in changes], "diff": diff, "notes": notes,
                 "summarizer": args.summarizer if args.action == "install" else None},
          render.agent_files(changes, args.action, args.harness, args.scope, diff, args.dry_run)
          + "".join(f"\nnote: {n}" for n in notes) + (f"\nnote-taker: {noted}" if noted else ""))
    return 0


def capture_noter(vault: Vault, kind: str) -> str:
    """What `--summarizer KIND` will mean, refused when it cannot work here (one line)."""
    import shutil

    from strata_git.errors import Refused

    if kind in ("claude", "codex") and not shutil.which(kind):
        raise Refused(f"the {kind} CLI is not on PATH, so it cannot take capture's notes; nothing was changed",
                      f"install {kind}, or choose --summarizer rules")
    if kind == "command" and not vault.repo.git("config", "--get", "strata.captureCommand", check=False).strip():
        raise Refused("--summarizer command needs a command; nothing was changed",
                      'set it first: git config strata.captureCommand "/path/to/notetaker --flags"')
    return {"claude": "`claude -p` with a small model (haiku) reads each captured stretch",
            "codex": "`codex exec` reads each captured stretch",
            "command": "the command in strata.captureCommand reads each captured stretch with the note-taker prompt",
            "rules": "the rules alone"}[kind]


def cmd_hook(args: argparse.Namespace) -> int:
    """`git strata hook HOOK --json` (the shims take the faster path in cli.main)."""
    from strata_git.app import hooks

    return hooks.git_hook(args.hook_name, args.json)


def cmd_help(args: argparse.Namespace) -> int:
    from strata_git.app import manpage

    page = manpage.text(args.topic)
    _emit(args, {"command": args.topic, "page": page}, page.rstrip("\n"))
    return 0


def cmd_completion(args: argparse.Namespace) -> int:
    from strata_git.app import manpage

    script = manpage.completion(args.shell)
    _emit(args, {"shell": args.shell, "script": script}, script.rstrip("\n"))
    return 0
