#!/usr/bin/env bash
# Runs scripts/ci.sh on a copy of the repository in a fresh, otherwise empty temporary folder, as a
# person who clones it would: nothing beside it, no node_modules, no build output, no caches. A test,
# example or script that reads outside the repository fails here.
#
# The copy holds what git would commit: tracked files plus untracked ones that .gitignore does not
# exclude (so uncommitted work is checked too), and it is a git repository of its own (the files staged,
# nothing committed), so the checks that list tracked files still work.
#
# Usage: bash scripts/ci-clean-copy.sh [--keep]   (--keep leaves the copy behind and prints where)
set -euo pipefail
cd "$(dirname "$0")/.."

keep=0
if [ "${1:-}" = "--keep" ]; then keep=1; fi

parent="$(mktemp -d "${TMPDIR:-/tmp}/zerda-clean-XXXXXX")"
copy="$parent/zerda"
mkdir "$copy"
if [ "$keep" = "0" ]; then
  trap 'rm -rf "$parent"' EXIT
fi

# Tracked and not-ignored files that exist (a file deleted in the working tree is left out).
git ls-files -z --cached --others --exclude-standard |
  while IFS= read -r -d '' file; do
    if [ -f "$file" ] || [ -L "$file" ]; then printf '%s\0' "$file"; fi
  done |
  tar --null --files-from=- -cf - | tar -xf - -C "$copy"

git -C "$copy" init --quiet
git -C "$copy" add --all

echo "ci-clean-copy: running scripts/ci.sh in $copy (its folder holds nothing else: $(ls -A "$parent" | tr '\n' ' '))"
(cd "$copy" && bash scripts/ci.sh)
if [ "$keep" = "1" ]; then echo "ci-clean-copy: the copy stays in $copy"; fi
