/**
 * The client kit in a real browser (CONTRACT §16: usable from Node ≥ 20 and browsers): the compiled
 * `sdk/` is imported as an ES module by a page of another origin (`localhost` against the API's
 * `127.0.0.1`), with no bundler and no import map, and talks to the real service across CORS.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import type { Browser, Page } from 'playwright-core';
import { type LiveApp, startLiveApp } from '../../sdk/test/live-app.ts';
import { newSecret, signDelivery } from '../../src/events/signing.ts';
import { ROOT } from '../processes.ts';
import { launchBrowser, newContext } from './kit.ts';

/** Serves `dir` as `/sdk/…` and an empty page as `/`, on a loopback port of its own. */
async function startPageServer(dir: string): Promise<{ url: string; close: () => Promise<void> }> {
  const server = http.createServer((req, res) => {
    const pathname = new URL(req.url ?? '/', 'http://x').pathname;
    if (pathname === '/') {
      res.setHeader('content-type', 'text/html; charset=utf-8');
      res.end('<!doctype html><title>client kit</title>');
      return;
    }
    const file = path.join(dir, path.basename(pathname));
    if (!pathname.startsWith('/sdk/') || !fs.existsSync(file)) {
      res.statusCode = 404;
      res.end();
      return;
    }
    res.setHeader('content-type', 'text/javascript; charset=utf-8');
    res.end(fs.readFileSync(file));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://localhost:${port}/`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe('The client kit in the browser', () => {
  let live: LiveApp;
  let dist: string;
  let site: { url: string; close: () => Promise<void> };
  let browser: Browser;
  let page: Page;

  before(async () => {
    dist = fs.mkdtempSync(path.join(os.tmpdir(), 'gta-sdk-'));
    await promisify(execFile)(path.join(ROOT, 'node_modules', '.bin', 'tsc'), [
      '-p',
      path.join(ROOT, 'sdk', 'tsconfig.json'),
      '--outDir',
      dist,
    ]);
    live = await startLiveApp();
    site = await startPageServer(dist);
    browser = await launchBrowser();
    page = await (await newContext(browser)).newPage();
    await page.goto(site.url);
  });
  after(async () => {
    await browser?.close();
    await site?.close();
    await live?.close();
    if (dist) fs.rmSync(dist, { recursive: true, force: true });
  });

  test('imports as an ES module; runs, uploads a Blob, downloads bytes, and types refusals', async () => {
    const result = await page.evaluate(
      async ({ apiKey, baseUrl }) => {
        const url = '/sdk/index.js';
        const { Client, NotFoundError }: typeof import('../../sdk/src/index.ts') = await import(url);
        const c = new Client({ apiKey, baseUrl });
        const price = await c.price({ model: 'image', settings: { prompt: 'a red fox' } });
        const png = await (
          await fetch(
            'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==',
          )
        ).blob();
        const upload = await c.files.upload(png, { filename: 'dot.png', contentType: 'image/png' });
        const states: string[] = [];
        const task = await c.tasks.run(
          { model: 'image', settings: { prompt: 'a red fox' } },
          { timeoutMs: 60_000, onUpdate: (t) => states.push(t.status) },
        );
        const bytes = await c.tasks.download(task.id, 0);
        const missing = await c.tasks.get('00000000-0000-0000-0000-000000000000').catch((e: unknown) => e);
        return {
          amount: price.amount_minor,
          uploaded: typeof upload.url,
          status: task.status,
          last: states.at(-1),
          bytes: bytes instanceof Uint8Array ? bytes.length : -1,
          error:
            missing instanceof NotFoundError
              ? { code: missing.code, status: missing.status, requestId: missing.requestId }
              : String(missing),
        };
      },
      { apiKey: live.account.key, baseUrl: live.baseUrl },
    );
    assert.ok(result.amount > 0);
    assert.equal(result.uploaded, 'string');
    assert.equal(result.status, 'succeeded');
    assert.equal(result.last, 'succeeded');
    assert.ok(result.bytes > 0);
    assert.equal(typeof result.error, 'object', String(result.error));
    const error = result.error as { code: string; status: number; requestId: string | null };
    assert.equal(error.code, 'task_not_found');
    assert.equal(error.status, 404);
    assert.match(String(error.requestId), /^[0-9a-f-]{36}$/);
  });

  test('webhooks.verify checks a delivery signed by the service, synchronously', async () => {
    const secret = newSecret();
    const body = JSON.stringify({ type: 'task.succeeded', timestamp: new Date().toISOString(), data: {} });
    const headers = signDelivery('msg_1', new Date(), body, [secret]);
    const result = await page.evaluate(
      async ({ body, headers, secret }) => {
        const url = '/sdk/index.js';
        const { webhooks, WebhookVerificationError }: typeof import('../../sdk/src/index.ts') = await import(
          url
        );
        const event = webhooks.verify(body, new Headers(headers), secret);
        let forged: unknown = null;
        try {
          webhooks.verify(body.replace('succeeded', 'failed'), headers, secret);
        } catch (error) {
          forged = error;
        }
        return { type: event.type, refused: forged instanceof WebhookVerificationError };
      },
      { body, headers: { ...headers }, secret },
    );
    assert.deepEqual(result, { type: 'task.succeeded', refused: true });
  });
});
