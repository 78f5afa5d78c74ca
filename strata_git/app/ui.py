"""`git strata ui`: a read-only local page over one memory repository (pages.py draws it).

The server is the standard library's (http.server), bound to 127.0.0.1 only. It answers a
request only when:
- its Host header names 127.0.0.1 or localhost at this port (a page of another site that
  rebinds its own name to 127.0.0.1 sends its own name: refused);
- it carries the random token of the URL printed at start: in the query (`?token=`, which sets
  a cookie and redirects to the same page without it) or in that cookie (SameSite=Strict,
  HttpOnly);
- it is a GET or HEAD of one of the fixed routes below; a memory's name in the query goes through
  the same checks as on the command line (a path trick is a bad name).
Every answer forbids scripts, frames, other origins and caching (Content-Security-Policy and
friends), and the page has no script at all. Nothing is written: a memory is read from history
(`as_of` HEAD, as `read --as-of` does), so opening one records no access and recalls nothing;
the janitor's plan is its dry run.
"""

from __future__ import annotations

import hmac
import secrets
import sys
import threading
import time
from collections.abc import Callable
from http import HTTPStatus
from http.cookies import CookieError, SimpleCookie
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING
from urllib.parse import parse_qs, urlencode, urlsplit

from strata_git.app import chart, pages
from strata_git.core import names
from strata_git.errors import BadName, NotFound, StrataError
from strata_git.gitio import git

if TYPE_CHECKING:
    from strata_git.app.vault import Vault

HOST = "127.0.0.1"
COOKIE = "strata_ui"
MAX_QUERY = 4096  # characters of a request's query string
HEADERS = {
    "Content-Security-Policy": "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; "
                               "base-uri 'none'; frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
    "X-Frame-Options": "DENY",
    "Cross-Origin-Resource-Policy": "same-origin",
}


class Answer(Exception):
    """Leave a route early with this status and page."""

    def __init__(self, status: HTTPStatus, body: str) -> None:
        super().__init__(status)
        self.status = status
        self.body = body


def _one(query: dict[str, list[str]], key: str, default: str = "") -> str:
    values = query.get(key)
    return values[-1].strip() if values else default


