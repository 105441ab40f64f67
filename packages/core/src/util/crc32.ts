/** CRC-32 (IEEE 802.3, as zlib computes it) in plain JavaScript, so checksums need no Node built-in. */
let table: Uint32Array | undefined;

function crcTable(): Uint32Array {
  if (table) return table;
  table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
}

export function crc32(bytes: Uint8Array, initial = 0): number {
  const t = crcTable();
  let crc = (initial ^ 0xffffffff) >>> 0;
  for (let i = 0; i < bytes.length; i++)
    crc = (t[(crc ^ (bytes[i] as number)) & 0xff] as number) ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}
