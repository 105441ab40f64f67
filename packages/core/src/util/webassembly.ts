// The part of the WebAssembly JavaScript API the kernels use. Declared here because core's
// TypeScript configuration has no DOM library (where the WebAssembly types live), and read from
// globalThis so that a runtime without WebAssembly falls back instead of failing to load.

/** A WebAssembly linear memory: a buffer that grows in 64 KiB pages. */
export interface WasmMemory {
  /** The current buffer; replaced (the old one detached) by every `grow`. */
  readonly buffer: ArrayBuffer;
  /** Adds pages, returning the previous size in pages; throws a RangeError when it cannot. */
  grow(deltaPages: number): number;
}

export interface WasmInstance {
  readonly exports: Record<string, unknown>;
}

export interface WebAssemblyApi {
  validate(bytes: Uint8Array): boolean;
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object, imports: Record<string, Record<string, unknown>>) => WasmInstance;
  Memory: new (descriptor: { initial: number; maximum?: number; shared?: boolean }) => WasmMemory;
}

/** The runtime's WebAssembly API, or undefined where there is none. */
export const webAssembly: WebAssemblyApi | undefined = (globalThis as { WebAssembly?: WebAssemblyApi })
  .WebAssembly;

/** Size of a WebAssembly memory page. */
export const WASM_PAGE_BYTES = 65_536;

/** Pages of the largest wasm32 memory (4 GiB): the maximum a shared memory must declare. */
export const WASM_MAX_PAGES = 65_536;

/** Decodes base64 without Node's Buffer, so the kernels load in any JavaScript runtime. */
export function decodeBase64(base64: string): Uint8Array {
  const binary = atob(base64);
  const bytes = new Uint8Array(binary.length);
  for (let index = 0; index < binary.length; index++) bytes[index] = binary.charCodeAt(index);
  return bytes;
}
