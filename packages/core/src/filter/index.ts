// Placeholder until the filter language lands.
/** A filter in Zerda's Mongo-style filter language, as the user writes it. */
export type FilterInput = Record<string, unknown>;
/** How a backend takes filters natively. */
export interface FilterConvention {
  /** The search option the backend reads, for example 'where' or 'filter'. */
  readonly option: string;
}
