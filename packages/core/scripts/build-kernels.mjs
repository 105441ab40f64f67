#!/usr/bin/env node
// Compiles the WebAssembly text kernels in src/vector/kernels/*.wat into TypeScript modules
// (src/vector/kernels/generated/*.ts) that hold the bytes as base64, so that the runtime needs
// no WebAssembly toolchain. Run after editing a .wat file:
//
//   node packages/core/scripts/build-kernels.mjs          (writes the generated modules)
//   node packages/core/scripts/build-kernels.mjs --check  (fails if they are out of date)
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

for (const source of sources) {
  const sourcePath = join(kernelsDir, source);
  const text = await readFile(sourcePath, 'utf8');
  const module = wabt.parseWat(source, text, { simd: true });
  try {
    module.resolveNames();
    module.validate();
    const { buffer } = module.toBinary({ log: false, write_debug_names: false });
    const name = basename(source, '.wat');
    const target = join(generatedDir, `${name}.ts`);
    const contents = render(name, source, buffer);
    const current = await readFile(target, 'utf8').catch(() => undefined);
    if (current === contents) {
      console.log(`${relative(packageDir, target)} is up to date (${buffer.length} bytes)`);
    } else if (check) {
      console.error(`${relative(packageDir, target)} is out of date with ${source}`);
      stale++;
    } else {
      await writeFile(target, contents);
      console.log(`wrote ${relative(packageDir, target)} (${buffer.length} bytes)`);
    }
  } finally {
    module.destroy();
  }
}

if (stale > 0) {
  console.error('Run `node packages/core/scripts/build-kernels.mjs` and commit the result.');
  process.exit(1);
}

/** The generated module: the wasm bytes as base64, under a header that says where they come from. */
function render(name, source, bytes) {
  const constant = `${name.replace(/-(\w)/g, (_, letter) => letter.toUpperCase())}Wasm`;
  const base64 = Buffer.from(bytes).toString('base64');
  const lines = base64.match(/.{1,100}/g) ?? [''];
  return [
    `// GENERATED FILE, DO NOT EDIT. Compiled from ../${source} by packages/core/scripts/build-kernels.mjs;`,
    '// edit the .wat file and regenerate with `node packages/core/scripts/build-kernels.mjs`.',
    '',
    `/** The WebAssembly module compiled from ${source}, base64-encoded (${bytes.length} bytes). */`,
    `export const ${constant} =`,
    ...lines.map((line, index) => `  '${line}'${index === lines.length - 1 ? ';' : ' +'}`),
    '',
  ].join('\n');
}
