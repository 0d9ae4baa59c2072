// An independent end-to-end client for walletgate: the official MCP TypeScript
// SDK (@modelcontextprotocol/sdk, pinned in package.json) drives
// `walletgate --dev` over stdio, once per protocol version the server
// negotiates, and runs the two-step send and the refusals through the SDK's
// own callTool — which validates structuredContent against each tool's
// outputSchema (left on: a mismatch throws and fails the test).
//
//   cd e2e/ts && npm ci && WALLETGATE_BIN=/abs/path/walletgate node --test
//
// The dev chain offers the swap tools only when the Uniswap npm artifacts are
// installed (`cd testdata && npm ci --omit=peer`); walletgate finds them by
// searching upward from its working directory, which is this directory.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';

const BIN = process.env.WALLETGATE_BIN;
if (!BIN) {
  throw new Error(
    'WALLETGATE_BIN is not set: build walletgate and, beside it, the dev chain ' +
      '(go build -o /tmp/wg/walletgate ./cmd/walletgate && go build -o /tmp/wg/walletgate-devnet ./cmd/walletgate-devnet) ' +
      'and run WALLETGATE_BIN=/abs/path/walletgate node --test',
  );
}
if (!path.isAbsolute(BIN)) {
  throw new Error(`WALLETGATE_BIN must be an absolute path, got ${JSON.stringify(BIN)}`);
}

const HERE = path.dirname(fileURLToPath(import.meta.url)); // inside the repo: walletgate finds testdata/ from here
const VERSIONS = ['2024-11-05', '2025-03-26', '2025-06-18', '2025-11-25'];
const NEWEST = VERSIONS[VERSIONS.length - 1];
const READ_TOOLS = ['wallet_address', 'wallet_balance', 'wallet_verify_tx', 'wallet_policy', 'wallet_swap_quote', 'wallet_allowance'];
const WRITE_TOOLS = ['wallet_send', 'wallet_swap', 'wallet_approve', 'wallet_sign_typed_data', 'wallet_pay_x402'];
const RECIPIENT = '0x00000000000000000000000000000000000e2e02';
const TOKEN_RE = /^wgc_[a-z2-7]{32}$/;
const TEST_TIMEOUT_MS = 30_000;
const REQUEST_TIMEOUT_MS = 20_000;

// The child's environment: ours without any WALLETGATE_* variable (walletgate
// refuses unknown ones, and WALLETGATE_BIN is one).
const childEnv = Object.fromEntries(
  Object.entries(process.env).filter(([k, v]) => v !== undefined && !/^WALLETGATE_/i.test(k)),
);

// The SDK's Client always asks for LATEST_PROTOCOL_VERSION in initialize and
// has no option to ask for another. This subclass rewrites only the
// protocolVersion of the initialize request it sends (everything else — the
// result's schema check, the supported-version check, notifications/initialized
// — stays the SDK's own) and records the version the server answered with.
class VersionedClient extends Client {
  constructor(requestedVersion) {
    super({ name: 'walletgate-e2e-ts', version: '1.0.0' }, { capabilities: {} });
    this.requestedVersion = requestedVersion;
    this.negotiatedVersion = undefined;
  }

  async request(req, resultSchema, options) {
    if (req.method !== 'initialize') {
      return super.request(req, resultSchema, options);
    }
    const result = await super.request(
      { ...req, params: { ...req.params, protocolVersion: this.requestedVersion } },
      resultSchema,
      options,
    );
    this.negotiatedVersion = result.protocolVersion;
    return result;
  }
}

