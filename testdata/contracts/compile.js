#!/usr/bin/env node
// Compiles testdata/contracts/*.sol with the solc-js version pinned in
// testdata/package.json and writes testdata/contracts/build/<Name>.json.
//
//   cd testdata && npm ci && node contracts/compile.js          # regenerate
//   cd testdata && npm ci && node contracts/compile.js --check  # verify committed artifacts
//
// Output is reproducible across machines: fixed compiler, fixed settings, no
// metadata hash in the bytecode, sources keyed by bare file name, stable JSON.
//
// It also compiles the few contracts listed in NPM_CONTRACTS from npm
// packages pinned in testdata/package.json (Chainlink's MockV3Aggregator, the
// dev chain's price feeds): their sources are keyed by their npm path, and
// their imports resolve only inside that same package in node_modules.
'use strict';

const fs = require('fs');
const path = require('path');
const solc = require('solc');

const CONTRACTS_DIR = __dirname;
const BUILD_DIR = path.join(CONTRACTS_DIR, 'build');
const NODE_MODULES = path.join(CONTRACTS_DIR, '..', 'node_modules');

// Contracts compiled from npm packages: [package, path inside it, contract name].
const NPM_CONTRACTS = [
  ['@chainlink/contracts', 'src/v0.8/shared/mocks/MockV3Aggregator.sol', 'MockV3Aggregator'],
];

function fail(msg) {
  process.stderr.write(`compile.js: ${msg}\n`);
  process.exit(1);
}

function parseArgs(argv) {
  let check = false;
  for (const arg of argv) {
    if (arg === '--check') check = true;
    else fail(`unknown argument ${JSON.stringify(arg)} (usage: node contracts/compile.js [--check])`);
  }
  return { check };
}

