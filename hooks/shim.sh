#!/bin/sh
# git-strata hook shim: installed by `git strata install-hooks`, removed by `git strata uninstall-hooks`.
# It runs git-strata's work for this hook, then the hook that was here before git-strata
# (kept beside it as <hook>.strata-chained). It does nothing when git-strata itself runs git.
[ -n "$STRATA_INTERNAL" ] && exit 0
hook=$(basename "$0")
hook=${hook%.legacy}  # the pre-commit framework keeps a hook it replaces as <hook>.legacy
strata='@GIT_STRATA@'
[ -x "$strata" ] || strata=$(command -v git-strata) || strata=
if [ "$hook" = post-commit ]; then
    # pre-commit already wrote index.md for the tree being committed; refresh only if it differs.
    IFS_WAS=$IFS IFS='
'
    set -- $(git rev-parse --git-path strata/router-tree 'HEAD^{tree}' 'HEAD^@' 2>/dev/null)
    IFS=$IFS_WAS
    # The stamp is "<tree> <parent>" of the commit pre-commit saw; one pre-commit, at most one skip.
    [ -f "$1" ] && read -r stamp < "$1" && [ "$stamp" = "$2${3:+ $3}" ] && rm -f "$1" && strata=skip
    set --
fi
if [ "$strata" = skip ]; then
    :
elif [ -n "$strata" ]; then
    "$strata" hook "$hook" "$@" || exit $?
elif [ "$hook" = pre-commit ]; then
    echo "git-strata: error: git-strata is not installed, so this commit cannot be checked" >&2
    echo "hint: install git-strata, or delete this hook: $0" >&2
    exit 1
fi
chained="$(dirname "$0")/$hook.strata-chained"
[ -x "$chained" ] && exec "$chained" "$@"
exit 0
