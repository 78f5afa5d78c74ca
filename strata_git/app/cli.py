"""`git strata ...`: parse arguments, call the library, render the result.

Exit codes: 0 success, 1 refused or failed (a one-line error and a hint),
2 bad command-line usage, 3 unexpected error (a bug: the traceback goes to a log
file), 130 interrupted. With --json, results and errors are JSON on stdout.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from strata_git import __version__
from strata_git.errors import Refused, StrataError

if TYPE_CHECKING:
    import argparse

COMMANDS: dict[str, str] = {
    "init": "make a folder or an existing git repository a memory repository",
    "write": "create or replace an active memory (from -m, --file or stdin) in one commit",
    "read": "print a memory from whichever tier holds it (records an access)",
    "list": "list memories with tier, type, title and tags",
    "status": "counts and sizes per tier, hooks, config in force, problems",
    "edit": "open an active memory in your editor and commit the result",
    "forget": "remove an active memory in one commit (history keeps it)",
    "recall": "bring cooled or archived memories (by name, or the best match for a query) back to active/",
    "search": "search all tiers (active, cooled, and archive through the shadow index) for any text",
    "archive": "push archived content to the archive remote, verify it there, then prune it locally",
    "reindex": "upgrade old shadow records, rebuild the shadow index from history and the search index from disk",
    "sync": "fetch, merge by memory name (never losing an edit) and push: memory, access and archive records",
    "resolve": "close a conflict a sync left: --keep current, copy or both",
    "clone": "clone a memory repository without its archived content (archive stays searchable)",
    "index": "regenerate index.md (the router) and print it",
    "install-hooks": "install git-strata's hook shims (keeping your own hooks)",
    "uninstall-hooks": "remove git-strata's hook shims (restoring your own hooks)",
    "janitor": "plan the tier migrations the rules call for, and apply them as one commit (--dry-run: show only)",
    "log": "list the janitor's migrations with their rules and evidence",
    "serve": "run the janitor on a schedule (first cycle dry unless --live); --stop stops it",
    "why": "say where a memory is, since when, by which rule, and when it moves next",
    "scan": "find secrets already in history (every ref, commit messages too); exit 1 if any; "
            "--allow FINGERPRINT allows a false positive",
    "reject": "record a rejection (\"we said no to X\") in one commit: never cooled, always in the boot context",
    "context": "print the boot context an agent loads after a restart: rejections, decisions, recent memories",
    "stats": "memories and bytes per tier, migrations per week, reads, index freshness, tokens and bytes saved",
    "mcp": "run the MCP server on stdio (for agents: see the README for registering it)",
    "hook": "run a hook's work (called by the installed shims; `hook agent EVENT` by agent harnesses)",
    "capture": "turn an agent transcript (Claude Code or Codex JSONL) into typed memories, "
               "from where the last capture stopped",
    "agent": "install or uninstall the Claude Code / Codex hooks and MCP server entry (`agent install claude-code`)",
}


def _emit(args: argparse.Namespace, data: Any, text: str) -> None:
    if args.json:
        import json

        print(json.dumps(data, ensure_ascii=False, indent=2, default=str))
    elif text:
        print(text)


def _vault():
    from strata_git.app.vault import Vault

    return Vault.open(".")


def _content(args: argparse.Namespace) -> bytes:
    if args.message is not None and args.file is not None:
        raise StrataError("give the content once: -m or --file, not both", "choose one")
    if args.message is not None:
        return args.message.encode("utf-8")
    if args.file not in (None, "-"):
        try:
            with open(args.file, "rb") as f:
                return f.read(64 * 1024 * 1024)
        except OSError as e:
            raise StrataError(f"cannot read {args.file}: {e.strerror}", "check the path") from None
    if args.file is None and sys.stdin.isatty():
        raise StrataError("no content given", "pass -m TEXT, --file PATH, or pipe the content on stdin")
    return sys.stdin.buffer.read(64 * 1024 * 1024)


def cmd_init(args: argparse.Namespace) -> int:
    from strata_git.app.init import init

    result = init(args.dir)
    if not result.changed:
        text = f"{result.root} is already a memory repository; nothing changed"
    else:
        made = ", ".join(result.created) or "no files"
        text = f"initialized memory repository in {result.root}\ncreated: {made}\nhooks: " + \
            ", ".join(f"{k} {v}" for k, v in result.hooks.items())
    _emit(args, result.as_dict(), "\n".join([text, *(f"note: {n}" for n in result.notes)]))
    return 0


def _change_text(change) -> str:
    if change.commit is None:
        return f"{shown(change.path)}: {change.detail}, nothing committed"
    return f"{shown(change.path)}: {change.detail} (commit {change.commit[:12]})"


def cmd_write(args: argparse.Namespace) -> int:
    tags = [t.strip() for t in args.tags.split(",") if t.strip()] if args.tags is not None else None
    change = _vault().write(args.name, _content(args), title=args.title, tags=tags, type=args.type, via="cli")
    _emit(args, change.as_dict(), _change_text(change))
    return 0


def cmd_read(args: argparse.Namespace) -> int:
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


def shown(text: str) -> str:
    """A name printed exactly and safely (entries.shown; imported here, off the commit hook's path)."""
    from strata_git.core.entries import shown as escaped

    return escaped(text)


def cmd_list(args: argparse.Namespace) -> int:
    entries = _vault().list(tier=args.tier, type=args.type)
    rows = [f"{e.tier:<8} {shown(e.as_dict()['name']):<32} {e.type:<10} {e.title}"
            + (f"  [{', '.join(e.tags)}]" if e.tags else "") + (f"  INVALID: {e.problem}" if e.problem else "")
            for e in entries]
    _emit(args, [e.as_dict() for e in entries], "\n".join(rows) or "no memories")
    return 0


def cmd_status(args: argparse.Namespace) -> int:
    status = _vault().status()
    lines = [f"repository: {status.root} (branch {status.branch}, HEAD {(status.head or 'none')[:12]})"]
    lines += [f"{tier:<8} {v['memories']:>6} memories {v['bytes']:>10} bytes" for tier, v in status.tiers.items()]
    lines.append("hooks: " + ", ".join(f"{k} {v}" for k, v in status.hooks.items()))
    lines.append(f"config: {status.config['source']} (`git strata status --json` shows every value)")
    lines.append(f"daemon: running (pid {status.daemon})" if status.daemon else "daemon: not running")
    a = status.archive
    lines.append(f"archive: {'pruned here' if a['pruned'] else 'all on disk'}, {a['held_blobs']} of "
                 f"{a['memories']} archived blobs held here; last verified on a remote: "
                 f"{a['last_verified'] or 'never'}; shadow index at {(a['shadow_commit'] or 'none')[:12]}")
    if a["memories"]:
        lines.append("archive indexed from: " + ", ".join(f"{n} {k}{'s' if n != 1 else ''}"
                                                          for k, n in a["indexed_from"].items() if n)
                     + ("" if a["indexed_from"]["record"] == a["memories"] else
                        " (`git strata reindex` upgrades the others to full records)"))
    files = ", ".join(f"{name} {size:,} bytes" for name, size in status.derived.items())
    lines.append(f".git/strata (per-clone state, all rebuildable but machine-id): {files}")
    sync = status.sync
    lines.append(f"sync: {sync['remote']}, " + (f"{sync['ahead']} ahead, {sync['behind']} behind as of the last fetch"
                                                if sync["ahead"] is not None else "never synced"))
    lines += [f"conflict: {shown(c['name'])} has another version beside it, {shown(c['copy'])}"
              + (f" (from {shown(str(c['from']))})" if c["from"] else "")
              + (f"; finish with `git strata resolve {shown(c['copy'])} --keep current|copy|both`" if c["memory"] else
                 "; merge the two by hand, delete the copy and commit") for c in status.conflicts]
    lines += [f"uncommitted: {shown(p)}" for p in status.uncommitted]
    lines += [f"problem: {shown(p)}" for p in status.problems]
    _emit(args, status.as_dict(), "\n".join(lines))
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
    _emit(args, change.as_dict(), _change_text(change))
    return 0


def cmd_forget(args: argparse.Namespace) -> int:
    change = _vault().forget(args.name, via="cli")
    _emit(args, change.as_dict(), f"forgot {change.path} (commit {change.commit[:12]}); {change.detail}")
    return 0


def cmd_recall(args: argparse.Namespace) -> int:
    changes = _vault().recall(args.name, via="cli", match=args.query)
    _emit(args, [c.as_dict() for c in changes], "\n".join(_change_text(c) for c in changes))
    return 0


def cmd_search(args: argparse.Namespace) -> int:
    from strata_git.core.entries import clean
    from strata_git.store import summary

    hits = _vault().search(args.query, tier=args.tier, type=args.type, limit=args.limit, rank=args.rank)
    lines = []
    for h in hits:
        where = f" · {h.commit[:12]} blob {h.blob[:12]}" if h.tier == "archive" and h.commit else ""
        lines += [f"{h.tier:7} {shown(h.name)} · {h.title} · {h.type} · score {h.score:.2f}{where}",
                  f"        {h.snippet}"]
        gist = summary.gist(h.summary)
        lines += [f"        summary: {clean(gist)[:160]}"] if gist else []
    _emit(args, [h.as_dict() for h in hits], "\n".join(lines) or "no matches")
    return 0


def cmd_reject(args: argparse.Namespace) -> int:
    change = _vault().reject(args.text, name=args.name, why=args.why, via="cli")
    _emit(args, change.as_dict(), _change_text(change))
    return 0


def cmd_context(args: argparse.Namespace) -> int:
    ctx = _vault().context(args.budget, type=args.type)
    if not args.json and ctx.over_budget:
        print(f"git-strata: warning: the header and the active rejections alone need {ctx.tokens} tokens, over "
              f"the budget of {ctx.budget}; every rejection is included all the same", file=sys.stderr)
    _emit(args, ctx.as_dict(), ctx.text.rstrip("\n"))
    return 0


def cmd_stats(args: argparse.Namespace) -> int:
    from strata_git.app import stats

    found = _vault().stats()
    _emit(args, found, stats.render(found))
    return 0


def cmd_mcp(args: argparse.Namespace) -> int:
    from strata_git.app import mcpserver

    return mcpserver.main(agent=args.agent, path=args.memory or ".")


def cmd_archive(args: argparse.Namespace) -> int:
    r = _vault().archive(dry_run=args.dry_run)
    mib = 1024 * 1024
    if r.dry_run:
        text = (f"would push to {r.remote} ({r.url}), verify and prune {r.pruned} blob(s), "
                f"{r.pruned_bytes / mib:.2f} MiB; {r.missing_before} already pruned")
    else:
        text = (f"pushed {r.pushed[:12]} to {r.remote} ({r.url}); verified {r.verified} blob(s) there"
                f"{f' (record {r.record[:12]})' if r.record else ''}; pruned {r.pruned} "
                f"({r.pruned_bytes / mib:.2f} MiB); objects {r.git_bytes_before / mib:.2f} -> "
                f"{r.git_bytes_after / mib:.2f} MiB")
    _emit(args, r.as_dict(), text)
    return 0


def cmd_sync(args: argparse.Namespace) -> int:
    say = None
    if not args.json and sys.stderr.isatty():
        def say(text: str) -> None:
            print(f"{text}...", file=sys.stderr)
    vault = _vault()
    r = vault.sync(args.remote, dry_run=args.dry_run, progress=say)
    weakened = [line for line in vault.config_now() if line not in vault.cfg.ignored]
    for line in weakened:  # a peer's change to the shared config that this clone does not apply
        print(f"warning: {line}", file=sys.stderr)
    would = "would " if r.dry_run else ""
    lines = []
    if r.committed:
        lines.append(f"{would}commit {len(r.committed)} local edit(s) first: {', '.join(r.committed[:5])}"
                     + (" ..." if len(r.committed) > 5 else ""))
    lines += [f"left uncommitted: {item['path']}: {item['reason']}" for item in r.left]
    if r.rewound:
        lines.append(f"{r.remote}/{r.branch} had gone back {r.rewound} commit(s) (a force-push?): "
                     f"{would}push them again from here")
    lines.append(f"{r.integrated} with {r.remote}/{r.branch} ({r.incoming} commit(s) in, {r.outgoing} out)"
                 if r.integrated != "up to date" else f"up to date with {r.remote}/{r.branch} ({r.outgoing} out)")
    for d in r.decisions:
        if d["beside"] and d["beside"].startswith("active/") and d["beside"].endswith(".md"):
            lines.append(f"conflict: {shown(d['name'])}: {d['how']}: {shown(d['beside'])}; "
                         f"finish with `git strata resolve {shown(d['beside'][len('active/'):-3])} "
                         "--keep current|copy|both`")
        elif d["beside"]:
            lines.append(f"conflict: {shown(d['name'])}: {d['how']}: {shown(d['beside'])}; merge the two by hand, "
                         "delete the copy and commit")
        else:
            lines.append(f"merged: {shown(d['name'])}: {d['how']}")
    lines.append(("pushed" if r.pushed else "nothing to push") + f"; HEAD {(r.head or 'none')[:12]}"
                 if not r.dry_run else "dry run: nothing was committed, merged or pushed")
    lines += [f"mirror {name}: {state}" for name, state in r.mirrors.items()]
    _emit(args, {**r.as_dict(), "config_ignored": weakened}, "\n".join(lines))
    return 1 if any(state.startswith("failed") for state in r.mirrors.values()) else 0


def cmd_resolve(args: argparse.Namespace) -> int:
    c = _vault().resolve(args.name, args.keep, via="cli")
    _emit(args, c.as_dict(), f"{c.detail} (commit {(c.commit or '')[:12]})")
    return 0


def cmd_reindex(args: argparse.Namespace) -> int:
    from strata_git.core import names

    done = _vault().reindex()
    text = (f"shadow index: {done['archived']} archived memories; search index: "
            f"{done['active_and_cooled']} active and cooled memories")
    if done["upgraded"]:
        text += f"\nupgraded {done['upgraded']} archived memories to full shadow records"
    if done["not_upgraded"]:
        shown = ", ".join(names.display(n) for n in done["not_upgraded"][:5])
        more = f" and {len(done['not_upgraded']) - 5} more" if len(done["not_upgraded"]) > 5 else ""
        text += (f"\ncould not upgrade {len(done['not_upgraded'])} ({shown}{more}): "
                 f"{done['unreachable'] or 'their content is not here'}; search keeps their old rows, "
                 "run `git strata reindex` again when the archive remote is reachable")
    _emit(args, done, text)
    return 0


def cmd_clone(args: argparse.Namespace) -> int:
    from strata_git.ops import clone

    done = clone.clone(args.url, args.dir)
    text = (f"cloned into {done.root}: {done.archived} archived memories searchable, "
            f"{done.archived - done.archived_local} of them not downloaded")
    _emit(args, done.as_dict(), text + (f"\nwarning: {done.warning}" if done.warning else ""))
    return 0


def cmd_index(args: argparse.Namespace) -> int:
    path, text = _vault().index()
    _emit(args, {"path": path, "content": text}, text.rstrip("\n"))
    return 0


def _when(args: argparse.Namespace) -> int | None:
    import time

    from strata_git.core.rules import parse_when

    return parse_when(args.now, int(time.time())) if args.now else None


def _date(stamp: int) -> str:
    from strata_git.core.contract import day

    return day(stamp)


def cmd_janitor(args: argparse.Namespace) -> int:
    result = _vault().janitor(dry_run=args.dry_run, now=_when(args))
    plan = result.plan
    lines = [f"{'plan' if args.dry_run else 'janitor'}: {plan.summary()}"
             + (f" (commit {result.commit[:12]})" if result.commit else "")]
    for m in plan.moves:
        src, dst = m.paths
        read = f", last read {_date(m.last_read)}" if m.last_read else ""
        lines.append(f"  {m.action:<8} {shown(src)} -> {shown(dst)}  [{m.rule}; age {m.age_days} d, "
                     f"{m.reads} read(s){read}]")
    lines += [f"  skipped  {shown(s.name[:-3] if s.name.endswith('.md') else s.name)}: {shown(s.reason)}"
              for s in plan.skipped]
    if result.recovered not in ("clean", "not checked (dry run)"):
        lines.append(f"note: an interrupted cycle was {result.recovered}")
    if result.archive and "error" in result.archive:
        lines.append(f"archive: not pruned: {result.archive['error']} ({result.archive['hint']})")
    elif result.archive:
        lines.append(f"archive: verified {result.archive['verified']} blob(s) on {result.archive['remote']}, "
                     f"pruned {result.archive['pruned']}")
    _emit(args, result.as_dict(), "\n".join(lines))
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
    lines = [f"{m['date']} {m['commit'][:12]} {shown(m['action']):<8} {shown(m['from'])} -> {shown(m['to'])}  "
             f"[{shown(str(m['rule']))}; "
             f"age {m['age_days']} d, {m['reads']} read(s)]" for m in moves]
    _emit(args, moves, "\n".join(lines) or "no migrations yet")
    return 0


def cmd_why(args: argparse.Namespace) -> int:
    info = _vault().why(args.name, now=_when(args))
    moved = info["moved_by"]
    lines = [f"{shown(info['name'])}: in {info['tier']}/ since {info['in_tier_since']}"
             + (f" ({shown(moved['action'])} by {shown(str(moved['rule']))}, commit {moved['commit'][:12]})"
                if moved else ""),
             f"last changed {info['last_changed']} ({info['age_days']} days ago); "
             f"{info['reads_last_90_days']} read(s) in 90 days, last {info['last_read'] or 'never'}",
             f"next: {info['next']}"]
    if info["would_move_now"]:
        lines.append(f"the janitor would now {info['would_move_now']['action']} it ({info['would_move_now']['rule']})")
    _emit(args, info, "\n".join(lines))
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


def _scan_text(r) -> str:
    lines = []
    for f in r.findings:
        where = {"file": f"{f.path}:{f.line}", "file name": f"file name {f.path}",
                 "commit message": f"commit message:{f.line}"}.get(f.kind, f"{f.kind} {f.path}:{f.line} on {f.ref}")
        lines.append(f"{f.commit[:12]} {shown(where)}: {f.what} (rule {f.rule}), fingerprint {f.fingerprint}")
    skipped = [f"{n} {why}" for n, why in ((r.large, f"over {r.max_bytes:,} bytes"), (r.binary, "binary"),
                                          (r.missing, "not in this clone (never fetched)")) if n]
    found = len(r.findings)
    lines.append(f"{found or 'no'} secret{'s' * (found != 1)} found in {r.commits} commits ({r.blobs} blobs scanned)"
                 + (f"; skipped {', '.join(skipped)}" if skipped else "")
                 + (f"; {r.allowed} allowed by .git/strata/secrets-allow" if r.allowed else ""))
    from strata_git.ops.scan import advice

    for number, step in enumerate(advice(r.findings), start=1):
        lines += ["", "what to do:"] if number == 1 else []
        lines += [f"{number}. {step.text}", *(f"     {shown(command)}" for command in step.commands)]
    return "\n".join(lines)


def cmd_scan(args: argparse.Namespace) -> int:
    vault = _vault()
    if args.allow:
        added = vault.allow_secret(args.allow)
        _emit(args, {"allowed": added, "already": [a for a in args.allow if a not in added]},
              "\n".join(f"allowed {a} in this clone (.git/strata/secrets-allow)" for a in added)
              or "already allowed; nothing changed")
        return 0
    report = vault.scan(progress=_scan_progress() if not args.json and sys.stderr.isatty() else None)
    _emit(args, report.as_dict(), _scan_text(report))
    return 1 if report.findings else 0


def cmd_install_hooks(args: argparse.Namespace) -> int:
    from strata_git.ops import hookshims

    done, note = hookshims.install(_vault().repo)
    lines = [f"{k}: {v}" for k, v in done.items()] + ([f"note: {note}"] if note else [])
    _emit(args, {"hooks": done, "note": note}, "\n".join(lines))
    return 0


def cmd_uninstall_hooks(args: argparse.Namespace) -> int:
    from strata_git.ops import hookshims

    done = hookshims.uninstall(_vault().repo)
    _emit(args, done, "\n".join(f"{k}: {v}" for k, v in done.items()))
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
    return run_hook(args.hook_name, args.json)


class _Skipped:
    """Stands in for the parser of a command not being run (building all of them costs ~12 ms)."""

    def add_argument(self, *_args: Any, **_kwargs: Any) -> None:
        pass


def _parser(only: str | None = None) -> argparse.ArgumentParser:
    """The command line parser; with `only`, the other commands' parsers are not built."""
    import argparse

    class Parser(argparse.ArgumentParser):
        def error(self, message: str) -> None:  # usage errors: exit 2, as JSON when asked
            if "--json" in sys.argv:
                import json

                print(json.dumps({"ok": False, "error": message, "hint": f"see `{self.prog} -h`", "kind": "usage"}))
                raise SystemExit(2)
            super().error(message)

    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--json", action="store_true", help="print the result as JSON (for agents)")
    parser = Parser(prog="git strata", description="An AI agent's memory in a git repository: "
                                     "active/, cooled/ and archive/ strata of Markdown files.")
    parser.add_argument("--version", action="version", version=f"git-strata {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    def add(name: str, func: Callable[[argparse.Namespace], int]) -> argparse.ArgumentParser:
        if only is not None and name != only:
            return _Skipped()  # type: ignore[return-value]
        p = sub.add_parser(name, parents=[common], help=COMMANDS[name], description=COMMANDS[name],
                           prog=f"git strata {name}")
        p.set_defaults(func=func)
        return p

    add("init", cmd_init).add_argument("dir", nargs="?", default=".", help="folder (default: here)")
    p = add("write", cmd_write)
    p.add_argument("name", help="memory name relative to the tier, e.g. projects/koda")
    p.add_argument("-m", "--message", help="the content")
    p.add_argument("--file", help="read the content from this file ('-' for stdin)")
    p.add_argument("--title", help="set 'title' in the frontmatter")
    p.add_argument("--tags", help="set 'tags' in the frontmatter (comma-separated)")
    p.add_argument("--type", help="set 'type' in the frontmatter (note, decision, rejection, ...)")
    p = add("read", cmd_read)
    p.add_argument("name", help="memory name, e.g. projects/koda")
    p.add_argument("--summary", action="store_true", help="print the summary made when it cooled, not the memory")
    p = add("list", cmd_list)
    p.add_argument("--tier", choices=("active", "cooled", "archive"), help="only this tier")
    p.add_argument("--type", help="only memories of this type")
    add("status", cmd_status)
    p = add("reject", cmd_reject)
    p.add_argument("text", help='what was said no to, in one line: "use MongoDB for the event store"')
    p.add_argument("--why", help="the reason, kept in the memory's body")
    p.add_argument("--name", help="memory name (default: rejections/<words of the text>)")
    p = add("context", cmd_context)
    p.add_argument("--budget", type=int, default=None, help="token budget (default 1000; estimate: UTF-8 bytes / 3)")
    p.add_argument("--type", help="only memories of this type beside the rejections and decisions")
    add("stats", cmd_stats)
    p = add("mcp", cmd_mcp)
    p.add_argument("--agent", help="the agent's name, recorded with every change it makes")
    p.add_argument("--memory", metavar="PATH", help="the memory repository (default: the one here)")
    p = add("edit", cmd_edit)
    p.add_argument("name", help="active memory to edit")
    p.add_argument("--recall", action="store_true", help="if it is cooled or archived, bring it back first")
    add("forget", cmd_forget).add_argument("name", help="active memory to remove")
    p = add("recall", cmd_recall)
    p.add_argument("name", nargs="+", help="memory names to bring back (with --query: words to search for)")
    p.add_argument("--query", action="store_true",
                   help="an argument that names no memory is a query: recall its best cooled or archived match")
    p = add("search", cmd_search)
    p.add_argument("query", help="any text: words, a question, quotes, CJK...")
    p.add_argument("--tier", choices=("active", "cooled", "archive"), help="only this tier")
    p.add_argument("--type", help="only memories of this type")
    p.add_argument("--limit", type=int, default=10, help="at most this many hits (default 10)")
    p.add_argument("--rank", choices=("merged", "cascade"), default="merged",
                   help="merged: best score first, any tier (default); cascade: active, then cooled, then archive")
    add("archive", cmd_archive).add_argument("--dry-run", action="store_true", help="say what would be pruned")
    add("reindex", cmd_reindex)
    p = add("sync", cmd_sync)
    p.add_argument("--remote", help="the git remote to sync with (default: sync.remote, origin)")
    p.add_argument("--dry-run", action="store_true", help="fetch and say what would be committed, merged, pushed")
    p = add("resolve", cmd_resolve)
    p.add_argument("name", help="the memory, or its conflict copy (NAME.conflict-XXXXXXXX)")
    p.add_argument("--keep", required=True, choices=("current", "copy", "both"),
                   help="current: delete the copy; copy: the copy replaces the memory; both: keep both memories")
    p = add("clone", cmd_clone)
    p.add_argument("url", help="the memory repository's git url")
    p.add_argument("dir", nargs="?", help="folder to clone into (default: from the url)")
    add("index", cmd_index)
    p = add("janitor", cmd_janitor)
    p.add_argument("--dry-run", action="store_true", help="show the plan with rules and evidence; change nothing")
    p.add_argument("--now", metavar="WHEN", help="plan as if it were WHEN (2027-01-31, @<unix time>, +30d)")
    p = add("serve", cmd_serve)
    p.add_argument("--interval", default="15m", help="time between cycles: 90, 30s, 15m (default), 2h")
    p.add_argument("--live", action="store_true", help="apply from the first cycle (default: the first is a dry run)")
    p.add_argument("--once", action="store_true", help="run one cycle and exit")
    p.add_argument("--sync", action="store_true", help="after each cycle, run `git strata sync` (unattended machines)")
    p.add_argument("--stop", action="store_true", help="stop the daemon running for this repository")
    p = add("log", cmd_log)
    p.add_argument("name", nargs="?", help="only this memory's migrations")
    p.add_argument("--limit", type=int, default=50, help="at most this many (default 50)")
    p = add("why", cmd_why)
    p.add_argument("name", help="memory name, e.g. projects/koda")
    p.add_argument("--now", metavar="WHEN", help="explain as if it were WHEN")
    p = add("scan", cmd_scan)
    p.add_argument("--allow", metavar="FINGERPRINT", action="append",
                   help="allow a false positive in this clone by the fingerprint a scan or a refusal printed "
                        "(repeatable); nothing is scanned")
    add("install-hooks", cmd_install_hooks)
    add("uninstall-hooks", cmd_uninstall_hooks)
    p = add("capture", cmd_capture)
    p.add_argument("transcript", help="the transcript file (the harness's transcript_path)")
    p.add_argument("--format", choices=("auto", "claude-code", "codex"), default="auto",
                   help="the transcript's format (default: told by its first line)")
    p.add_argument("--session", help="the session id (default: the one the transcript names)")
    p.add_argument("--log", action="store_true",
                   help="also write the outcome, or the error, as one line of .git/strata/agent.log (the agent "
                        "hooks' background captures do)")
    p = add("agent", cmd_agent)
    p.add_argument("action", choices=("install", "uninstall"))
    p.add_argument("harness", choices=("claude-code", "codex"))
    p.add_argument("--scope", choices=("project", "user"), default="project",
                   help="project: the project's own config files (default); user: your home folder's")
    p.add_argument("--memory", metavar="PATH", help="the memory repository the hooks use (default: the one here)")
    p.add_argument("--project", metavar="DIR", help="the project folder for --scope project (default: here)")
    p.add_argument("--dry-run", action="store_true", help="print the diff of each file; change nothing")
    p = add("hook", cmd_hook)
    p.add_argument("hook_name", metavar="HOOK", help="pre-commit, post-commit, post-checkout, post-merge, post-rewrite")
    p.add_argument("hook_args", nargs="*", help="arguments git passed to the hook")
    return parser


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


def cmd_capture(args: argparse.Namespace) -> int:
    from strata_git.core.secrets import redact
    from strata_git.ops import capture

    vault = _vault()
    try:
        r = capture.capture(vault.repo, vault.cfg, args.transcript, args.format, args.session)
    except Exception as e:
        if args.log:
            from strata_git.app import agents

            agents.log(vault.repo.root, "capture", redact(f"{shown(args.transcript)}: made no progress: "
                                                           f"{getattr(e, 'message', None) or type(e).__name__}"))
        raise
    if r.lines is None:
        text = f"nothing new in {args.transcript} (session {r.session})"
    else:
        text = (f"captured lines {r.lines[0]}-{r.lines[1]} of session {r.session} ({r.harness}): "
                f"{len(r.memories)} memories, {r.skipped} line(s) skipped, {r.redacted} secret(s) redacted"
                + (f" (commit {r.commit[:12]})" if r.commit else ""))
        text += f"\nsummarizer: {r.summarizer}" if r.summarizer else ""
        text += "".join(f"\n  {shown(name)}" for name in r.memories)
    text += "\nthe transcript was truncated or replaced since the last capture: read again from its start" \
        if r.rewritten else ""
    text += f"\n{r.duplicates} statement(s) already held by a memory were not written again" if r.duplicates else ""
    text += "".join(f"\nskipped line {s.line} ({s.why}): {s.excerpt}" for s in r.skipped_lines)
    if args.log:
        from strata_git.app import agents

        agents.log(vault.repo.root, "capture", text.replace("\n", "; "))
    _emit(args, r.as_dict(), text)
    return 0


def cmd_agent(args: argparse.Namespace) -> int:
    from strata_git.app import install
    from strata_git.app.vault import Vault

    home, project = os.path.expanduser("~"), os.path.abspath(args.project or ".")
    if args.action == "install":
        memory = Vault.open(args.memory or ".").repo.root
        changes = install.install(args.harness, args.scope, memory, project, home, args.dry_run)
    else:  # uninstall needs no memory repository: it removes whatever entries git-strata added
        memory = args.memory or ""
        changes = install.uninstall(args.harness, args.scope, project, home, args.dry_run)
    diff = install.diff(changes) if args.dry_run else ""
    done = [f"{'created' if c.before is None else 'removed' if c.after is None else 'changed'} {shown(c.path)}"
            for c in changes]
    _emit(args, {"action": args.action, "harness": args.harness, "scope": args.scope, "memory": memory,
                 "dry_run": args.dry_run, "files": [c.path for c in changes], "diff": diff},
          (diff if args.dry_run else "\n".join(done))
          or f"nothing to change: {args.harness} is already {args.action}ed at {args.scope} scope")
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:2] == ["hook", "agent"]:
        return run_agent_hook(argv[2:])
    if len(argv) >= 2 and argv[0] == "hook" and not any(a.startswith("-") for a in argv[1:]):
        # The hook path skips argparse: every commit pays for what is imported here.
        return _run(lambda: run_hook(argv[1]), as_json=False)
    command = argv[0] if argv and argv[0] in COMMANDS else None
    args = _parser(command).parse_args(argv)
    return _run(lambda: args.func(args), as_json=args.json)


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