function compile() {
  const files = fs.readdirSync(CONTRACTS_DIR).filter((f) => f.endsWith('.sol')).sort();
  if (files.length === 0) fail(`no .sol files in ${CONTRACTS_DIR}`);

  const sources = {};
  for (const f of files) {
    sources[f] = { content: fs.readFileSync(path.join(CONTRACTS_DIR, f), 'utf8') };
  }

  // npm sources: the package must be the version testdata/package.json pins.
  const pinned = JSON.parse(fs.readFileSync(path.join(CONTRACTS_DIR, '..', 'package.json'), 'utf8')).devDependencies || {};
  const npmSources = new Map(); // source key -> [package@version/path, contract name]
  for (const [pkg, rel, name] of NPM_CONTRACTS) {
    const pkgJSON = path.join(NODE_MODULES, pkg, 'package.json');
    if (!fs.existsSync(pkgJSON)) fail(`${pkg} is not installed: run \`cd testdata && npm ci --omit=peer\``);
    const version = JSON.parse(fs.readFileSync(pkgJSON, 'utf8')).version;
    if (pinned[pkg] !== version) fail(`${pkg} is ${version} in node_modules, package.json pins ${pinned[pkg]}: run \`npm ci\``);
    const key = `${pkg}/${rel}`;
    sources[key] = { content: fs.readFileSync(path.join(NODE_MODULES, key), 'utf8') };
    npmSources.set(key, [`${pkg}@${version}/${rel}`, name]);
  }
  // Imports of npm sources resolve inside their own package only.
  const findImports = (p) => {
    const pkg = NPM_CONTRACTS.map(([pk]) => pk).find((pk) => p.startsWith(pk + '/'));
    const full = path.normalize(path.join(NODE_MODULES, p));
    if (!pkg || !full.startsWith(path.join(NODE_MODULES, pkg) + path.sep) || !fs.existsSync(full)) {
      return { error: `import ${p}: not inside an npm package listed in NPM_CONTRACTS` };
    }
    return { contents: fs.readFileSync(full, 'utf8') };
  };

  const input = {
    language: 'Solidity',
    sources,
    settings: {
      optimizer: { enabled: true, runs: 200 },
      evmVersion: 'cancun',
      // No IPFS/Swarm hash and no CBOR trailer: bytecode depends only on the
      // source text and the settings above, not on paths or the machine.
      metadata: { bytecodeHash: 'none', appendCBOR: false },
      outputSelection: {
        '*': { '*': ['abi', 'evm.bytecode.object', 'evm.bytecode.linkReferences', 'evm.deployedBytecode.object'] },
      },
    },
  };

  // testdata/contracts/*.sol must stay self-contained: only npm sources import.
  const output = JSON.parse(solc.compile(JSON.stringify(input), { import: findImports }));

  let errors = 0;
  for (const e of output.errors || []) {
    process.stderr.write((e.formattedMessage || e.message) + '\n');
    if (e.severity === 'error') errors++;
  }
  if (errors > 0) fail(`${errors} compiler error(s)`);

  const artifacts = new Map(); // file name in build/ -> serialized JSON
  for (const file of files) {
    const contracts = (output.contracts || {})[file] || {};
    const expected = path.basename(file, '.sol');
    if (!contracts[expected]) fail(`${file} must define a contract named ${expected}`);
    for (const name of Object.keys(contracts).sort()) {
      const c = contracts[name];
      const bytecode = c.evm.bytecode.object;
      const deployed = c.evm.deployedBytecode.object;
      if (!bytecode) continue; // interface or abstract contract: nothing to deploy
      if (Object.keys(c.evm.bytecode.linkReferences || {}).length > 0 || bytecode.includes('__$')) {
        fail(`${file}:${name} needs library linking, which is not supported`);
      }
      if (!/^[0-9a-f]+$/.test(bytecode) || !/^[0-9a-f]+$/.test(deployed)) {
        fail(`${file}:${name} produced non-hex bytecode`);
      }
      const out = `${name}.json`;
      if (artifacts.has(out)) fail(`contract name ${name} is defined more than once`);
      // Literal object => stable key order.
      const artifact = {
        contractName: name,
        abi: c.abi,
        bytecode: '0x' + bytecode,
        deployedBytecode: '0x' + deployed,
        compiler: solc.version(),
      };
      artifacts.set(out, JSON.stringify(artifact, null, 2) + '\n');
    }
  }
  for (const [key, [from, name]] of npmSources) {
    const c = ((output.contracts || {})[key] || {})[name];
    if (!c || !c.evm.bytecode.object) fail(`${key} must define a deployable contract named ${name}`);
    const out = `${name}.json`;
    if (artifacts.has(out)) fail(`contract name ${name} is defined more than once`);
    if (Object.keys(c.evm.bytecode.linkReferences || {}).length > 0) fail(`${key}:${name} needs library linking`);
    const artifact = {
      contractName: name,
      abi: c.abi,
      bytecode: '0x' + c.evm.bytecode.object,
      deployedBytecode: '0x' + c.evm.deployedBytecode.object,
      compiler: solc.version(),
      source: from, // package@version/path of the npm source
    };
    artifacts.set(out, JSON.stringify(artifact, null, 2) + '\n');
  }
  return artifacts;
}

function main() {
  const { check } = parseArgs(process.argv.slice(2));
  const artifacts = compile();

  if (check) {
    const problems = [];
    for (const [out, text] of artifacts) {
      const p = path.join(BUILD_DIR, out);
      if (!fs.existsSync(p)) problems.push(`missing: ${path.relative(process.cwd(), p)}`);
      else if (fs.readFileSync(p, 'utf8') !== text) problems.push(`out of date: ${path.relative(process.cwd(), p)}`);
    }
    const present = fs.existsSync(BUILD_DIR) ? fs.readdirSync(BUILD_DIR).filter((f) => f.endsWith('.json')) : [];
    for (const f of present.sort()) {
      if (!artifacts.has(f)) problems.push(`stale (no source): ${path.relative(process.cwd(), path.join(BUILD_DIR, f))}`);
    }
    if (problems.length > 0) {
      for (const p of problems) process.stderr.write(`compile.js --check: ${p}\n`);
      fail('committed artifacts do not match sources; run `cd testdata && npm ci && node contracts/compile.js`');
    }
    process.stdout.write(`compile.js --check: ${artifacts.size} artifact(s) up to date (solc ${solc.version()})\n`);
    return;
  }

  fs.mkdirSync(BUILD_DIR, { recursive: true });
  for (const [out, text] of artifacts) {
    fs.writeFileSync(path.join(BUILD_DIR, out), text);
    process.stdout.write(`wrote ${path.relative(process.cwd(), path.join(BUILD_DIR, out))}\n`);
  }
}

main();
