/**
 * The overview's spend query (CONTRACT §13): captured amounts per Moscow day and model over 30 days.
 * SQLite by default; a fresh PostgreSQL database when TEST_DATABASE_URL is set.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { openTestDatabase } from '../../test/databases.ts';
import type { Db } from '../db/index.ts';
import { uuidv7 } from '../lib/ids.ts';
import { credit, hold, settle, spendByDay, WalletReader } from './index.ts';

async function newAccount(db: Db): Promise<string> {
  const id = randomUUID();
  await db.db
    .insertInto('accounts')
    .values({
      id,
      name: 'spend',
      credited_minor: 0,
      captured_minor: 0,
      held_minor: 0,
      created_at: new Date(0).toISOString(),
    })
    .execute();
  await db.dialect.transaction(db.db, (tx) =>
    credit(tx, { accountId: id, amountMinor: 1_000_000, reference: 'start', at: new Date(0) }),
  );
  return id;
}

/** A task of `model` held at `at` and then captured (or voided) at `settledAt`. */
async function spend(
  db: Db,
  accountId: string,
  model: string,
  amount: number,
  settledAt: string,
  outcome: 'capture' | 'void' | 'pending' = 'capture',
): Promise<void> {
  const at = new Date(Date.parse(settledAt) - 60_000);
  const id = uuidv7(at.getTime());
  await db.dialect.transaction(db.db, async (tx) => {
    await hold(tx, { accountId, keyId: null, taskId: id, amountMinor: amount, at });
    await tx
      .insertInto('tasks')
      .values({
        id,
        account_id: accountId,
        key_id: null,
        model,
        mode: 'text_to_model',
        status: 'succeeded',
        settings: '{}',
        inputs: '[]',
        price_minor: amount,
        currency: 'RUB',
        progress: 1,
        caption: null,
        texts: null,
        error_code: null,
        error_message: null,
        created_at: at.toISOString(),
        started_at: null,
        finished_at: null,
        files_expire_at: null,
        files_expired: 0,
        provider_ref: null,
        revision: 0,
        webhook_url: null,
        webhook_events: null,
      })
      .execute();
    if (outcome !== 'pending') await settle(tx, id, outcome, new Date(settledAt));
  });
}

describe('spendByDay', () => {
  let db: Db;
  let drop: () => Promise<void>;
  before(async () => {
    ({ db, drop } = await openTestDatabase('gta_spend'));
  });
  after(() => drop());

  test('groups captured kopecks by Moscow day and model, oldest day first', async () => {
    const account = await newAccount(db);
    // 2026-03-10 21:30 UTC is already March 11 in Moscow (UTC+3); 20:30 UTC is still March 10.
    await spend(db, account, 'model-3d', 100, '2026-03-10T20:30:00.000Z');
    await spend(db, account, 'model-3d', 250, '2026-03-10T21:30:00.000Z');
    await spend(db, account, 'model-3d', 50, '2026-03-11T10:00:00.000Z');
    await spend(db, account, 'music', 700, '2026-03-11T11:00:00.000Z');
    const now = new Date('2026-03-11T18:00:00.000Z');
    const result = await spendByDay(db.db, account, 30, now);
    assert.equal(result.days.length, 30);
    assert.equal(result.days.at(-1), '2026-03-11');
    assert.equal(result.days.at(-2), '2026-03-10');
    assert.equal(result.days[0], '2026-02-10');
    assert.deepEqual(Object.keys(result.byModel).sort(), ['model-3d', 'music']);
    assert.equal(result.byModel['model-3d']?.length, 30);
    assert.equal(result.byModel['model-3d']?.at(-1), 300);
    assert.equal(result.byModel['model-3d']?.at(-2), 100);
    assert.equal(result.byModel.music?.at(-1), 700);
    assert.equal(
      result.byModel['model-3d']?.slice(0, 28).every((v) => v === 0),
      true,
    );
  });

  test('leaves out voided and pending holds, other accounts and days outside the window', async () => {
    const account = await newAccount(db);
    const other = await newAccount(db);
    await spend(db, account, 'video', 400, '2026-05-01T09:00:00.000Z', 'void');
    await spend(db, account, 'video', 300, '2026-05-01T09:00:00.000Z', 'pending');
    await spend(db, other, 'video', 900, '2026-05-01T09:00:00.000Z');
    // Moscow May 1 starts at 2026-04-30T21:00Z; 30 days ending May 1 start on April 2 (Moscow).
    await spend(db, account, 'image', 11, '2026-04-01T20:59:00.000Z');
    await spend(db, account, 'image', 22, '2026-04-01T21:00:00.000Z');
    await spend(db, account, 'image', 33, '2026-05-01T21:00:00.000Z');
    const result = await spendByDay(db.db, account, 30, new Date('2026-05-01T12:00:00.000Z'));
    assert.equal(result.days[0], '2026-04-02');
    assert.deepEqual(Object.keys(result.byModel), ['image']);
    assert.equal(result.byModel.image?.[0], 22);
    assert.equal(
      result.byModel.image?.reduce((a, b) => a + b, 0),
      22,
    );
  });

  test('WalletReader.overview answers balances with the spend, null for an unknown account', async () => {
    const account = await newAccount(db);
    const now = new Date();
    await spend(db, account, 'model-3d', 120, new Date(now.getTime() - 1_000).toISOString());
    await spend(db, account, 'model-3d', 80, new Date(now.getTime() - 1_000).toISOString(), 'pending');
    const reader = new WalletReader({ db, clock: { now: () => now } });
    const view = await reader.overview(account);
    assert.deepEqual(view?.balances, {
      balanceMinor: 1_000_000 - 120,
      heldMinor: 80,
      availableMinor: 1_000_000 - 200,
    });
    assert.equal(view?.spend.byModel['model-3d']?.at(-1), 120);
    assert.equal(await reader.overview(randomUUID()), null);
  });
});
