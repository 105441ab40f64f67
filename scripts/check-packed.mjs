#!/usr/bin/env node
// The packed-package test: what an npm user installs works.
//
// Packs every public package (packages/*/package.json without "private": true) with `pnpm pack`, so
// workspace ranges are rewritten as on publish, checks each tarball (LICENSE, README, no source maps,
// no sources or tests, no workspace ranges, no `@zerda/source` condition, every exported file present),
// then installs the tarballs with npm into a fresh project in a temporary folder outside the repository
// (no workspace links, no custom conditions) and there:
//   - runs a small application as ESM and as CommonJS (index, keyword, vector and hybrid retrieval with
//     a filter, and a store whose scans are split over a worker thread) and compares their answers;
//   - type-checks a TypeScript version of it, plus an import of every package, with `tsc --noEmit`
//     (strict, module/moduleResolution nodenext, skipLibCheck false), as ESM and as CommonJS;
//   - checks that the entry points of one package share one identity for what they exchange (a filter
//     node made by `@zerda/core/testing` is a filter node to `@zerda/core`; every name both export is
//     the same object), as ESM and as CommonJS;
//   - imports every package as ESM and requires it as CommonJS, and runs the commands packages ship.
// Peers are installed at the versions the monorepo tests with (the package's devDependencies), with
// install scripts skipped (faiss-node's needs the network; @zerda/faiss ships `zerda-faiss build`).
// A package whose required peer cannot be fetched here (offline, say) is reported as skipped; with
// --strict that fails the check.
//
// Usage: node scripts/check-packed.mjs [--keep] [--strict] [--sizes-only]   (after `pnpm build`)
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const args = new Set(process.argv.slice(2));
const keep = args.has('--keep');
const strict = args.has('--strict');
const sizesOnly = args.has('--sizes-only');
const started = Date.now();

const problems = [];
const skipped = [];
const problem = (message) => {
  problems.push(message);
  console.error(`  FAIL ${message}`);
};
const log = (message) =>
  console.log(`check-packed [${((Date.now() - started) / 1000).toFixed(0)} s]: ${message}`);

/** `exports` without the source condition: what a published package must declare. */
function publishedExports(value) {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([key]) => key !== '@zerda/source')
      .map(([key, inner]) => [key, publishedExports(inner)]),
  );
}

function run(command, commandArgs, options = {}) {
  const result = spawnSync(command, commandArgs, {
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
    timeout: options.timeout ?? 180_000,
    cwd: options.cwd,
    env: { ...process.env, ...options.env },
  });
  return { ok: result.status === 0, output: `${result.stdout ?? ''}${result.stderr ?? ''}`.trim(), result };
}

/** `run`, without blocking: independent checks run side by side. */
function runAsync(command, commandArgs, options = {}) {
  return new Promise((resolvePromise) => {
    const child = spawn(command, commandArgs, { cwd: options.cwd, env: { ...process.env, ...options.env } });
    let output = '';
    child.stdout.on('data', (data) => {
      output += data;
    });
    child.stderr.on('data', (data) => {
      output += data;
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeout ?? 180_000);
    child.on('error', (error) => {
      clearTimeout(timer);
      resolvePromise({ ok: false, output: String(error) });
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolvePromise({ ok: code === 0, output: output.trim() });
    });
  });
}

/** Runs `tasks` (functions returning promises), at most `limit` at a time; results in input order. */
async function pool(tasks, limit = Math.max(2, Math.min(4, availableParallelism()))) {
  const results = new Array(tasks.length);
  let next = 0;
  const worker = async () => {
    while (next < tasks.length) {
      const index = next++;
      results[index] = await tasks[index]();
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, tasks.length) }, worker));
  return results;
}

// 1. The public packages.
const rootManifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const packages = readdirSync(join(root, 'packages'), { withFileTypes: true })
  .filter((entry) => entry.isDirectory() && existsSync(join(root, 'packages', entry.name, 'package.json')))
  .map((entry) => {
    const dir = join(root, 'packages', entry.name);
    return { dir, manifest: JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) };
  })
  .filter(({ manifest }) => manifest.private !== true)
  .sort((a, b) => a.manifest.name.localeCompare(b.manifest.name));
const publicNames = new Set(packages.map(({ manifest }) => manifest.name));
log(`${packages.length} public packages: ${[...publicNames].join(', ')}`);

