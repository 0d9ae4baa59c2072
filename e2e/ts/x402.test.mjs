// x402 for real: a resource server built on the official x402 packages
// (@x402/express's paymentMiddleware, @x402/core's x402ResourceServer, the
// exact EVM scheme of @x402/evm) with a facilitator from the same packages
// (@x402/core's x402Facilitator, @x402/evm's exact facilitator scheme, signing
// with its own funded key) that settles on `walletgate devnet --http`. The
// resource answers 402; walletgate's wallet_pay_x402 (through the official MCP
// TypeScript SDK, outputSchema validation on) previews and confirms; the
// retried request with its PAYMENT-SIGNATURE header gets 200, and the payee's
// balance on chain grew by exactly the price; a second payment past the
// session cap is refused.
//
//   cd e2e/ts && npm ci && WALLETGATE_BIN=/abs/path/walletgate node --test

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';

import express from 'express';
import { createPublicClient, createWalletClient, defineChain, http as viemHttp, publicActions } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { paymentMiddleware } from '@x402/express';
import { x402ResourceServer } from '@x402/core/server';
import { x402Facilitator } from '@x402/core/facilitator';
import { ExactEvmScheme as ExactEvmServer } from '@x402/evm/exact/server';
import { ExactEvmScheme as ExactEvmFacilitator } from '@x402/evm/exact/facilitator';
import { toFacilitatorEvmSigner } from '@x402/evm';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { BIN, HERE, childEnv } from './common.mjs';

const NETWORK = 'eip155:1337';
const TOKEN_NAME = 'USD Coin (walletgate dev)';
const TOKEN_VERSION = '2';

function text(result) {
  return (result.content ?? []).filter((c) => c.type === 'text').map((c) => c.text).join('\n');
}

// startDevnet runs `walletgate devnet --http 127.0.0.1:0` and resolves with
// the JSON line it prints and a stop function.
function startDevnet() {
  const child = spawn(BIN, ['devnet', '--http', '127.0.0.1:0'], { cwd: HERE, env: childEnv, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d) => { stderr += d; });
  return new Promise((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`devnet exited ${code}: ${stderr}`)));
    readline.createInterface({ input: child.stdout }).once('line', (line) => {
      resolve({ info: JSON.parse(line), stop: () => new Promise((r) => { child.once('exit', r); child.kill('SIGTERM'); }) });
    });
  });
}

