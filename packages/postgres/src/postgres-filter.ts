import type { FilterConvention, FilterNode } from '@zerda/core';

/**
 * A filter in Postgres's own form: a SQL boolean expression over the store's table, whose
 * placeholders are `$1` ... `$n` for `params` (the driver numbers its own parameters after them).
 * Column names: `id`, `text`, `doc_id`, `metadata` (jsonb), `embedding`. Written by hand, every
 * value belongs in `params`, never in `sql`.
 */
export interface PostgresFilter {
  readonly sql: string;
  readonly params: readonly unknown[];
}

/** Text Postgres cannot hold (NUL, unpaired surrogates): such a value never matches a stored one. */
export const unstorableText = /\0|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

function storable(node: FilterNode): boolean {
  if (node.kind === 'and' || node.kind === 'or') return node.children.every(storable);
  if (node.kind === 'not') return storable(node.child);
  const values = node.kind === 'in' ? node.values : node.kind === 'compare' ? [node.value] : [];
  return ![node.field, ...values].some((value) => typeof value === 'string' && unstorableText.test(value));
}

/**
 * Zerda's semantics in SQL over the jsonb `metadata` column, every key and value a bound
 * parameter. The field's value `v` is a jsonb expression: `metadata -> $k`, `to_jsonb(id)` for
 * `id`, `COALESCE(to_jsonb(doc_id), metadata -> 'docId')` for `docId`; SQL NULL when missing.
 * - `$eq s`: `v @> s` (jsonb containment: equal scalar of the same type, or an array holding s);
 * - ranges: `jsonb_typeof(v) = 'number' AND v > n` (jsonb compares numbers numerically);
 * - `$in`: some list element e with `v @> e`; `$exists`: v present and not JSON null;
 * - every leaf is `COALESCE(..., false)`, so `NOT`, `$ne` and `$nin` match missing fields.
 */
function toSql(node: FilterNode, params: unknown[]): string {
  const bind = (value: unknown) => `$${params.push(value)}`;
  const field = (name: string) =>
    name === 'id'
      ? 'to_jsonb(id)'
      : name === 'docId'
        ? `COALESCE(to_jsonb(doc_id), metadata -> ${bind('docId')}::text)`
        : `(metadata -> ${bind(name)}::text)`;
  const json = (value: unknown) => `${bind(JSON.stringify(value))}::jsonb`;
  switch (node.kind) {
    case 'and':
    case 'or': {
      if (node.children.length === 0) return node.kind === 'and' ? 'TRUE' : 'FALSE';
      const joined = node.children.map((child) => `(${toSql(child, params)})`);
      return joined.join(node.kind === 'and' ? ' AND ' : ' OR ');
    }
    case 'not':
      return `NOT (${toSql(node.child, params)})`;
    case 'compare': {
      const v = field(node.field);
      if (node.op === 'eq' || node.op === 'ne') {
        const eq = `COALESCE(${v} @> ${json(node.value)}, false)`;
        return node.op === 'eq' ? eq : `NOT ${eq}`;
      }
      const op = { gt: '>', gte: '>=', lt: '<', lte: '<=' }[node.op];
      return `COALESCE(jsonb_typeof(${v}) = 'number' AND ${v} ${op} ${json(node.value)}, false)`;
    }
    case 'in': {
      const member = `COALESCE(EXISTS (SELECT 1 FROM jsonb_array_elements(${json(node.values)}) AS e(value) WHERE ${field(node.field)} @> e.value), false)`;
      return node.negated ? `NOT ${member}` : member;
    }
    case 'exists': {
      const present = `COALESCE(jsonb_typeof(${field(node.field)}) <> 'null', false)`;
      return node.exists ? present : `NOT ${present}`;
    }
  }
}

/**
 * The Postgres convention: the whole filter language as a SQL expression with bound parameters.
 * A filter naming text Postgres cannot hold (NUL, unpaired surrogates) stays client-side.
 */
export const postgresFilterConvention: FilterConvention<PostgresFilter> = Object.freeze({
  name: 'postgres',
  canPushDown: storable,
  translate(node: FilterNode): PostgresFilter {
    const params: unknown[] = [];
    return { sql: toSql(node, params), params };
  },
  checkNative(value: unknown): string | undefined {
    const filter = value as Partial<PostgresFilter> | null;
    if (typeof filter?.sql !== 'string' || filter.sql.trim() === '' || !Array.isArray(filter.params)) {
      return 'expected { sql: string, params: unknown[] } (placeholders $1..$n for params)';
    }
    return undefined;
  },
});
