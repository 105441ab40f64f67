// Placeholder until the filter language lands: the user-facing filter input type.
export type FilterInput = Record<string, unknown>;
