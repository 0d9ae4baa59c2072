// Asking the person through the client, with the official MCP TypeScript SDK
// at its default protocol version (2025-11-25 for SDK 1.32: initialize, then
// server-sent elicitation/create): a send confirmed in elicit mode (a form
// the person answers) and a send approved by the person on the approval page
// the client opened for them (human mode, URL elicitation). Both land on the
// dev chain; the SDK checks every structuredContent against its outputSchema.
//
//   cd e2e/ts && npm ci && WALLETGATE_BIN=/abs/path/walletgate node --test

import { test } from 'node:test';
import assert from 'node:assert/strict';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ElicitRequestSchema, LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import { BIN, HERE, childEnv, request } from './common.mjs';

// connect starts `walletgate --dev` in mode and connects a client declaring
// elicitation, whose person answers with answer(params); the negotiated
// version is recorded from the transport.
async function connect(mode, capabilities, answer) {
  const transport = new StdioClientTransport({
    command: BIN,
    args: ['--dev'],
    env: { ...childEnv, WALLETGATE_CONFIRM: mode },
    cwd: HERE,
    stderr: 'pipe',
  });
  const session = { stderr: '', version: undefined, asked: [] };
  transport.stderr.on('data', (chunk) => (session.stderr += chunk.toString()));
  const setVersion = transport.setProtocolVersion?.bind(transport);
  transport.setProtocolVersion = (v) => {
    session.version = v;
    setVersion?.(v);
  };
  const client = new Client({ name: 'walletgate-e2e-elicit', version: '1.0.0' }, { capabilities });
  client.setRequestHandler(ElicitRequestSchema, async (req) => {
    session.asked.push(req.params);
    return answer(req.params);
  });
  await client.connect(transport);
  // Listing makes the SDK check every structuredContent from here on.
  await client.listTools();
  return { client, session };
}

async function balanceOf(client, address) {
  const r = await client.callTool({ name: 'wallet_balance', arguments: { address, tokens: ['USDT'] } });
  assert.notEqual(r.isError, true, r.content[0].text);
  return r.structuredContent.tokens[0].balance;
}

test('elicit mode: the person approves in the client form, at the SDK default version', { timeout: 60_000 }, async () => {
  const to = '0x00000000000000000000000000000000000e11c1';
  const { client, session } = await connect('elicit', { elicitation: { form: {} } }, () => ({ action: 'accept', content: { approve: true } }));
  try {
    assert.equal(session.version, LATEST_PROTOCOL_VERSION, 'the SDK default was negotiated');
    const args = { to, amount: '1.25', asset: 'USDT' };
    const preview = await client.callTool({ name: 'wallet_send', arguments: args });
    assert.notEqual(preview.isError, true, preview.content[0].text);
    assert.equal(await balanceOf(client, to), '0');
    const done = await client.callTool({ name: 'wallet_send', arguments: { ...args, confirm: preview.structuredContent.confirm_token } });
    assert.notEqual(done.isError, true, done.content[0].text);
    assert.equal(done.structuredContent.status, 'confirmed');
    assert.equal(await balanceOf(client, to), '1.25', 'the approved amount is on chain');
    assert.equal(session.asked.length, 1, 'asked once');
    assert.match(session.asked[0].message, /send 1\.25 USDT/);
    assert.ok(session.asked[0].message.includes('0x00000000000000000000000000000000000E11C1') || session.asked[0].message.toLowerCase().includes(to));
  } catch (err) {
    err.message += `\n--- walletgate stderr ---\n${session.stderr.slice(-3000)}`;
    throw err;
  } finally {
    await client.close();
  }
});

test('human mode: the person approves on the page the client opened, at the SDK default version', { timeout: 60_000 }, async () => {
  const to = '0x00000000000000000000000000000000000e11c2';
  // The person opens the page the client was asked to open and approves there.
  const approveOnPage = async (params) => {
    assert.equal(params.mode, 'url');
    const page = await request(params.url);
    assert.equal(page.status, 200);
    const csrf = page.body.match(/name="csrf" value="([0-9a-f]{64})"/)[1];
    const approved = await request(`${params.url}/approve`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', Origin: new URL(params.url).origin },
      body: `csrf=${csrf}`,
    });
    assert.equal(approved.status, 303);
    return { action: 'accept' };
  };
  const { client, session } = await connect('human', { elicitation: { url: {} } }, approveOnPage);
  try {
    assert.equal(session.version, LATEST_PROTOCOL_VERSION);
    const args = { to, amount: '2', asset: 'USDT' };
    const preview = await client.callTool({ name: 'wallet_send', arguments: args });
    assert.notEqual(preview.isError, true, preview.content[0].text);
    assert.equal(preview.structuredContent.confirm_token, undefined, 'no token for the model in human mode');
    const id = preview.structuredContent.approval.id;
    const done = await client.callTool({ name: 'wallet_send', arguments: { ...args, confirm: id } });
    assert.notEqual(done.isError, true, done.content[0].text);
    assert.equal(done.structuredContent.status, 'confirmed');
    assert.equal(await balanceOf(client, to), '2', 'the approved amount is on chain');
    assert.equal(session.asked.length, 1);
    assert.match(session.asked[0].url, new RegExp(`/p/${id}$`));
  } catch (err) {
    err.message += `\n--- walletgate stderr ---\n${session.stderr.slice(-3000)}`;
    throw err;
  } finally {
    await client.close();
  }
});
