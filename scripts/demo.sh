#!/usr/bin/env bash
# Quick start 1: install git-strata and run the demo in a temporary folder.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$here/scripts/setup.sh"
exec python "$here/scripts/demo.py" "$@"
