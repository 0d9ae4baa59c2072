// Every outcome the dev chain can produce, through the official MCP
// TypeScript SDK, whose callTool validates each structuredContent against the
// tool's outputSchema (a mismatch throws and fails the test): a swap preview
// and confirm, a transaction that REVERTED on chain, one whose inclusion was
// not seen in time (PENDING), one whose receipt lacks the previewed effect
// (EFFECT_MISMATCH), and the refusal families. Each asserts the chain as well
// as the answer, reading balances with wallet_balance.
//
// REVERTED, PENDING and EFFECT_MISMATCH need a node that misbehaves: walletgate
// runs against `walletgate devnet --http` through a small JSON-RPC proxy in
// this file that can say a failing call succeeds (the transaction then reverts
// on the real chain), withhold receipts, or drop a receipt's logs.
//
//   cd e2e/ts && npm ci && WALLETGATE_BIN=/abs/path/walletgate node --test

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

const BIN = process.env.WALLETGATE_BIN;
if (!BIN || !path.isAbsolute(BIN)) {
  throw new Error('WALLETGATE_BIN must be the absolute path of a walletgate binary');
}
const HERE = path.dirname(fileURLToPath(import.meta.url));
const TIMEOUT_MS = 60_000;
const REQUEST_TIMEOUT_MS = 20_000;
const childEnv = Object.fromEntries(
  Object.entries(process.env).filter(([k, v]) => v !== undefined && !/^WALLETGATE_/i.test(k)),
);

// ---- helpers ---------------------------------------------------------------

function text(result) {
  return (result.content ?? [])
    .filter((c) => c.type === 'text')
    .map((c) => c.text)
    .join('\n');
}

// A decimal string in base units of `decimals`.
function toUnits(s, decimals) {
  const m = /^(\d+)(?:\.(\d+))?$/.exec(s);
  assert.ok(m, `not a decimal string: ${JSON.stringify(s)}`);
  const frac = m[2] ?? '';
  return BigInt(m[1]) * 10n ** BigInt(decimals) + BigInt(frac.padEnd(decimals, '0') || '0');
}

async function call(client, name, args) {
  return client.callTool({ name, arguments: args }, undefined, { timeout: REQUEST_TIMEOUT_MS });
}

function ok(result, what) {
  assert.notEqual(result.isError, true, `${what} failed: ${text(result)}`);
  assert.ok(result.structuredContent, `${what}: no structuredContent`);
  return result.structuredContent;
}

function refused(result, code, what) {
  assert.equal(result.isError, true, `${what}: expected ${code}, got ${text(result)}`);
  const t = text(result);
  assert.ok(t.startsWith(`${code}: `), `${what}: expected "${code}: …", got ${JSON.stringify(t)}`);
  return t;
}

// balances reads ETH, the nonce and each token of address (default: the
// wallet) in base units.
async function balances(client, tokens, address) {
  const sc = ok(await call(client, 'wallet_balance', { tokens, ...(address ? { address } : {}) }), 'wallet_balance');
  const out = { eth: toUnits(sc.eth, 18), nonce: sc.nonce };
  for (const t of sc.tokens) out[t.symbol] = toUnits(t.balance, t.decimals);
  return out;
}

// connect starts walletgate with args/env, connects the SDK and lists the
// tools (which arms the SDK's outputSchema validation for each of them).
async function connect(args, env) {
  const transport = new StdioClientTransport({ command: BIN, args, env: { ...childEnv, ...env }, cwd: HERE, stderr: 'pipe' });
  let stderr = '';
  transport.stderr.on('data', (c) => (stderr += c.toString()));
  const client = new Client({ name: 'walletgate-e2e-outcomes', version: '1.0.0' }, { capabilities: {} });
  await client.connect(transport, { timeout: REQUEST_TIMEOUT_MS });
  const { tools } = await client.listTools(undefined, { timeout: REQUEST_TIMEOUT_MS });
  for (const t of tools) assert.equal(typeof client.getToolOutputValidator(t.name), 'function', t.name);
  return { client, tools, stderr: () => stderr };
}

