#!/usr/bin/env bash
# Sets up everything the tests need on a fresh Debian 12 machine that has Node.js 20 and npm,
# then runs every check CI runs: lint, types, the whole test suite, the build and packaging checks.
set -euo pipefail
cd "$(dirname "$0")/.."

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
