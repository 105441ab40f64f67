#!/usr/bin/env node
// Compiles the WebAssembly text kernels (src/vector/kernels/*.wat, src/text/*.wat) into TypeScript
// modules (generated/*.ts beside them) that hold the bytes as base64, so that the runtime needs no
// WebAssembly toolchain. Run after editing a .wat file:
//
//   node packages/core/scripts/build-kernels.mjs          (writes the generated modules)
//   node packages/core/scripts/build-kernels.mjs --check  (fails if they are out of date)
//
// Each vector kernel is compiled twice: over a plain memory, and over a shared one (declared with
// the largest wasm32 size, as shared memories must be) for stores whose scans are split over
// threads. The text kernels run on the caller's thread only, over a plain memory.
//
// wabt is a development dependency of @zerda/core; nothing at runtime imports it.
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { basename, dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import wabtInit from 'wabt';

const packageDir = join(dirname(fileURLToPath(import.meta.url)), '..');
const kernelDirs = [
  { dir: join(packageDir, 'src', 'vector', 'kernels'), shared: true },
  { dir: join(packageDir, 'src', 'text'), shared: false },
];
const check = process.argv.includes('--check');

const wabt = await wabtInit();
let stale = 0;

const PLAIN_MEMORY = '(import "env" "memory" (memory 1))';
const SHARED_MEMORY = '(import "env" "memory" (memory 1 65536 shared))';

for (const { dir, shared: withShared } of kernelDirs) {
  const sources = (await readdir(dir)).filter((name) => name.endsWith('.wat')).sort();
  for (const source of sources) {
    const text = await readFile(join(dir, source), 'utf8');
    if (!text.includes(PLAIN_MEMORY)) throw new Error(`${source} must import its memory as ${PLAIN_MEMORY}`);
    const plain = compile(source, text, false);
    const shared = withShared ? compile(source, text.replace(PLAIN_MEMORY, SHARED_MEMORY), true) : undefined;
    const target = join(dir, 'generated', `${basename(source, '.wat')}.ts`);
    await writeIfChanged(target, render(basename(source, '.wat'), source, plain, shared));
  }
}

if (stale > 0) {
  console.error('Run `node packages/core/scripts/build-kernels.mjs` and commit the result.');
  process.exit(1);
}

/** Writes the generated module, or with --check counts it as stale, unless it is unchanged. */
async function writeIfChanged(target, contents) {
  const current = await readFile(target, 'utf8').catch(() => undefined);
  const name = relative(packageDir, target);
  if (current === contents) {
    console.log(`${name} is up to date`);
  } else if (check) {
    console.error(`${name} is out of date with its .wat source`);
    stale++;
  } else {
    await writeFile(target, contents);
    console.log(`wrote ${name}`);
  }
}

/**
 * The module's bytes. Validated by wabt for the plain memory; wabt's validator refuses shared
 * memories whatever the features, so the shared variant (the same code) is validated by the
 * runtime, in kernels.test.ts.
 */
function compile(source, text, shared) {
  const module = wabt.parseWat(source, text, { simd: true, threads: true, relaxed_simd: true });
  try {
    module.resolveNames();
    if (!shared) module.validate();
    return module.toBinary({ log: false, write_debug_names: false }).buffer;
  } finally {
    module.destroy();
  }
}

/** The generated module: the bytes (and the shared variant's, if any) as base64, under a header that says where they come from. */
function render(name, source, plain, shared) {
  const constant = name.replace(/-(\w)/g, (_, letter) => letter.toUpperCase());
  const constantLines = (bytes) => {
    const lines = Buffer.from(bytes)
      .toString('base64')
      .match(/.{1,100}/g) ?? [''];
    return lines.map((line, index) => `  '${line}'${index === lines.length - 1 ? ';' : ' +'}`);
  };
  const sharedLines =
    shared === undefined
      ? []
      : [
          `/** The same module over a shared memory (at most 4 GiB), for scans split over threads (${shared.length} bytes). */`,
          `export const ${constant}SharedWasm =`,
          ...constantLines(shared),
          '',
        ];
  return [
    `// GENERATED FILE, DO NOT EDIT. Compiled from ../${source} by packages/core/scripts/build-kernels.mjs;`,
    '// edit the .wat file and regenerate with `node packages/core/scripts/build-kernels.mjs`.',
    '',
    `/** The WebAssembly module compiled from ${source}, base64-encoded (${plain.length} bytes). */`,
    `export const ${constant}Wasm =`,
    ...constantLines(plain),
    '',
    ...sharedLines,
  ].join('\n');
}
