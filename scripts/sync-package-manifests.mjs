#!/usr/bin/env node
// Keeps what every public package publishes alike, from one rule:
//   - `files` ships `dist` and `LICENSE` (plus whatever else the package lists, like @zerda/faiss's
//     `native` and `bin`), never `src`: the tarball carries the build, not a second copy of the sources;
//   - `publishConfig.exports` is `exports` without the `@zerda/source` condition (pnpm publishes it
//     in place of `exports`), since that condition points at ./src, which the tarball leaves out;
//   - the package folder has a copy of the repository's LICENSE.
// `node scripts/sync-package-manifests.mjs` writes them; `--check` only reports and exits 1 on a
// difference (scripts/check-packed.mjs runs the check). A new package (packages/<name>, not private)
// is covered without any change here.
import { copyFileSync, existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const check = process.argv.includes('--check');
const sourceCondition = '@zerda/source';
const license = readFileSync(join(root, 'LICENSE'), 'utf8');

/** `exports` without the source condition (and without a condition object left empty by it). */
export function publishedExports(value) {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([key]) => key !== sourceCondition)
      .map(([key, inner]) => [key, publishedExports(inner)]),
  );
}

function publishedFiles(files = []) {
  const kept = files.filter((entry) => !/^!?(\.\/)?src(\/|$)/.test(entry) && entry !== 'LICENSE');
  if (!kept.includes('dist')) kept.unshift('dist');
  return [...kept, 'LICENSE'];
}

/** Puts `key` right after `after` in a copy of `object` (JSON key order is what a reader sees). */
function withKey(object, key, value, after) {
  if (key in object) return { ...object, [key]: value };
  const entries = Object.entries(object);
  const at = entries.findIndex(([name]) => name === after);
  entries.splice(at === -1 ? entries.length : at + 1, 0, [key, value]);
  return Object.fromEntries(entries);
}

const differences = [];
for (const entry of readdirSync(join(root, 'packages'), { withFileTypes: true })) {
  const dir = join(root, 'packages', entry.name);
  const manifestPath = join(dir, 'package.json');
  if (!entry.isDirectory() || !existsSync(manifestPath)) continue;
  const text = readFileSync(manifestPath, 'utf8');
  const manifest = JSON.parse(text);
  if (manifest.private === true) continue;

  let next = withKey(manifest, 'files', publishedFiles(manifest.files), 'types');
  if (manifest.exports !== undefined) {
    next = withKey(
      next,
      'publishConfig',
      { ...manifest.publishConfig, exports: publishedExports(manifest.exports) },
      'files',
    );
  }
  const nextText = `${JSON.stringify(next, null, 2)}\n`;
  if (nextText !== text) {
    differences.push(`${manifest.name}: package.json (files or publishConfig.exports)`);
    if (!check) writeFileSync(manifestPath, nextText);
  }
  const licensePath = join(dir, 'LICENSE');
  if (!existsSync(licensePath) || readFileSync(licensePath, 'utf8') !== license) {
    differences.push(`${manifest.name}: LICENSE`);
    if (!check) copyFileSync(join(root, 'LICENSE'), licensePath);
  }
}

if (differences.length === 0) console.log('sync-package-manifests: every public package is in step');
else if (check) {
  console.error(`sync-package-manifests: out of step:\n  ${differences.join('\n  ')}`);
  console.error('run `node scripts/sync-package-manifests.mjs` and commit the result');
  process.exit(1);
} else console.log(`sync-package-manifests: updated\n  ${differences.join('\n  ')}`);
