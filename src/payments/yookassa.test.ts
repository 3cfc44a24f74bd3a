import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import { gzipSync } from 'node:zlib';
import { ProviderUnavailable } from './provider.ts';
import { YookassaProvider } from './yookassa.ts';

test('an answer past the cap is ProviderUnavailable, counted after decompression (no gzip bomb)', async () => {
  // 64 MB of JSON whitespace in about 64 KB on the wire: fetch inflates what it is sent.
  const bomb = gzipSync(
    Buffer.concat([Buffer.from('{"id":"p1"'), Buffer.alloc(64 * 1024 * 1024, 32), Buffer.from('}')]),
  );
  const server = http.createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' }).end(bomb);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  try {
    const provider = new YookassaProvider({
      shopId: '1',
      secretKey: 's',
      baseUrl: `http://127.0.0.1:${port}`,
    });
    await assert.rejects(
      provider.read('p1'),
      (error) => error instanceof ProviderUnavailable && /larger than/.test(error.message),
    );
  } finally {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

test("a refusal names YooKassa's code and parameter, so the log says a receipt is required", async () => {
  const server = http.createServer((_req, res) => {
    res.writeHead(400, { 'content-type': 'application/json' }).end(
      JSON.stringify({
        type: 'error',
        id: 'e1',
        code: 'invalid_request',
        description: 'Receipt is missing or illegal',
        parameter: 'receipt',
      }),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  try {
    const provider = new YookassaProvider({
      shopId: '1',
      secretKey: 's',
      baseUrl: `http://127.0.0.1:${port}`,
    });
    await assert.rejects(
      provider.create({
        topupId: 'tp_1',
        amountMinor: 150_000,
        returnUrl: 'https://a.test/',
        description: 'x',
      }),
      (error) =>
        error instanceof ProviderUnavailable &&
        error.message ===
          'YooKassa refused the payment: 400 (invalid_request: receipt: Receipt is missing or illegal)',
    );
  } finally {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});
