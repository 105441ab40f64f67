#!/usr/bin/env bash
# Builds faiss-node (the native FAISS binding @zerda/faiss runs on) from source against the
# system's FAISS, without the network access its own install script needs.
#
# faiss-node's install script downloads a prebuilt binary or clones FAISS from GitHub, and pnpm 10
# does not run dependency build scripts anyway, so the package arrives unbuilt. This script:
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

CMAKE_JS_VERSION="${CMAKE_JS_VERSION:-7.4.0}"
SHIM_DIR="packages/faiss/native/deps-faiss"
APT_PACKAGES=(libfaiss-dev libopenblas-dev cmake patchelf g++ make)

fail() {
  cat >&2 <<EOF
setup-faiss: $1

@zerda/faiss needs faiss-node built against a system FAISS. On Debian 12 / Ubuntu:
  sudo apt-get install ${APT_PACKAGES[*]}
  bash scripts/setup-faiss.sh
Elsewhere, install faiss-node with its own install script (npm rebuild faiss-node, which downloads
a prebuilt binary), or set ZERDA_SKIP_FAISS=1 to skip the FAISS tests. See packages/faiss/README.md.
EOF
  exit 1
}

faiss_node_dir="$(node -p "require('node:path').dirname(require.resolve('faiss-node/package.json', { paths: ['packages/faiss'] }))" 2>/dev/null)" ||
  fail "faiss-node is not installed in packages/faiss (run pnpm install first)"

# The fingerprint of what a build is made from: the shim, faiss-node's version, the system FAISS.
fingerprint() {
  {
    cat "$SHIM_DIR"/*
    node -p "require('$faiss_node_dir/package.json').version"
    dpkg-query -W -f='${Version}\n' libfaiss-dev 2>/dev/null || true
  } | sha256sum | cut -d' ' -f1
}

# Loads the binding and runs a search on a flat and an HNSW index.
check_binding() {
  node -e "
    const faiss = require(process.argv[1]);
    const flat = new faiss.IndexFlatIP(2);
    flat.add([1, 0, 0, 1]);
    const hit = flat.search([0.9, 0.1], 1);
    const hnsw = faiss.Index.fromFactory(2, 'HNSW8', faiss.MetricType.METRIC_L2);
    hnsw.add([1, 0, 0, 1, 1, 1]);
    const near = hnsw.search([0, 0.9], 1);
    if (hit.labels[0] !== 0 || near.labels[0] !== 1) throw new Error('unexpected search results');
  " "$faiss_node_dir" 2>&1
}

stamp="$faiss_node_dir/build/zerda-build.stamp"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$(fingerprint)" ] && check_binding >/dev/null; then
  echo "setup-faiss: faiss-node is already built ($faiss_node_dir)"
  exit 0
fi

# 1. System packages, only those missing.
missing=()
for package in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
if [ "${#missing[@]}" -gt 0 ]; then
  command -v apt-get >/dev/null 2>&1 || fail "missing system packages (${missing[*]}) and no apt-get to install them"
  sudo=()
  if [ "$(id -u)" != "0" ]; then
    command -v sudo >/dev/null 2>&1 || fail "missing system packages (${missing[*]}); installing them needs root"
    sudo=(sudo)
  fi
  echo "setup-faiss: installing ${missing[*]}"
  "${sudo[@]}" apt-get update -qq || fail "apt-get update failed"
  DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" ||
    fail "apt-get install ${missing[*]} failed"
fi

# 2. The CMake shim in place of FAISS's sources.
rm -rf "$faiss_node_dir/deps/faiss"
mkdir -p "$faiss_node_dir/deps/faiss"
cp "$SHIM_DIR"/* "$faiss_node_dir/deps/faiss/"

# 3. Compile (cmake-js from the npm registry; Node-API headers from its node-api-headers package).
echo "setup-faiss: compiling faiss-node with cmake-js@$CMAKE_JS_VERSION"
rm -rf "$faiss_node_dir/build"
log="$(mktemp)"
if ! (cd "$faiss_node_dir" && npx --yes "cmake-js@$CMAKE_JS_VERSION" compile --parallel "$(nproc 2>/dev/null || echo 2)") >"$log" 2>&1; then
  tail -n 40 "$log" >&2
  rm -f "$log"
  fail "compiling faiss-node failed (the output is above)"
fi
rm -f "$log"

# 4. It must load and search.
if ! output="$(check_binding)"; then
  echo "$output" >&2
  fail "faiss-node was built but does not load or search"
fi
fingerprint >"$stamp"
echo "setup-faiss: faiss-node built and checked ($faiss_node_dir/build/Release/faiss-node.node)"
