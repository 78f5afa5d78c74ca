"""`git strata ui`: a read-only page on 127.0.0.1, behind a random token and a Host check, that
escapes every memory's text, refuses path tricks, changes nothing, and shows what history holds
(checked against `git show`)."""

from __future__ import annotations

import json
import re
import subprocess
from html import unescape
from pathlib import Path
from urllib.parse import quote

import pytest

from conftest import BIN, git, head, strata
from helpers.dated import at, ok, story
from helpers.ui import served

pytestmark = pytest.mark.slow  # a server process per test


def _listening_on(port: int) -> set[str]:
    """The local addresses a socket listens on at `port`, from /proc/net/tcp (and tcp6)."""
    found = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            local, state = line.split()[1], line.split()[3]
            address, _, hex_port = local.partition(":")
            if int(hex_port, 16) == port and state == "0A":
                found.add(address)
    return found


def test_the_url_comes_first_and_only_the_token_on_our_own_host_opens_the_page(mem: Path):
    with served(mem) as page:
        assert re.fullmatch(r"http://127\.0\.0\.1:\d+/\?token=[A-Za-z0-9_-]{32}", page.url)
        assert _listening_on(page.port) == {"0100007F"}  # 127.0.0.1 only
        status, headers, body = page.get("/", cookie=False)
        assert status == 403 and "needs the token" in body
        assert page.get("/?token=wrong", cookie=False)[0] == 403
        assert page.get("/", cookie=False, headers={"Cookie": "strata_ui=wrong"})[0] == 403
        status, headers, _ = page.get(f"/search?q=db&token={page.token}", cookie=False)
        assert status == 303 and headers["location"] == "/search?q=db"  # the token leaves the address bar
        assert headers["set-cookie"] == f"strata_ui={page.token}; Path=/; HttpOnly; SameSite=Strict"
        status, headers, body = page.get("/")
        assert status == 200 and "<h1>Memory</h1>" in body
        assert "script-src" not in headers["content-security-policy"]  # no script may run at all
        assert headers["content-security-policy"].startswith("default-src 'none'")
        assert headers["cache-control"] == "no-store" and headers["referrer-policy"] == "no-referrer"
        for host in (f"evil.example:{page.port}", "127.0.0.1", f"127.0.0.1:{page.port + 1}", "localhost"):
            status, _, body = page.get("/", host=host)  # a rebound name, or another port: refused
            assert status == 403 and "answers only to 127.0.0.1 or localhost" in body, host
        assert page.get("/", host=f"localhost:{page.port}")[0] == 200
        for method in ("POST", "PUT", "DELETE"):
            assert page.get("/", method=method)[0] == 405
        assert page.get("/" + "x" * 10)[0] == 404


def test_a_hostile_memory_is_shown_as_text_never_run(mem: Path):
    hostile = ('---\ntitle: "\\"><img src=x onerror=alert(1)>"\ntags: ["<b>t</b>"]\n---\n'
               "<script>alert('body')</script>\n[x](javascript:alert(2)) <iframe src=//evil.example>\n")
    ok(mem, "write", "notes/evil", input_file(mem, hostile))
    with served(mem) as page:
        for path in ("/memory?name=notes/evil", "/search?q=alert", "/browse?tier=active&folder=notes", "/"):
            body = page.ok(path)
            for markup in ("<script", "<img", "<iframe", "<b>t</b>", 'href="javascript'):
                assert markup not in body, (path, markup)
        body = page.ok("/memory?name=notes/evil")
    assert "&lt;script&gt;alert(&#x27;body&#x27;)&lt;/script&gt;" in body
    table = body.split('<table class="frontmatter">')[1].split("</table>")[0]
    assert "<img src=x onerror=alert(1)>" in unescape(table)  # shown, as text, in the frontmatter table


def input_file(mem: Path, text: str) -> str:
    path = mem.parent / "evil.md"
    path.write_text(text)
    return f"--file={path}"


def test_path_tricks_are_refused_and_nothing_leaks(mem: Path):
    story(mem)
    with served(mem) as page:
        for path in ("/memory?name=../../../etc/passwd", "/memory?name=%2e%2e/%2e%2e/etc/passwd",
                     "/memory?name=/etc/passwd", "/memory?name=notes/db%00x", "/memory?name=.git/config",
                     "/browse?tier=../x", "/browse?tier=active&folder=../..", "/browse?tier=active&folder=/etc",
                     "/search?q=x&tier=..", "/chart?weeks=-1", "/chart?weeks=99999999", "/memory?name="):
            status, _, body = page.get(path)
            assert status in (400, 404), (path, status)
            assert "root:" not in body and "[core]" not in body and "Traceback" not in body, path
        for path in ("/../../etc/passwd", "//etc/passwd", "/style.css/..", "/%2e%2e/etc/passwd", "/.git/config"):
            status, _, body = page.get(path)
            assert status == 404 and "root:" not in body, path
        assert page.get("/memory?name=notes/db&" + "&".join(f"k{i}=v" for i in range(40)))[0] == 400
        assert page.get("/search?q=" + "x" * 5000)[0] == 414