for (const { dir, manifest } of packages) {
  if (!existsSync(join(dir, 'dist'))) {
    console.error(`check-packed: ${manifest.name} has no dist/; run \`pnpm build\` first`);
    process.exit(1);
  }
}

// 2. Pack.
const work = mkdtempSync(join(tmpdir(), 'zerda-packed-'));
if (relative(root, work).split(/[\\/]/)[0] !== '..' && !relative(root, work).startsWith('/')) {
  console.error(`check-packed: the temporary folder ${work} is inside the repository`);
  process.exit(1);
}
const tarballDir = join(work, 'tarballs');
mkdirSync(tarballDir);
const packs = await pool(
  packages.map(
    (entry) => () => runAsync('pnpm', ['pack', '--pack-destination', tarballDir], { cwd: entry.dir }),
  ),
);
for (const [index, entry] of packages.entries()) {
  if (!packs[index].ok) {
    console.error(packs[index].output);
    console.error(`check-packed: pnpm pack failed in ${relative(root, entry.dir)}`);
    process.exit(1);
  }
  const name = `${entry.manifest.name.replace(/^@/, '').replace('/', '-')}-${entry.manifest.version}.tgz`;
  entry.tarball = join(tarballDir, name);
  if (!existsSync(entry.tarball)) {
    console.error(`check-packed: expected ${entry.tarball} after pnpm pack`);
    process.exit(1);
  }
}

log(`packed ${packages.length} tarballs in ${tarballDir}`);

// 3. What each tarball holds.
const synced = run('node', [join(root, 'scripts', 'sync-package-manifests.mjs'), '--check']);
if (!synced.ok) problem(synced.output);
const rootLicense = existsSync(join(root, 'LICENSE'))
  ? readFileSync(join(root, 'LICENSE'), 'utf8')
  : undefined;
if (rootLicense === undefined) problem('the repository has no LICENSE file');

function exportedPaths(name, value, conditionPath, found) {
  if (typeof value === 'string') found.push({ path: value, conditionPath });
  else if (value && typeof value === 'object') {
    for (const [key, inner] of Object.entries(value)) {
      if (key === '@zerda/source')
        problem(`${name}: ${conditionPath.join('.')} keeps the @zerda/source condition`);
      exportedPaths(name, inner, [...conditionPath, key], found);
    }
  }
  return found;
}

