"""`git strata ui` started as a user starts it (the console script, --no-browser), read by a plain
HTTP client; stopped by SIGTERM when the test ends."""

from __future__ import annotations

import http.client
import os
import select
import signal
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlsplit

BIN = Path(sys.executable).parent


class Page:
    def __init__(self, url: str) -> None:
        self.url = url
        parts = urlsplit(url)
        self.host, self.port = parts.hostname or "", parts.port or 0
        self.token = parts.query.removeprefix("token=")
        self.cookie = f"strata_ui={self.token}"

    def get(self, path: str, *, cookie: bool = True, host: str | None = None, method: str = "GET",
            headers: dict | None = None) -> tuple[int, dict, str]:
        conn = http.client.HTTPConnection(self.host, self.port, timeout=60)
        sent = {"Host": host or f"{self.host}:{self.port}", **(headers or {})}
        if cookie:
            sent["Cookie"] = self.cookie
        conn.request(method, path, headers=sent)
        answer = conn.getresponse()
        body = answer.read().decode("utf-8", "replace")
        conn.close()
        return answer.status, {k.lower(): v for k, v in answer.getheaders()}, body

    def ok(self, path: str) -> str:
        status, _, body = self.get(path)
        assert status == 200, (path, status, body[:400])
        return body


@contextmanager
def served(mem: Path, *args: str, env: dict | None = None):
    proc = subprocess.Popen([str(BIN / "git-strata"), "ui", "--no-browser", *args], cwd=mem,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env={**os.environ, **(env or {})})
    try:
        ready, _, _ = select.select([proc.stdout], [], [], 60)
        assert ready, "no URL within 60 s"
        line = proc.stdout.readline().decode().strip()  # type: ignore[union-attr]
        assert proc.poll() is None, proc.stderr.read().decode()  # type: ignore[union-attr]
        yield Page(line)
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            raise
        assert proc.returncode == 0, proc.stderr.read().decode()  # type: ignore[union-attr]
