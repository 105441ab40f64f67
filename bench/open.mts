import { HashEmbedder, InMemoryVectorStore, openCollection, type Analyzer } from '@zerda/core';
import { createFileStorage } from '@zerda/core/node';
const dir = process.argv[2] as string;
const whitespaceAnalyzer: Analyzer = { name: 'whitespace', analyze: (text) => text.split(' ') };
const embedder = new HashEmbedder({ dimension: 384, analyzer: whitespaceAnalyzer, charNGrams: false });
const mode = process.argv[3] ?? 'open';
const cpu = process.cpuUsage();
const t = performance.now();
if (mode === 'read') {
  const blobs = await createFileStorage(dir).readSnapshot();
  let n = 0; for (const b of blobs!.values()) n += b.byteLength;
  console.log(`read ${(n/1048576).toFixed(0)} MiB`);
} else {
  const c = await openCollection({ store: new InMemoryVectorStore({ dimension: 384, embedder }), analyzer: whitespaceAnalyzer, storage: createFileStorage(dir) });
  const ms = performance.now() - t;
  const u = process.cpuUsage(cpu);
  const r = await c.retrieve('the study of systems', { k: 10 });
  console.log((globalThis as any).__L?.join(", ")); const T=(globalThis as any).__t ?? [0]; if (T.length > 1) console.log("phases", T.slice(1).map((x:number,i:number)=>(x-T[i]).toFixed(0)).join(" "), "start", (T[0]-t).toFixed(0)); console.log(`${mode} wall ${ms.toFixed(0)} cpu ${((u.user + u.system) / 1000).toFixed(0)} rss ${(process.memoryUsage().rss/1048576).toFixed(0)}MiB hits ${r.hits.length} text0 ${r.hits[0]?.chunk.text.length}`);
  await c.close();
  process.exit(0);
}
const u = process.cpuUsage(cpu);
console.log((globalThis as any).__L?.join(", ")); const T=(globalThis as any).__t ?? [0]; if (T.length > 1) console.log("phases", T.slice(1).map((x:number,i:number)=>(x-T[i]).toFixed(0)).join(" "), "start", (T[0]-t).toFixed(0)); console.log(`${mode} wall ${(performance.now() - t).toFixed(0)} cpu ${((u.user + u.system) / 1000).toFixed(0)}`);
