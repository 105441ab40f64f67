import type { FieldOperators, FilterInput, FilterNode } from './types.js';

const operatorNames = { eq: '$eq', ne: '$ne', gt: '$gt', gte: '$gte', lt: '$lt', lte: '$lte' } as const;

/**
 * The canonical JSON form of a tree: one key per object, explicit operators
 * (`{ price: { $gte: 1 } }`, `{ $and: [...] }`), `{}` for the empty AND. Parsing it gives the
 * same tree back (`parseFilter(serializeFilter(node))` deep-equals `node`).
 */
export function serializeFilter(node: FilterNode): FilterInput {
  switch (node.kind) {
    case 'and':
      return node.children.length === 0 ? {} : { $and: node.children.map(serializeFilter) };
    case 'or':
      return { $or: node.children.map(serializeFilter) };
    case 'not':
      return { $not: serializeFilter(node.child) };
    case 'compare':
      return field(node.field, { [operatorNames[node.op]]: node.value });
    case 'in':
      return field(node.field, { [node.negated ? '$nin' : '$in']: [...node.values] });
    case 'exists':
      return field(node.field, { $exists: node.exists });
  }
}

// A computed key, so that a field named '__proto__' stays an own property.
function field(name: string, operators: FieldOperators): FilterInput {
  return { [name]: operators };
}

/** The fields a filter reads, sorted, each once. */
export function filterFields(node: FilterNode): string[] {
  const fields = new Set<string>();
  const visit = (current: FilterNode): void => {
    switch (current.kind) {
      case 'and':
      case 'or':
        current.children.forEach(visit);
        return;
      case 'not':
        visit(current.child);
        return;
      default:
        fields.add(current.field);
    }
  };
  visit(node);
  return [...fields].sort();
}