test('an x402 resource is paid through walletgate and settled on the dev chain', { timeout: 120_000 }, async (t) => {
  const devnet = await startDevnet();
  t.after(() => devnet.stop());
  const chain = defineChain({ id: 1337, name: 'walletgate dev', nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 }, rpcUrls: { default: { http: [devnet.info.rpc] } } });
  const transport = viemHttp(devnet.info.rpc);
  const pub = createPublicClient({ chain, transport });
  const devKey = '0x' + fs.readFileSync(devnet.info.key_file, 'utf8').trim().replace(/^0x/, '');
  const dev = createWalletClient({ account: privateKeyToAccount(devKey), chain, transport });

  // The USDC-like token (testdata/contracts/PermitToken.sol), 1000 of it the wallet's.
  const artifact = JSON.parse(fs.readFileSync(path.join(HERE, '../../testdata/contracts/build/PermitToken.json'), 'utf8'));
  const deployHash = await dev.deployContract({ abi: artifact.abi, bytecode: `0x${artifact.bytecode.replace(/^0x/, '')}`, args: [TOKEN_NAME, 'USDC', TOKEN_VERSION, 6, 1_000_000_000n] });
  const token = (await pub.waitForTransactionReceipt({ hash: deployHash })).contractAddress;
  const balanceOf = (a) => pub.readContract({ address: token, abi: artifact.abi, functionName: 'balanceOf', args: [a] });

  // The facilitator: its own key, funded with ETH for gas.
  const facAccount = privateKeyToAccount(generatePrivateKey());
  await pub.waitForTransactionReceipt({ hash: await dev.sendTransaction({ to: facAccount.address, value: 10n ** 18n }) });
  const facWallet = createWalletClient({ account: facAccount, chain, transport }).extend(publicActions);
  const facilitator = new x402Facilitator().register(NETWORK, new ExactEvmFacilitator(toFacilitatorEvmSigner({ ...facWallet, address: facAccount.address })));
  const facilitatorClient = {
    verify: (payload, requirements) => facilitator.verify(payload, requirements),
    settle: (payload, requirements) => facilitator.settle(payload, requirements),
    getSupported: async () => facilitator.getSupported(),
  };

  // The resource server: 1 USDC per request to payee.
  const payee = privateKeyToAccount(generatePrivateKey()).address;
  const price = 1_000_000n;
  const resourceServer = new x402ResourceServer(facilitatorClient).register(NETWORK, new ExactEvmServer());
  const app = express();
  app.use(paymentMiddleware({
    'GET /weather': {
      accepts: { scheme: 'exact', network: NETWORK, payTo: payee, maxTimeoutSeconds: 120,
        price: { amount: price.toString(), asset: token, extra: { name: TOKEN_NAME, version: TOKEN_VERSION } } },
      description: 'Weather report',
      mimeType: 'application/json',
    },
  }, resourceServer));
  app.get('/weather', (_req, res) => res.json({ weather: 'sunny' }));
  const server = await new Promise((resolve) => { const s = app.listen(0, '127.0.0.1', () => resolve(s)); });
  t.after(() => new Promise((r) => server.close(r)));
  const url = `http://127.0.0.1:${server.address().port}/weather`;

  // walletgate, on the same chain with the dev key; caps of 1.5 USDC per session.
  const mcp = new Client({ name: 'x402-e2e', version: '0' });
  await mcp.connect(new StdioClientTransport({
    command: BIN, cwd: HERE, stderr: 'pipe',
    env: { ...childEnv, WALLETGATE_RPC: devnet.info.rpc, WALLETGATE_CHAIN_ID: '1337', WALLETGATE_KEY_FILE: devnet.info.key_file,
      WALLETGATE_STATE_DIR: fs.mkdtempSync(path.join(process.env.TMPDIR ?? '/tmp', 'wg-x402-')),
      WALLETGATE_CAP_PER_TX: `ETH=1,${token}=1`, WALLETGATE_CAP_PER_SESSION: `ETH=1,${token}=1.5`, WALLETGATE_CAP_PER_DAY: `ETH=1,${token}=10`,
      WALLETGATE_ALLOW_PAY_TO: `127.0.0.1:${server.address().port}=${payee}` },
  }));
  t.after(() => mcp.close());
  const call = (name, args) => mcp.callTool({ name, arguments: args }, undefined, { timeout: 30_000 });

  // 1. The resource asks for payment.
  const first = await fetch(url);
  assert.equal(first.status, 402);
  const header = first.headers.get('PAYMENT-REQUIRED');
  assert.ok(header, 'a PAYMENT-REQUIRED header');
  const required = JSON.parse(Buffer.from(header, 'base64').toString('utf8'));
  assert.equal(required.x402Version, 2);

  // 2. walletgate previews, then confirms.
  const preview = await call('wallet_pay_x402', { payment_required: required });
  assert.notEqual(preview.isError, true, text(preview));
  assert.equal(preview.structuredContent.status, 'confirmation_required');
  assert.match(text(preview), new RegExp(`Pay 1 USDC .* to ${payee}, for ${url.replace(/[.]/g, '\\.')} \\(as the paying server states it\\)`));
  assert.equal(preview.structuredContent.preview.pay_to, payee);
  const before = await balanceOf(payee);
  const paid = await call('wallet_pay_x402', { payment_required: required, confirm: preview.structuredContent.confirm_token });
  assert.notEqual(paid.isError, true, text(paid));
  assert.equal(paid.structuredContent.status, 'signed');
  assert.equal(paid.structuredContent.header, 'PAYMENT-SIGNATURE');
  assert.equal(await balanceOf(payee), before, 'signing moves nothing');

  // 3. The retried request is settled by the facilitator and answered.
  const second = await fetch(url, { headers: { 'PAYMENT-SIGNATURE': paid.structuredContent.payment_signature } });
  const body = await second.text();
  assert.equal(second.status, 200, body);
  assert.deepEqual(JSON.parse(body), { weather: 'sunny' });
  assert.ok(second.headers.get('PAYMENT-RESPONSE'), 'a PAYMENT-RESPONSE header');
  assert.equal(await balanceOf(payee), before + price, 'the payee got exactly the price, on chain');

  // 4. A second payment would pass the session cap (1 + 1 > 1.5).
  const again = await call('wallet_pay_x402', { payment_required: required });
  assert.equal(again.isError, true, text(again));
  assert.ok(text(again).startsWith('CAP_EXCEEDED: '), text(again));
});
