"""The local page's HTML (`git strata ui`, see ui.py): one function a page, server-rendered.

A memory is untrusted text: every value that reaches the HTML goes through `_e` (html.escape,
quotes too), so a `<script>` in a body is shown as text. Links carry names in the query string,
quoted by urlencode. No page runs a script: the server's Content-Security-Policy allows none.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from html import escape
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode

from strata_git.core import memory, names
from strata_git.errors import BadMemory

if TYPE_CHECKING:
    from strata_git.core.entries import Entry
    from strata_git.core.rules import Plan
    from strata_git.ops.audit import Version, Why
    from strata_git.store.search import Hit

BROWSE_ROWS = 500  # a folder's memories shown at most on one page

CSS = """
body{font:15px/1.45 system-ui,sans-serif;margin:0;color:#222;background:#fafaf7}
header{background:#2f3b35;color:#fff;padding:.6em 1.2em;display:flex;gap:1.4em;align-items:center;flex-wrap:wrap}
header a{color:#dfe9e3;text-decoration:none}header strong{font-size:1.1em}
main{padding:1em 1.4em;max-width:72em}
form.search{display:flex;gap:.5em;flex-wrap:wrap;margin:.5em 0 1em}
form.search input[name=q]{flex:1;min-width:16em}
input,select,button{font:inherit;padding:.25em .4em}
table{border-collapse:collapse;margin:.5em 0}td,th{padding:.2em .7em;text-align:left;border-bottom:1px solid #e3e3dc}
th{font-weight:600}td.n{text-align:right;font-variant-numeric:tabular-nums}
.tier{display:inline-block;border-radius:3px;padding:0 .4em;font-size:.8em;color:#fff}
.tier-active{background:#2f6f4f}.tier-cooled{background:#4f7fa8}.tier-archive{background:#8c7650}
pre{background:#fff;border:1px solid #e3e3dc;padding:.6em;white-space:pre-wrap;word-break:break-word}
pre.diff .add{color:#1d6b32}pre.diff .del{color:#a12b2b}
.muted{color:#666}.error{background:#fbecec;border:1px solid #e2b4b4;padding:.6em}
section{margin-bottom:1.6em}h1{font-size:1.4em}h2{font-size:1.15em;margin-top:1.4em}
"""


def _e(value: Any) -> str:
    return escape(str(value), quote=True)


def _url(path: str, **query: Any) -> str:
    kept = {k: v for k, v in query.items() if v not in (None, "")}
    return _e(path + ("?" + urlencode(kept) if kept else ""))


def _tier(tier: str) -> str:
    return f'<span class="tier tier-{_e(tier)}">{_e(tier)}</span>' if tier in names.TIERS else _e(tier)


def _memory_link(name: str, as_of: str = "", text: str | None = None) -> str:
    shown = names.display(name)
    return f'<a href="{_url("/memory", name=shown, as_of=as_of)}">{_e(text or shown)}</a>'


def search_form(query: str = "", as_of: str = "", tier: str = "") -> str:
    options = "".join(f'<option value="{t}"{" selected" if t == tier else ""}>{t}</option>' for t in names.TIERS)
    return (f'<form class="search" action="/search" method="get" role="search">'
            f'<input name="q" value="{_e(query)}" placeholder="search every tier" aria-label="search">'
            f'<select name="tier" aria-label="tier"><option value="">all tiers</option>{options}</select>'
            f'<input name="as_of" value="{_e(as_of)}" placeholder="as of (date or commit)" aria-label="as of">'
            f'<button type="submit">Search</button></form>')


def layout(title: str, body: str, as_of: str = "") -> str:
    note = (f'<p class="muted">As of {_e(as_of)}: the memory as it was then, from history. '
            f'<a href="/">Back to now</a></p>') if as_of else ""
    return ("<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>{_e(title)} · git-strata</title>"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            "<link rel=\"stylesheet\" href=\"/style.css\"></head><body>"
            "<header><strong>git-strata</strong><a href=\"/\">Memory</a><a href=\"/sessions\">Sessions</a>"
            "<a href=\"/plan\">Janitor's plan</a><a href=\"/chart\">Over time</a></header>"
            f"<main>{note}{body}</main></body></html>")


def error(message: str, hint: str = "") -> str:
    return layout("Not possible", f'<h1>Not possible</h1><p class="error">{_e(message)}</p>'
                  + (f"<p>{_e(hint)}</p>" if hint else "") + search_form())


def _folder_counts(entries: Iterable[Entry], folder: str) -> tuple[Counter[str], list[Entry]]:
    """The subfolders right under `folder` with how many memories each holds, and the memories in it."""
    prefix = folder + "/" if folder else ""
    below: Counter[str] = Counter()
    here: list[Entry] = []
    for e in entries:
        if not e.name.startswith(prefix):
            continue
        rest = e.name[len(prefix):]
        if "/" in rest:
            below[prefix + rest.split("/", 1)[0]] += 1
        else:
            here.append(e)
    return below, here


def overview(entries: list[Entry], head: str | None, root: str, as_of: str = "") -> str:
    by_tier: dict[str, list[Entry]] = {t: [] for t in names.TIERS}
    for e in entries:
        by_tier.setdefault(e.tier, []).append(e)
    rows = "".join(f'<tr><td>{_tier(t)}</td><td class="n">{len(by_tier[t])}</td>'
                   f'<td>{_e(sum(e.size for e in by_tier[t]))} bytes</td></tr>' for t in names.TIERS)
    parts = [f"<h1>Memory</h1><p class=\"muted\">{_e(root)} at commit {_e((head or 'none')[:12])}</p>",
             search_form(as_of=as_of), f"<section><h2>Tiers</h2><table><tr><th>tier</th><th>memories</th>"
             f"<th>size</th></tr>{rows}</table></section>"]
    for tier in names.TIERS:
        below, here = _folder_counts(by_tier[tier], "")
        if not below and not here:
            continue
        items = "".join(f'<tr><td><a href="{_url("/browse", tier=tier, folder=f, as_of=as_of)}">{_e(f)}/</a></td>'
                        f'<td class="n">{n}</td></tr>' for f, n in sorted(below.items()))
        if here:
            items += (f'<tr><td><a href="{_url("/browse", tier=tier, as_of=as_of)}">(top level)</a></td>'
                      f'<td class="n">{len(here)}</td></tr>')
        parts.append(f"<section><h2>{_tier(tier)} folders</h2><table><tr><th>folder</th><th>memories</th></tr>"
                     f"{items}</table></section>")
    return layout("Memory", "".join(parts), as_of)


def browse(entries: list[Entry], tier: str, folder: str, as_of: str = "") -> str:
    below, here = _folder_counts((e for e in entries if e.tier == tier), folder)
    crumbs = [f'<a href="{_url("/", as_of=as_of)}">memory</a>', _tier(tier)]
    path = ""
    for part in folder.split("/") if folder else []:
        path = f"{path}/{part}" if path else part
        crumbs.append(f'<a href="{_url("/browse", tier=tier, folder=path, as_of=as_of)}">{_e(part)}</a>')
    parts = [f"<h1>{' / '.join(crumbs)}</h1>", search_form(as_of=as_of, tier=tier)]
    if below:
        parts.append("<table><tr><th>folder</th><th>memories</th></tr>" + "".join(
            f'<tr><td><a href="{_url("/browse", tier=tier, folder=f, as_of=as_of)}">{_e(f.rsplit("/", 1)[-1])}/</a>'
            f'</td><td class="n">{n}</td></tr>' for f, n in sorted(below.items())) + "</table>")
    here.sort(key=lambda e: e.name)
    if here:
        parts.append("<table><tr><th>memory</th><th>title</th><th>type</th><th>project</th><th>bytes</th></tr>"
                     + "".join(f"<tr><td>{_memory_link(e.name, as_of)}</td><td>{_e(e.title)}</td><td>{_e(e.type)}"
                               f"</td><td>{_e(e.project)}</td><td class=\"n\">{e.size}</td></tr>"
                               for e in here[:BROWSE_ROWS]) + "</table>")
        if len(here) > BROWSE_ROWS:
            parts.append(f'<p class="muted">{len(here) - BROWSE_ROWS} more here; search to narrow them.</p>')
    if not below and not here:
        parts.append("<p>No memories here.</p>")
    return layout(f"{tier}/{folder}", "".join(parts), as_of)


def results(query: str, hits: list[Hit], tier: str, as_of: str) -> str:
    rows = "".join(f"<li>{_tier(h.tier)} {_memory_link(h.name, as_of, h.title or h.name)} "
                   f'<span class="muted">{_e(names.display(h.name))} · {_e(h.type)}'
                   f"{' · ' + _e(h.project) if h.project else ''}</span><br>{_e(h.snippet)}</li>" for h in hits)
    body = (f"<h1>Search</h1>{search_form(query, as_of, tier)}"
            + (f"<ol>{rows}</ol>" if hits else f"<p>Nothing found for {_e(query)}.</p>" if query else ""))
    return layout(f"Search {query}", body, as_of)


def _frontmatter(raw: bytes, where: str) -> tuple[str, str]:
    """(the frontmatter as a table, or its text if it does not parse; the body)."""
    text = raw.decode("utf-8", "replace")
    try:
        fm, body, _ = memory.split(text, where)
    except BadMemory:
        return "", text
    if fm is None:
        return "", body
    try:
        meta = memory.parse_frontmatter(fm, where)
    except BadMemory:
        return f"<pre>{_e(fm)}</pre>", body
    rows = "".join(f"<tr><th>{_e(k)}</th><td>{_e(', '.join(map(str, v)) if isinstance(v, list) else v)}</td></tr>"
                   for k, v in meta.items())
    return f"<table class=\"frontmatter\">{rows}</table>", body


def _diff(text: str) -> str:
    lines = []
    for line in text.splitlines():
        kind = "add" if line.startswith("+") and not line.startswith("+++") else \
            "del" if line.startswith("-") and not line.startswith("---") else ""
        lines.append(f'<span class="{kind}">{_e(line)}</span>' if kind else _e(line))
    return '<pre class="diff">' + "\n".join(lines) + "</pre>"


def memory_page(name: str, tier: str, raw: bytes, versions: list[Version], why: Why | None, summary: str,
                as_of: str) -> str:
    shown = names.display(names.normalize(name))
    table, body = _frontmatter(raw, shown)
    parts = [f"<h1>{_e(shown)} {_tier(tier)}</h1>", search_form(as_of=as_of)]
    if table:
        parts.append(f"<section><h2>Frontmatter</h2>{table}</section>")
    parts.append(f"<section><h2>Text</h2><pre class=\"body\">{_e(body)}</pre></section>")
    if summary:
        parts.append(f"<section><h2>Summary made when it cooled</h2><pre>{_e(summary)}</pre></section>")
    if why is not None:
        moved = why.moved_by
        lines = [f"In {why.tier}/ since {why.in_tier_since or 'it was written (not committed yet)'}"
                 + (f", moved by the janitor's rule {moved.rule} ({moved.action}, commit {moved.commit[:12]})"
                    if moved else "") + ".",
                 f"Last changed {why.last_changed or 'never'}; {why.reads_last_90_days} read(s) in 90 days, "
                 f"last {why.last_read or 'never'}.", f"Next: {why.next}."]
        if why.would_move_now:
            lines.append(f"The janitor would now {why.would_move_now.action} it ({why.would_move_now.rule}).")
        parts.append("<section><h2>Why it is here</h2>" + "".join(f"<p>{_e(x)}</p>" for x in lines) + "</section>")
    items = []
    for v in versions:
        where = f"{v.source}/ → {v.tier}/" if v.source and v.tier and v.source != v.tier else f"{v.tier or v.source}/"
        machine = f" on {v.machine[:12]}" if v.machine else ""
        items.append(f'<li><a href="{_url("/memory", name=shown, as_of=v.commit)}">{_e(v.date)} {_e(v.commit[:12])}'
                     f"</a> <strong>{_e(v.action)}</strong> {_e(where)} by {_e(v.author)}{_e(machine)}: {_e(v.why)}"
                     + (_diff(v.diff) if v.diff else "") + "</li>")
    parts.append("<section><h2>History</h2>" + (f"<ol class=\"history\">{''.join(items)}</ol>" if items
                                                   else "<p>Not committed yet.</p>") + "</section>")
    return layout(shown, "".join(parts), as_of)


def sessions(entries: list[Entry]) -> str:
    by_project: dict[str, list[Entry]] = {}
    for e in entries:
        if e.type == "session":
            by_project.setdefault(e.project or "(no project)", []).append(e)
    parts = ["<h1>Captured sessions</h1>"]
    if not by_project:
        parts.append("<p>No captured sessions yet: the agent hooks capture them (see docs/agents.md).</p>")
    for project in sorted(by_project):
        found = sorted(by_project[project], key=lambda e: e.name, reverse=True)
        parts.append(f"<section><h2>{_e(project)} ({len(found)})</h2><ul>" + "".join(
            f"<li>{_tier(e.tier)} {_memory_link(e.name, '', e.title or e.name)} "
            f"<span class=\"muted\">{_e(names.display(e.name))}</span></li>" for e in found) + "</ul></section>")
    return layout("Sessions", "".join(parts))


def plan(found: Plan) -> str:
    rows = "".join(f"<tr><td>{_memory_link(m.name)}</td><td>{_e(m.action)}</td><td>{_tier(m.src)} → {_tier(m.dst)}"
                   f"</td><td>{_e(m.rule)}</td><td class=\"n\">{m.age_days}</td><td class=\"n\">{m.reads}</td></tr>"
                   for m in found.moves)
    skipped = "".join(f"<li>{_e(names.display(s.name))}: {_e(s.reason)}</li>" for s in found.skipped)
    body = (f"<h1>The janitor's plan</h1><p>If the janitor ran now: {_e(found.summary())} "
            f"(at commit {_e(found.head[:12])}). Nothing is moved from this page: run <code>git strata janitor"
            "</code> to apply it.</p>"
            + (f"<table><tr><th>memory</th><th>action</th><th>move</th><th>rule</th><th>age (days)</th>"
               f"<th>reads</th></tr>{rows}</table>" if rows else "")
            + (f"<h2>Held back</h2><ul>{skipped}</ul>" if skipped else ""))
    return layout("Janitor's plan", body)


def chart_page(weeks: int, picture: str) -> str:
    """`picture`: the SVG (chart.svg, which escapes what it shows), inline so a bar's title shows on hover."""
    return layout("Over time", f"<h1>Memory over time</h1><p>The last {weeks} weeks, from history: memories in "
                  "each tier at each week's end, and what moved in the week. Hover a bar for its figures; "
                  f'<a href="{_url("/chart.svg", weeks=weeks)}">the picture alone</a>.</p>'
                  f'<form class="search" action="/chart" method="get"><label>weeks <input name="weeks" '
                  f'value="{weeks}" size="4"></label><button type="submit">Show</button></form>'
                  f'<figure class="chart">{picture}</figure>')
