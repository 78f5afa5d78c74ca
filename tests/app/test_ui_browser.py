"""The local page in a real browser: Debian's Chromium (/usr/bin/chromium) driven by Playwright
for Python (no browser download). It opens the printed URL, searches, opens a memory's history,
travels back with the as-of field, and checks that no request leaves 127.0.0.1 and that a hostile
memory's markup is shown as text and never runs. A screenshot of each page is kept in the test's
temporary folder (`screenshots/`).

Without the browser or Playwright these tests are skipped, except in CI (CI set), where
scripts/test.sh installs both and a skip would hide a missing install: there they fail."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from helpers.dated import at, ok
from helpers.ui import served

pytestmark = pytest.mark.slow

CHROMIUM = "/usr/bin/chromium"
FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--disable-default-apps", "--disable-extensions"]


def _browser_or_skip():
    missing = None
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        missing = "playwright is not installed (scripts/test.sh installs it)"
    if missing is None and not os.access(CHROMIUM, os.X_OK):
        missing = f"{CHROMIUM} is missing (Debian's chromium package; scripts/test.sh installs it)"
    if missing:
        if os.environ.get("CI"):
            pytest.fail(missing)
        pytest.skip(missing)
    return sync_playwright


@pytest.fixture
def browser_page(tmp_path: Path):
    sync_playwright = _browser_or_skip()
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        context = browser.new_context(viewport={"width": 1200, "height": 900})
        page = context.new_page()
        page.set_default_timeout(30_000)
        try:
            yield page
        finally:
            context.close()
            browser.close()


def test_in_a_real_browser_search_history_and_as_of_stay_on_127_0_0_1(mem: Path, tmp_path: Path, browser_page):
    ok(mem, "write", "notes/db", "-m", "# Database\n\nPostgres 15 for the event store.", env=at("2026-03-01"))
    ok(mem, "write", "notes/cat", "-m", "# Cat\n\nThe cat is Miso.", env=at("2026-03-05"))
    ok(mem, "write", "notes/db", "--replace", "-m", "# Database\n\nPostgres 16 for the event store.",
        env=at("2026-03-10"))
    ok(mem, "janitor", "--now", "2026-04-20T12:00:00+00:00", env=at("2026-04-20"))
    ok(mem, "write", "notes/evil", "-m", "# Evil\n\n<script>alert('ran')</script><img src=x onerror=alert(2)>"
        "<b>bold</b> <a href=\"javascript:alert(3)\">link</a>", env=at("2026-04-21"))
    ok(mem, "write", "sessions/2026-04-21-port-the-cli", "--type", "session", "-m",
        "# Port the CLI\n\nAsked: port the CLI to Rust.", env=at("2026-04-21"))
    shots = tmp_path / "screenshots"
    shots.mkdir()
    page = browser_page
    dialogs: list[str] = []
    requests: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    page.on("request", lambda r: requests.append(r.url))
    with served(mem) as server:
        origin = f"http://127.0.0.1:{server.port}/"
        page.goto(server.url)
        assert page.url == origin  # the token went into a cookie and out of the address bar
        assert page.locator("h1").inner_text() == "Memory"
        assert page.locator("table").first.inner_text().count("active") == 1
        page.screenshot(path=str(shots / "1-overview.png"), full_page=True)

        page.fill("input[name=q]", "Postgres event store")
        page.click("button[type=submit]")
        assert page.locator("ol li").count() >= 1
        first = page.locator("ol li").first
        assert first.locator(".tier").inner_text() == "cooled" and "notes/db" in first.inner_text()
        page.screenshot(path=str(shots / "2-search.png"), full_page=True)

        first.locator("a").first.click()
        assert page.locator("h1").inner_text().startswith("notes/db")
        assert "Postgres 16" in page.locator("pre.body").inner_text()
        history = page.locator("ol.history").inner_text()
        assert "-Postgres 15 for the event store." in history and "+Postgres 16 for the event store." in history
        assert "Why it is here" in page.content()
        page.screenshot(path=str(shots / "3-memory.png"), full_page=True)

        page.fill("input[name=as_of]", "2026-03-03")
        page.fill("input[name=q]", "Postgres")
        page.click("button[type=submit]")
        hit = page.locator("ol li").first
        assert hit.locator(".tier").inner_text() == "active" and "Postgres 15" in hit.inner_text()
        hit.locator("a").first.click()
        assert "Postgres 15" in page.locator("pre.body").inner_text()
        assert "As of 2026-03-03" in page.inner_text("main")
        page.screenshot(path=str(shots / "4-as-of.png"), full_page=True)

        page.goto(origin + "memory?name=notes/evil")
        body = page.locator("pre.body").inner_text()
        assert "<script>alert('ran')</script><img src=x onerror=alert(2)><b>bold</b>" in body
        assert page.locator("main script, main img, main b, main a[href^=javascript]").count() == 0
        page.screenshot(path=str(shots / "5-hostile.png"), full_page=True)

        page.goto(origin + "sessions")
        assert "Port the CLI" in page.inner_text("main")
        page.screenshot(path=str(shots / "6-sessions.png"), full_page=True)
        page.goto(origin + "plan")
        assert "If the janitor ran now:" in page.inner_text("main")
        page.screenshot(path=str(shots / "7-plan.png"), full_page=True)
        page.goto(origin + "chart?weeks=12")
        assert page.locator("figure.chart svg rect").count() > 0
        page.screenshot(path=str(shots / "8-chart.png"), full_page=True)
    assert dialogs == []  # no script ran
    assert requests and all(url.startswith(origin) for url in requests), [u for u in requests
                                                                         if not u.startswith(origin)]
    assert len(list(shots.glob("*.png"))) == 8
