import assert from 'node:assert/strict';
import { createHmac, timingSafeEqual } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { createDb, type Db, migrateToLatest } from '../db/index.ts';
import { claimDeliveries, nextDueAt, receiverOf, recordOutcome } from './delivery-queue.ts';
import { newSecret, signDelivery } from './signing.ts';

const T0 = new Date('2026-03-01T10:00:00.000Z');
const at = (ms: number): Date => new Date(T0.getTime() + ms);

describe('the delivery queue', () => {
  let db: Db;
  before(async () => {
    db = createDb('sqlite::memory:');
    await migrateToLatest(db);
  });
  after(() => db.close());

  async function add(id: string, taskId: string, url: string, nextAt = T0): Promise<void> {
    await db.db
      .insertInto('webhook_deliveries')
      .values({
        id,
        account_id: 'acct',
        webhook_id: null,
        task_id: taskId,
        record_id: null,
        type: 'task.succeeded',
        url,
        receiver: receiverOf(url),
        body: '{}',
        state: 'pending',
        attempts: 0,
        last_status_code: null,
        last_error: null,
        next_attempt_at: nextAt.toISOString(),
        lease_owner: null,
        lease_until: null,
        created_at: T0.toISOString(),
        updated_at: T0.toISOString(),
      })
      .execute();
  }
  const claim = (owner: string, now: Date, busy: string[] = []) =>
    claimDeliveries(db, { owner, limit: 10, now, leaseMs: 30_000, busyKeys: new Set(busy) });

  test("one receiver's host takes at most its share of the slots; other hosts are claimed past it", async () => {
    await db.db.deleteFrom('webhook_deliveries').execute();
    for (let i = 0; i < 6; i += 1) await add(`msg_dead${i}`, `t${i}`, `http://dead:81/${i}`, at(i));
    await add('msg_live', 't9', 'http://live/hook', at(10));
    const claimed = await claimDeliveries(db, {
      owner: 'A',
      limit: 10,
      now: at(100),
      leaseMs: 30_000,
      busyKeys: new Set(),
      hostShare: { busy: new Map([['dead:81', 1]]), max: 3 },
    });
    assert.deepEqual(
      claimed.map((d) => d.id),
      ['msg_dead0', 'msg_dead1', 'msg_live'],
      'two more of the dead host (one was in flight), then the live one',
    );
  });

  /** What a claim of 8 takes while the host `dead:81` holds its whole share (8 of 8 slots). */
  const claimedBesideFullHost = async (): Promise<string[]> =>
    (
      await claimDeliveries(db, {
        owner: 'A',
        limit: 8,
        now: at(1_000),
        leaseMs: 30_000,
        busyKeys: new Set(),
        hostShare: { busy: new Map([['dead:81', 8]]), max: 8 },
      })
    ).map((d) => d.id);

  test("a full host's backlog, however long, does not hide other hosts' deliveries behind it", async () => {
    await db.db.deleteFrom('webhook_deliveries').execute();
    // A dead receiver with its share in flight, and many events of other tasks (other order keys) queued for
    // it before anything else, as a few tasks following their progress give it.
    for (let i = 0; i < 100; i += 1) {
      await add(`msg_dead${String(i).padStart(3, '0')}`, `t${i % 3}-${i}`, `http://dead:81/${i % 3}`, at(i));
    }
    await add('msg_live', 't9', 'http://live/hook', at(200));
    assert.deepEqual(await claimedBesideFullHost(), ['msg_live']);
  });

  test("a full host's backlog to many URLs (one per task) does not hide other hosts' deliveries", async () => {
    await db.db.deleteFrom('webhook_deliveries').execute();
    // Tasks' own webhook_url often names the task (`?task=…`): every delivery of the dead host is to a URL
    // of its own, so leaving them out one URL at a time never gets past a long backlog.
    for (let i = 0; i < 400; i += 1) {
      await add(`msg_dead${String(i).padStart(3, '0')}`, `t${i}`, `http://dead:81/hook?task=t${i}`, at(i));
    }
    await add('msg_live', 't9', 'http://live/hook', at(500));
    assert.deepEqual(await claimedBesideFullHost(), ['msg_live']);
  });

  test('a delivery ended while in flight (its endpoint deleted) stays ended; the attempt made is counted', async () => {
    await db.db.deleteFrom('webhook_deliveries').execute();
    await add('msg_gone', 't1', 'http://r/gone');
    assert.equal((await claim('A', T0)).length, 1);
    // What deleting the endpoint does to its pending deliveries (webhook-service.ts).
    await db.db
      .updateTable('webhook_deliveries')
      .set({ state: 'failed', last_error: 'endpoint deleted', next_attempt_at: null })
      .where('id', '=', 'msg_gone')
      .execute();
    await recordOutcome(db, {
      id: 'msg_gone',
      owner: 'A',
      attempts: 0,
      dueAt: T0.toISOString(),
      now: at(1_000),
      outcome: { kind: 'failed', status: 500, error: 'HTTP 500', retryAt: at(60_000) },
    });
    const row = await db.db
      .selectFrom('webhook_deliveries')
      .select(['state', 'last_error', 'attempts', 'last_status_code', 'lease_owner'])
      .where('id', '=', 'msg_gone')
      .executeTakeFirstOrThrow();
    // The receiver got the request: the log says so, as it does for any attempt.
    assert.deepEqual(row, {
      state: 'failed',
      last_error: 'endpoint deleted',
      attempts: 1,
      last_status_code: 500,
      lease_owner: null,
    });
  });

  test('a lease keeps others off until it runs out; then another sender takes the delivery (kill -9)', async () => {
    await db.db.deleteFrom('webhook_deliveries').execute();
    await add('msg_a', 't1', 'http://r/1');
    assert.deepEqual(
      (await claim('A', T0)).map((d) => d.id),
      ['msg_a'],
    );
    assert.deepEqual(await claim('B', at(29_000)), [], 'leased by A');
    const taken = await claim('B', at(30_001));
    assert.deepEqual(
      taken.map((d) => d.id),
      ['msg_a'],
      'A died: B takes it',
    );
    // A's late outcome does not overwrite B's lease.
    await recordOutcome(db, {
      id: 'msg_a',
      owner: 'A',
      attempts: 0,
      dueAt: T0.toISOString(),
      now: at(30_002),
      outcome: { kind: 'succeeded', status: 200 },
    });
    const row = await db.db.selectFrom('webhook_deliveries').selectAll().executeTakeFirstOrThrow();
    assert.equal(row.state, 'pending');
    assert.equal(row.lease_owner, 'B');
  });

  test('one delivery per task and receiver per batch, oldest first; a busy key waits', async () => {
    await db.db.deleteFrom('webhook_deliveries').execute();
    await add('msg_1', 't1', 'http://r/1');
    await add('msg_2', 't1', 'http://r/1');
    await add('msg_3', 't1', 'http://r/2');
    await add('msg_4', 't2', 'http://r/1');
    assert.deepEqual(
      (await claim('A', T0, ['t2|http://r/1'])).map((d) => d.id),
      ['msg_1', 'msg_3'],
    );
    await recordOutcome(db, {
      id: 'msg_1',
      owner: 'A',
      attempts: 0,
      dueAt: T0.toISOString(),
      now: T0,
      outcome: { kind: 'succeeded', status: 204 },
    });
    assert.deepEqual(
      (await claim('A', T0)).map((d) => d.id),
      ['msg_2', 'msg_4'],
    );
  });

  test("a busy key's backlog does not hide other receivers' deliveries behind it", async () => {
    await db.db.deleteFrom('webhook_deliveries').execute();
    // A dead receiver: one event of t1 in flight, 50 more of the same task queued before anything else.
    for (let i = 0; i < 50; i++) await add(`msg_slow_${String(i).padStart(2, '0')}`, 't1', 'http://r/slow');
    await add('msg_other', 't2', 'http://r/other', at(1));
    assert.deepEqual(
      (await claim('A', at(2), ['t1|http://r/slow'])).map((d) => d.id),
      ['msg_other'],
    );
  });

  test("a delivery in flight at another sender holds its task's later events to that receiver back", async () => {
    await db.db.deleteFrom('webhook_deliveries').execute();
    await add('msg_1', 't1', 'http://r/1');
    await add('msg_2', 't1', 'http://r/1');
    await add('msg_3', 't2', 'http://r/1');
    assert.deepEqual(
      (await claim('A', T0)).map((d) => d.id),
      ['msg_1', 'msg_3'],
    );
    // Another process: msg_2 waits while A sends msg_1, though nothing of t1 is in flight here.
    assert.deepEqual(await claim('B', at(1)), []);
    await recordOutcome(db, {
      id: 'msg_1',
      owner: 'A',
      attempts: 0,
      dueAt: T0.toISOString(),
      now: at(2),
      outcome: { kind: 'succeeded', status: 204 },
    });
    assert.deepEqual(
      (await claim('B', at(3))).map((d) => d.id),
      ['msg_2'],
    );
  });

  test('a failed attempt waits for its retry time; none left → failed; nextDueAt finds the retry', async () => {
    await db.db.deleteFrom('webhook_deliveries').execute();
    await add('msg_r', 't1', 'http://r/1');
    await claim('A', T0);
    await recordOutcome(db, {
      id: 'msg_r',
      owner: 'A',
      attempts: 0,
      dueAt: T0.toISOString(),
      now: T0,
      outcome: { kind: 'failed', status: 500, error: 'status 500', retryAt: at(5_000) },
    });
    assert.deepEqual(await claim('A', at(4_999)), []);
    assert.deepEqual(await nextDueAt(db, T0), at(5_000));
    const [again] = await claim('A', at(5_000));
    assert.equal(again?.attempts, 1);
    await recordOutcome(db, {
      id: 'msg_r',
      owner: 'A',
      attempts: 1,
      dueAt: at(5_000).toISOString(),
      now: at(5_001),
      outcome: { kind: 'failed', status: null, error: 'address not public', retryAt: null },
    });
    const row = await db.db.selectFrom('webhook_deliveries').selectAll().executeTakeFirstOrThrow();
    assert.deepEqual(
      [row.state, row.attempts, row.last_status_code, row.last_error, row.next_attempt_at, row.lease_owner],
      ['failed', 2, null, 'address not public', null, null],
    );
    assert.equal(await nextDueAt(db, at(6_000)), null);
  });

  test('a manual retry during a failed attempt keeps its time: the schedule neither puts it off nor ends it', async () => {
    await db.db.deleteFrom('webhook_deliveries').execute();
    await add('msg_m', 't1', 'http://r/1');
    for (const [attempts, retryAt] of [
      [0, at(60_000)],
      [1, null],
    ] as const) {
      const [claimed] = await claim('A', at(attempts * 10_000));
      assert.equal(claimed?.attempts, attempts);
      // What POST /v1/webhook-deliveries/{id}/retry does to a pending delivery (webhook-service.ts).
      const asked = at(attempts * 10_000 + 1_000).toISOString();
      await db.db
        .updateTable('webhook_deliveries')
        .set({ next_attempt_at: asked, updated_at: asked })
        .where('id', '=', 'msg_m')
        .execute();
      await recordOutcome(db, {
        id: 'msg_m',
        owner: 'A',
        attempts,
        dueAt: claimed!.dueAt,
        now: at(attempts * 10_000 + 2_000),
        outcome: { kind: 'failed', status: 503, error: 'status 503', retryAt },
      });
      const row = await db.db.selectFrom('webhook_deliveries').selectAll().executeTakeFirstOrThrow();
      assert.deepEqual(
        [row.state, row.attempts, row.last_status_code, row.next_attempt_at, row.lease_owner],
        ['pending', attempts + 1, 503, asked, null],
      );
    }
    // Without a retry asked meanwhile, the used-up schedule ends it.
    const [last] = await claim('A', at(20_000));
    await recordOutcome(db, {
      id: 'msg_m',
      owner: 'A',
      attempts: 2,
      dueAt: last!.dueAt,
      now: at(20_001),
      outcome: { kind: 'failed', status: 503, error: 'status 503', retryAt: null },
    });
    const row = await db.db.selectFrom('webhook_deliveries').selectAll().executeTakeFirstOrThrow();
    assert.deepEqual([row.state, row.attempts, row.next_attempt_at], ['failed', 3, null]);
  });
});