def test_a_memory_page_shows_it_as_history_had_it_with_its_versions_and_why(mem: Path):
    story(mem)
    with served(mem) as page:
        then = unescape(page.ok("/memory?name=notes/db&as_of=2026-03-03"))
        rev = git(mem, "rev-list", "-1", "--first-parent", "--before=2026-03-03T23:59:59+00:00", "HEAD").stdout
        shown = git(mem, "show", f"{rev.decode().strip()}:active/notes/db.md").stdout.decode()
        assert shown.strip() and shown.strip() in then and "Postgres 16." not in then.split("<h2>History")[0]
        assert 'tier-active">active<' in then and "As of 2026-03-03" in then
        now = unescape(page.ok("/memory?name=notes/db"))
        assert git(mem, "show", "HEAD:cooled/notes/db.md").stdout.decode().strip() in now
        assert 'tier-cooled">cooled<' in now and "Why it is here" in now and "cool.after_days" in now
        history = now.split("<h2>History</h2>")[1]
        versions = json.loads(ok(mem, "history", "notes/db", "--json").stdout)
        assert [v["commit"][:12] for v in versions] == re.findall(r"\d{4}-\d\d-\d\d ([0-9a-f]{12})</a>", history)
        assert "-Postgres 15." in history and "+Postgres 16." in history and "cool" in history
        assert page.ok(f"/memory?name={quote('notes/db')}&as_of={versions[-1]['commit']}").count("Postgres 15.") >= 1
        status, _, body = page.get("/memory?name=notes/cat&as_of=2026-03-02")
        assert status == 404 and "no memory named" in unescape(body)
        found = page.ok("/search?q=Miso")
        assert 'tier-cooled">cooled<' in found and "notes/cat" in found
        assert "Postgres 15." in page.ok("/search?q=Postgres&as_of=2026-03-03")
        assert "Postgres 15." not in page.ok("/search?q=Postgres")


def test_every_page_changes_nothing_and_the_plan_is_the_janitors_dry_run(mem: Path):
    story(mem)
    ok(mem, "write", "notes/new", "-m", "fresh", env=at("2026-04-21"))
    ok(mem, "write", "sessions/2026-04-21-port-the-cli", "--type", "session", "--project", "github.com/o/app",
        "-m", "# Port the CLI\n\nAsked: port it.", env=at("2026-04-21"))
    before = head(mem)
    log = mem / ".git/strata/access.log"
    reads = log.read_bytes() if log.exists() else b""
    refs = git(mem, "for-each-ref").stdout
    with served(mem) as page:
        for path in ("/", "/browse?tier=cooled&folder=notes", "/search?q=cat", "/search?q=cat&as_of=2026-03-06",
                     "/memory?name=notes/cat", "/memory?name=notes/db&as_of=HEAD~1", "/sessions", "/plan",
                     "/chart", "/chart.svg?weeks=8", "/style.css"):
            page.ok(path)
        plan = unescape(page.ok("/plan"))
        sessions = page.ok("/sessions")
        svg = page.ok("/chart.svg?weeks=60")
    assert head(mem) == before and git(mem, "status", "--porcelain").stdout == b""
    assert (log.read_bytes() if log.exists() else b"") == reads and git(mem, "for-each-ref").stdout == refs
    dry = json.loads(ok(mem, "janitor", "--dry-run", "--json").stdout)
    assert f"If the janitor ran now: {dry['summary']}" in plan
    for move in dry["moves"]:
        assert f">{move['name']}</a></td><td>{move['action']}</td>" in plan
    assert "github.com/o/app (1)" in sessions and "Port the CLI" in sessions
    counts = json.loads(ok(mem, "stats", "--chart", "--weeks", "60", "--json").stdout)["weeks"]
    last = counts[-1]
    assert (f"<title>{last['week']}: active {last['tiers']['active']}, cooled {last['tiers']['cooled']}, "
            f"archive {last['tiers']['archive']}</title>") in svg
    assert svg.startswith("<svg") and "<script" not in svg


def test_a_busy_port_and_a_bad_port_are_one_line_errors(mem: Path):
    with served(mem) as page:
        proc = strata(mem, "ui", "--no-browser", "--port", str(page.port))
        assert proc.returncode != 0 and f"cannot listen on 127.0.0.1:{page.port}".encode() in proc.stderr
        assert proc.stderr.count(b"\n") <= 2 and proc.stdout == b""
    proc = strata(mem, "ui", "--no-browser", "--port", "70000")
    assert proc.returncode != 0 and b"bad port" in proc.stderr
    started = subprocess.Popen([str(BIN / "git-strata"), "ui", "--no-browser", "--json"], cwd=mem,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        line = started.stdout.readline()  # type: ignore[union-attr]
        assert re.fullmatch(r"http://127\.0\.0\.1:\d+/\?token=\S+", json.loads(line)["url"])
    finally:
        started.terminate()
        assert started.wait(timeout=20) == 0


def test_an_archived_memory_opens_in_a_pruned_clone_which_stays_pruned(mem: Path, tmp_path: Path):
    from helpers.archive import archived_blobs, held, pruned_clone

    clone = pruned_clone(mem, tmp_path, {"notes/old": "An old note about the harbor crane."})
    oids = list(archived_blobs(clone).values())
    with served(clone) as page:
        found = page.ok("/search?q=harbor+crane")
        assert 'tier-archive">archive<' in found and "notes/old" in found
        shown = page.ok("/memory?name=notes/old")
        assert "An old note about the harbor crane." in shown and 'tier-archive">archive<' in shown
        assert "archive" in shown.split("<h2>History</h2>")[1]
    assert oids and not any(held(clone, oid) for oid in oids)  # read through a scratch repository
