#!/bin/sh
# git-strata hook shim: installed by `git strata install-hooks`, removed by `git strata uninstall-hooks`.
# It runs git-strata's work for this hook, then the hook that was here before git-strata
# (kept beside it as <hook>.strata-chained). It does nothing when git-strata itself runs git.
[ -n "$STRATA_INTERNAL" ] && exit 0
hook=$(basename "$0")
strata='@GIT_STRATA@'
[ -x "$strata" ] || strata=$(command -v git-strata) || strata=
if [ "$hook" = post-commit ]; then
    # pre-commit already wrote index.md for the tree being committed; refresh only if it differs.
    IFS_WAS=$IFS IFS='
'
    set -- $(git rev-parse --git-path strata/router-tree 'HEAD^{tree}' 2>/dev/null)
    IFS=$IFS_WAS
    [ -f "$1" ] && read -r stamp < "$1" && [ "$stamp" = "$2" ] && strata=skip
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
chained="$0.strata-chained"
[ -x "$chained" ] && exec "$chained" "$@"
exit 0
