#!/usr/bin/env bash
# Create (or reuse) the project's virtual environment, install git-strata into it and put its bin/
# first on PATH. Safe to source into an interactive shell (no shell option is changed, a failure
# returns instead of exiting): `source scripts/setup.sh` then `git strata ...`.
# Usage: source scripts/setup.sh [EXTRAS]    e.g. EXTRAS=test
_strata_setup() {
    local here venv python extras log
    here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)" || return 1
    venv="${STRATA_VENV:-$here/.venv}"
    python="${PYTHON:-python3}"
    if ! "$python" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
        echo "git-strata needs Python 3.11 or newer ($python is older or missing)" >&2
        return 1
    fi
    if [ ! -x "$venv/bin/python" ] && ! "$python" -m venv "$venv"; then
        echo "could not create the virtual environment $venv" >&2
        return 1
    fi
    extras="${1:-}"
    log="$(mktemp)" || return 1
    if ! "$venv/bin/python" -m pip install -q --disable-pip-version-check "$here${extras:+[$extras]}" >"$log" 2>&1; then
        cat "$log" >&2
        rm -f "$log"
        echo "installing git-strata failed (see pip's messages above)" >&2
        return 1
    fi
    rm -f "$log"
    case ":$PATH:" in
        *":$venv/bin:"*) ;;
        *) export PATH="$venv/bin:$PATH" ;;
    esac
}
_strata_setup "$@"
_strata_status=$?
unset -f _strata_setup
if (return 0 2>/dev/null); then  # sourced: give the status back, never close the shell
    return "$_strata_status"
fi
exit "$_strata_status"