// Starts `walletgate --dev`, connects a client asking for `version`, runs fn,
// then closes the client and checks the child exited on its own.
async function withServer(version, fn) {
  const transport = new StdioClientTransport({
    command: BIN,
    args: ['--dev'],
    env: childEnv,
    cwd: HERE,
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr.on('data', (chunk) => {
    stderr += chunk.toString();
  });

  // A wire tap: what went out and what came back, as JSON-RPC messages.
  // Protocol.connect chains an onmessage set before it.
  const wire = { sent: [], received: [] };
  const send = transport.send.bind(transport);
  transport.send = (message, opts) => {
    wire.sent.push(message);
    return send(message, opts);
  };
  transport.onmessage = (message) => wire.received.push(message);

  const client = new VersionedClient(version);
  const clientErrors = [];
  client.onerror = (err) => clientErrors.push(err);

  let child;
  let exited;
  let failure;
  try {
    await client.connect(transport, { timeout: REQUEST_TIMEOUT_MS });
    // The SDK keeps the ChildProcess in a private field (the SDK is pinned
    // exactly, so this is stable); we need it to see how the child ended.
    child = transport._process;
    assert.ok(child && typeof child.pid === 'number', 'the SDK transport did not expose its child process');
    exited =
      child.exitCode !== null || child.signalCode !== null
        ? Promise.resolve({ code: child.exitCode, signal: child.signalCode })
        : new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
    await fn({ client, wire, version });
    assert.deepEqual(clientErrors.map(String), [], 'the SDK reported transport/protocol errors (non-JSON on stdout?)');
  } catch (err) {
    failure = err;
  }

  await client.close();
  if (child) {
    const timeout = new Promise((resolve) => setTimeout(() => resolve('timeout'), 5000).unref());
    const end = await Promise.race([exited, timeout]);
    try {
      assert.notEqual(end, 'timeout', `walletgate (pid ${child.pid}) did not exit within 5s of close`);
      // close() ends stdin and waits 2s before SIGTERM: a clean exit is code 0, no signal.
      assert.deepEqual(end, { code: 0, signal: null }, 'walletgate did not exit cleanly when its stdin closed');
      assert.throws(() => process.kill(child.pid, 0), { code: 'ESRCH' }, `walletgate pid ${child.pid} is still there`);
    } catch (err) {
      failure ??= err;
    }
  }
  if (failure) {
    if (failure instanceof Error) {
      failure.message += `\n--- walletgate stderr (${version}) ---\n${stderr.slice(-4000)}`;
    }
    throw failure;
  }
}

// A decimal string ("12.5") in base units of `decimals`.
function toUnits(s, decimals) {
  const m = /^(\d+)(?:\.(\d+))?$/.exec(s);
  assert.ok(m, `not a decimal string: ${JSON.stringify(s)}`);
  const frac = m[2] ?? '';
  assert.ok(frac.length <= decimals, `${s} has more than ${decimals} decimals`);
  return BigInt(m[1]) * 10n ** BigInt(decimals) + BigInt(frac.padEnd(decimals, '0') || '0');
}

function text(result) {
  return (result.content ?? [])
    .filter((c) => c.type === 'text')
    .map((c) => c.text)
    .join('\n');
}

async function call(client, name, args) {
  return client.callTool({ name, arguments: args }, undefined, { timeout: REQUEST_TIMEOUT_MS });
}

function assertOk(result, what) {
  assert.notEqual(result.isError, true, `${what} failed: ${text(result)}`);
  assert.ok(result.structuredContent && typeof result.structuredContent === 'object', `${what}: no structuredContent`);
  return result.structuredContent;
}

function assertRefused(result, code, what) {
  assert.equal(result.isError, true, `${what}: expected a refusal ${code}, got ${JSON.stringify(result)}`);
  const t = text(result);
  assert.ok(t.startsWith(`${code}: `), `${what}: expected text starting "${code}: ", got ${JSON.stringify(t)}`);
  return t;
}

async function usdtOf(client, address) {
  const args = address ? { address, tokens: ['USDT'] } : {};
  const sc = assertOk(await call(client, 'wallet_balance', args), `wallet_balance ${address ?? '(wallet)'}`);
  const usdt = sc.tokens.filter((t) => t.symbol === 'USDT');
  assert.equal(usdt.length, 1, `one USDT entry expected in ${JSON.stringify(sc.tokens)}`);
  assert.equal(usdt[0].known, true);
  return usdt[0];
}

// tools/list through the SDK, checked; also primes the SDK's outputSchema
// validators, which callTool only applies to tools it has listed.
async function listAndCheckTools(client, version) {
  const { tools } = await client.listTools(undefined, { timeout: REQUEST_TIMEOUT_MS });
  const names = tools.map((t) => t.name).sort();
  assert.deepEqual(
    names,
    [...READ_TOOLS, ...WRITE_TOOLS].sort(),
    'tools/list (the swap tools need the Uniswap artifacts: cd testdata && npm ci --omit=peer)',
  );
  for (const tool of tools) {
    assert.match(tool.name, /^[a-z][a-z0-9_]*$/, 'tool names are snake_case');
    assert.equal(tool.inputSchema?.type, 'object', `${tool.name}: inputSchema`);
    if (READ_TOOLS.includes(tool.name)) {
      assert.equal(tool.annotations?.readOnlyHint, true, `${tool.name}: readOnlyHint`);
    } else {
      assert.notEqual(tool.annotations?.readOnlyHint, true, `${tool.name}: a write must not be readOnlyHint`);
      assert.equal(tool.annotations?.destructiveHint, true, `${tool.name}: destructiveHint`);
    }
    if (version >= '2025-06-18') {
      assert.equal(tool.outputSchema?.type, 'object', `${tool.name}: outputSchema on ${version}`);
      // The SDK's validation is active for this tool, and not vacuous: it
      // rejects an empty object (every tool's schema requires fields).
      const validate = client.getToolOutputValidator(tool.name);
      assert.equal(typeof validate, 'function', `${tool.name}: the SDK has no outputSchema validator`);
      assert.equal(validate({}).valid, false, `${tool.name}: its outputSchema accepts {}`);
    }
  }
  return tools;
}

function assertNegotiated(client, wire, version) {
  const init = wire.sent.find((m) => m.method === 'initialize');
  assert.ok(init, 'no initialize request went out');
  assert.equal(init.params.protocolVersion, version, 'initialize on the wire asked for another version');
  const answer = wire.received.find((m) => m.id === init.id);
  assert.ok(answer?.result, `initialize was not answered with a result: ${JSON.stringify(answer)}`);
  assert.equal(answer.result.protocolVersion, version, 'the server answered with another protocol version');
  assert.equal(client.negotiatedVersion, version);
  assert.equal(client.getServerVersion()?.name, 'walletgate');
  assert.ok(client.getServerCapabilities()?.tools, 'the server does not announce the tools capability');
  assert.ok(
    wire.sent.some((m) => m.method === 'notifications/initialized'),
    'the SDK did not send notifications/initialized',
  );
}

for (const version of VERSIONS) {
  test(`protocol ${version}: negotiated, tools/list, wallet_balance`, { timeout: TEST_TIMEOUT_MS }, async () => {
    await withServer(version, async ({ client, wire }) => {
      assertNegotiated(client, wire, version);
      await listAndCheckTools(client, version);
      const usdt = await usdtOf(client);
      assert.equal(usdt.symbol, 'USDT');
      assert.equal(usdt.balance, '1000000');
    });
  });
}

test('an unknown protocol version is answered with the newest one', { timeout: TEST_TIMEOUT_MS }, async () => {
  await withServer('2099-01-01', async ({ client, wire }) => {
    const init = wire.sent.find((m) => m.method === 'initialize');
    assert.equal(init.params.protocolVersion, '2099-01-01');
    assert.equal(client.negotiatedVersion, LATEST_PROTOCOL_VERSION);
    assert.equal(client.negotiatedVersion, NEWEST);
  });
});

test(`protocol ${NEWEST}: wallet_send preview, confirm, verify, replay`, { timeout: TEST_TIMEOUT_MS }, async () => {
  await withServer(NEWEST, async ({ client }) => {
    await listAndCheckTools(client, NEWEST);
    const before = await usdtOf(client, RECIPIENT);
    const args = { to: RECIPIENT, amount: '12.5', asset: 'USDT' };

    const preview = assertOk(await call(client, 'wallet_send', args), 'wallet_send preview');
    assert.equal(preview.status, 'confirmation_required');
    assert.match(preview.confirm_token, TOKEN_RE);
    assert.equal(preview.tx_hash, undefined, 'a preview must not carry a transaction');
    assert.equal((await usdtOf(client, RECIPIENT)).balance, before.balance, 'the preview moved funds');

    const confirmed = assertOk(
      await call(client, 'wallet_send', { ...args, confirm: preview.confirm_token }),
      'wallet_send confirm',
    );
    assert.equal(confirmed.status, 'confirmed');
    assert.match(confirmed.tx_hash, /^0x[0-9a-f]{64}$/i);
    assert.ok(
      confirmed.effects?.some(
        (e) => e.kind === 'erc20_transfer' && e.to.toLowerCase() === RECIPIENT && e.amount === '12.5',
      ),
      `no verified 12.5 USDT transfer to the recipient in ${JSON.stringify(confirmed.effects)}`,
    );

    const after = await usdtOf(client, RECIPIENT);
    assert.equal(
      toUnits(after.balance, after.decimals) - toUnits(before.balance, before.decimals),
      toUnits('12.5', after.decimals),
      `recipient USDT went from ${before.balance} to ${after.balance}`,
    );

    const verified = assertOk(
      await call(client, 'wallet_verify_tx', {
        tx: confirmed.tx_hash,
        expected_to: RECIPIENT,
        expected_amount: '12.5',
        asset: 'USDT',
      }),
      'wallet_verify_tx',
    );
    assert.equal(verified.status, 'success');
    assert.equal(verified.to_match, true);
    assert.equal(verified.amount_match, true);

    const replay = await call(client, 'wallet_send', { ...args, confirm: preview.confirm_token });
    assertRefused(replay, 'TOKEN_USED', 'replayed confirm');
    assert.equal((await usdtOf(client, RECIPIENT)).balance, after.balance, 'the replay moved funds');
  });
});

test(`protocol ${NEWEST}: refusals come back as tool errors with a code`, { timeout: TEST_TIMEOUT_MS }, async () => {
  await withServer(NEWEST, async ({ client }) => {
    await listAndCheckTools(client, NEWEST);
    const before = await usdtOf(client, RECIPIENT);

    assertRefused(
      await call(client, 'wallet_send', { to: RECIPIENT, amount: 12.5, asset: 'USDT' }),
      'BAD_ARGUMENT',
      'amount as a JSON number',
    );
    assertRefused(
      await call(client, 'wallet_send', { to: RECIPIENT, amount: '12.5', asset: 'USDT', nonce: 7 }),
      'BAD_ARGUMENT',
      'unknown field nonce',
    );
    assertRefused(
      await call(client, 'wallet_send', {
        to: RECIPIENT,
        amount: '12.5',
        asset: 'USDT',
        confirm: 'wgc_' + 'a'.repeat(32),
      }),
      'TOKEN_UNKNOWN',
      'a guessed token',
    );
    assert.equal((await usdtOf(client, RECIPIENT)).balance, before.balance, 'a refusal moved funds');
  });
});

test(`protocol ${NEWEST}: the SDK's outputSchema check in callTool is live`, { timeout: TEST_TIMEOUT_MS }, async () => {
  await withServer(NEWEST, async ({ client }) => {
    const tools = await listAndCheckTools(client, NEWEST);
    // A control: give the SDK a wallet_balance schema that also requires a
    // field walletgate never sends; the same callTool the tests use must
    // then throw. (Proves a real schema mismatch would fail the tests.)
    const stricter = tools.map((t) =>
      t.name !== 'wallet_balance'
        ? t
        : { ...t, outputSchema: { ...t.outputSchema, required: [...(t.outputSchema.required ?? []), 'e2e_not_a_field'] } },
    );
    client.cacheToolMetadata(stricter);
    await assert.rejects(call(client, 'wallet_balance', {}), (err) => {
      assert.equal(err.code, -32602);
      assert.match(err.message, /does not match the tool's output schema/);
      return true;
    });
    await listAndCheckTools(client, NEWEST); // the server's schemas again
    assert.equal((await usdtOf(client)).balance, '1000000');
  });
});