// startDevnet runs `walletgate devnet --http 127.0.0.1:0` and resolves with
// the JSON line it prints (rpc, key_file, contracts) and a stop function.
async function startDevnet() {
  const child = spawn(BIN, ['devnet', '--http', '127.0.0.1:0'], { cwd: HERE, env: childEnv, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (c) => (stderr += c.toString()));
  const line = await new Promise((resolve, reject) => {
    readline.createInterface({ input: child.stdout }).once('line', resolve);
    child.once('exit', (code) => reject(new Error(`devnet exited ${code}: ${stderr}`)));
  });
  const info = JSON.parse(line);
  const exited = new Promise((resolve) => child.once('exit', resolve));
  return { info, stop: async () => { child.kill('SIGINT'); await exited; } };
}

// startProxy forwards JSON-RPC (single or batched) to upstream and rewrites
// answers according to the switches on the returned object:
//   lieCalls:        eth_call answers success ("0x") and eth_estimateGas 200000
//   withholdReceipts: eth_getTransactionReceipt answers null
//   dropLogs:        receipts come back with no logs
async function startProxy(upstream) {
  const sw = { lieCalls: false, withholdReceipts: false, dropLogs: false };
  const rewrite = (req, res) => {
    if (!res || res.id !== req.id) return res;
    switch (req.method) {
      case 'eth_call':
        if (sw.lieCalls) return { jsonrpc: '2.0', id: req.id, result: '0x' };
        break;
      case 'eth_estimateGas':
        if (sw.lieCalls) return { jsonrpc: '2.0', id: req.id, result: '0x30d40' };
        break;
      case 'eth_getTransactionReceipt':
        if (sw.withholdReceipts) return { jsonrpc: '2.0', id: req.id, result: null };
        if (sw.dropLogs && res.result) return { ...res, result: { ...res.result, logs: [] } };
        break;
    }
    return res;
  };
  const server = http.createServer(async (req, res) => {
    let body = '';
    for await (const c of req) body += c;
    const up = await fetch(upstream, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    let answer = await up.json();
    const sent = JSON.parse(body);
    if (Array.isArray(sent)) {
      const byId = new Map(sent.map((r) => [JSON.stringify(r.id), r]));
      answer = answer.map((a) => (byId.has(JSON.stringify(a.id)) ? rewrite(byId.get(JSON.stringify(a.id)), a) : a));
    } else {
      answer = rewrite(sent, answer);
    }
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify(answer));
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  sw.url = `http://127.0.0.1:${server.address().port}`;
  sw.close = () => new Promise((resolve) => server.close(resolve));
  return sw;
}

// ---- a swap through --dev ----------------------------------------------------

test('wallet_swap: quote, preview, confirm; the SDK accepts every answer and the balances moved as verified', { timeout: TIMEOUT_MS }, async () => {
  const { client, tools } = await connect(['--dev'], {});
  try {
    assert.ok(tools.some((t) => t.name === 'wallet_swap'), 'wallet_swap is listed (cd testdata && npm ci --omit=peer)');
    const args = { token_in: 'USDT', token_out: 'WETH', amount_in: '25' };
    const quote = ok(await call(client, 'wallet_swap_quote', args), 'wallet_swap_quote');
    assert.equal(quote.amount_in_base, '25000000');

    const before = await balances(client, ['USDT', 'WETH']);
    const preview = ok(await call(client, 'wallet_swap', args), 'wallet_swap preview');
    assert.equal(preview.status, 'confirmation_required');
    assert.equal(preview.preview.action, 'swap');
    assert.deepEqual(preview.preview.legs.map((l) => l.label).at(-1), 'swap');
    assert.deepEqual(await balances(client, ['USDT', 'WETH']), before, 'a preview moves nothing');

    const done = ok(await call(client, 'wallet_swap', { ...args, confirm: preview.confirm_token }), 'wallet_swap confirm');
    assert.equal(done.status, 'confirmed');
    const kinds = done.effects.map((e) => e.kind).sort();
    assert.deepEqual(kinds, ['swap_in', 'swap_out']);
    const got = BigInt(done.effects.find((e) => e.kind === 'swap_out').raw);
    assert.ok(got >= BigInt(preview.preview.quote.min_out_base), 'at least the previewed minimum');

    const after = await balances(client, ['USDT', 'WETH']);
    assert.equal(before.USDT - after.USDT, 25_000000n, 'exactly 25 USDT left the wallet');
    assert.equal(after.WETH - before.WETH, got, 'the WETH the answer reports arrived');

    const verified = ok(await call(client, 'wallet_verify_tx', { tx: done.tx_hash }), 'wallet_verify_tx');
    assert.equal(verified.status, 'success');
  } finally {
    await client.close();
  }
});

// ---- refusal families through --dev -----------------------------------------

test('refusal families: each a tool error with its code, nothing moved', { timeout: TIMEOUT_MS }, async () => {
  const { client } = await connect(['--dev'], {});
  const to = '0x00000000000000000000000000000000000e2e21';
  try {
    const before = await balances(client, ['USDT', 'DAI']);
    const recipientBefore = await balances(client, ['USDT'], to);
    const send = { to, amount: '1', asset: 'USDT' };
    refused(await call(client, 'wallet_send', { ...send, amount: 1 }), 'BAD_ARGUMENT', 'a JSON number');
    refused(await call(client, 'wallet_send', { ...send, amount: '1e3' }), 'BAD_AMOUNT', 'an exponent');
    refused(await call(client, 'wallet_send', { ...send, to: '0x0000000000000000000000000000000000000000' }), 'BAD_ADDRESS', 'the zero address');
    refused(await call(client, 'wallet_send', { ...send, asset: 'NOPE' }), 'BAD_TOKEN', 'an unknown symbol');
    refused(await call(client, 'wallet_send', { ...send, amount: '999999' }), 'CAP_EXCEEDED', 'above the cap');
    refused(await call(client, 'wallet_verify_tx', { tx: '0x12' }), 'BAD_TX', 'a short hash');
    refused(await call(client, 'wallet_swap', { token_in: 'USDT', token_out: 'ETH', amount_in: '1' }), 'BAD_SWAP', 'into ETH');
    refused(await call(client, 'wallet_swap_quote', { token_in: 'USDT', token_out: 'DAI', amount_in: '1', fee: 3000 }), 'NO_QUOTE', 'no such pool');

    // Confirmations: a guess, a change of arguments (spends the token), a
    // replay, and a case-variant key (refused, and spends the token too).
    refused(await call(client, 'wallet_send', { ...send, confirm: 'wgc_' + 'a'.repeat(32) }), 'TOKEN_UNKNOWN', 'a guessed token');
    let p = ok(await call(client, 'wallet_send', send), 'preview');
    refused(await call(client, 'wallet_send', { ...send, amount: '2', confirm: p.confirm_token }), 'ARGS_MISMATCH', 'changed amount');
    refused(await call(client, 'wallet_send', { ...send, confirm: p.confirm_token }), 'TOKEN_USED', 'after a mismatch');
    p = ok(await call(client, 'wallet_send', send), 'preview');
    refused(await call(client, 'wallet_send', { ...send, Confirm: p.confirm_token }), 'BAD_ARGUMENT', 'a Confirm key');
    refused(await call(client, 'wallet_send', { ...send, confirm: p.confirm_token }), 'TOKEN_USED', 'the token a Confirm key carried');

    assert.deepEqual(await balances(client, ['USDT', 'DAI']), before, 'no refusal moved anything or took a nonce');
    assert.deepEqual(await balances(client, ['USDT'], to), recipientBefore);
  } finally {
    await client.close();
  }
});

// ---- outcomes after a broadcast, through a misbehaving node -----------------

test('REVERTED, PENDING and EFFECT_MISMATCH: what the SDK receives matches the schema and the chain', { timeout: TIMEOUT_MS }, async () => {
  const devnet = await startDevnet();
  const proxy = await startProxy(devnet.info.rpc);
  const stateDir = fs.mkdtempSync(path.join(os.tmpdir(), 'walletgate-e2e-ts-'));
  let session;
  try {
    session = await connect([], {
      WALLETGATE_RPC: proxy.url,
      WALLETGATE_CHAIN_ID: '1337',
      WALLETGATE_KEY_FILE: devnet.info.key_file,
      WALLETGATE_STATE_DIR: stateDir,
      WALLETGATE_RECEIPT_TIMEOUT: '1s',
      WALLETGATE_CAP_PER_TX: 'ETH=0.01,USDT=2000000',
      WALLETGATE_CAP_PER_SESSION: 'ETH=0.05,USDT=5000000',
      WALLETGATE_CAP_PER_DAY: 'ETH=0.1,USDT=10000000',
    });
    const { client } = session;
    const to = '0x00000000000000000000000000000000000e2e22';

    // REVERTED: the node says the transfer of more USDT than the wallet
    // holds would succeed; on the real chain it reverts.
    let before = await balances(client, ['USDT']);
    let rb = await balances(client, ['USDT'], to);
    const big = { to, amount: '1500000', asset: 'USDT' };
    proxy.lieCalls = true;
    let p = ok(await call(client, 'wallet_send', big), 'preview of an overdraft');
    let r = await call(client, 'wallet_send', { ...big, confirm: p.confirm_token });
    proxy.lieCalls = false;
    refused(r, 'REVERTED', 'an overdraft the node called fine');
    assert.equal(r.structuredContent.status, 'reverted');
    assert.deepEqual(r.structuredContent.effects, []);
    let after = await balances(client, ['USDT']);
    assert.equal(after.USDT, before.USDT, 'no USDT left');
    assert.equal(after.nonce, before.nonce + 1, 'the reverted transaction took a nonce');
    assert.ok(after.eth < before.eth, 'and its fee');
    assert.deepEqual(await balances(client, ['USDT'], to), rb, 'nothing arrived');
    const v = ok(await call(client, 'wallet_verify_tx', { tx: r.structuredContent.tx_hash }), 'verify the revert');
    assert.equal(v.status, 'reverted');

    // PENDING: sent, receipt not seen within WALLETGATE_RECEIPT_TIMEOUT.
    before = await balances(client, []);
    rb = await balances(client, [], to);
    const eth = { to, amount: '0.001' };
    p = ok(await call(client, 'wallet_send', eth), 'ETH preview');
    proxy.withholdReceipts = true;
    r = await call(client, 'wallet_send', { ...eth, confirm: p.confirm_token });
    proxy.withholdReceipts = false;
    const pending = ok(r, 'ETH confirm, receipt withheld');
    assert.equal(pending.status, 'pending');
    assert.equal(pending.block, undefined, 'no block while pending');
    assert.match(text(r), /^PENDING: /);
    assert.match(text(r), /do not send it again/);
    const seen = ok(await call(client, 'wallet_verify_tx', { tx: pending.tx_hash, expected_to: to, expected_amount: '0.001' }), 'verify the pending one');
    assert.equal(seen.status, 'success');
    assert.equal(seen.amount_match, true);
    assert.equal((await balances(client, [], to)).eth - rb.eth, 1_000_000_000_000_000n, 'it arrived once');
    assert.equal((await balances(client, [])).nonce, before.nonce + 1);

    // EFFECT_MISMATCH: the receipt comes back without the Transfer log.
    rb = await balances(client, ['USDT'], to);
    const usdt = { to, amount: '3', asset: 'USDT' };
    p = ok(await call(client, 'wallet_send', usdt), 'USDT preview');
    proxy.dropLogs = true;
    r = await call(client, 'wallet_send', { ...usdt, confirm: p.confirm_token });
    proxy.dropLogs = false;
    const t = refused(r, 'EFFECT_MISMATCH', 'a receipt without its Transfer');
    assert.equal(r.structuredContent.status, 'effect_mismatch', 'never "confirmed" when the effect was not seen');
    assert.doesNotMatch(t, /CONFIRMED/);
    assert.equal((await balances(client, ['USDT'], to)).USDT - rb.USDT, 3_000000n, 'on chain the transfer did happen: the answer says to inspect it, not that it failed');
  } catch (err) {
    if (session && err instanceof Error) err.message += `\n--- walletgate stderr ---\n${session.stderr().slice(-3000)}`;
    throw err;
  } finally {
    await session?.client.close();
    await proxy.close();
    await devnet.stop();
    fs.rmSync(stateDir, { recursive: true, force: true });
  }
});