const sizes = [];
for (const entry of packages) {
  const { manifest } = entry;
  const listing = execFileSync('tar', ['-tzvf', entry.tarball], { encoding: 'utf8' })
    .trim()
    .split('\n')
    .map((line) => {
      const parts = line.trim().split(/\s+/);
      return {
        size: Number(parts[2]),
        path: parts
          .slice(5)
          .join(' ')
          .replace(/^package\//, ''),
      };
    });
  const files = new Set(listing.map((file) => file.path));
  const unpacked = listing.reduce((sum, file) => sum + file.size, 0);
  const packedSize = readFileSync(entry.tarball).length;
  sizes.push({ name: manifest.name, packed: packedSize, unpacked, files: listing.length });
  const read = (path) =>
    execFileSync('tar', ['-xzOf', entry.tarball, `package/${path}`], { encoding: 'utf8' });

  const packedManifestText = read('package.json');
  const packedManifest = JSON.parse(packedManifestText);
  entry.packedManifest = packedManifest;
  if (packedManifestText.includes('workspace:'))
    problem(`${manifest.name}: the packed package.json has a workspace: range`);
  if (!files.has('README.md')) problem(`${manifest.name}: no README.md in the tarball`);
  else {
    // The README is the npm page: it says how to install with each package manager.
    const readme = read('README.md');
    for (const [manager, pattern] of [
      ['npm', /\bnpm (install|i)\b/],
      ['pnpm', /\bpnpm add\b/],
      ['yarn', /\byarn (global )?add\b/],
    ]) {
      if (!pattern.test(readme))
        problem(`${manifest.name}: the README does not say how to install with ${manager}`);
    }
  }
  if (!files.has('LICENSE')) problem(`${manifest.name}: no LICENSE in the tarball`);
  else if (rootLicense !== undefined && read('LICENSE') !== rootLicense) {
    problem(`${manifest.name}: its LICENSE differs from the repository's`);
  }
  if (!(packedManifest.files ?? []).includes('LICENSE'))
    problem(`${manifest.name}: "files" does not name LICENSE`);
  for (const file of files) {
    if (file.endsWith('.map')) problem(`${manifest.name}: ships a source map (${file})`);
    if (/(^|\/)src\//.test(file)) problem(`${manifest.name}: ships sources (${file})`);
    if (/\.(test|spec)\.[cm]?[jt]s$/.test(file) || /(^|\/)(__tests__|test-utils)\//.test(file)) {
      problem(`${manifest.name}: ships a test file (${file})`);
    }
  }
  const targets = exportedPaths(manifest.name, packedManifest.exports ?? {}, ['exports'], []);
  if (JSON.stringify(packedManifest.exports) !== JSON.stringify(publishedExports(manifest.exports))) {
    problem(
      `${manifest.name}: the packed exports are not exports without @zerda/source (run node scripts/sync-package-manifests.mjs)`,
    );
  }
  for (const field of ['main', 'module', 'types']) {
    if (typeof packedManifest[field] === 'string')
      targets.push({ path: packedManifest[field], conditionPath: [field] });
  }
  const bins =
    typeof packedManifest.bin === 'string'
      ? { [manifest.name]: packedManifest.bin }
      : (packedManifest.bin ?? {});
  for (const [binName, path] of Object.entries(bins)) targets.push({ path, conditionPath: ['bin', binName] });
  for (const { path, conditionPath } of targets) {
    if (path.endsWith('/package.json') || path === './package.json') continue;
    if (!files.has(path.replace(/^\.\//, '')))
      problem(`${manifest.name}: ${conditionPath.join('.')} points at ${path}, not in the tarball`);
  }
}

console.log('\n| package | packed | unpacked | files |\n|---|---:|---:|---:|');
const kb = (bytes) => `${(bytes / 1024).toFixed(1)} KB`;
for (const size of sizes)
  console.log(`| ${size.name} | ${kb(size.packed)} | ${kb(size.unpacked)} | ${size.files} |`);
console.log('');
if (sizesOnly) finish();

// 4. Peers, at the versions the monorepo tests with (the package's devDependencies, else the root's).
// Everything is installed in one go; only when that fails is each peer looked up, and a package whose
// required peer cannot be fetched here (offline, say) is skipped, with the rest installed again.
const pinFor = (entry, name) =>
  entry.manifest.devDependencies?.[name] ??
  rootManifest.devDependencies?.[name] ??
  entry.manifest.peerDependencies?.[name];
const peerSpecs = (entry) =>
  Object.entries(entry.manifest.peerDependencies ?? {})
    .filter(([name]) => !publicNames.has(name))
    .map(([name, range]) => ({
      name,
      spec: String(pinFor(entry, name) ?? range).replace(/^workspace:/, ''),
      optional: entry.manifest.peerDependenciesMeta?.[name]?.optional === true,
    }));

/** The packages to install and their peers, leaving out the peers in `unfetchable`. */
function plan(unfetchable) {
  const notes = [];
  let chosen = [];
  for (const entry of packages) {
    const missing = peerSpecs(entry).find(
      ({ name, spec, optional }) => !optional && unfetchable.has(`${name}@${spec}`),
    );
    if (missing)
      notes.push(
        `${entry.manifest.name}: skipped, its peer ${missing.name}@${missing.spec} cannot be fetched here`,
      );
    else chosen.push(entry);
  }
  // A package needing a skipped @zerda package as a required peer is skipped too.
  for (let changed = true; changed; ) {
    changed = false;
    const present = new Set(chosen.map((entry) => entry.manifest.name));
    for (const entry of chosen) {
      const need = Object.keys(entry.manifest.peerDependencies ?? {}).find(
        (name) =>
          publicNames.has(name) &&
          !present.has(name) &&
          entry.manifest.peerDependenciesMeta?.[name]?.optional !== true,
      );
      if (need) {
        chosen = chosen.filter((other) => other !== entry);
        notes.push(`${entry.manifest.name}: skipped, it needs ${need}, which was skipped`);
        changed = true;
        break;
      }
    }
  }
  const peers = new Map();
  for (const entry of chosen) {
    for (const { name, spec } of peerSpecs(entry)) {
      if (unfetchable.has(`${name}@${spec}`))
        notes.push(
          `${entry.manifest.name}: optional peer ${name}@${spec} cannot be fetched here; not installed`,
        );
      else if (!peers.has(name)) peers.set(name, spec);
    }
  }
  return { installed: chosen, peers, notes };
}

// 5. A fresh npm project outside the repository.
const app = join(work, 'app');
mkdirSync(app);
async function install({ installed, peers }) {
  const dependencies = Object.fromEntries([
    ...installed.map((entry) => [entry.manifest.name, `file:${entry.tarball}`]),
    ...[...peers].sort(([a], [b]) => a.localeCompare(b)),
  ]);
  const devDependencies = {
    typescript: rootManifest.devDependencies.typescript,
    '@types/node': rootManifest.devDependencies['@types/node'],
  };
  writeFileSync(
    join(app, 'package.json'),
    `${JSON.stringify({ name: 'zerda-packed-app', private: true, type: 'module', dependencies, devDependencies }, null, 2)}\n`,
  );
  log(
    `npm install in ${app} (${installed.length} tarballs; peers ${[...peers].map(([n, v]) => `${n}@${v}`).join(', ')})`,
  );
  return runAsync(
    'npm',
    [
      'install',
      '--ignore-scripts',
      '--no-audit',
      '--no-fund',
      '--prefer-offline',
      '--loglevel=error',
      '--no-package-lock',
    ],
    { cwd: app, timeout: 300_000 },
  );
}
let chosen = plan(new Set());
let installation = await install(chosen);
if (!installation.ok) {
  const wanted = [
    ...new Set(packages.flatMap((entry) => peerSpecs(entry).map(({ name, spec }) => `${name}@${spec}`))),
  ];
  const looked = await pool(
    wanted.map(
      (key) => () =>
        runAsync('npm', ['view', key, 'version', '--prefer-offline', '--json'], { timeout: 60_000 }),
    ),
  );
  const unfetchable = new Set(
    wanted.filter((_, index) => !looked[index].ok || ['', '[]'].includes(looked[index].output)),
  );
  if (unfetchable.size > 0) {
    log(`cannot be fetched here: ${[...unfetchable].join(', ')}; installing without them`);
    chosen = plan(unfetchable);
    rmSync(join(app, 'node_modules'), { recursive: true, force: true });
    installation = await install(chosen);
  }
}
skipped.push(...chosen.notes);
if (!installation.ok) {
  console.error(installation.output);
  problem('npm install of the tarballs failed');
  finish();
}
const { installed, peers } = chosen;
log('installed');
const has = (name) => installed.some((entry) => entry.manifest.name === name);
if (!has('@zerda/core')) {
  problem('@zerda/core could not be installed here');
  finish();
}

// 6. The application, as ESM and as CommonJS (the same body; only how it loads differs).
const appBody = `
const chunks = [
  { id: 'a', text: 'Solar panels convert sunlight into electricity', docId: 'd1', metadata: { category: 'energy', year: 2021 } },
  { id: 'b', text: 'Wind turbines turn the wind into electricity', docId: 'd2', metadata: { category: 'energy', year: 2019 } },
  { id: 'c', text: 'Bread is baked from flour, water and yeast', docId: 'd3', metadata: { category: 'food', year: 2021 } },
  { id: 'd', text: 'الألواح الشمسية تحول ضوء الشمس إلى كهرباء', docId: 'd4', metadata: { category: 'energy', lang: 'ar' } },
];
const keyword = new core.KeywordRetriever();
keyword.add(chunks);
const store = new core.InMemoryVectorStore({ embedder: new core.HashEmbedder() });
await store.add(chunks);
const vector = new core.VectorRetriever({ store });
const hybrid = new core.HybridRetriever({ keyword, vector, fusion: 'weighted+rrf' });
const filter = { category: 'energy', year: { $gte: 2020 } };
const ids = (result) => result.hits.map((hit) => hit.chunk.id);
const out = {
  keyword: ids(await keyword.retrieve('solar electricity', { k: 3 })),
  keywordFiltered: ids(await keyword.retrieve('electricity', { k: 3, filter })),
  vector: ids(await vector.retrieve('solar electricity', { k: 3, filter: { category: 'energy' } })),
  hybrid: ids(await hybrid.retrieve('solar electricity', { k: 3, filter })),
};
if (out.keyword[0] !== 'a') throw new Error('keyword: expected a first, got ' + out.keyword);
if (out.keywordFiltered.join() !== 'a') throw new Error('keyword with a filter: expected [a], got ' + out.keywordFiltered);
if (out.vector.some((id) => id === 'c')) throw new Error('vector: the filter let c through');
if (out.hybrid.join() !== 'a') throw new Error('hybrid with a filter: expected [a], got ' + out.hybrid);
// Scans split over a worker thread: the worker's code travels as a string, and must run from the
// packed package as from the sources.
const rows = 10000;
const row = (r) => Float32Array.from({ length: 16 }, (_, j) => Math.sin(r * 7.3 + j * 1.1));
const rowChunks = Array.from({ length: rows }, (_, r) => ({ id: 'r' + r, text: '' }));
const embeddings = rowChunks.map((_, r) => row(r));
const single = new core.InMemoryVectorStore({ dimension: 16 });
const threaded = new core.InMemoryVectorStore({ dimension: 16, threads: nodeCore.nodeScanThreads(2) });
await single.add(rowChunks, { embeddings });
await threaded.add(rowChunks, { embeddings });
for (let i = 0; i < 1000 && threaded.stats().threads.workerParts === 0; i++) {
  await threaded.search(row(1), { topK: 1 });
  await new Promise((resolve) => setTimeout(resolve, 10));
}
if (threaded.stats().threads.workerParts === 0) throw new Error('scan threads: the worker never took part');
const scored = async (target) => (await target.search(row(rows + 1), { topK: 5 })).hits.map((hit) => [hit.chunk.id, hit.score]);
const split = await scored(threaded);
if (JSON.stringify(split) !== JSON.stringify(await scored(single))) throw new Error('scan threads: other hits than one thread');
await threaded.close();
const scanThreads = split.map(([id]) => id);
let refused = false;
try { core.parseFilter({ year: { $near: 1 } }); } catch (error) { refused = core.FilterError.isInstance(error) && error instanceof core.FilterError; }
if (!refused) throw new Error('an unknown operator was not a FilterError');
console.log(JSON.stringify({ ...out, scanThreads }));
`;
writeFileSync(
  join(app, 'app.mjs'),
  `import * as core from '@zerda/core';\nimport * as nodeCore from '@zerda/core/node';\n${appBody}`,
);
writeFileSync(
  join(app, 'app.cjs'),
  `const core = require('@zerda/core');\nconst nodeCore = require('@zerda/core/node');\n(async () => {\n${appBody}\n})().catch((error) => { console.error(error); process.exit(1); });\n`,
);

// The checks below are independent: each returns its findings, run side by side, reported in order.
const checks = [];
const ok = (text) => ({ ok: true, text });
const failed = (text) => ({ ok: false, text });
const head = (output, lines = 8) => output.split('\n').slice(0, lines).join('\n');
checks.push(async () => {
  const [esm, cjs] = await Promise.all([
    runAsync('node', ['app.mjs'], { cwd: app }),
    runAsync('node', ['app.cjs'], { cwd: app }),
  ]);
  if (!esm.ok || !cjs.ok) {
    return [
      ...(esm.ok ? [] : [failed(`the ESM application failed:\n${esm.output}`)]),
      ...(cjs.ok ? [] : [failed(`the CommonJS application failed:\n${cjs.output}`)]),
    ];
  }
  if (esm.output !== cjs.output)
    return [failed(`ESM and CommonJS answer differently:\n  ${esm.output}\n  ${cjs.output}`)];
  return [ok(`application, ESM and CommonJS: ${esm.output}`)];
});

// 7. One identity across a package's entry points, as ESM and as CommonJS.
const identityBody = `
const problems = [];
// Every name that two entry points of one package both export is one object.
for (const [name, entries] of Object.entries(packagesWithSubpaths)) {
  const [main, ...rest] = entries;
  for (const other of rest) {
    for (const key of Object.keys(other.module)) {
      if (key in main.module && main.module[key] !== other.module[key]) problems.push(name + ': ' + other.path + ' and ' + main.path + ' export different ' + key);
    }
  }
}
if (testing) {
  const nodes = fc.sample(testing.filterNodeArbitrary, 200);
  const records = fc.sample(testing.filterRecordArbitrary(), 50);
  let checked = 0;
  for (const node of nodes) {
    if (!core.isFilterNode(node)) { problems.push('a node from filterNodeArbitrary is not a filter node to @zerda/core (isFilterNode)'); break; }
    try { core.parseFilter(node); } catch (error) { problems.push('parseFilter refuses a node from filterNodeArbitrary: ' + error.message); break; }
    for (const record of records) { core.evaluateFilter(node, record); checked++; }
  }
  if (checked === 0 && problems.length === 0) problems.push('no filter node was checked');
}
// Core's error classes are defined once: a brand check and instanceof agree across entry points.
for (const name of Object.keys(core).filter((key) => /Error$/.test(key) && typeof core[key] === 'function')) {
  if (testing && name in testing && testing[name] !== core[name]) problems.push('@zerda/core/testing has its own ' + name);
}
if (problems.length > 0) { console.error(problems.join('\\n')); process.exit(1); }
console.log('identity: ' + Object.keys(packagesWithSubpaths).join(', ') + (testing ? ', filter nodes from @zerda/core/testing' : ''));
`;
const subpathPackages = installed
  .map((entry) => ({
    entry,
    name: entry.manifest.name,
    subpaths: Object.keys(entry.packedManifest.exports ?? {}).filter(
      (key) => key !== './package.json' && !key.includes('*'),
    ),
  }))
  .filter((entry) => entry.subpaths.length > 1);
const hasFastCheck = peers.has('fast-check');
/** Whether an `exports` target has a CommonJS form (a `require` condition or a .cjs file). */
function hasCommonJs(target, type) {
  if (target === undefined || target === null) return false;
  if (typeof target === 'string')
    return target.endsWith('.cjs') || (type !== 'module' && target.endsWith('.js'));
  if ('require' in target) return true;
  return ['node', 'default'].some((key) => key in target && hasCommonJs(target[key], type));
}
const exportOf = (entry, subpath) =>
  (entry.packedManifest.exports ?? { '.': entry.packedManifest.main })[subpath];
const specifier = (name, subpath) => (subpath === '.' ? name : `${name}/${subpath.slice(2)}`);
// The entry points to compare, loaded the way the file loads (ESM-only ones left out of the CommonJS file;
// @zerda/core/testing only with fast-check, its optional peer).
const describePackages = (load, commonJs) =>
  `const packagesWithSubpaths = {${subpathPackages
    .map(({ entry, name, subpaths }) => {
      const loadable = subpaths.filter(
        (subpath) =>
          (!commonJs || hasCommonJs(exportOf(entry, subpath), entry.packedManifest.type)) &&
          (hasFastCheck || specifier(name, subpath) !== '@zerda/core/testing'),
      );
      return `'${name}': [${loadable.map((subpath) => `{ path: '${specifier(name, subpath)}', module: ${load(specifier(name, subpath))} }`).join(', ')}]`;
    })
    .join(', ')}};`;
const coreHasTesting = subpathPackages.some(
  ({ name, subpaths }) => name === '@zerda/core' && subpaths.includes('./testing'),
);
writeFileSync(
  join(app, 'identity.mjs'),
  [
    `import * as core from '@zerda/core';`,
    hasFastCheck ? `import fc from 'fast-check';` : 'const fc = undefined;',
    coreHasTesting && hasFastCheck
      ? `const testing = await import('@zerda/core/testing');`
      : 'const testing = undefined;',
    describePackages((path) => `await import('${path}')`, false),
    identityBody,
  ].join('\n'),
);
writeFileSync(
  join(app, 'identity.cjs'),
  [
    `const core = require('@zerda/core');`,
    hasFastCheck ? `const fc = require('fast-check');` : 'const fc = undefined;',
    coreHasTesting && hasFastCheck
      ? `const testing = require('@zerda/core/testing');`
      : 'const testing = undefined;',
    describePackages((path) => `require('${path}')`, true),
    identityBody,
  ].join('\n'),
);
for (const file of ['identity.mjs', 'identity.cjs']) {
  checks.push(async () => {
    const checked = await runAsync('node', [file], { cwd: app });
    return [
      checked.ok
        ? ok(`${file}: ${checked.output}`)
        : failed(`one identity per concept (${file}):\n${checked.output}`),
    ];
  });
}

// 8. Every package loads as ESM and as CommonJS (a peer it loads lazily, like faiss-node, is not exercised).
const loadable = installed.flatMap((entry) =>
  Object.keys(entry.packedManifest.exports ?? { '.': null })
    .filter((key) => key !== './package.json')
    .map((subpath) => ({
      path: specifier(entry.manifest.name, subpath),
      commonJs: hasCommonJs(exportOf(entry, subpath), entry.packedManifest.type),
    }))
    .filter(({ path }) => hasFastCheck || (path !== '@zerda/core/testing' && path !== '@zerda/testing')),
);
const loadScript = (load, paths) => `const failures = [];
for (const path of ${JSON.stringify(paths)}) {
  try { const m = ${load}; if (Object.keys(m).length === 0) throw new Error('no exports'); }
  catch (error) { failures.push(path + ': ' + String(error && error.stack || error).split('\\n').slice(0, 6).join('\\n')); }
}
if (failures.length > 0) { console.error(failures.join('\\n')); process.exit(1); }
console.log(${JSON.stringify(paths.length)});`;
writeFileSync(
  join(app, 'load.mjs'),
  loadScript(
    'await import(path)',
    loadable.map(({ path }) => path),
  ),
);
writeFileSync(
  join(app, 'load.cjs'),
  `(async () => {\n${loadScript(
    'require(path)',
    loadable.filter(({ commonJs }) => commonJs).map(({ path }) => path),
  )}\n})();`,
);
for (const [file, how] of [
  ['load.mjs', 'import()'],
  ['load.cjs', 'require()'],
]) {
  checks.push(async () => {
    const loaded = await runAsync('node', [file], { cwd: app });
    return [
      loaded.ok
        ? ok(`${how} of every entry point: ${loaded.output} loaded`)
        : failed(`${how} failed:\n${loaded.output}`),
    ];
  });
}

// 9. Types: strict, nodenext, skipLibCheck false, over the application and an import of every package.
// A package whose peer's own declarations need more than that is checked in a program of its own, with
// exactly the setting its README documents (a new package needs nothing here unless it needs that too).
const typeSettings = {
  // chromadb's declarations import '@hey-api/client-fetch', which chromadb does not install.
  '@zerda/chroma': { files: { 'hey-api-client-fetch.d.ts': "declare module '@hey-api/client-fetch';\n" } },
  // The Pinecone client's declarations use fetch's DOM types (RequestCredentials, RequestInfo).
  '@zerda/pinecone': { lib: ['ES2022', 'DOM'] },
};
// The chunks are annotated: inferred from the literal, `metadata` of differing keys becomes a union with
// `lang?: undefined`, which Metadata's index signature refuses (noted in issue 18's closing report).
const typedBody = appBody
  .replace('const chunks = [', 'const chunks: core.Chunk[] = [')
  .replace('const ids = (result) =>', 'const ids = (result: { hits: core.ScoredChunk[] }): string[] =>')
  .replace('} catch (error) {', '} catch (error: unknown) {')
  .replace('const row = (r) =>', 'const row = (r: number) =>')
  .replace('const scored = async (target) =>', 'const scored = async (target: core.InMemoryVectorStore) =>');
const specifiersOf = (entries) =>
  entries
    .flatMap((entry) =>
      Object.keys(entry.packedManifest.exports ?? { '.': null })
        .filter((key) => key !== './package.json')
        .map((subpath) => specifier(entry.manifest.name, subpath)),
    )
    .filter((path) => hasFastCheck || (path !== '@zerda/core/testing' && path !== '@zerda/testing'));
const importAll = (paths, style) =>
  paths
    .map((path, index) =>
      style === 'esm'
        ? `import * as package${index} from '${path}';\nvoid package${index};`
        : `import package${index} = require('${path}');\nvoid package${index};`,
    )
    .join('\n');
const typePrograms = [
  {
    name: 'default',
    entries: installed.filter((entry) => !(entry.manifest.name in typeSettings)),
    settings: {},
  },
  ...installed
    .filter((entry) => entry.manifest.name in typeSettings)
    .map((entry) => ({
      name: entry.manifest.name,
      entries: [entry],
      settings: typeSettings[entry.manifest.name],
    })),
];
for (const [index, program] of typePrograms.entries()) {
  const paths = specifiersOf(program.entries);
  // The package's type settings apply to peer ESM and CommonJS resolution alike: check both forms.
  // ESM modules without CommonJS declarations (ESM-only packages) are left out of the .cts file.
  const cjsPaths = paths.filter((path) => {
    const entry = program.entries.find(
      (candidate) => path === candidate.manifest.name || path.startsWith(`${candidate.manifest.name}/`),
    );
    const subpath = path === entry.manifest.name ? '.' : `./${path.slice(entry.manifest.name.length + 1)}`;
    return hasCommonJs(exportOf(entry, subpath), entry.packedManifest.type);
  });
  const base = `types-${index}`;
  const files = [`${base}.ts`, `${base}.cts`, ...Object.keys(program.settings.files ?? {})];
  writeFileSync(
    join(app, `${base}.ts`),
    program.name === 'default'
      ? `import * as core from '@zerda/core';\nimport * as nodeCore from '@zerda/core/node';\n${importAll(paths, 'esm')}\n${typedBody}\nexport {};\n`
      : `${importAll(paths, 'esm')}\nexport {};\n`,
  );
  writeFileSync(join(app, `${base}.cts`), `${importAll(cjsPaths, 'cjs')}\nexport {};\n`);
  for (const [file, text] of Object.entries(program.settings.files ?? {}))
    writeFileSync(join(app, file), text);
  const compilerOptions = {
    target: 'ES2022',
    lib: program.settings.lib ?? ['ES2022'],
    module: 'nodenext',
    moduleResolution: 'nodenext',
    strict: true,
    skipLibCheck: false,
    noEmit: true,
    types: ['node'],
  };
  writeFileSync(
    join(app, `${base}.tsconfig.json`),
    `${JSON.stringify({ compilerOptions, files }, null, 2)}\n`,
  );
  const label = `tsc --noEmit (strict, nodenext, skipLibCheck false${program.settings.lib ? `, lib ${program.settings.lib.join('+')}` : ''}${program.settings.files ? `, ${Object.keys(program.settings.files).join(', ')}` : ''}) over ${paths.join(', ')}`;
  checks.push(async () => {
    const tsc = await runAsync(join(app, 'node_modules', '.bin', 'tsc'), ['-p', `${base}.tsconfig.json`], {
      cwd: app,
    });
    return [tsc.ok ? ok(`${label}: no errors`) : failed(`${label} failed:\n${tsc.output}`)];
  });
}

// 10. The commands packages ship, and what they say when something is missing.
for (const entry of installed) {
  const bins =
    typeof entry.packedManifest.bin === 'string'
      ? { [entry.manifest.name.split('/')[1]]: entry.packedManifest.bin }
      : (entry.packedManifest.bin ?? {});
  for (const binName of Object.keys(bins)) {
    checks.push(async () => {
      const help = await runAsync(join(app, 'node_modules', '.bin', binName), ['--help'], {
        cwd: app,
        timeout: 60_000,
      });
      return [
        help.ok ? ok(`${binName} --help: ok`) : failed(`${binName} --help failed:\n${head(help.output)}`),
      ];
    });
  }
}
if (has('@zerda/faiss') && peers.has('faiss-node')) {
  // faiss-node arrives unbuilt (install scripts skipped): the first use must say how to build it.
  checks.push(async () => {
    const unbuilt = await runAsync(
      'node',
      [
        '--input-type=module',
        '-e',
        `import * as core from '@zerda/core'; import * as faiss from '@zerda/faiss';
         const store = faiss.createFaissStore({ embedder: new core.HashEmbedder({ dimension: 8 }) });
         try { await store.add([{ id: 'a', text: 'x' }]); console.log('LOADED'); }
         catch (error) { console.log(String(error && error.message)); }`,
      ],
      { cwd: app },
    );
    if (unbuilt.output.includes('LOADED')) return [ok('faiss-node loaded (a build was present)')];
    if (!unbuilt.output.includes('zerda-faiss build')) {
      return [
        failed(`an unbuilt faiss-node does not point at \`zerda-faiss build\`:\n${head(unbuilt.output, 6)}`),
      ];
    }
    return [ok('an unbuilt faiss-node is a BackendError naming `npx zerda-faiss build`')];
  });
}

for (const findings of await pool(checks)) {
  for (const finding of findings) {
    if (finding.ok) log(finding.text);
    else problem(finding.text);
  }
}

finish();

function finish() {
  for (const note of skipped) console.log(`  SKIP ${note}`);
  if (keep) log(`kept ${work}`);
  else rmSync(work, { recursive: true, force: true });
  const seconds = ((Date.now() - started) / 1000).toFixed(0);
  if (problems.length > 0 || (strict && skipped.some((note) => note.includes('skipped')))) {
    console.error(
      `check-packed: ${problems.length} problem(s)${strict && skipped.length ? ` and ${skipped.length} skip(s) under --strict` : ''} (${seconds} s)`,
    );
    process.exit(1);
  }
  log(`all good (${seconds} s)`);
  process.exit(0);
}
