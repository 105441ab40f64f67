// Run in a new Node process (with --expose-gc) by the serialisation tests: writes an index out and
// reads it back many times, and prints how much the process grew meanwhile. A process of its own,
// so that nothing else the test runner does moves its memory. Usage:
// serialise-loop.ts <file|buffer|forever>: through `indexToBytes`/`indexFromBytes`, or through
// faiss-node's `toBuffer`/`fromBuffer` (which leak, for comparison); `forever` prints "looping"
// and goes through `indexToBytes`/`indexFromBytes` until it is killed.
import { indexFromBytes, indexToBytes } from '../faiss-index.js';
import { loadFaissModule } from '../faiss-module.js';

const through = process.argv[2];
const faiss = await loadFaissModule();
const bufferModule = faiss as unknown as { Index: { fromBuffer(bytes: Buffer): unknown } };
const rows = 2_000;
const index = new faiss.IndexFlatL2(128);
index.add(Array.from({ length: rows * 128 }, (_, at) => Math.sin(at)));
const size = indexToBytes(index).byteLength;

async function roundTrips(count: number): Promise<void> {
  for (let round = 0; round < count; round++) {
    if (through !== 'buffer') indexFromBytes(faiss, indexToBytes(index));
    else bufferModule.Index.fromBuffer((index as unknown as { toBuffer(): Buffer }).toBuffer());
    // As between an application's saves: the indexes read are finalised, and their memory freed,
    // only once the event loop turns.
    await new Promise((resolve) => setImmediate(resolve));
  }
}

// Native memory is freed once the wrappers of the indexes read are collected and finalised.
async function settledRss(): Promise<number> {
  const collect = (globalThis as { gc?: () => void }).gc;
  if (!collect) throw new Error('run with --expose-gc');
  for (let pass = 0; pass < 3; pass++) {
    collect();
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return process.memoryUsage().rss;
}

if (through === 'forever') {
  process.stdout.write('looping\n');
  for (;;) await roundTrips(100);
}

// The allocator keeps a bounded amount of freed memory for reuse; a leak grows with every round.
await roundTrips(50);
const before = await settledRss();
const rounds = 300;
await roundTrips(rounds);
process.stdout.write(JSON.stringify({ size, rounds, growth: (await settledRss()) - before }));
