#!/usr/bin/env bash
# Sets up everything the tests need on a fresh Debian 12 machine that has Node.js 20 and npm,
# then runs every check CI runs: lint, types, the whole test suite, the build and packaging checks.
set -euo pipefail
cd "$(dirname "$0")/.."

# Nothing in the repository reads outside it, so a clone in an empty folder passes its own tests
# (scripts/ci-clean-copy.sh runs this script on such a copy). The static half of that promise: no
# tracked file names the folder that used to sit beside the repository, except the history
# (changesets and changelogs). Runs first: it needs neither node_modules nor the network.
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  outside="$(git ls-files -z --cached --others --exclude-standard -- . ':!:.changeset/*.md' ':!:**/CHANGELOG.md' |
    xargs -0 -r grep -lE '\.\./shared' -- 2>/dev/null || true)"
  if [ -n "$outside" ]; then
    echo "ci: these files read outside the repository (a reference to the sibling shared folder):" >&2
    echo "$outside" >&2
    echo "ci: the repository carries its data in datasets/; point them there." >&2
    exit 1
  fi
fi

PNPM_VERSION=10.34.9
if ! command -v pnpm >/dev/null 2>&1 || [ "$(pnpm --version)" != "$PNPM_VERSION" ]; then
  # Corepack's download of pnpm fails its signature check here; npm works.
  npm install -g "pnpm@$PNPM_VERSION"
fi

pnpm install --frozen-lockfile
# The CLI's HTML report test renders the report in a real headless Chromium (Debian's package).
if ! command -v chromium >/dev/null 2>&1; then
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
  $SUDO apt-get update
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y --no-install-recommends chromium
fi
bash scripts/setup-faiss.sh
pnpm lint
pnpm typecheck
pnpm test
pnpm build
pnpm check:packages
# What an npm user installs: every public package packed, installed with npm into a fresh project
# outside the repository, run as ESM and CommonJS, type-checked with skipLibCheck false.
node scripts/check-packed.mjs
