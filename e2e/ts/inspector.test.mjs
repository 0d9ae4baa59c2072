// The MCP Inspector CLI (@modelcontextprotocol/inspector --cli, pinned in
// package.json) as a third independent client: it lists walletgate's tools,
// calls every read tool and gets a write preview. Each --cli call starts a new
// walletgate, so a confirm cannot work across two calls: the second process
// never issued the token, and says so (README: "MCP Inspector").
//
//   cd e2e/ts && npm ci && WALLETGATE_BIN=/abs/path/walletgate node --test

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const BIN = process.env.WALLETGATE_BIN;
if (!BIN || !path.isAbsolute(BIN)) {
  throw new Error('WALLETGATE_BIN must be the absolute path of a walletgate binary');
}
const HERE = path.dirname(fileURLToPath(import.meta.url));
const INSPECTOR = path.join(HERE, 'node_modules', '@modelcontextprotocol', 'inspector', 'clients', 'launcher', 'build', 'index.js');
const catalogDir = fs.mkdtempSync(path.join(os.tmpdir(), 'walletgate-inspector-'));
const env = {
  ...Object.fromEntries(Object.entries(process.env).filter(([k, v]) => v !== undefined && !/^WALLETGATE_/i.test(k))),
  MCP_CATALOG_PATH: path.join(catalogDir, 'mcp.json'), // the Inspector's catalog, not ~/.mcp-inspector
};

// inspect runs one Inspector CLI call against `walletgate --dev` and resolves
// with the JSON it prints on stdout (a tools/call error result included).
const inspect = (...args) => inspectWithStderr(...args).then((r) => r.json);

// inspectWithStderr is inspect, with what the Inspector wrote on stderr (its
// schema portability warnings, for one).
function inspectWithStderr(...args) {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [INSPECTOR, '--cli', '--cwd', HERE, BIN, '--dev', ...args], { env, timeout: 30_000, maxBuffer: 16 << 20 }, (err, stdout, stderr) => {
      try {
        resolve({ json: JSON.parse(stdout), stderr });
      } catch {
        reject(new Error(`inspector ${args.join(' ')}: ${err ?? 'no JSON'}\nstdout: ${stdout}\nstderr: ${stderr.slice(-2000)}`));
      }
    });
  });
}

const callTool = (name, ...pairs) => inspect('--method', 'tools/call', '--tool-name', name, ...(pairs.length ? ['--tool-arg', ...pairs] : []));

test.after(() => fs.rmSync(catalogDir, { recursive: true, force: true }));

test('the MCP Inspector CLI lists the tools, calls each read tool and gets a preview', { timeout: 120_000 }, async () => {
  const { json: list, stderr: listed } = await inspectWithStderr('--method', 'tools/list');
  // The Inspector lints every schema it lists (a "type" array such as
  // ["integer", "string"] is one warning): walletgate's give it nothing to say.
  assert.doesNotMatch(listed, /Schema portability|Warning: tool/, listed);
  assert.deepEqual(
    list.tools.map((t) => t.name).sort(),
    ['wallet_address', 'wallet_allowance', 'wallet_approve', 'wallet_balance', 'wallet_pay_x402', 'wallet_policy', 'wallet_send', 'wallet_sign_typed_data', 'wallet_swap', 'wallet_swap_quote', 'wallet_verify_tx'],
  );
  for (const t of list.tools) assert.equal(t.outputSchema?.type, 'object', `${t.name} declares an outputSchema`);

  const address = await callTool('wallet_address');
  assert.equal(address.structuredContent.address, '0xE40aed1eB6c2B8b39b55A809685CC93425F60D0c');
  const balance = await callTool('wallet_balance', 'tokens=["USDT"]');
  assert.equal(balance.structuredContent.tokens[0].balance, '1000000');
  const policy = await callTool('wallet_policy');
  assert.equal(policy.structuredContent.network_kind, 'dev');
  const verify = await callTool('wallet_verify_tx', 'tx=0x' + '1'.repeat(64));
  assert.equal(verify.structuredContent.found, false);
  // The Inspector turns a bare 10 into a JSON number; amounts are strings.
  // fee is an integer in the schema: the Inspector sends 500 as a number.
  const quote = await callTool('wallet_swap_quote', 'token_in=USDT', 'token_out=WETH', 'amount_in="10"', 'fee=500', 'slippage_bps=30');
  assert.notEqual(quote.isError, true, JSON.stringify(quote));
  assert.equal(quote.structuredContent.amount_in_base, '10000000');
  assert.equal(quote.structuredContent.slippage_bps, 30);
  assert.match(quote.structuredContent.price_impact_pct, /^0\.0[0-9]+$/);

  const send = ['to=0x00000000000000000000000000000000000e2e31', 'amount="0.5"', 'asset=USDT'];
  const preview = await callTool('wallet_send', ...send);
  assert.notEqual(preview.isError, true, JSON.stringify(preview));
  assert.equal(preview.structuredContent.status, 'confirmation_required');
  assert.match(preview.structuredContent.confirm_token, /^wgc_[a-z2-7]{32}$/);

  // A second --cli call is a second walletgate: it never issued that token.
  const confirm = await callTool('wallet_send', ...send, `confirm=${preview.structuredContent.confirm_token}`);
  assert.equal(confirm.isError, true);
  const text = confirm.content.map((c) => c.text).join('\n');
  assert.match(text, /^TOKEN_UNKNOWN: /);
  assert.match(text, /confirmations live only in the process and the connection that previewed them/);
  assert.match(text, /MCP Inspector CLI/);
});
