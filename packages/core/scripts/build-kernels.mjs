#!/usr/bin/env node
// Compiles the WebAssembly text kernels in src/vector/kernels/*.wat into TypeScript modules
// (src/vector/kernels/generated/*.ts) that hold the bytes as base64, so that the runtime needs
// no WebAssembly toolchain. Run after editing a .wat file:
//
//   node packages/core/scripts/build-kernels.mjs          (writes the generated modules)
//   node packages/core/scripts/build-kernels.mjs --check  (fails if they are out of date)
//
// Each kernel is compiled twice: over a plain memory, and over a shared one (declared with the
// largest wasm32 size, as shared memories must be) for stores whose scans are split over threads.
//
// wabt is a development dependency of @zerda/core; nothing at runtime imports it.
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { basename, dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import wabtInit from 'wabt';

const packageDir = join(dirname(fileURLToPath(import.meta.url)), '..');
const kernelsDir = join(packageDir, 'src', 'vector', 'kernels');
const generatedDir = join(kernelsDir, 'generated');
const check = process.argv.includes('--check');

const wabt = await wabtInit();
const sources = (await readdir(kernelsDir)).filter((name) => name.endsWith('.wat')).sort();
let stale = 0;

const PLAIN_MEMORY = '(import "env" "memory" (memory 1))';
const SHARED_MEMORY = '(import "env" "memory" (memory 1 65536 shared))';

for (const source of sources) {
  const sourcePath = join(kernelsDir, source);
  const text = await readFile(sourcePath, 'utf8');
  if (!text.includes(PLAIN_MEMORY)) throw new Error(`${source} must import its memory as ${PLAIN_MEMORY}`);
  const plain = compile(source, text, false);
  const shared = compile(source, text.replace(PLAIN_MEMORY, SHARED_MEMORY), true);
  const name = basename(source, '.wat');
  const target = join(generatedDir, `${name}.ts`);
  const contents = render(name, source, plain, shared);
  const current = await readFile(target, 'utf8').catch(() => undefined);
  const sizes = `${plain.length} and ${shared.length} bytes`;
  if (current === contents) {
    console.log(`${relative(packageDir, target)} is up to date (${sizes})`);
  } else if (check) {
    console.error(`${relative(packageDir, target)} is out of date with ${source}`);
    stale++;
  } else {
    await writeFile(target, contents);
    console.log(`wrote ${relative(packageDir, target)} (${sizes})`);
  }
}

if (stale > 0) {
  console.error('Run `node packages/core/scripts/build-kernels.mjs` and commit the result.');
  process.exit(1);
}

/**
 * The module's bytes. Validated by wabt for the plain memory; wabt's validator refuses shared
 * memories whatever the features, so the shared variant (the same code) is validated by the
 * runtime, in kernels.test.ts.
 */
function compile(source, text, shared) {
  const module = wabt.parseWat(source, text, { simd: true, threads: true });
  try {
    module.resolveNames();
    if (!shared) module.validate();
    return module.toBinary({ log: false, write_debug_names: false }).buffer;
  } finally {
    module.destroy();
  }
}

/** The generated module: both variants' bytes as base64, under a header that says where they come from. */
function render(name, source, plain, shared) {
  const constant = name.replace(/-(\w)/g, (_, letter) => letter.toUpperCase());
  const constantLines = (bytes) => {
    const lines = Buffer.from(bytes)
      .toString('base64')
      .match(/.{1,100}/g) ?? [''];
    return lines.map((line, index) => `  '${line}'${index === lines.length - 1 ? ';' : ' +'}`);
  };
  return [
    `// GENERATED FILE, DO NOT EDIT. Compiled from ../${source} by packages/core/scripts/build-kernels.mjs;`,
    '// edit the .wat file and regenerate with `node packages/core/scripts/build-kernels.mjs`.',
    '',
    `/** The WebAssembly module compiled from ${source}, base64-encoded (${plain.length} bytes). */`,
    `export const ${constant}Wasm =`,
    ...constantLines(plain),
    '',
    `/** The same module over a shared memory (at most 4 GiB), for scans split over threads (${shared.length} bytes). */`,
    `export const ${constant}SharedWasm =`,
    ...constantLines(shared),
    '',
  ].join('\n');
}
