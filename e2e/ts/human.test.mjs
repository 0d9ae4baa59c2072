// Human approval (WALLETGATE_CONFIRM=human) seen from an independent client:
// the official MCP TypeScript SDK plays the model, plain HTTP from Node plays
// the person's browser on the approval page. The model's preview holds no
// token; only the code the page shows after "Approve" confirms, once.
//
//   cd e2e/ts && npm ci && WALLETGATE_BIN=/abs/path/walletgate node --test

import { test } from 'node:test';
import assert from 'node:assert/strict';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { BIN, HERE, childEnv, request } from './common.mjs';

const RECIPIENT = '0x00000000000000000000000000000000000e2e0f';
test('human mode: only the code the person is shown confirms, once', { timeout: 60_000 }, async () => {
  const transport = new StdioClientTransport({
    command: BIN,
    args: ['--dev'],
    env: { ...childEnv, WALLETGATE_CONFIRM: 'human', WALLETGATE_OPEN_BROWSER: 'off' },
    cwd: HERE,
    stderr: 'pipe',
  });
  let stderr = '';
  const pageURL = new Promise((resolve) => {
    transport.stderr.on('data', (chunk) => {
      stderr += chunk.toString();
      const m = stderr.match(/http:\/\/127\.0\.0\.1:\d+\/a\/[0-9a-f]{64}\//);
      if (m) resolve(m[0]);
    });
  });
  const client = new Client({ name: 'walletgate-e2e-human', version: '1.0.0' }, { capabilities: {} });
  try {
    await client.connect(transport);
    const page = await pageURL;
    const origin = new URL(page).origin;
    const args = { to: RECIPIENT, amount: '2.5', asset: 'USDT' };
    // Listing the tools makes the SDK check every structuredContent against
    // the tool's outputSchema from here on.
    const { tools } = await client.listTools();
    assert.match(tools.find((t) => t.name === 'wallet_send').inputSchema.properties.confirm.description, /one-time code/);

    const preview = await client.callTool({ name: 'wallet_send', arguments: args });
    assert.notEqual(preview.isError, true, JSON.stringify(preview.content));
    const sc = preview.structuredContent;
    assert.equal(sc.status, 'confirmation_required');
    assert.equal(sc.confirm_token, undefined, 'no token for the model in human mode');
    assert.doesNotMatch(JSON.stringify(preview), /wgc_/);
    const id = sc.approval.id;
    assert.match(id, /^[A-Z2-9]{4}$/);

    // The model alone: its own preview's fields and a guess get nowhere.
    for (const guess of [id, '123-456']) {
      const r = await client.callTool({ name: 'wallet_send', arguments: { ...args, confirm: guess } });
      assert.equal(r.isError, true);
      assert.match(r.content[0].text, /^(APPROVAL_PENDING|CODE_UNKNOWN): /);
    }

    // The person: the page shows the preview; Approve is a same-origin POST.
    const detail = await request(`${page}p/${id}`);
    assert.equal(detail.status, 200);
    assert.equal(detail.headers['x-frame-options'], 'DENY');
    assert.match(detail.body, /<h1 id="title">Send 2\.5 USDT<\/h1>/);
    const recipient = detail.body.match(/id="recipient">(.*?)<\/div>/)[1].replace(/<[^>]+>/g, '');
    assert.equal(recipient.toLowerCase(), '0x00000000000000000000000000000000000e2e0f', 'the recipient in full, above the buttons');
    const csrf = detail.body.match(/name="csrf" value="([0-9a-f]{64})"/)[1];
    const form = { 'Content-Type': 'application/x-www-form-urlencoded' };
    const foreign = await request(`${page}p/${id}/approve`, { method: 'POST', headers: { ...form, Origin: 'http://evil.example' }, body: `csrf=${csrf}` });
    assert.equal(foreign.status, 403, 'a foreign origin cannot approve');
    const approved = await request(`${page}p/${id}/approve`, { method: 'POST', headers: { ...form, Origin: origin }, body: `csrf=${csrf}` });
    assert.equal(approved.status, 303);
    const after = await request(`${page}p/${id}`);
    const code = after.body.match(/id="code">(\d{3}-\d{3})</)[1];

    const before = await client.callTool({ name: 'wallet_balance', arguments: { address: RECIPIENT, tokens: ['USDT'] } });
    const confirmed = await client.callTool({ name: 'wallet_send', arguments: { ...args, confirm: code } });
    assert.notEqual(confirmed.isError, true, confirmed.content[0].text);
    assert.equal(confirmed.structuredContent.status, 'confirmed');
    const bal = await client.callTool({ name: 'wallet_balance', arguments: { address: RECIPIENT, tokens: ['USDT'] } });
    assert.equal(before.structuredContent.tokens[0].balance, '0');
    assert.equal(bal.structuredContent.tokens[0].balance, '2.5', 'the approved amount is on chain');

    const again = await client.callTool({ name: 'wallet_send', arguments: { ...args, confirm: code } });
    assert.equal(again.isError, true);
    assert.match(again.content[0].text, /^CODE_USED: /);
  } catch (err) {
    err.message += `\n--- walletgate stderr ---\n${stderr.slice(-3000)}`;
    throw err;
  } finally {
    await client.close();
  }
});
