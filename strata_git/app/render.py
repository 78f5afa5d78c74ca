"""The text `git strata` prints for each command's result (with --json the result is printed as is).

Each function takes what the library returned and gives back the text; nothing here prints,
reads the repository or decides anything. Names and paths go through `shown`, so a control
character in a name cannot forge a line of output.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from strata_git.core import names
from strata_git.core.contract import day
from strata_git.core.entries import clean, shown

if TYPE_CHECKING:
    from strata_git.app.init import InitResult
    from strata_git.app.install import AgentStatus, FileChange
    from strata_git.app.reports import ArchiveState, Status
    from strata_git.core.entries import Entry
    from strata_git.ops import archive as archive_op
    from strata_git.ops import capture
    from strata_git.ops import janitor as janitor_op
    from strata_git.ops import scan as scan_op
    from strata_git.ops.asof import Counted
    from strata_git.ops.audit import Migration, Version, Why
    from strata_git.ops.clone import Cloned
    from strata_git.ops.reindex import Report
    from strata_git.ops.sync.conflicts import OpenConflict
    from strata_git.ops.sync.sync import Decision, Result
    from strata_git.ops.txn import Change
    from strata_git.store.search import Hit

MIB = 1024 * 1024


def change(c: Change) -> str:
    """One memory changed (write, edit, recall, reject)."""
    if c.commit is None:
        return f"{shown(c.path)}: {c.detail}, nothing committed"
    return f"{shown(c.path)}: {c.detail} (commit {c.commit[:12]})"


def changes(cs: list[Change]) -> str:
    return "\n".join(change(c) for c in cs)


def forgotten(c: Change) -> str:
    return f"forgot {c.path} (commit {(c.commit or '')[:12]}); {c.detail}"


def resolved(c: Change) -> str:
    return f"{c.detail} (commit {(c.commit or '')[:12]})"


def init(result: InitResult) -> str:
    if not result.changed:
        text = f"{result.root} is already a memory repository; nothing changed"
    else:
        made = ", ".join(result.created) or "no files"
        text = f"initialized memory repository in {result.root}\ncreated: {made}\nhooks: " + \
            ", ".join(f"{k} {v}" for k, v in result.hooks.items())
    return "\n".join([text, *(f"note: {n}" for n in result.notes)])


def listing(entries: list[Entry]) -> str:
    rows = [f"{e.tier:<8} {shown(e.as_dict()['name']):<32} {e.type:<10} {e.title}"
            + (f"  [{', '.join(e.tags)}]" if e.tags else "") + (f"  INVALID: {e.problem}" if e.problem else "")
            for e in entries]
    return "\n".join(rows) or "no memories"


def _archive_state(a: ArchiveState) -> list[str]:
    lines = [f"archive: {'pruned here' if a.pruned else 'all on disk'}, {a.held_blobs} of "
             f"{a.memories} archived blobs held here; last verified on a remote: "
             f"{a.last_verified or 'never'}; shadow index at {(a.shadow_commit or 'none')[:12]}"]
    if a.memories:
        lines.append("archive indexed from: " + ", ".join(f"{n} {k}{'s' if n != 1 else ''}"
                                                          for k, n in a.indexed_from.items() if n)
                     + ("" if a.indexed_from["record"] == a.memories else
                        " (`git strata reindex` upgrades the others to full records)"))
    return lines


def _open_conflict(c: OpenConflict) -> str:
    return (f"conflict: {shown(c.name)} has another version beside it, {shown(c.copy)}"
            + (f" (from {shown(str(c.source))})" if c.source else "")
            + (f"; finish with `git strata resolve {shown(c.copy)} --keep current|copy|both`" if c.memory else
               "; merge the two by hand, delete the copy and commit"))


def status(s: Status) -> str:
    lines = [f"repository: {s.root} (branch {s.branch}, HEAD {(s.head or 'none')[:12]})"]
    lines += [f"{tier:<8} {v['memories']:>6} memories {v['bytes']:>10} bytes" for tier, v in s.tiers.items()]
    lines.append("hooks: " + ", ".join(f"{k} {v}" for k, v in s.hooks.items()))
    lines.append(f"config: {s.config['source']} (`git strata status --json` shows every value)")
    lines.append(f"daemon: running (pid {s.daemon})" if s.daemon else "daemon: not running")
    lines += _archive_state(s.archive)
    files = ", ".join(f"{name} {size:,} bytes" for name, size in s.derived.items())
    lines.append(f".git/strata (per-clone state, all rebuildable but machine-id): {files}")
    sync = s.sync
    if not sync.url:
        lines.append(f"sync: no git remote named {sync.remote} (`git remote add {sync.remote} URL`, or set "
                     "sync.remote in .strata/config.toml)")
    else:
        lines.append(f"sync: {sync.remote}, " + (f"{sync.ahead} ahead, {sync.behind} behind as of the last fetch"
                                                 if sync.ahead is not None else "never synced"))
    lines += [_open_conflict(c) for c in s.conflicts]
    lines += [f"uncommitted: {shown(p)}" for p in s.uncommitted]
    lines += [f"problem: {shown(p)}" for p in s.problems]
    return "\n".join(lines)


def search(hits: list[Hit]) -> str:
    from strata_git.store import summary

    lines = []
    for h in hits:
        where = f" · {h.commit[:12]} blob {h.blob[:12]}" if h.tier == "archive" and h.commit else ""
        lines += [f"{h.tier:7} {shown(h.name)} · {h.title} · {h.type} · score {h.score:.2f}{where}",
                  f"        {h.snippet}"]
        gist = summary.gist(h.summary)
        lines += [f"        summary: {clean(gist)[:160]}"] if gist else []
    return "\n".join(lines) or "no matches"


def archive(r: archive_op.Report) -> str:
    if r.dry_run:
        return (f"would push to {r.remote} ({r.url}), verify and prune {r.pruned} blob(s), "
                f"{r.pruned_bytes / MIB:.2f} MiB; {r.missing_before} already pruned")
    return (f"pushed {r.pushed[:12]} to {r.remote} ({r.url}); verified {r.verified} blob(s) there"
            f"{f' (record {r.record[:12]})' if r.record else ''}; pruned {r.pruned} "
            f"({r.pruned_bytes / MIB:.2f} MiB); objects {r.git_bytes_before / MIB:.2f} -> "
            f"{r.git_bytes_after / MIB:.2f} MiB")


def _copy_of_memory(beside: str) -> str | None:
    """The name `git strata resolve` takes for a conflict copy of a memory, else None."""
    where = names.split_path(beside)
    if where and where[0] == "active" and where[1].endswith(names.SUFFIX):
        return names.display(where[1])
    return None


def _sync_decision(d: Decision) -> str:
    if not d.beside:
        return f"merged: {shown(d.name)}: {d.how}"
    copy = _copy_of_memory(d.beside)
    if copy is not None:
        return (f"conflict: {shown(d.name)}: {d.how}: {shown(d.beside)}; "
                f"finish with `git strata resolve {shown(copy)} --keep current|copy|both`")
    return (f"conflict: {shown(d.name)}: {d.how}: {shown(d.beside)}; merge the two by hand, "
            "delete the copy and commit")


def sync(r: Result) -> str:
    would = "would " if r.dry_run else ""
    lines = []
    if r.committed:
        lines.append(f"{would}commit {len(r.committed)} local edit(s) first: {', '.join(r.committed[:5])}"
                     + (" ..." if len(r.committed) > 5 else ""))
    lines += [f"left uncommitted: {item['path']}: {item['reason']}" for item in r.left]
    if r.rewound:
        lines.append(f"{r.remote}/{r.branch} had gone back {r.rewound} commit(s) (a force-push?): "
                     f"{would}push them again from here")
    if r.integrated == "up to date":
        lines.append(f"nothing new on {r.remote}/{r.branch}")
    else:
        lines.append(f"{r.integrated} with {r.remote}/{r.branch}: {r.incoming} commit(s) in")
    lines += [_sync_decision(d) for d in r.decisions]
    if r.dry_run:
        lines.append(f"would push {r.outgoing} commit(s); dry run: nothing was committed, merged or pushed"
                     if r.outgoing else "nothing to push; dry run: nothing was committed, merged or pushed")
    else:
        lines.append(("pushed" + (f" {r.outgoing} commit(s)" if r.outgoing else "") if r.pushed else "nothing to push")
                     + f"; HEAD {(r.head or 'none')[:12]}")
    lines += [f"mirror {name}: {state}" for name, state in r.mirrors.items()]
    return "\n".join(lines)


def reindex(done: Report) -> str:
    text = (f"shadow index: {done.archived} archived memories; search index: "
            f"{done.active_and_cooled} active and cooled memories")
    if done.upgraded:
        text += f"\nupgraded {done.upgraded} archived memories to full shadow records"
    if done.not_upgraded:
        first = ", ".join(names.display(n) for n in done.not_upgraded[:5])
        more = f" and {len(done.not_upgraded) - 5} more" if len(done.not_upgraded) > 5 else ""
        text += (f"\ncould not upgrade {len(done.not_upgraded)} ({first}{more}): "
                 f"{done.unreachable or 'their content is not here'}; search keeps their old rows, "
                 "run `git strata reindex` again when the archive remote is reachable")
    if done.embedded:
        text += f"\nmeaning vectors: {done.embedded} active and cooled memories embedded"
    if done.meaning_notes:
        text += f"\nmeaning vectors: {done.meaning_notes} archived memories embedded (meaning notes on the shadow ref)"
    if done.meaning:
        text += f"\nno meaning vectors: {done.meaning}"
    return text


def cloned(done: Cloned) -> str:
    text = (f"cloned into {done.root}: {done.archived} archived memories searchable, "
            f"{done.archived - done.archived_local} of them not downloaded")
    return text + (f"\nwarning: {done.warning}" if done.warning else "")


def janitor(result: janitor_op.Result, dry_run: bool) -> str:
    plan = result.plan
    lines = [f"{'plan' if dry_run else 'janitor'}: {plan.summary()}"
             + (f" (commit {result.commit[:12]})" if result.commit else "")]
    for m in plan.moves:
        src, dst = m.paths
        read = f", last read {day(m.last_read)}" if m.last_read else ""
        lines.append(f"  {m.action:<8} {shown(src)} -> {shown(dst)}  [{m.rule}; age {m.age_days} d, "
                     f"{_reads(m.reads, m.window_days)}{read}]")
    lines += [f"  skipped  {shown(s.name[:-3] if s.name.endswith('.md') else s.name)}: {shown(s.reason)}"
              for s in plan.skipped]
    if result.recovered not in ("clean", "not checked (dry run)"):
        lines.append(f"note: an interrupted cycle was {result.recovered}")
    if result.archive and "error" in result.archive:
        lines.append(f"archive: not pruned: {result.archive['error']} ({result.archive['hint']})")
    elif result.archive:
        lines.append(f"archive: verified {result.archive['verified']} blob(s) on {result.archive['remote']}, "
                     f"pruned {result.archive['pruned']}")
    return "\n".join(lines)


def _reads(reads: float | None, window: float | None) -> str:
    """How many reads a rule counted, and in how many days (an older record does not say)."""
    return f"{reads} read(s)" + (f" in {window:g} days" if window else "")


def log(moves: list[Migration]) -> str:
    lines = [f"{m.date} {m.commit[:12]} {shown(m.action):<8} {shown(m.source)} -> {shown(m.target)}  "
             f"[{shown(str(m.rule))}; age {m.age_days} d, {_reads(m.reads, m.window_days)}]" for m in moves]
    return "\n".join(lines) or "no migrations yet"


def status_as_of(counted: Counted) -> str:
    p = counted.point
    lines = [f"as of {p.commit[:12]} ({day(p.time)}; {p.how} {shown(p.asked.strip())})"]
    lines += [f"  {tier:<8} {n:>8} memories {b:>12} bytes" + (f" ({u} of a size not known here)" if u else "")
              for tier, (n, b, u) in counted.tiers.items()]
    return "\n".join(lines)


def history(found: list[Version]) -> str:
    lines = []
    for v in found:
        where = f"{v.source}/ -> {v.tier}/" if v.source and v.tier and v.source != v.tier else f"{v.tier or v.source}/"
        machine = f" on {shown(v.machine[:12])}" if v.machine else ""
        lines.append(f"{v.date} {v.commit[:12]} {shown(v.action):<8} {where:<20} {shown(v.author)}{machine}: "
                     f"{shown(v.why)}")
        if v.diff:
            lines.append(v.diff.rstrip("\n"))
    return "\n".join(lines)


def why(info: Why) -> str:
    moved = info.moved_by
    since = f"since {info.in_tier_since}" if info.in_tier_since else "(not committed yet)"
    lines = [f"{shown(info.name)}: in {info.tier}/ {since}"
             + (f" ({shown(moved.action)} by {shown(str(moved.rule))}, commit {moved.commit[:12]})" if moved else ""),
             (f"last changed {info.last_changed} ({info.age_days} days ago); " if info.last_changed
              else "never committed; ")
             + f"{info.reads_last_90_days} read(s) in 90 days, last {info.last_read or 'never'}",
             f"next: {info.next}"]
    if info.would_move_now:
        lines.append(f"the janitor would now {info.would_move_now.action} it ({info.would_move_now.rule})")
    return "\n".join(lines)


def scan(r: scan_op.Report) -> str:
    from strata_git.ops.scan import advice

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
    for number, step in enumerate(advice(r.findings), start=1):
        lines += ["", "what to do:"] if number == 1 else []
        lines += [f"{number}. {step.text}", *(f"     {shown(command)}" for command in step.commands)]
    return "\n".join(lines)


def allowed(added: list[str]) -> str:
    return "\n".join(f"allowed {a} in this clone (.git/strata/secrets-allow)" for a in added) \
        or "already allowed; nothing changed"


def hooks(done: dict, note: str | None = None) -> str:
    return "\n".join([f"{k}: {v}" for k, v in done.items()] + ([f"note: {note}"] if note else []))


def captured(r: capture.Report, transcript: str) -> str:
    if r.lines is None and not r.memories:
        text = f"nothing new in {transcript} (session {r.session})"
    elif r.lines is None:
        text = f"nothing new in {transcript} itself (session {r.session})"
        text += "".join(f"\n  {shown(name)}" for name in r.memories)
    else:
        text = (f"captured lines {r.lines[0]}-{r.lines[1]} of session {r.session} ({r.harness}): "
                f"{len(r.memories)} memories, {r.skipped} line(s) skipped, {r.redacted} secret(s) redacted"
                + (f" (commit {r.commit[:12]})" if r.commit else ""))
        text += f"\nsummarizer: {r.summarizer}" if r.summarizer else ""
        text += "".join(f"\n  {shown(name)}" for name in r.memories)
    text += "\nthe transcript was truncated or replaced since the last capture: read again from its start" \
        if r.rewritten else ""
    text += f"\n{r.duplicates} statement(s) already held by a memory were not written again" if r.duplicates else ""
    text += f"\nfollowed {len(r.subagents)} subagent transcript(s): {', '.join(map(shown, r.subagents))}" \
        if r.subagents else ""
    text += "".join(f"\nskipped line {s.line} ({s.why}): {s.excerpt}" for s in r.skipped_lines)
    return text


def agent_files(changes: list[FileChange], action: str, harness: str, scope: str, diff: str, dry_run: bool) -> str:
    done = [f"{'created' if c.before is None else 'removed' if c.after is None else 'changed'} {shown(c.path)}"
            for c in changes]
    return (diff if dry_run else "\n".join(done)) or \
        f"nothing to change: {harness} is already {action}ed at {scope} scope"


def agent_status(found: AgentStatus) -> str:
    from strata_git.app import where

    lines = []
    for i in found.installed:
        if not i.events and not i.server and not i.problems:
            lines.append(f"{i.harness}, {i.scope} scope: not installed")
            continue
        named = ", ".join("portable, no path" if m is None else f"memory {shown(m)}" for m in i.memories)
        hooks = f"hooks for {', '.join(i.events)} in {shown(i.hooks)} ({named})" if i.events else "no hooks"
        server = f"MCP server in {shown(i.server)}" if i.server else "no MCP server"
        lines.append(f"{i.harness}, {i.scope} scope: {hooks}; {server}")
        lines += [f"  cannot read {p}" for p in i.problems]
    lines.append(f"memory for portable entries here: {shown(found.memory)} ({found.source})" if found.memory
                 else where.MISSING)
    lines.append(f"git-strata on PATH: {shown(found.on_path)}" if found.on_path
                 else "git-strata is not on PATH: portable hooks cannot run here (install it with pipx)")
    return "\n".join(lines)
