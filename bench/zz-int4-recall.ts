import { HashEmbedder } from '@zerda/core';
import { SyntheticCorpus } from './corpus/synthetic.js';
import { clusteredVectors } from './lib/vector-bench.js';
const D = 384;
function evalSet(name: string, vecs: Float32Array, n: number, queries: Float32Array[], k: number) {
  // normalise
  const signs = new Float32Array(n * D); const scale = new Float32Array(n);
  for (let r = 0; r < n; r++) { let a = 0; let nn = 0; for (let j = 0; j < D; j++) nn += vecs[r*D+j]**2; nn = Math.sqrt(nn) || 1;
    for (let j = 0; j < D; j++) { vecs[r*D+j] /= nn; a += Math.abs(vecs[r*D+j]); }
    let mx = 0; for (let j = 0; j < D; j++) mx = Math.max(mx, Math.abs(vecs[r*D+j])); const L = Number(process.env.LEVELS ?? 7);
    scale[r] = mx / L; for (let j = 0; j < D; j++) signs[r*D+j] = Math.round(vecs[r*D+j] / scale[r]); }
  const Ns = [100, 200, 500, 1000, 2000, 5000];
  const hits = new Map<number, number>(Ns.map((x) => [x, 0])); const hitsU = new Map<number, number>(Ns.map((x) => [x, 0]));
  const exact = new Float32Array(n); const est = new Float32Array(n); const estU = new Float32Array(n);
  let total = 0; let worstRank = 0; const ranks: number[] = [];
  for (const q of queries) {
    let qn = 0; for (let j = 0; j < D; j++) qn += q[j]**2; qn = Math.sqrt(qn);
    for (let r = 0; r < n; r++) { let e = 0, s = 0; for (let j = 0; j < D; j++) { e += q[j]*vecs[r*D+j]; s += q[j]*signs[r*D+j]; } exact[r] = e/qn; est[r] = s*scale[r]; estU[r] = s; }
    const ex = Array.from(exact.keys()).sort((a, b) => exact[b] - exact[a]).slice(0, k);
    const order = Array.from(est.keys()).sort((a, b) => est[b] - est[a]);
    const pos = new Int32Array(n); order.forEach((r, i) => { pos[r] = i; });
    const orderU = Array.from(estU.keys()).sort((a, b) => estU[b] - estU[a]);
    const posU = new Int32Array(n); orderU.forEach((r, i) => { posU[r] = i; });
    // ties at k boundary: count true neighbours whose exact score > kth exact
    for (const r of ex) { total++; ranks.push(pos[r]); worstRank = Math.max(worstRank, pos[r]); for (const N of Ns) { if (pos[r] < N) hits.set(N, hits.get(N)! + 1); if (posU[r] < N) hitsU.set(N, hitsU.get(N)! + 1); } }
  }
  ranks.sort((a, b) => a - b);
  console.log(name, 'k', k, Ns.map((N) => `N=${N}: ${(hits.get(N)!/total).toFixed(4)} / unscaled ${(hitsU.get(N)!/total).toFixed(4)}`).join('  '), 'worst rank', worstRank, 'p99 rank', ranks[Math.floor(ranks.length*0.99)]);
}
const n = Number(process.argv[2] ?? 20000); const qn = 100;
const corpus = new SyntheticCorpus();
const docs = corpus.documents(n); const qs = corpus.queries(qn);
const emb = new HashEmbedder({ dimension: D, analyzer: { name: 'ws', analyze: (t: string) => t.split(' ') }, charNGrams: false });
const vecs = new Float32Array(n * D); let i = 0;
for (let s = 0; s < n; s += 2048) for (const v of await emb.embed(docs.slice(s, s + 2048).map((d) => d.text))) { vecs.set(v, i * D); i++; }
const qv: Float32Array[] = []; for (const q of qs) qv.push(await emb.embedQuery(q));
let nz = 0; for (const q of qv) for (let j = 0; j < D; j++) if (q[j] !== 0) nz++; console.log('query nonzero dims avg', nz / qv.length);
evalSet('hash', vecs, n, qv, 20);
const c = clusteredVectors(n, qn, 3);
evalSet('clustered', c.vectors, n, c.queries, 10);
