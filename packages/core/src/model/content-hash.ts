import { sha256Hex } from '../util/sha256.js';

/**
 * SHA-256 (hex) of the text lower-cased with white space collapsed, so that copies that differ
 * only in case or spacing hash alike.
 */
export function contentHash(text: string): string {
  const canonical = text.toLowerCase().replace(/\s+/gu, ' ').trim();
  return sha256Hex(canonical);
}
