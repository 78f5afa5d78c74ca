"""The picture of memory over time (ops/timeline.py's weeks), drawn for a terminal
(`git strata stats --chart`) and as an SVG (the local page's)."""

from __future__ import annotations

from html import escape

from strata_git.core import names
from strata_git.ops.timeline import MOVES, Week

MARKS = {"active": "█", "cooled": "▒", "archive": "░"}
COLOURS = {"active": "#2f6f4f", "cooled": "#6b9bc3", "archive": "#b9a37e",
           "cooled_move": "#6b9bc3", "archived": "#b9a37e", "rehydrated": "#c0504d", "captured": "#7d5ba6"}


def _bar(counts: dict[str, int], scale: float) -> str:
    """One stacked bar: each tier's share of `scale` characters a memory, at least one for any."""
    return "".join(MARKS[t] * (max(1, round(counts[t] * scale)) if counts[t] else 0) for t in names.TIERS)


def terminal(weeks: list[Week], width: int = 40) -> str:
    """A line a week: its memories per tier as a stacked bar and in figures, then the week's moves."""
    if not weeks:
        return "memory over time: no commits yet"
    most = max(sum(w.tiers.values()) for w in weeks) or 1
    scale = width / most
    lines = ["memories at each week's end (" + ", ".join(f"{MARKS[t]} {t}" for t in names.TIERS)
             + ") and what moved in the week"]
    bars = [_bar(w.tiers, scale) for w in weeks]
    pad = max(len(b) for b in bars)
    for w, bar in zip(weeks, bars, strict=True):
        figures = "/".join(str(w.tiers[t]) for t in names.TIERS)
        moved = ", ".join(f"{m} {w.moves[m]}" for m in MOVES if w.moves[m])
        lines.append(f"{w.week}  {bar:<{pad}}  {figures:>15}" + (f"   {moved}" if moved else ""))
    lines.append(f"{'':8}  {'':<{pad}}  {'active/cooled/archive':>15}")
    return "\n".join(lines)


def svg(weeks: list[Week], width: int = 760) -> str:
    """Two panels over the same weeks: memories per tier (stacked bars) and moves per week (stacked
    bars, on their own scale); each bar has a title with its figures, and a legend says the colours."""
    top, top_h, gap, low_h, left, bottom = 28, 170, 34, 90, 48, 40
    height = top + top_h + gap + low_h + bottom
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'viewBox="0 0 {width} {height}" role="img" aria-label="memories per tier and moves per week" '
           'font-family="sans-serif" font-size="11">']
    if not weeks:
        out.append(f'<text x="{left}" y="{top + 20}">no commits yet</text></svg>')
        return "\n".join(out)
    n = len(weeks)
    step = (width - left - 10) / n
    bar = max(1.0, step * 0.8)
    most = max(sum(w.tiers.values()) for w in weeks) or 1
    most_moves = max(sum(w.moves.values()) for w in weeks) or 1
    low_top = top + top_h + gap
    out.append(f'<text x="{left}" y="{top - 10}">memories per tier at each week\'s end (most: {most})</text>')
    out.append(f'<text x="{left}" y="{low_top - 10}">moves per week (most: {most_moves})</text>')
    for i, w in enumerate(weeks):
        x = left + i * step
        y: float = top + top_h
        tip = escape(f"{w.week}: " + ", ".join(f"{t} {w.tiers[t]}" for t in names.TIERS))
        out.append(f"<g><title>{tip}</title>")
        for t in names.TIERS:
            h = w.tiers[t] / most * top_h
            if h:
                y -= h
                out.append(f'<rect class="{t}" x="{x:.1f}" y="{y:.1f}" width="{bar:.1f}" height="{h:.1f}" '
                           f'fill="{COLOURS[t]}"/>')
        out.append("</g>")
        y = float(low_top + low_h)
        tip = escape(f"{w.week}: " + ", ".join(f"{m} {w.moves[m]}" for m in MOVES))
        out.append(f"<g><title>{tip}</title>")
        for m in MOVES:
            h = w.moves[m] / most_moves * low_h
            if h:
                y -= h
                colour = COLOURS["cooled_move" if m == "cooled" else m]
                out.append(f'<rect class="{m}" x="{x:.1f}" y="{y:.1f}" width="{bar:.1f}" height="{h:.1f}" '
                           f'fill="{colour}"/>')
        out.append("</g>")
    for y in (top + top_h, low_top + low_h):
        out.append(f'<line x1="{left}" y1="{y}" x2="{width - 10}" y2="{y}" stroke="#999"/>')
    base = low_top + low_h + 14
    out.append(f'<text x="{left}" y="{base}">{escape(weeks[0].week)}</text>')
    out.append(f'<text x="{width - 10}" y="{base}" text-anchor="end">{escape(weeks[-1].week)}</text>')
    x = left
    legend = [(t, t) for t in names.TIERS] + [("cooled_move", "was cooled"), ("archived", "was archived"),
                                             ("rehydrated", "rehydrated"), ("captured", "captured")]
    for key, label in legend:
        out.append(f'<rect x="{x}" y="{base + 10}" width="10" height="10" fill="{COLOURS[key]}"/>'
                   f'<text x="{x + 14}" y="{base + 19}">{escape(label)}</text>')
        x += 14 + 7 * len(label) + 14
    out.append("</svg>")
    return "\n".join(out)
