"""MCP round trips against the same calls through the Python API, at 5,000 active and 50,000
archived memories.

    bash scripts/setup.sh bench
    .venv/bin/python bench/mcp_latency.py [--active 5000] [--archived 50000] [--samples 600] [--json]

Builds the repository as bench/archive.py does (the real janitor archives ten batches), then
alternates, call by call so machine noise falls on both alike:

- `read` of a random active memory: `Vault.read` in-process against the `read` tool through
  the SDK's stdio client and a `git strata mcp` subprocess (the tool adds the provenance
  lookup in history and the spotlighting), and the tool's own function called in-process (so
  the protocol's share shows: MCP minus tool); 200 memories read three times each, so first
  reads (provenance asked of history) and repeat reads at the same HEAD (remembered) show apart;
- `search` for a marker word plus a common word: `Vault.search` against the `search` tool, the same way
  (the API's vault scans the live files before each search, as a one-shot command does; the server's,
  like the tool's own in-process, learns what changed from inotify, as a long-running process does);

and prints p50/p95 of each with the MCP/API ratio (goal: ≤ 2x; search p95 through MCP
≤ 50 ms), then the boot context at the default budget: its size, the estimate for all active
memory, and its build time in-process and through `git strata context`.
"""

from __future__ import annotations

import json
import os
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import archive as archive_bench
from archive import pct

from benchlib import BIN, progress, timed


def summary(values: list[float]) -> dict[str, float]:
    return {"p50_ms": pct(values, 0.5), "p95_ms": pct(values, 0.95), "n": len(values)}


async def measure(root: Path, names: list[str], queries: list[str], samples: int) -> dict:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    from strata_git.app.mcpserver import Server
    from strata_git.app.vault import Vault

    vault = Vault.open(str(root))
    tool = Server(str(root))  # the tools' own work, in-process: what MCP adds beyond it is the protocol
    params = StdioServerParameters(command=str(BIN / "git-strata"), args=["mcp"], cwd=str(root),
                                   env=dict(os.environ))
    times: dict[str, list[float]] = {k: [] for k in ("read_api", "read_tool", "read_mcp", "read_mcp_first",
                                                     "read_mcp_again", "search_api", "search_tool", "search_mcp")}
    seen: set[str] = set()
    async with stdio_client(params) as (r, w), ClientSession(r, w) as s:
        await s.initialize()
        for warm in range(5):  # imports, caches, the first catalog and shadow opens
            vault.read(names[warm])
            await s.call_tool("read", {"name": names[warm]})
            vault.search(queries[warm])
            await s.call_tool("search", {"query": queries[warm]})
        for i in range(samples):
            if i % 50 == 0:
                progress(f"round trips {i}/{samples}")
            name, query = names[i % len(names)], queries[i % len(queries)]
            t0 = time.perf_counter()
            vault.read(name)
            t1 = time.perf_counter()
            result = await s.call_tool("read", {"name": name})
            t2 = time.perf_counter()
            assert not result.is_error, result.content
            vault.search(query, limit=10)
            t3 = time.perf_counter()
            result = await s.call_tool("search", {"query": query, "limit": 10})
            t4 = time.perf_counter()
            assert not result.is_error, result.content
            tool.read(name)
            t5 = time.perf_counter()
            tool.search(query, limit=10)
            t6 = time.perf_counter()
            for key, value in (("read_api", t1 - t0), ("read_mcp", t2 - t1), ("search_api", t3 - t2),
                               ("search_mcp", t4 - t3), ("read_tool", t5 - t4), ("search_tool", t6 - t5),
                               ("read_mcp_again" if name in seen else "read_mcp_first", t2 - t1)):
                times[key].append(value * 1000)
            seen.add(name)
    out = {key: summary(values) for key, values in times.items()}
    for op in ("read", "search"):
        out[f"{op}_ratio_p50"] = round(out[f"{op}_mcp"]["p50_ms"] / out[f"{op}_api"]["p50_ms"], 2)
        out[f"{op}_ratio_p95"] = round(out[f"{op}_mcp"]["p95_ms"] / out[f"{op}_api"]["p95_ms"], 2)
    return out


def main() -> None:
    import anyio

    args = archive_bench.arguments(__doc__, samples=600)
    rng = random.Random(6)
    out: dict = {"active": args.active, "archived": args.archived}
    with archive_bench.workspace("strata-bench-mcp-", args.keep) as tmp_path:
        root, env = archive_bench.scaled(tmp_path, args, rng, out)
        from strata_git.app.vault import Vault

        vault = Vault.open(str(root))
        for i in range(3):
            vault.reject(f"proposal {i} that was turned down", why="it did not fit")
        active = [e.name[:-3] for e in vault.list(tier="active")]
        archived = [e.name[:-3] for e in vault.list(tier="archive")]
        out["tiers"] = {"active": len(active), "archive": len(archived)}
        names = rng.sample([n for n in active if '/m' in n], min(200, len(active) - 3))  # each read 3 times
        pool = [n for n in archived + active if '/m' in n]
        queries = [f"mk{rng.choice(pool).rsplit('/m', 1)[1]} {rng.choice(archive_bench.WORDS)}" for _ in range(100)]
        out.update(anyio.run(measure, root, names, queries, args.samples))

        progress("boot context")
        ctx = vault.context()
        builds = []
        for _ in range(20):
            t0 = time.perf_counter()
            vault.context()
            builds.append((time.perf_counter() - t0) * 1000)
        cli = [timed([str(BIN / "git-strata"), "context"], root, env) for _ in range(10)]
        out["context"] = {"budget": ctx.budget, "tokens": ctx.tokens, "active_tokens": ctx.active_tokens,
                          "smaller_by": round(ctx.active_tokens / ctx.tokens, 1), "full": len(ctx.full),
                          "listed": len(ctx.listed), "in_process_p50_ms": pct(builds, 0.5),
                          "cli_p50_ms": pct(cli, 0.5)}
    if args.json:
        print(json.dumps(out, indent=2))
        return
    print(f"{out['tiers']['active']} active, {out['tiers']['archive']} archived (built in {out['build_s']} s)")
    first, again = out["read_mcp_first"], out["read_mcp_again"]
    print(f"read through MCP: first read of a memory p50 {first['p50_ms']} ms p95 {first['p95_ms']} ms "
          f"(n={first['n']}); again at the same HEAD p50 {again['p50_ms']} ms p95 {again['p95_ms']} ms "
          f"(n={again['n']})")
    for op in ("read", "search"):
        api, tool, mcp = out[f"{op}_api"], out[f"{op}_tool"], out[f"{op}_mcp"]
        print(f"{op:<7} API p50 {api['p50_ms']:>6} ms p95 {api['p95_ms']:>6} ms | tool in-process p50 "
              f"{tool['p50_ms']:>6} ms p95 {tool['p95_ms']:>6} ms | MCP p50 {mcp['p50_ms']:>6} ms p95 "
              f"{mcp['p95_ms']:>6} ms | MCP/API {out[f'{op}_ratio_p50']}x (p50), {out[f'{op}_ratio_p95']}x (p95)")
    c = out["context"]
    print(f"context: {c['tokens']} tokens of a {c['budget']} budget ({c['full']} in full, {c['listed']} listed) for "
          f"active memory of about {c['active_tokens']} tokens ({c['smaller_by']}x smaller); built in "
          f"{c['in_process_p50_ms']} ms in-process, {c['cli_p50_ms']} ms through `git strata context`")


if __name__ == "__main__":
    main()
