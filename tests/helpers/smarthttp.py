"""`git http-backend` behind a small HTTP server on 127.0.0.1: a smart-HTTP remote (protocol v2
included) as hosted services speak it, for the tests and bench/sync.py."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path


class SmartHttp:
    """`git http-backend` behind a small HTTP server on 127.0.0.1 serving the bare repositories in
    `base` (git's smart HTTP protocol, v2 included, as hosted services speak it), stopped by the
    test. Every request's method, path and status is kept in `log`."""

    def __init__(self, base: Path) -> None:
        import http.server
        import threading

        self.base = base
        self.log: list[tuple[str, str, int]] = []
        served = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                self._backend()

            def do_POST(self) -> None:
                self._backend()

            def _body(self) -> bytes:
                if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
                    data = b""
                    while size := int(self.rfile.readline().split(b";")[0].strip() or b"0", 16):
                        data += self.rfile.read(size)
                        self.rfile.readline()
                    self.rfile.readline()
                    return data
                return self.rfile.read(int(self.headers.get("Content-Length") or 0))

            def _backend(self) -> None:
                path, _, query = self.path.partition("?")
                body = self._body()
                env = {"PATH": os.environ["PATH"], "GIT_PROJECT_ROOT": str(served.base), "GIT_HTTP_EXPORT_ALL": "1",
                       "REQUEST_METHOD": self.command, "PATH_INFO": path, "QUERY_STRING": query,
                       "CONTENT_TYPE": self.headers.get("Content-Type", ""), "CONTENT_LENGTH": str(len(body)),
                       "HTTP_CONTENT_ENCODING": self.headers.get("Content-Encoding", ""),
                       "GIT_PROTOCOL": self.headers.get("Git-Protocol", ""), "REMOTE_ADDR": "127.0.0.1",
                       "GIT_CONFIG_NOSYSTEM": "1", "HOME": str(served.base)}
                out = subprocess.run(["git", "http-backend"], input=body, env=env, capture_output=True).stdout
                ends = [i for i in (out.find(b"\r\n\r\n"), out.find(b"\n\n")) if i >= 0]
                sep = b"\r\n\r\n" if ends and out.find(b"\r\n\r\n") == min(ends) else b"\n\n"
                head, _, payload = out.partition(sep)  # the CGI headers end at the first blank line
                headers = [line.split(b":", 1) for line in head.splitlines() if b":" in line]
                status = next((int(v.split()[0]) for k, v in headers if k.strip().lower() == b"status"), 200)
                served.log.append((self.command, path, status))
                self.send_response(status)
                for k, v in headers:
                    if k.strip().lower() != b"status":
                        self.send_header(k.decode().strip(), v.decode().strip())
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, *args: object) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def url(self, name: str) -> str:
        return f"http://127.0.0.1:{self.port}/{name}"

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
