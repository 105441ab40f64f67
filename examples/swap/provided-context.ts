// What the Chroma package's global setup provides to the tests (its server's URL).
declare module 'vitest' {
  export interface ProvidedContext {
    chromaUrl: string;
  }
}

export {};
