#!/usr/bin/env bash
# Builds faiss-node (the native FAISS binding @zerda/faiss runs on) from source against the
# system's FAISS, without the network access its own install script needs.
#
# faiss-node's install script downloads a prebuilt binary or clones FAISS from GitHub, and pnpm 10
# does not run dependency build scripts anyway, so the package arrives unbuilt. The work is done by
# the command @zerda/faiss ships to its users, `zerda-faiss build` (packages/faiss/bin/zerda-faiss.mjs),
# so the repository and an npm user build it the same way:
#   1. installs the system packages it needs with apt-get, only those missing (Debian 12:
#      libfaiss-dev is FAISS 1.7.3, static, with OpenBLAS);
#   2. puts packages/faiss/native/deps-faiss (a CMake shim: an imported `faiss` target from
#      find_package(faiss), plus a forced-include header defining `faiss::idx_t`, which 1.7.3
#      lacks) where faiss-node's CMakeLists expects the FAISS sources, `deps/faiss`;
#   3. compiles faiss-node with cmake-js 7, which takes the Node-API headers from its
#      node-api-headers dependency (no download of Node's headers);
#   4. checks that the result loads and searches.
# Idempotent: when the build is present, made from the same shim, and loads, it exits at once.
#
# Environment: ZERDA_SKIP_FAISS=1 skips everything (the FAISS tests are then skipped too);
# CMAKE_JS_VERSION overrides the cmake-js version used.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "${ZERDA_SKIP_FAISS:-}" = "1" ]; then
  echo "setup-faiss: ZERDA_SKIP_FAISS=1, not building faiss-node (the FAISS tests will be skipped)"
  exit 0
fi

if ! faiss_node_dir="$(node -p "require('node:path').dirname(require.resolve('faiss-node/package.json', { paths: ['packages/faiss'] }))" 2>/dev/null)"; then
  echo "setup-faiss: faiss-node is not installed in packages/faiss (run pnpm install first)" >&2
  exit 1
fi

exec node packages/faiss/bin/zerda-faiss.mjs build --install-system-packages --faiss-node "$faiss_node_dir"
