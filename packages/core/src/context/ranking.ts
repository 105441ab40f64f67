import { type Metadata, SourceQuality } from '../model/index.js';

const QUALITY_NAMES: Record<string, SourceQuality> = {
  high: SourceQuality.High,
  medium: SourceQuality.Medium,
  low: SourceQuality.Low,
  unknown: SourceQuality.Unknown,
};

/** Metadata fields read for source quality, first present wins. */
export const DEFAULT_QUALITY_FIELDS: readonly string[] = ['sourceQuality', 'quality'];
/** Metadata fields read for a date, first readable wins. */
export const DEFAULT_DATE_FIELDS: readonly string[] = [
  'date',
  'publishedAt',
  'published_at',
  'updatedAt',
  'updated_at',
  'modifiedAt',
  'createdAt',
  'created_at',
  'timestamp',
  'year',
];

/**
 * A chunk's SourceQuality from metadata: a SourceQuality value (0 to 3) or its name ('high',
 * 'medium', 'low', 'unknown', any case). Anything else is Unknown.
 */
export function readSourceQuality(
  metadata: Metadata | undefined,
  fields: readonly string[] = DEFAULT_QUALITY_FIELDS,
): SourceQuality {
  for (const field of fields) {
    const value = metadata?.[field];
    if (typeof value === 'number' && Number.isInteger(value) && value >= 0 && value <= 3)
      return value as SourceQuality;
    if (typeof value === 'string') {
      const named = QUALITY_NAMES[value.trim().toLowerCase()];
      if (named !== undefined) return named;
    }
  }
  return SourceQuality.Unknown;
}

/**
 * A chunk's date in milliseconds since the epoch, from metadata: an ISO 8601 (or other
 * `Date.parse`-able) string, a year (1000 to 2999), seconds or milliseconds since the epoch
 * (numbers below 10^11 are taken as seconds). Undefined when there is none.
 */
export function readDate(
  metadata: Metadata | undefined,
  fields: readonly string[] = DEFAULT_DATE_FIELDS,
): number | undefined {
  for (const field of fields) {
    const value = metadata?.[field];
    if (typeof value === 'number' && Number.isFinite(value)) {
      if (Number.isInteger(value) && value >= 1000 && value <= 2999) return Date.UTC(value, 0, 1);
      return Math.abs(value) < 1e11 ? value * 1000 : value;
    }
    if (typeof value === 'string' && value.trim() !== '') {
      const trimmed = value.trim();
      if (/^\d{4}$/u.test(trimmed)) return Date.UTC(Number(trimmed), 0, 1);
      const parsed = Date.parse(trimmed);
      if (Number.isFinite(parsed)) return parsed;
    }
  }
  return undefined;
}

/** 0.5^(age / half-life): 1 for now or a future date, 0.5 at one half-life. */
export function recencyScore(dateMs: number, nowMs: number, halfLifeDays: number): number {
  const ageDays = (nowMs - dateMs) / 86_400_000;
  return ageDays <= 0 ? 1 : 0.5 ** (ageDays / halfLifeDays);
}

/** SourceQuality as a score: High 1, Medium 2/3, Low 1/3, Unknown `unknown` (neutral 0.5 by default). */
export function qualityScore(quality: SourceQuality, unknown = 0.5): number {
  return quality === SourceQuality.Unknown ? unknown : quality / SourceQuality.High;
}
