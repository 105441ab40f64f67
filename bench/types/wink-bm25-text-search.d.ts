// Minimal types for wink-bm25-text-search 3.x (the package ships none).
declare module 'wink-bm25-text-search' {
  export interface WinkBM25Config {
    fldWeights: Record<string, number>;
    bm25Params?: { k1?: number; b?: number; k?: number };
    ovFieldNames?: string[];
  }
  export interface WinkBM25 {
    defineConfig(config: WinkBM25Config): boolean;
    definePrepTasks(tasks: Array<(input: string) => string | string[]>, field?: string): number;
    addDoc(document: Record<string, string>, id: string | number): number;
    consolidate(precision?: number): boolean;
    search(text: string, limit?: number): Array<[string, number]>;
  }
  export default function bm25(): WinkBM25;
}
