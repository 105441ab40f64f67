import { createHash } from 'node:crypto';
import { crc32 as zlibCrc32 } from 'node:zlib';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { crc32, crc32Portable } from './crc32.js';
import { sha256Hex } from './sha256.js';

// The runtime-neutral hashes must equal Node's on any input, so files written before stay readable.
describe('pure JavaScript hashes', () => {
  it('sha256Hex equals node:crypto on any bytes and text (block boundaries included)', () => {
    for (const length of [0, 1, 55, 56, 63, 64, 65, 119, 120, 1000]) {
      const text = 'ab\u00e9\u0627'.repeat(length).slice(0, length);
      expect(sha256Hex(text)).toBe(createHash('sha256').update(text, 'utf8').digest('hex'));
    }
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), (bytes) => {
        expect(sha256Hex(bytes)).toBe(createHash('sha256').update(bytes).digest('hex'));
      }),
      { numRuns: 200 },
    );
  });

  it('crc32 equals zlib on any bytes', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 2000 }), (bytes) => {
        expect(crc32(bytes)).toBe(zlibCrc32(bytes));
        expect(crc32Portable(bytes)).toBe(zlibCrc32(bytes));
        expect(crc32Portable(bytes, 12345)).toBe(zlibCrc32(bytes, 12345));
      }),
      { numRuns: 200 },
    );
  });
});
