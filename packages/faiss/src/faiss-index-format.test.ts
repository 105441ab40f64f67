import { beforeAll, describe, expect, it } from 'vitest';
import { indexFromBytes, indexToBytes } from './faiss-index.js';
import { FaissFormatProblem, readIndexLayout, readVectors, setHnswParameters } from './faiss-index-format.js';
import { type FaissModule, METRIC_INNER_PRODUCT, METRIC_L2 } from './faiss-module.js';
import { faissSkipped, requireFaiss } from './test-utils/faiss-available.js';

// The layout is read from what the real FAISS writes, for each index type the store builds.
describe.skipIf(faissSkipped)('FAISS index serialisation', () => {
  let faiss: FaissModule;
  beforeAll(async () => {
    faiss = await requireFaiss();
  });
  const dimension = 5;
  const values = Array.from({ length: 40 * dimension }, (_, index) => Math.fround(Math.sin(index)));

  it('reads flat indexes: type, metric, dimension, count and the vectors themselves', () => {
    for (const [make, metric] of [
      [() => new faiss.IndexFlatIP(dimension), 'ip'],
      [() => new faiss.IndexFlatL2(dimension), 'l2'],
    ] as const) {
      const index = make();
      index.add(values);
      const bytes = indexToBytes(index);
      const layout = readIndexLayout(bytes);
      expect(layout).toMatchObject({ type: 'flat', metric, dimension, count: 40 });
      expect(Array.from(readVectors(bytes, layout))).toEqual(values);
    }
  });

  it('reads HNSW indexes, and sets efSearch and efConstruction in them', () => {
    for (const [code, metric] of [
      [METRIC_INNER_PRODUCT, 'ip'],
      [METRIC_L2, 'l2'],
    ] as const) {
      const index = faiss.Index.fromFactory(dimension, 'HNSW12', code);
      index.add(values);
      const bytes = indexToBytes(index);
      const layout = readIndexLayout(bytes);
      expect(layout).toMatchObject({
        type: 'hnsw',
        metric,
        dimension,
        count: 40,
        hnsw: { m: 12, efConstruction: 40, efSearch: 16 },
      });
      expect(Array.from(readVectors(bytes))).toEqual(values);
      setHnswParameters(bytes, { efSearch: 123, efConstruction: 77 });
      const reloaded = indexFromBytes(faiss, bytes);
      expect(readIndexLayout(indexToBytes(reloaded)).hnsw).toMatchObject({
        m: 12,
        efConstruction: 77,
        efSearch: 123,
      });
      expect(reloaded.ntotal()).toBe(40);
      if (metric === 'l2') expect(reloaded.search(values.slice(0, dimension), 1).labels).toEqual([0]);
    }
  });

  it('reads an empty index', () => {
    expect(readIndexLayout(indexToBytes(faiss.Index.fromFactory(3, 'HNSW8', METRIC_L2)))).toMatchObject({
      count: 0,
    });
    expect(readVectors(indexToBytes(new faiss.IndexFlatIP(3)))).toEqual(new Float32Array(0));
  });

  it('refuses anything else, truncated or extended data', () => {
    const index = faiss.Index.fromFactory(dimension, 'HNSW8', METRIC_L2);
    index.add(values);
    const bytes = indexToBytes(index);
    const problem = (data: Uint8Array) => {
      try {
        readIndexLayout(data);
      } catch (error) {
        expect(error).toBeInstanceOf(FaissFormatProblem);
        return (error as Error).message;
      }
      throw new Error('accepted');
    };
    expect(problem(new Uint8Array(0))).toMatch(/ends inside a type code/);
    expect(problem(Buffer.from('IwPQ-some-other-index'))).toMatch(/unsupported index type 'IwPQ'/);
    for (const cut of [10, 60, 200, bytes.length - 1])
      expect(problem(bytes.subarray(0, cut))).toMatch(/ends inside/);
    expect(problem(Buffer.concat([bytes, Buffer.alloc(4)]))).toMatch(/4 unexpected bytes/);
    const wrongMetric = Buffer.from(bytes);
    wrongMetric.writeInt32LE(7, 33); // after the type code, d, ntotal, two dummies and is_trained
    expect(problem(wrongMetric)).toMatch(/metric 7/);
    expect(() => setHnswParameters(indexToBytes(new faiss.IndexFlatL2(2)), { efSearch: 3 })).toThrow(
      /not an HNSW index/,
    );
  });
});
