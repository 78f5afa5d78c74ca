#!/usr/bin/env bash
# Create (or reuse) the project's virtual environment and install git-strata into it.
# Usage: source scripts/setup.sh [EXTRAS]    e.g. EXTRAS=test
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="${STRATA_VENV:-$here/.venv}"
python="${PYTHON:-python3}"
"$python" -c 'import sys; sys.exit(sys.version_info < (3, 11))' \
    || { echo "git-strata needs Python 3.11 or newer ($python is older)" >&2; exit 1; }
[ -x "$venv/bin/python" ] || "$python" -m venv "$venv"
extras="${1:-}"
log="$(mktemp)"
if ! "$venv/bin/python" -m pip install -q --disable-pip-version-check "$here${extras:+[$extras]}" >"$log" 2>&1; then
    cat "$log" >&2
    echo "installing git-strata failed (see pip's messages above)" >&2
    exit 1
fi
rm -f "$log"
export PATH="$venv/bin:$PATH"