class Site:
    """The routes: each takes the parsed query and returns (content type, body)."""

    def __init__(self, vault: Vault) -> None:
        self.vault = vault
        self.lock = threading.Lock()  # one page at a time: the Vault is not shared across threads
        self._drawn: tuple[tuple, list] | None = None  # the last timeline worked out, by its key
        self.routes: dict[str, Callable[[dict[str, list[str]]], tuple[str, str]]] = {
            "/": self.overview, "/browse": self.browse, "/search": self.search, "/memory": self.memory,
            "/sessions": self.sessions, "/plan": self.plan, "/chart": self.chart, "/chart.svg": self.chart_svg,
            "/style.css": lambda _: ("text/css; charset=utf-8", pages.CSS),
        }

    def _entries(self, as_of: str) -> list:
        return self.vault.list(as_of=as_of or None)

    def overview(self, q: dict[str, list[str]]) -> tuple[str, str]:
        as_of = _one(q, "as_of")
        point = self.vault.as_of(as_of) if as_of else None
        head = point.commit if point else self.vault.repo.head()
        return "text/html", pages.overview(self._entries(as_of), head, self.vault.repo.root, as_of)

    def browse(self, q: dict[str, list[str]]) -> tuple[str, str]:
        tier, folder, as_of = _one(q, "tier"), _one(q, "folder").rstrip("/"), _one(q, "as_of")
        if tier not in names.TIERS:
            raise BadName(f"unknown tier {tier[:40]!r}", f"use one of: {', '.join(names.TIERS)}")
        if folder:
            names.normalize(folder)  # the same checks as a name (no .., no absolute path, no control characters)
        return "text/html", pages.browse(self._entries(as_of), tier, folder, as_of)

    def search(self, q: dict[str, list[str]]) -> tuple[str, str]:
        query, tier, as_of = _one(q, "q"), _one(q, "tier"), _one(q, "as_of")
        if tier and tier not in names.TIERS:
            raise BadName(f"unknown tier {tier[:40]!r}", f"use one of: {', '.join(names.TIERS)}")
        hits = self.vault.search(query, tier=tier or None, limit=30, as_of=as_of or None) if query else []
        return "text/html", pages.results(query, hits, tier, as_of)

    def memory(self, q: dict[str, list[str]]) -> tuple[str, str]:
        name, as_of = _one(q, "name"), _one(q, "as_of")
        if not name:
            raise BadName("no memory named", "open a memory from a listing or a search")
        point = self.vault.as_of(as_of or "HEAD")
        found = self.vault.read(name, as_of=point)
        versions = self.vault.history(name, limit=50, diff=True)
        why = None
        summary = ""
        if not as_of:
            try:
                why = self.vault.why(name)
            except NotFound:  # (in no tier now: forgotten since)
                why = None
            if why is not None and why.tier == "cooled":
                try:
                    summary = self.vault.summary(name)[1]
                except StrataError:
                    summary = ""
        return "text/html", pages.memory_page(name, found.tier, found.raw, versions, why, summary, as_of)

    def sessions(self, q: dict[str, list[str]]) -> tuple[str, str]:
        return "text/html", pages.sessions(self.vault.list(type="session"))

    def plan(self, q: dict[str, list[str]]) -> tuple[str, str]:
        return "text/html", pages.plan(self.vault.janitor(dry_run=True).plan)

    def _weeks(self, q: dict[str, list[str]]) -> int:
        text = _one(q, "weeks", "26")  # (its range is checked by Vault.timeline, as on the command line)
        return int(text) if text.isdigit() and len(text) <= 6 else 0

    def _timeline(self, weeks: int) -> list:
        """The weeks, worked out once for each HEAD, number of weeks and day (a million archived
        memories' history takes git a minute or two to compare; see docs/commands.md)."""
        key = (self.vault.repo.head_quick(), weeks, int(time.time()) // 86400)
        if self._drawn is None or self._drawn[0] != key:
            self._drawn = (key, self.vault.timeline(weeks))
        return self._drawn[1]

    def chart(self, q: dict[str, list[str]]) -> tuple[str, str]:
        weeks = self._weeks(q)
        return "text/html", pages.chart_page(weeks, chart.svg(self._timeline(weeks)))

    def chart_svg(self, q: dict[str, list[str]]) -> tuple[str, str]:
        return "image/svg+xml", chart.svg(self._timeline(self._weeks(q)))


def handler(site: Site, token: str, port: int) -> type[BaseHTTPRequestHandler]:
    hosts = {f"127.0.0.1:{port}", f"localhost:{port}"}

    class Handler(BaseHTTPRequestHandler):
        server_version = "git-strata"
        sys_version = ""
        timeout = 30  # a connection that sends nothing is dropped

        def log_message(self, format: str, *args: object) -> None:  # quiet: a URL may hold the token
            pass

        def _send(self, status: HTTPStatus, body: str, kind: str = "text/html",
                  extra: dict[str, str] | None = None) -> None:
            data = body.encode("utf-8")
            self.send_response(status)
            self.send_header("Content-Type", kind if "charset" in kind else f"{kind}; charset=utf-8")
            self.send_header("Content-Length", str(len(data)))
            for key, value in {**HEADERS, **(extra or {})}.items():
                self.send_header(key, value)
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(data)

        def _allowed(self, query: dict[str, list[str]]) -> bool | None:
            """True: the cookie holds the token; None: the query does (set it); False: neither."""
            given = _one(query, "token")
            if given and hmac.compare_digest(given.encode(), token.encode()):
                return None
            try:
                jar = SimpleCookie(self.headers.get("Cookie", ""))
            except CookieError:
                return False
            held = jar.get(COOKIE)
            return held is not None and hmac.compare_digest(held.value.encode(), token.encode())

        def do_GET(self) -> None:
            if self.headers.get("Host", "") not in hosts:
                self._send(HTTPStatus.FORBIDDEN, pages.error(
                    "this page answers only to 127.0.0.1 or localhost at its own port",
                    "open the URL `git strata ui` printed"))
                return
            parts = urlsplit(self.path)
            if len(parts.query) > MAX_QUERY:
                self._send(HTTPStatus.REQUEST_URI_TOO_LONG, pages.error("the request is too long", "shorten the query"))
                return
            try:
                query = parse_qs(parts.query, max_num_fields=20)
            except ValueError:
                self._send(HTTPStatus.BAD_REQUEST, pages.error("the request's query cannot be read", ""))
                return
            allowed = self._allowed(query)
            if allowed is False:
                self._send(HTTPStatus.FORBIDDEN, pages.error(
                    "this page needs the token of the URL `git strata ui` printed",
                    "open that URL (it holds ?token=...)"))
                return
            route = site.routes.get(parts.path)
            if route is None:
                self._send(HTTPStatus.NOT_FOUND, pages.error(f"no page at {parts.path[:80]}",
                                                             "start from the overview"))
                return
            if allowed is None:  # keep the token in a cookie and take it out of the address bar
                rest = {k: v[-1] for k, v in query.items() if k != "token"}
                self._send(HTTPStatus.SEE_OTHER, "", extra={
                    "Location": parts.path + ("?" + urlencode(rest) if rest else ""),
                    "Set-Cookie": f"{COOKIE}={token}; Path=/; HttpOnly; SameSite=Strict"})
                return
            try:
                with site.lock:
                    kind, body = route(query)
            except NotFound as e:
                self._send(HTTPStatus.NOT_FOUND, pages.error(e.message, e.hint))
            except StrataError as e:
                self._send(HTTPStatus.BAD_REQUEST, pages.error(e.message, e.hint))
            except Exception as e:  # noqa: BLE001 - one page's failure must not stop the server; said on stderr
                print(f"git-strata ui: {parts.path}: {type(e).__name__}: {e}", file=sys.stderr, flush=True)
                self._send(HTTPStatus.INTERNAL_SERVER_ERROR, pages.error(
                    "this page failed; the terminal running `git strata ui` says why", ""))
            else:
                self._send(HTTPStatus.OK, body, kind)

        do_HEAD = do_GET

        def _refuse_method(self) -> None:
            self._send(HTTPStatus.METHOD_NOT_ALLOWED, pages.error("this page is read-only", "use GET"),
                       extra={"Allow": "GET, HEAD"})

        do_POST = do_PUT = do_DELETE = do_PATCH = do_OPTIONS = _refuse_method

    return Handler


def start(vault: Vault, port: int = 0) -> tuple[ThreadingHTTPServer, str]:
    """The server bound to 127.0.0.1:`port` (0: any free port), not yet serving, and its URL."""
    if isinstance(port, bool) or not isinstance(port, int) or not 0 <= port <= 65535:
        raise BadName(f"bad port {port!r}", "give a port from 1 to 65535, or leave it out for a free one")
    token = secrets.token_urlsafe(24)
    vault.watch_files()  # a long-running process: told of changed files by the kernel, objects read in-process
    git.use_libgit2()
    site = Site(vault)
    try:
        server = ThreadingHTTPServer((HOST, port), BaseHTTPRequestHandler)
    except OSError as e:
        raise StrataError(f"cannot listen on {HOST}:{port}: {e.strerror}",
                          "pick another port with --port, or leave it out for a free one") from None
    server.daemon_threads = True
    bound = server.server_address[1]
    server.RequestHandlerClass = handler(site, token, bound)  # (the Host check needs the port bound)
    return server, f"http://{HOST}:{bound}/?token={token}"
