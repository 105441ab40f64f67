#!/usr/bin/env node
// `zerda-faiss`: builds faiss-node (the native FAISS binding @zerda/faiss runs on) against the
// system's FAISS, for a project that installed it with install scripts skipped
// (`npm install --ignore-scripts`, pnpm 10's default, yarn's `enableScripts: false`), or offline.
//
// faiss-node's own install script downloads a prebuilt binary or clones FAISS from GitHub. This
// command instead:
//   1. checks the system packages it needs (Debian/Ubuntu: libfaiss-dev, which is FAISS 1.7.3 on
//      Debian 12, libopenblas-dev, cmake, patchelf, g++, make); with --install-system-packages it
//      installs the missing ones with apt-get (as root, or through sudo);
//   2. puts this package's native/deps-faiss (a CMake shim: an imported `faiss` target from
//      find_package(faiss), plus a forced-include header defining `faiss::idx_t`, which 1.7.3
//      lacks) where faiss-node's CMakeLists expects the FAISS sources, `deps/faiss`;
//   3. compiles faiss-node with cmake-js 7 (`npx cmake-js@7.4.0 compile`), which takes the Node-API
//      headers from its node-api-headers dependency (nothing else is downloaded);
//   4. checks that the result loads and searches, and writes a stamp so that the next run returns at once.
// No dependencies but Node.js: this file ships as it is, unbuilt.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { availableParallelism } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const packageDir = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const shimDir = join(packageDir, 'native', 'deps-faiss');
const aptPackages = ['libfaiss-dev', 'libopenblas-dev', 'cmake', 'patchelf', 'g++', 'make'];

const usage = `Usage: zerda-faiss <command> [options]

Commands:
  build    build faiss-node against the system's FAISS (idempotent: returns at once when built)
  check    load faiss-node and run a search; exit 1 when it is not built

Options:
  --faiss-node <dir>           faiss-node's folder (default: the one this project resolves)
  --install-system-packages    install missing Debian/Ubuntu packages with apt-get (root or sudo)
  --force                      rebuild even when a matching build is present
  --cmake-js <version>         cmake-js version to run (default 7.4.0, or CMAKE_JS_VERSION)
  --verbose                    show the compiler's output
  -h, --help                   this text

Typical use, after an install that skipped faiss-node's install script:
  npm install @zerda/faiss @zerda/core faiss-node --ignore-scripts
  sudo apt-get install ${aptPackages.join(' ')}
  npx zerda-faiss build`;

function fail(message) {
  console.error(`zerda-faiss: ${message}

@zerda/faiss needs faiss-node built. On Debian 12 / Ubuntu:
  sudo apt-get install ${aptPackages.join(' ')}
  npx zerda-faiss build
Elsewhere (or with the network), let faiss-node's own install script run, which downloads a
prebuilt binary: npm rebuild faiss-node. See the @zerda/faiss README.`);
  process.exit(1);
}

function parseArguments(argv) {
  const options = {
    command: undefined,
    faissNode: undefined,
    installSystem: false,
    force: false,
    verbose: false,
  };
  options.cmakeJs = process.env.CMAKE_JS_VERSION || '7.4.0';
  for (let index = 0; index < argv.length; index++) {
    const argument = argv[index];
    const value = () => {
      const next = argv[++index];
      if (next === undefined) fail(`${argument} needs a value`);
      return next;
    };
    if (argument === '-h' || argument === '--help') options.command = 'help';
    else if (argument === '--faiss-node') options.faissNode = resolve(value());
    else if (argument === '--install-system-packages') options.installSystem = true;
    else if (argument === '--force') options.force = true;
    else if (argument === '--verbose') options.verbose = true;
    else if (argument === '--cmake-js') options.cmakeJs = value();
    else if (!argument.startsWith('-') && options.command === undefined) options.command = argument;
    else fail(`unknown argument ${argument}\n\n${usage}`);
  }
  return options;
}

/** faiss-node's folder: the one the current project resolves, else the one beside this package. */
function findFaissNode() {
  for (const from of [join(process.cwd(), 'package.json'), join(packageDir, 'package.json')]) {
    try {
      return dirname(createRequire(from).resolve('faiss-node/package.json'));
    } catch {
      // try the next
    }
  }
  return undefined;
}

function commandOutput(command, args) {
  const result = spawnSync(command, args, { encoding: 'utf8' });
  return result.status === 0 ? result.stdout : undefined;
}

/** What a build is made from: the shim, faiss-node's version and the system FAISS's version. */
function fingerprint(faissNodeDir) {
  const hash = createHash('sha256');
  for (const file of readdirSync(shimDir).sort()) hash.update(readFileSync(join(shimDir, file)));
  // The same bytes as scripts/setup-faiss.sh has always hashed, so either one sees the other's build.
  hash.update(`${JSON.parse(readFileSync(join(faissNodeDir, 'package.json'), 'utf8')).version}\n`);
  // biome-ignore lint/suspicious/noTemplateCurlyInString: dpkg-query's format syntax
  hash.update(commandOutput('dpkg-query', ['-W', '-f=${Version}\n', 'libfaiss-dev']) ?? '');
  return hash.digest('hex');
}

