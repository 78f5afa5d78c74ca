"""What the benchmark scripts share: a hermetic environment, checked and timed commands, and
round-robin sampling so machine noise falls on every variant alike."""

from __future__ import annotations

import os
import shlex
import statistics
import subprocess
import sys
import time
from pathlib import Path

BIN = Path(sys.executable).parent
USER = ("Bench User", "bench@example.invalid")


def progress(msg: str) -> None:
    if sys.stderr.isatty():
        print(f"... {msg}", file=sys.stderr, flush=True)


def hermetic_env(home: Path) -> dict[str, str]:
    """No GIT_*/STRATA_* or pre-commit settings from outside; a fixed identity; this venv first.
    Python may write its bytecode caches, as an installed package has them: without them every
    process compiles the modules changed since the last cached run (tens of ms a process)."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("GIT_", "STRATA_", "PRE_COMMIT"))
           and k not in ("XDG_CONFIG_HOME", "VIRTUAL_ENV", "PYTHONDONTWRITEBYTECODE")}
    env.update(HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"), GIT_CONFIG_NOSYSTEM="1",
               PRE_COMMIT_HOME=str(home / ".cache" / "pre-commit"), LC_ALL="C.UTF-8",
               PATH=f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}")
    for role in ("AUTHOR", "COMMITTER"):
        env[f"GIT_{role}_NAME"], env[f"GIT_{role}_EMAIL"] = USER
    return env


def _failed(cmd: list[str], proc: subprocess.CompletedProcess) -> None:
    sys.exit(f"failed ({proc.returncode}): {shlex.join(cmd)}\n{proc.stderr.decode(errors='replace')}")


def sh(cmd: list[str], cwd: Path, env: dict[str, str]) -> str:
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, stdin=subprocess.DEVNULL, check=False)
    if proc.returncode != 0:
        _failed(cmd, proc)
    return proc.stdout.decode(errors="replace")


def timed(cmd: list[str], cwd: Path, env: dict[str, str]) -> float:
    """Wall time in ms of one run of `cmd` (which must succeed), its output discarded."""
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                          stdin=subprocess.DEVNULL, check=False)
    elapsed = (time.perf_counter() - start) * 1000
    if proc.returncode != 0:
        _failed(cmd, proc)
    return elapsed


def round_robin(variants: dict, samples: int, label: str) -> dict[str, list[float]]:
    """variants: name -> zero-argument function returning ms; one untimed warm-up each."""
    for run in variants.values():
        run()
    times: dict[str, list[float]] = {name: [] for name in variants}
    for i in range(samples):
        progress(f"{label} round {i + 1}/{samples}")
        for name, run in variants.items():
            times[name].append(run())
    return times


def stats(values: list[float]) -> dict[str, float]:
    return {"median_ms": round(statistics.median(values), 1), "min_ms": round(min(values), 1), "n": len(values)}


def emit(result: dict, as_json: bool, report, kept=None) -> None:
    """Print `result` as JSON, or through `report` for people (then say which folder was kept)."""
    if as_json:
        import json

        print(json.dumps(result, indent=2))
        return
    report(result)
    if kept:
        print(f"kept: {kept}")


def hermetic_process(tmp: Path) -> dict[str, str]:
    """hermetic_env (home in `tmp`) made this process's own environment too: for benchmarks that
    call git-strata in process."""
    (tmp / "home").mkdir()
    env = hermetic_env(tmp / "home")
    os.environ.clear()
    os.environ.update(env)
    return env


def git_daemon(base: Path) -> tuple[subprocess.Popen, int]:
    """`git daemon` serving every repository under `base` (pushes allowed) on a free 127.0.0.1 port."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen(["git", "daemon", "--reuseaddr", f"--base-path={base}", "--export-all",
                             "--enable=receive-pack", "--listen=127.0.0.1", f"--port={port}", str(base)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(200):
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return proc, port
        time.sleep(0.05)
    sys.exit("git daemon did not start")
