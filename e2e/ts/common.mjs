// What the end-to-end tests share: the walletgate binary under test, the
// directory walletgate is started in (inside the repo, so it finds
// testdata/), an environment without the runner's WALLETGATE_ settings, and
// one plain HTTP request for the approval page.

import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const BIN = process.env.WALLETGATE_BIN;
if (!BIN || !path.isAbsolute(BIN)) {
  throw new Error('WALLETGATE_BIN must be the absolute path of a walletgate binary');
}
export const HERE = path.dirname(fileURLToPath(import.meta.url));
export const childEnv = Object.fromEntries(
  Object.entries(process.env).filter(([k, v]) => v !== undefined && !/^WALLETGATE_/i.test(k)),
);

// request sends one HTTP request and resolves with {status, headers, body}.
export function request(url, { method = 'GET', headers = {}, body } = {}) {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method, headers }, (res) => {
      let data = '';
      res.on('data', (c) => (data += c));
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: data }));
    });
    req.on('error', reject);
    if (body) req.write(body);
    req.end();
  });
}
