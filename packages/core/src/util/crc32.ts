/**
 * CRC-32 (IEEE 802.3, as zlib computes it) in plain JavaScript, so checksums need no Node built-in.
 * Slicing by 8 (eight lookup tables, eight bytes a step) keeps it fast enough for index files of
 * tens of megabytes.
 */
let tables: Uint32Array[] | undefined;

function crcTables(): Uint32Array[] {
  if (tables) return tables;
  const first = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    first[n] = c >>> 0;
  }
  tables = [first];
  for (let t = 1; t < 8; t++) {
    const previous = tables[t - 1] as Uint32Array;
    const table = new Uint32Array(256);
    for (let n = 0; n < 256; n++) {
      const value = previous[n] as number;
      table[n] = ((first[value & 0xff] as number) ^ (value >>> 8)) >>> 0;
    }
    tables.push(table);
  }
  return tables;
}

/** Node's native CRC-32 where the runtime offers it without an import (`process.getBuiltinModule`, Node 20.16+). */
const native = (
  globalThis as {
    process?: {
      getBuiltinModule?: (id: string) => { crc32?: (data: Uint8Array, value?: number) => number } | undefined;
    };
  }
).process?.getBuiltinModule?.('node:zlib')?.crc32;

export function crc32(bytes: Uint8Array, initial = 0): number {
  if (native !== undefined) return native(bytes, initial);
  return crc32Portable(bytes, initial);
}

/** The plain JavaScript CRC-32, used where the runtime has no native one (browsers, edge runtimes). */
export function crc32Portable(bytes: Uint8Array, initial = 0): number {
  const [t0, t1, t2, t3, t4, t5, t6, t7] = crcTables() as [
    Uint32Array,
    Uint32Array,
    Uint32Array,
    Uint32Array,
    Uint32Array,
    Uint32Array,
    Uint32Array,
    Uint32Array,
  ];
  let crc = (initial ^ 0xffffffff) >>> 0;
  let i = 0;
  const end8 = bytes.length - (bytes.length % 8);
  for (; i < end8; i += 8) {
    const low =
      (crc ^
        ((bytes[i] as number) |
          ((bytes[i + 1] as number) << 8) |
          ((bytes[i + 2] as number) << 16) |
          ((bytes[i + 3] as number) << 24))) >>>
      0;
    crc =
      (t7[low & 0xff] as number) ^
      (t6[(low >>> 8) & 0xff] as number) ^
      (t5[(low >>> 16) & 0xff] as number) ^
      (t4[low >>> 24] as number) ^
      (t3[bytes[i + 4] as number] as number) ^
      (t2[bytes[i + 5] as number] as number) ^
      (t1[bytes[i + 6] as number] as number) ^
      (t0[bytes[i + 7] as number] as number);
  }
  for (; i < bytes.length; i++) crc = (t0[(crc ^ (bytes[i] as number)) & 0xff] as number) ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}
