"""`--as-of DATE|COMMIT|REV` on read, list and status (and the MCP read and list tools): the memory
as it was then, in the tier it was in, from history alone: nothing written, nothing recorded."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from conftest import bare_remote, git, head, strata
from helpers.dated import at, ok, story


def test_read_list_and_status_as_of_a_date_and_a_commit(mem: Path):
    story(mem)
    assert ok(mem, "read", "notes/db", "--as-of", "2026-03-03").stdout == b"Postgres 15."
    assert ok(mem, "read", "notes/db", "--as-of", "2026-03-10").stdout == b"Postgres 16."  # the whole day
    found = json.loads(ok(mem, "read", "notes/db", "--as-of", "2026-03-03", "--json").stdout)
    assert found["tier"] == "active" and found["as_of"]["how"] == "date" and found["as_of"]["date"] == "2026-03-01"
    assert json.loads(ok(mem, "read", "notes/db", "--as-of", "HEAD", "--json").stdout)["tier"] == "cooled"
    listed = json.loads(ok(mem, "list", "--as-of", "2026-03-06", "--json").stdout)
    assert {(e["tier"], e["name"], e["title"]) for e in listed if e["name"].startswith("notes/")} == {
        ("active", "notes/db", "Postgres 15."), ("active", "notes/cat", "The cat is Miso.")}
    assert [e["name"] for e in json.loads(ok(mem, "list", "--as-of", "HEAD", "--tier", "cooled", "--json").stdout)
            ] == ["notes/cat", "notes/db"]
    counted = json.loads(ok(mem, "status", "--as-of", "HEAD~1", "--json").stdout)
    assert counted["tiers"]["cooled"]["memories"] == 0 and counted["as_of"]["how"] == "commit"
    missing = strata(mem, "read", "notes/cat", "--as-of", "2026-03-02")
    assert missing.returncode == 1 and b"no memory named 'notes/cat' as of 2026-03-02" in missing.stderr


def test_as_of_changes_and_records_nothing_and_refuses_what_it_cannot_read(mem: Path, tmp_path: Path):
    story(mem)
    before = head(mem)
    log = mem / ".git/strata/access.log"
    reads = log.read_bytes() if log.exists() else b""
    ok(mem, "read", "notes/db", "--as-of", "2026-03-03")
    ok(mem, "list", "--as-of", "2026-03-03")
    git(mem, "checkout", "-q", "-b", "side", "HEAD~1")
    git(mem, "commit", "-q", "--allow-empty", "-m", "elsewhere")
    side = head(mem)
    git(mem, "checkout", "-q", "-")
    for bad in ("1999-01-01", "nonsense", side, "--upload-pack=touch x", "HEAD:notes", "2026-02-30", " "):
        proc = strata(mem, "read", "notes/db", f"--as-of={bad}")
        assert proc.returncode != 0 and b"Traceback" not in proc.stderr and proc.stderr.count(b"\n") <= 2, bad
    assert b"not on the memory's current branch" in strata(mem, "read", "notes/db", f"--as-of={side}").stderr
    assert head(mem) == before and git(mem, "status", "--porcelain").stdout == b""
    assert (log.read_bytes() if log.exists() else b"") == reads and not (mem / "x").exists()


def test_as_of_a_revision_of_the_code_repository_uses_its_date(mem: Path, tmp_path: Path):
    story(mem)
    code = tmp_path / "code"
    code.mkdir()
    git(code, "init", "-q")
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@x", "commit", "-q", "--allow-empty", "-m",
                    "the change"], cwd=code, check=True, env={**os.environ, **at("2026-03-07")})
    git(code, "tag", "v1")
    proc = strata(code, "read", "notes/db", "--as-of", "v1", "--json", env={"STRATA_MEMORY": str(mem)})
    assert proc.returncode == 0, proc.stderr
    found = json.loads(proc.stdout)
    assert found["content"] == "Postgres 15." and found["as_of"]["how"] == "code revision"


def test_out_of_order_dates_take_the_first_commit_back_along_first_parents(mem: Path):
    ok(mem, "write", "notes/a", "-m", "One.", env=at("2026-05-01"))
    ok(mem, "write", "notes/a", "--replace", "-m", "Two.", env=at("2026-03-01"))  # a clock running behind
    # 2026-04-01: HEAD (03-01) is the first commit back that is dated at or before it
    assert ok(mem, "read", "notes/a", "--as-of", "2026-04-01").stdout == b"Two."
    assert ok(mem, "read", "notes/a", "--as-of", "HEAD~1").stdout == b"One."


def test_as_of_in_a_pruned_clone_fetches_an_archived_version_without_unpruning(mem: Path, tmp_path: Path):
    remote = bare_remote(tmp_path / "remote.git")
    git(mem, "remote", "add", "origin", str(remote))
    ok(mem, "write", "notes/old", "-m", "Archived words.")
    ok(mem, "janitor", "--now", "+40d")
    ok(mem, "janitor", "--now", "+200d")
    ok(mem, "sync")
    ok(mem, "archive")
    clone = tmp_path / "clone"
    ok(tmp_path, "clone", str(remote), str(clone))
    assert ok(clone, "read", "notes/old", "--as-of", "HEAD").stdout == b"Archived words."
    assert json.loads(ok(clone, "read", "notes/old", "--as-of", "HEAD", "--json").stdout)["tier"] == "archive"
    assert not (clone / "archive/notes/old.md").exists() and git(clone, "status", "--porcelain").stdout == b""
    listed = json.loads(ok(clone, "list", "--as-of", "HEAD", "--tier", "archive", "--json").stdout)
    assert [(e["name"], e["title"]) for e in listed] == [("notes/old", "Archived words.")]  # from its record


def test_the_mcp_tools_take_as_of_and_tell_a_memorys_history(mem: Path):
    import anyio
    from mcp import ClientSession
    from mcp.client.stdio import stdio_client

    from helpers.mcp import params

    story(mem)

    async def main():
        async with stdio_client(params(mem)) as (r, w), ClientSession(r, w) as s:
            await s.initialize()
            read = await s.call_tool("read", {"name": "notes/db", "as_of": "2026-03-03"})
            listed = await s.call_tool("list", {"as_of": "2026-03-03"})
            bad = await s.call_tool("read", {"name": "notes/db", "as_of": "1999-01-01"})
            found = await s.call_tool("search", {"query": "postgres", "as_of": "2026-03-03"})
            context = await s.call_tool("context", {"as_of": "2026-03-03"})
            status = await s.call_tool("status", {"as_of": "2026-03-06"})
            history = await s.call_tool("history", {"name": "notes/db", "diff": True})
            return read, listed, bad, found, context, status, history

    read, listed, bad, found, context, status, history = anyio.run(main)
    assert "Postgres 15." in context.content[0].text and "Postgres 16." not in context.content[0].text
    counted = json.loads(status.content[0].text)
    assert counted["tiers"]["active"]["memories"] == 2 and counted["as_of"]["how"] == "date"
    versions = json.loads(ok(mem, "history", "notes/db", "--json").stdout)
    told = history.content[0].text
    assert told.count("<<memory") >= len(versions) and "-Postgres 15." in told and "+Postgres 16." in told
    assert all(v["commit"] in told for v in versions)
    assert "Postgres 15" in found.content[0].text and "Postgres 16" not in found.content[0].text
    text = read.content[0].text
    assert "Postgres 15." in text and "Postgres 16." not in text
    assert "notes/db" in listed.content[0].text and "notes/cat" not in listed.content[0].text
    assert bad.is_error and "no commit dated at or before" in bad.content[0].text


def test_the_boot_context_as_it_would_have_been_then(mem: Path):
    ok(mem, "write", "decisions/db", "--type", "decision", "-m", "Events in MongoDB.", env=at("2026-03-01"))
    story(mem)  # (the janitor cools the decision too)
    ok(mem, "recall", "decisions/db", env=at("2026-05-01"))
    ok(mem, "write", "decisions/db", "--replace", "--type", "decision", "-m", "Events in Postgres: transactions.",
        env=at("2026-05-01"))
    then = ok(mem, "context", "--as-of", "2026-03-06").stdout.decode()
    assert "Events in MongoDB." in then and "Postgres: transactions" not in then and "Postgres 16." not in then
    assert "Postgres 15." in then  # notes/db as it was, in full
    now = ok(mem, "context").stdout.decode()
    assert "Postgres: transactions" in now and "MongoDB" not in now
    found = json.loads(ok(mem, "context", "--as-of", "2026-03-06", "--json").stdout)
    assert found["decisions"] == ["decisions/db"] and found["active_memories"] == 3


def test_search_as_of_ranks_the_versions_then_in_their_tiers_then(mem: Path):
    story(mem)
    ok(mem, "recall", "notes/db")
    ok(mem, "write", "notes/db", "--replace", "-m", "Now on MySQL.")
    then = json.loads(ok(mem, "search", "postgres", "--as-of", "2026-03-03", "--json").stdout)
    assert [(h["name"], h["tier"]) for h in then] == [("notes/db", "active")]
    assert "Postgres 15" in then[0]["snippet"]
    later = json.loads(ok(mem, "search", "postgres", "--as-of", "2026-04-21", "--json").stdout)
    assert [(h["name"], h["tier"]) for h in later] == [("notes/db", "cooled")] and "16" in later[0]["snippet"]
    assert json.loads(ok(mem, "search", "postgres", "--json").stdout) == []  # now it says MySQL
    assert json.loads(ok(mem, "search", "mysql", "--as-of", "2026-04-21", "--json").stdout) == []
    assert json.loads(ok(mem, "search", "miso", "--as-of", "2026-03-03", "--json").stdout) == []  # not yet written
    refused = strata(mem, "search", "postgres", "--as-of", "HEAD", "--mode", "meaning")
    assert refused.returncode != 0 and b"by words" in refused.stderr
    assert json.loads(ok(mem, "search", "mysql", "--json").stdout)[0]["name"] == "notes/db"  # the index as it was


def _hits(found) -> list[tuple]:
    return [(h["tier"], h["name"], h["score"]) if isinstance(h, dict) else (h.tier, h.name, h.score) for h in found]


def test_a_long_running_vault_answers_as_the_command_does_and_follows_every_change(mem: Path, monkeypatch):
    """The MCP server and the page keep what they worked out for the last point (ops/asof.py) and, over
    most of the index, walk its ranking instead of a table of ids: the same answers as a command's
    one search, by either way of scoring, before and after the live memories change."""
    from strata_git.app.vault import Vault
    from strata_git.core import textindex
    from strata_git.ops import asof
    from strata_git.store import search as words

    for n in range(12):
        text = f"Postgres note {n}: " + "replica " * (n % 4) + "pool"
        ok(mem, "write", f"notes/n{n}", "-m", text, env=at("2026-03-01"))
    ok(mem, "write", "notes/n3", "--replace", "-m", "MySQL now, no pool", env=at("2026-03-05"))
    point = head(mem)
    ok(mem, "write", "notes/n4", "--replace", "-m", "Postgres note 4 changed after: pool pool", env=at("2026-03-08"))
    vault = Vault.open(str(mem))
    vault.watch_files()
    queries = ("postgres pool", "replica", "mysql", "note")
    for within in (10_000, 1):  # a table of ids; the ranking walked
        monkeypatch.setattr(asof, "WITHIN", within)
        for query in queries:
            command = json.loads(ok(mem, "search", query, "--as-of", point, "--json", "--limit", "5").stdout)
            assert _hits(vault.search(query, as_of=point, limit=5)) == _hits(command), (within, query)
    (mem / "active/notes/n5.md").write_text("Edited on disk, not committed: nothing about databases\n")
    ok(mem, "write", "notes/n6", "--replace", "-m", "Postgres note 6, rewritten", env=at("2026-03-09"))
    for query in queries:
        command = json.loads(ok(mem, "search", query, "--as-of", point, "--json", "--limit", "5").stdout)
        assert _hits(vault.search(query, as_of=point, limit=5)) == _hits(command), query
    assert any(name == "notes/n5" for _, name, _ in _hits(vault.search("replica", as_of=point)))

    from strata_git.store import catalog

    with catalog.connect(vault.repo) as db:  # the two ways of scoring agree on any set of rows
        ids = [r[0] for r in db.execute("SELECT id FROM memories ORDER BY path")]
        for among in ({i: k for k, i in enumerate(ids)}, {i: k for k, i in enumerate(ids[::2])}):
            for query in queries:
                terms = textindex.query_terms(query)
                assert words.scored_within(db, terms, among, 3) == words.scored_among(db, terms, among, 3)
