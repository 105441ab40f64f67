/** Builds a stop-word set from a whitespace-separated list (compact to write and to review). */
export function wordSet(list: string): ReadonlySet<string> {
  return new Set(list.split(/\s+/).filter((word) => word.length > 0));
}
