import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { ManualClock } from '../src/lib/clock.ts';
import { makePng } from '../src/media/fixtures.ts';
import { PROCESSING_LOCK_MS } from '../src/tasks/idempotency.ts';
import { expectError, startTestApp, type TestApp } from './helpers.ts';

/**
 * A picture server whose every download waits until the test answers it, so a request can be held in
 * the middle of its acceptance while the injected clock runs its Idempotency-Key lock out.
 */
class HeldServer {
  readonly #waiting: http.ServerResponse[] = [];
  readonly #arrivals: Array<() => void> = [];
  readonly server = http.createServer((_req, res) => {
    this.#waiting.push(res);
    this.#arrivals.shift()?.();
  });
  base = '';

  async start(): Promise<void> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.base = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** Resolves once `count` downloads are waiting. */
  async waiting(count: number): Promise<void> {
    while (this.#waiting.length < count) {
      await new Promise<void>((resolve) => this.#arrivals.push(resolve));
    }
  }

  /** Answers a waiting download (the oldest by default) with `body`; an empty one is file_empty. */
  answer(body: Buffer, index = 0): void {
    const [res] = this.#waiting.splice(index, 1);
    assert.ok(res, 'a download is waiting');
    res.end(body);
  }

  close(): void {
    for (const res of this.#waiting) res.destroy();
    this.server.close();
  }
}

describe('Idempotency-Key claims are fenced', () => {
  const clock = new ManualClock(new Date());
  let t: TestApp;
  const held = new HeldServer();
  let png: Buffer;
  before(async () => {
    t = await startTestApp({ clock, env: { FETCH_ALLOW_ADDRESSES: '127.0.0.1' } });
    png = fs.readFileSync(await makePng(t.dir, 64, 48));
    await held.start();
  });
  after(async () => {
    held.close();
    await t.close();
  });

  const photoTask = (name: string) => ({
    model: 'model-3d',
    settings: {
      task_type: 'image_to_model',
      image_url: [`${held.base}/${name}.png`],
      texture: false,
      pbr: false,
    },
  });

  const countOf = async (accountId: string) => {
    const db = t.container.db.db;
    const tasks = await db.selectFrom('tasks').select('id').where('account_id', '=', accountId).execute();
    const holds = await db
      .selectFrom('ledger_entries')
      .select('id')
      .where('account_id', '=', accountId)
      .where('type', '=', 'hold')
      .execute();
    return { tasks: tasks.map((r) => r.id), holds: holds.length };
  };

  test('[10.1] a slow acceptance overtaken by a retry creates exactly one task and one hold', async () => {
    const acct = await t.account({ balanceMinor: 100_000 });
    const headers = { 'idempotency-key': 'slow-1' };
    const first = t.call(acct.key, 'POST', '/v1/tasks', photoTask('slow-1'), headers);
    await held.waiting(1);
    // The first request is still downloading when its lock runs out: a retry takes the key over.
    clock.advance(PROCESSING_LOCK_MS + 1_000);
    const retry = t.call(acct.key, 'POST', '/v1/tasks', photoTask('slow-1'), headers);
    await held.waiting(2);
    // The retry finishes first; then the first request's download comes back and it goes on to create.
    held.answer(png, 1);
    const won = await retry;
    assert.equal(won.statusCode, 202, won.body);
    held.answer(png, 0);
    const lost = await first;
    // Overtaken, it creates nothing and answers with the task of the request that took its key over.
    assert.equal(lost.statusCode, 202, lost.body);
    assert.equal(lost.headers['idempotent-replayed'], 'true');
    assert.equal(lost.json().id, won.json().id);
    assert.deepEqual(await countOf(acct.id), { tasks: [won.json().id], holds: 1 });
    const replay = await t.call(acct.key, 'POST', '/v1/tasks', photoTask('slow-1'), headers);
    assert.equal(replay.headers['idempotent-replayed'], 'true');
    assert.equal(replay.json().id, won.json().id);
  });

  test("[10.1] the first request's refusal does not free the retry's claim", async () => {
    const acct = await t.account({ balanceMinor: 100_000 });
    const headers = { 'idempotency-key': 'slow-2' };
    const first = t.call(acct.key, 'POST', '/v1/tasks', photoTask('slow-2'), headers);
    await held.waiting(1);
    clock.advance(PROCESSING_LOCK_MS + 1_000);
    const retry = t.call(acct.key, 'POST', '/v1/tasks', photoTask('slow-2'), headers);
    await held.waiting(2);
    // The first request's download comes back empty: it is refused and lets go of its claim only.
    held.answer(Buffer.alloc(0));
    expectError(await first, 422, 'file_empty');
    // The retry still holds the key: a third request waits for it instead of starting over.
    expectError(
      await t.call(acct.key, 'POST', '/v1/tasks', photoTask('slow-2'), headers),
      409,
      'request_in_progress',
    );
    held.answer(png);
    const accepted = await retry;
    assert.equal(accepted.statusCode, 202, accepted.body);
    assert.deepEqual(await countOf(acct.id), { tasks: [accepted.json().id], holds: 1 });
  });
});
