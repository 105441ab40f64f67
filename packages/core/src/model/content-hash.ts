import { createHash } from 'node:crypto';

/**
 * SHA-256 (hex) of the text lower-cased with white space collapsed, so that copies that differ
 * only in case or spacing hash alike.
 */
export function contentHash(text: string): string {
  const canonical = text.toLowerCase().replace(/\s+/gu, ' ').trim();
  return createHash('sha256').update(canonical, 'utf8').digest('hex');
}