/** Loads the binding and searches a flat and an HNSW index; returns the error output, or undefined. */
function checkBinding(faissNodeDir) {
  const script = `
    const faiss = require(process.argv[1]);
    const flat = new faiss.IndexFlatIP(2);
    flat.add([1, 0, 0, 1]);
    const hit = flat.search([0.9, 0.1], 1);
    const hnsw = faiss.Index.fromFactory(2, 'HNSW8', faiss.MetricType.METRIC_L2);
    hnsw.add([1, 0, 0, 1, 1, 1]);
    const near = hnsw.search([0, 0.9], 1);
    if (hit.labels[0] !== 0 || near.labels[0] !== 1) throw new Error('unexpected search results');`;
  const result = spawnSync(process.execPath, ['-e', script, faissNodeDir], { encoding: 'utf8' });
  return result.status === 0 ? undefined : `${result.stdout}${result.stderr}`.trim() || 'it did not load';
}

function installSystemPackages(installSystem) {
  if (commandOutput('dpkg-query', ['--version']) === undefined) {
    console.log(
      `zerda-faiss: not a Debian-based system; make sure FAISS (headers and CMake config), OpenBLAS, OpenMP, cmake, patchelf and a C++ compiler are installed`,
    );
    return;
  }
  const missing = aptPackages.filter(
    (name) =>
      // biome-ignore lint/suspicious/noTemplateCurlyInString: dpkg-query's format syntax
      !(commandOutput('dpkg-query', ['-W', '-f=${Status}', name]) ?? '').includes('install ok installed'),
  );
  if (missing.length === 0) return;
  if (!installSystem) {
    fail(`missing system packages: ${missing.join(' ')}
Install them (sudo apt-get install ${missing.join(' ')}) or run again with --install-system-packages`);
  }
  const sudo = process.getuid?.() === 0 ? [] : ['sudo'];
  const run = (args) =>
    spawnSync(sudo.length ? 'sudo' : args[0], sudo.length ? args : args.slice(1), {
      stdio: 'inherit',
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
    }).status === 0;
  console.log(`zerda-faiss: installing ${missing.join(' ')}`);
  if (!run(['apt-get', 'update', '-qq'])) fail('apt-get update failed');
  if (!run(['apt-get', 'install', '-y', '-qq', '--no-install-recommends', ...missing])) {
    fail(`apt-get install ${missing.join(' ')} failed`);
  }
}

function build(options) {
  const faissNodeDir = options.faissNode ?? findFaissNode();
  if (!faissNodeDir || !existsSync(join(faissNodeDir, 'package.json'))) {
    fail('faiss-node is not installed here (npm install faiss-node --ignore-scripts, then run this again)');
  }
  const stamp = join(faissNodeDir, 'build', 'zerda-build.stamp');
  if (
    !options.force &&
    existsSync(stamp) &&
    readFileSync(stamp, 'utf8').trim() === fingerprint(faissNodeDir) &&
    checkBinding(faissNodeDir) === undefined
  ) {
    console.log(`zerda-faiss: faiss-node is already built (${faissNodeDir})`);
    return;
  }

  installSystemPackages(options.installSystem);

  // The CMake shim in place of FAISS's sources.
  const deps = join(faissNodeDir, 'deps', 'faiss');
  rmSync(deps, { recursive: true, force: true });
  mkdirSync(deps, { recursive: true });
  cpSync(shimDir, deps, { recursive: true });

  // Compile (cmake-js from the npm registry; Node-API headers from its node-api-headers package).
  console.log(`zerda-faiss: compiling faiss-node with cmake-js@${options.cmakeJs} (a minute or two)`);
  rmSync(join(faissNodeDir, 'build'), { recursive: true, force: true });
  const npx = process.platform === 'win32' ? 'npx.cmd' : 'npx';
  const parallel = String(typeof availableParallelism === 'function' ? availableParallelism() : 2);
  const compiled = spawnSync(
    npx,
    ['--yes', `cmake-js@${options.cmakeJs}`, 'compile', '--parallel', parallel],
    {
      cwd: faissNodeDir,
      encoding: 'utf8',
      stdio: options.verbose ? 'inherit' : 'pipe',
      maxBuffer: 256 * 1024 * 1024,
    },
  );
  if (compiled.status !== 0) {
    if (!options.verbose)
      console.error(`${compiled.stdout ?? ''}${compiled.stderr ?? ''}`.split('\n').slice(-40).join('\n'));
    fail('compiling faiss-node failed (the output is above)');
  }

  const problem = checkBinding(faissNodeDir);
  if (problem !== undefined) {
    console.error(problem);
    fail('faiss-node was built but does not load or search');
  }
  writeFileSync(stamp, `${fingerprint(faissNodeDir)}\n`);
  console.log(
    `zerda-faiss: faiss-node built and checked (${join(faissNodeDir, 'build', 'Release', 'faiss-node.node')})`,
  );
}

const options = parseArguments(process.argv.slice(2));
if (options.command === undefined || options.command === 'help') {
  console.log(usage);
} else if (options.command === 'build') {
  build(options);
} else if (options.command === 'check') {
  const faissNodeDir = options.faissNode ?? findFaissNode();
  if (!faissNodeDir) fail('faiss-node is not installed here');
  const problem = checkBinding(faissNodeDir);
  if (problem !== undefined) fail(`faiss-node does not load or search (${problem.split('\n')[0]})`);
  console.log(`zerda-faiss: faiss-node loads and searches (${faissNodeDir})`);
} else {
  fail(`unknown command ${options.command}\n\n${usage}`);
}
