/**
 * `npm run fakes` (scripts/fakes.ts) as docs/payments.md tells a person to try top-ups by hand: paying on
 * the YooKassa fake's checkout page sends the payment's notification to the service, so the notification
 * path is what moves the top-up, as with YooKassa.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const SCRIPT = fileURLToPath(new URL('../scripts/fakes.ts', import.meta.url));

test('npm run fakes: paying on the YooKassa checkout notifies YOOKASSA_NOTIFY_URL', async (t) => {
  const notifications: unknown[] = [];
  const service = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      if (req.method === 'POST' && req.url === '/v1/payments/yookassa/notifications')
        notifications.push(JSON.parse(Buffer.concat(chunks).toString('utf8')));
      res.end('{}');
    });
  });
  service.listen(0, '127.0.0.1');
  await once(service, 'listening');
  t.after(() => service.close());
  const notifyUrl = `http://127.0.0.1:${(service.address() as AddressInfo).port}/v1/payments/yookassa/notifications`;

  // Ten ports from a base unlikely to be taken; the script's fakes sit at fixed offsets from it.
  const firstPort = 20_000 + Math.floor(Math.random() * 2_000) * 10;
  const child = spawn(process.execPath, [SCRIPT], {
    env: { ...process.env, FAKES_PORT: String(firstPort), YOOKASSA_NOTIFY_URL: notifyUrl },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  t.after(() => child.kill());
  let stderr = '';
  const baseUrl = await new Promise<string>((resolve, reject) => {
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString('utf8');
      const match = /YOOKASSA_BASE_URL=(\S+?\/v3)\b/.exec(stderr);
      if (match?.[1]) resolve(match[1]);
    });
    child.once('exit', (code) => reject(new Error(`the fakes exited (${code}): ${stderr}`)));
  });

  const created = await fetch(`${baseUrl}/payments`, {
    method: 'POST',
    headers: {
      authorization: `Basic ${Buffer.from('100500:test_secret_key').toString('base64')}`,
      'content-type': 'application/json',
      'idempotence-key': 'tp_1',
    },
    body: JSON.stringify({
      amount: { value: '1500.00', currency: 'RUB' },
      capture: true,
      confirmation: { type: 'redirect', return_url: 'http://127.0.0.1:1/topups/tp_1' },
      metadata: { topup_id: 'tp_1' },
    }),
  });
  assert.equal(created.status, 200);
  const payment = (await created.json()) as { id: string; confirmation: { confirmation_url: string } };
  const paid = await fetch(`${payment.confirmation.confirmation_url}/pay`, {
    method: 'POST',
    redirect: 'manual',
  });
  assert.equal(paid.status, 303);
  assert.equal(notifications.length, 1);
  assert.deepEqual(
    {
      event: (notifications[0] as { event: string }).event,
      id: (notifications[0] as { object: { id: string } }).object.id,
    },
    { event: 'payment.succeeded', id: payment.id },
  );
});
