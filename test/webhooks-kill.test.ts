/**
 * Deliveries survive kill -9 (CONTRACT §12): the real API process (embedded worker and sender) runs
 * tasks whose events go to a receiver that is down; the process is killed with pending deliveries, the
 * receiver comes up, a new process starts on the same database and delivers every event, each under the
 * webhook-id it was queued with, signed with the endpoint's secret.
 *
 * "Down" is a receiver that answers 503, not a closed port: a port released by this test could be taken
 * by another test file's server running beside it, which would then accept the deliveries.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { sharedProcessEnv, startTestApp, type TestApp } from './helpers.ts';
import { exited, freePort, type Server, startServer } from './processes.ts';
import { eventually, type Receiver, startReceiver } from './webhooks-kit.ts';

async function call(
  server: Server,
  key: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; json: () => Record<string, unknown> }> {
  const response = await fetch(`${server.base}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${key}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  return { status: response.status, json: () => JSON.parse(text) as Record<string, unknown> };
}

describe('kill -9 with pending webhook deliveries', () => {
  test('after a restart every pending delivery is sent, with the id it was queued with', async () => {
    let t: TestApp | null = null;
    let receiver: Receiver | null = null;
    const children: Server[] = [];
    try {
      t = await startTestApp({ worker: false });
      let up = false;
      receiver = await startReceiver(() => (up ? { status: 200 } : { status: 503 }));
      const apiPort = await freePort();
      const env = {
        ...sharedProcessEnv(t),
        PORT: String(apiPort),
        PUBLIC_BASE_URL: `http://127.0.0.1:${apiPort}`,
        FETCH_ALLOW_ADDRESSES: '127.0.0.1',
        WEBHOOK_RETRY_SCHEDULE: Array(20).fill('500ms').join(','),
        SIM_SPEED: '1000',
      };
      const first = await startServer(env);
      children.push(first);
      const account = await t.account({ balanceMinor: 10_000_000 });
      const hookUrl = receiver.url;
      const endpoint = await call(first, account.key, 'POST', '/v1/webhooks', {
        url: hookUrl,
        events: ['task.started', 'task.succeeded'],
      });
      assert.equal(endpoint.status, 201);
      const secret = endpoint.json().secret as string;
      const ids: string[] = [];
      for (let i = 0; i < 3; i++) {
        const created = await call(first, account.key, 'POST', '/v1/tasks', {
          model: 'model-3d',
          settings: { task_type: 'text_to_model', prompt: `chair ${i}` },
        });
        assert.equal(created.status, 202);
        ids.push(created.json().id as string);
      }
      const db = t.container.db.db;
      const rows = () => db.selectFrom('webhook_deliveries').selectAll().orderBy('id').execute();
      // Every event queued and tried at least once against the closed port.
      await eventually(rows, (r) => r.length === 6 && r.every((d) => d.attempts >= 1), 60_000);
      first.child.kill('SIGKILL');
      await exited(first.child);
      const queued = await rows();
      assert.ok(
        queued.every((d) => d.state === 'pending'),
        JSON.stringify(queued.map((d) => d.state)),
      );

      const triedWhileDown = receiver.received.length;
      assert.ok(triedWhileDown >= 6, `every event tried while down (${triedWhileDown})`);
      up = true;
      children.push(await startServer(env));
      const done = await eventually(rows, (r) => r.every((d) => d.state === 'succeeded'), 60_000);
      const delivered = receiver.received.slice(triedWhileDown);
      const got = new Map(delivered.map((r) => [r.headers['webhook-id'] as string, r]));
      assert.deepEqual([...got.keys()].sort(), done.map((d) => d.id).sort(), 'each queued id arrived');
      const verifier = new Webhook(secret);
      for (const d of done) {
        const r = got.get(d.id)!;
        assert.equal(r.body, d.body, 'the body frozen at event time');
        verifier.verify(r.body, {
          'webhook-id': r.headers['webhook-id'] as string,
          'webhook-timestamp': r.headers['webhook-timestamp'] as string,
          'webhook-signature': r.headers['webhook-signature'] as string,
        });
      }
      assert.deepEqual(
        [...new Set(done.map((d) => d.task_id))].sort(),
        [...ids].sort(),
        'both events of each task',
      );
    } finally {
      for (const child of children) if (child.child.exitCode === null) child.child.kill('SIGTERM');
      for (const child of children) await exited(child.child);
      await receiver?.close();
      await t?.close();
    }
  });
});
