import { loadFaissModule } from '../faiss-module.js';

/**
 * The FAISS tests run against the real faiss-node build. `ZERDA_SKIP_FAISS=1` skips them (for a
 * machine that cannot build it; CI never sets it). Otherwise a missing build fails every test with
 * the store's own BackendError, which says how to build faiss-node.
 */
export const faissSkipped = process.env.ZERDA_SKIP_FAISS === '1';

/** Loads faiss-node, throwing the install instructions when it is not built. */
export const requireFaiss = loadFaissModule;