describe('signatures (Standard Webhooks)', () => {
  test('verify with the standardwebhooks package and with plain node:crypto; two secrets during a rotation', () => {
    const secret = newSecret();
    const old = newSecret();
    const body = JSON.stringify({ type: 'task.succeeded', timestamp: new Date().toISOString(), data: {} });
    const headers = signDelivery('msg_1', new Date(), body, [secret, old]);
    assert.equal(headers['webhook-signature'].split(' ').length, 2);
    new Webhook(secret).verify(body, headers);
    new Webhook(old).verify(body, headers);
    assert.throws(() => new Webhook(newSecret()).verify(body, headers));
    // The plain-crypto check of docs/webhooks.md.
    const verify = (whsec: string): boolean => {
      const key = Buffer.from(whsec.slice('whsec_'.length), 'base64');
      const signed = `${headers['webhook-id']}.${headers['webhook-timestamp']}.${body}`;
      const expected = createHmac('sha256', key).update(signed).digest();
      return headers['webhook-signature'].split(' ').some((part) => {
        const [version, sig] = part.split(',');
        const given = Buffer.from(sig ?? '', 'base64');
        return version === 'v1' && given.length === expected.length && timingSafeEqual(given, expected);
      });
    };
    assert.equal(verify(secret), true);
    assert.equal(verify(old), true);
    assert.equal(verify(newSecret()), false);
  });
});
