// Forced into every translation unit of faiss-node by the CMake shim beside this file:
// FAISS 1.7.3 (Debian 12's libfaiss-dev) lacks the namespace-level `faiss::idx_t` of 1.7.4.
#pragma once
#include <cstdint>

namespace faiss {
using idx_t = int64_t;
}
