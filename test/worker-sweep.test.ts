import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { FastifyBaseLogger } from 'fastify';
import { HOUR_MS } from '../src/config.ts';
import { UploadService } from '../src/files/index.ts';
import { ManualClock } from '../src/lib/clock.ts';
import { uuidv7 } from '../src/lib/index.ts';
import { makePng } from '../src/media/fixtures.ts';
import { IdempotencyStore } from '../src/tasks/idempotency.ts';
import { Sweeper } from '../src/worker/sweeper.ts';
import { startTestApp, type TestApp, waitForFinal } from './helpers.ts';
import { body3d, FakeGenerator, FaultyStore, statusOf, until } from './worker-kit.ts';

/** A sweeper whose storage refuses its first delete: the process dies, say, between two statements. */
function sweeperWithFlakyDelete(t: TestApp): { sweeper: Sweeper; store: FaultyStore } {
  const { db, clock, config } = t.container;
  const store = new FaultyStore(t.container.storage);
  let failures = 1;
  store.onDelete = () => {
    if (failures === 0) return null;
    failures -= 1;
    return Promise.reject(new Error('storage unreachable'));
  };
  const uploads = new UploadService({
    db,
    clock,
    storage: store,
    publicBaseUrl: config.publicBaseUrl,
    retentionMs: config.uploadRetentionMs,
    quotaBytes: config.uploadQuotaBytes,
  });
  const idempotency = new IdempotencyStore({ db, clock });
  return {
    sweeper: new Sweeper({ db, clock, storage: store, idempotency, uploads, log: t.container.log }),
    store,
  };
}

describe('sweepers', () => {
  test('[10.9] a result sweep that breaks after the first step still removes the bytes on the next pass', async () => {
    const clock = new ManualClock();
    const t = await startTestApp({ clock, env: { RESULT_RETENTION: '1h' } });
    try {
      const acct = await t.account({ balanceMinor: 10_000 });
      const id = (await t.call(acct.key, 'POST', '/v1/tasks', body3d())).json().id;
      const done = await (async () => {
        for (;;) {
          clock.advance(1_000);
          const task = await waitForFinal(t, acct.key, id, 200);
          if (task.status !== 'running' && task.status !== 'queued') return task;
        }
      })();
      assert.equal(done.status, 'succeeded');
      clock.advance(2 * HOUR_MS);
      const { sweeper } = sweeperWithFlakyDelete(t);
      await sweeper.sweepOnce().catch(() => 0);
      await sweeper.sweepOnce();
      const keys = await t.container.db.db
        .selectFrom('artifacts')
        .select('storage_key')
        .where('task_id', '=', id)
        .execute();
      assert.ok(keys.length > 0);
      for (const { storage_key } of keys) assert.equal(await t.container.storage.stat(storage_key), null);
      const task = await t.container.db.db
        .selectFrom('tasks')
        .select('files_expired')
        .where('id', '=', id)
        .executeTakeFirstOrThrow();
      assert.equal(task.files_expired, 1);
    } finally {
      await t.close();
    }
  });

  test("expiry removes the files of a run killed before it recorded them, with the task's own", async () => {
    const clock = new ManualClock();
    const t = await startTestApp({ clock, env: { RESULT_RETENTION: '1h' } });
    try {
      const acct = await t.account({ balanceMinor: 10_000 });
      const id = (await t.call(acct.key, 'POST', '/v1/tasks', body3d())).json().id;
      for (;;) {
        clock.advance(1_000);
        const task = await waitForFinal(t, acct.key, id, 200);
        if (task.status === 'succeeded') break;
        assert.ok(task.status === 'running' || task.status === 'queued', task.status);
      }
      // What a run killed (kill -9) after storing a file and before its commit leaves: a file under the
      // task's folder of a run no artifact names; the run that finished later stored its own.
      const killed = `results/${id}/${uuidv7()}/0`;
      await t.container.storage.put(killed, Readable.from([Buffer.from('left by a killed run')]));
      clock.advance(2 * HOUR_MS);
      await t.container.sweeper.sweepOnce();
      assert.equal(await t.container.storage.stat(killed), null);
    } finally {
      await t.close();
    }
  });

  test("a failed or canceled task's folder goes RESULT_RETENTION after it ended, a killed run's files with it", async () => {
    const clock = new ManualClock();
    const generator = new FakeGenerator(clock);
    // The first task's run breaks (failed at once), the second one's hangs until it is canceled.
    generator.onCreate = (call) =>
      call === 1 ? Promise.reject(new TypeError('cannot read properties of undefined')) : generator.hang();
    const t = await startTestApp({ clock, generator, env: { RESULT_RETENTION: '1h' } });
    try {
      const acct = await t.account({ balanceMinor: 10_000 });
      // What a run killed (kill -9) after storing a file and before its commit leaves: a file under the
      // task's folder no artifact names. The task then ends without a result: failed by the run that
      // resumed it, or canceled by its caller.
      const leave = async (id: string): Promise<string> => {
        const key = `results/${id}/${uuidv7()}/0`;
        await t.container.storage.put(key, Readable.from([Buffer.from('left by a killed run')]));
        return key;
      };
      const failed = (await t.call(acct.key, 'POST', '/v1/tasks', body3d())).json().id;
      const failedFile = await leave(failed);
      await until(async () => (await statusOf(t, acct.key, failed)).status === 'failed', 'the task to fail');
      const canceled = (await t.call(acct.key, 'POST', '/v1/tasks', body3d())).json().id;
      const canceledFile = await leave(canceled);
      assert.equal(
        (await t.call(acct.key, 'POST', `/v1/tasks/${canceled}/cancel`)).json().status,
        'canceled',
      );
      clock.advance(HOUR_MS - 60_000);
      await t.container.sweeper.sweepOnce();
      assert.ok(await t.container.storage.stat(failedFile), 'kept until RESULT_RETENTION has passed');
      assert.ok(await t.container.storage.stat(canceledFile));
      clock.advance(2 * 60_000);
      await t.container.sweeper.sweepOnce();
      assert.equal(await t.container.storage.stat(failedFile), null);
      assert.equal(await t.container.storage.stat(canceledFile), null);
    } finally {
      generator.releaseAll();
      await t.close();
    }
  });

  test('[10.9] an upload sweep that breaks after the first step still removes the bytes on the next pass', async () => {
    const clock = new ManualClock();
    const t = await startTestApp({ clock, worker: false, env: { UPLOAD_RETENTION: '1h' } });
    try {
      const acct = await t.account({ balanceMinor: 10_000 });
      const png = await makePng(t.dir, 32, 32);
      const res = await t.call(acct.key, 'POST', '/v1/files?filename=a.png', fs.readFileSync(png), {
        'content-type': 'application/octet-stream',
      });
      assert.equal(res.statusCode, 201, res.body);
      const row = await t.container.db.db.selectFrom('uploads').selectAll().executeTakeFirstOrThrow();
      assert.ok(await t.container.storage.stat(row.storage_key));
      clock.advance(2 * HOUR_MS);
      const { sweeper } = sweeperWithFlakyDelete(t);
      await sweeper.sweepOnce().catch(() => 0);
      await sweeper.sweepOnce();
      assert.equal(await t.container.storage.stat(row.storage_key), null);
      const after = await t.container.db.db.selectFrom('uploads').selectAll().executeTakeFirstOrThrow();
      assert.ok(after.deleted_at);
    } finally {
      await t.close();
    }
  });

  test('an expired upload whose bytes cannot be removed holds up no other upload', async () => {
    const clock = new ManualClock();
    const t = await startTestApp({ clock, worker: false, env: { UPLOAD_RETENTION: '1h' } });
    try {
      const acct = await t.account({ balanceMinor: 10_000 });
      const png = await makePng(t.dir, 32, 32);
      for (const name of ['a.png', 'b.png']) {
        const res = await t.call(acct.key, 'POST', `/v1/files?filename=${name}`, fs.readFileSync(png), {
          'content-type': 'application/octet-stream',
        });
        assert.equal(res.statusCode, 201, res.body);
      }
      clock.advance(2 * HOUR_MS);
      const { sweeper, store } = sweeperWithFlakyDelete(t);
      // The first object the sweep asks for never goes (a key the store keeps refusing), whichever it is.
      let stuck: string | null = null;
      store.onDelete = (key) => {
        stuck ??= key;
        return key === stuck ? Promise.reject(new Error('access denied')) : null;
      };
      await sweeper.sweepOnce();
      const rows = await t.container.db.db.selectFrom('uploads').selectAll().execute();
      assert.equal(rows.length, 2);
      for (const row of rows) {
        if (row.storage_key === stuck) {
          assert.equal(row.deleted_at, null);
          assert.ok(await t.container.storage.stat(row.storage_key));
        } else {
          assert.ok(row.deleted_at, 'the other expired upload is removed in the same pass');
          assert.equal(await t.container.storage.stat(row.storage_key), null);
        }
      }
    } finally {
      await t.close();
    }
  });

  test("the sweep removes a killed process's unfinished write into the local store", async (ctx) => {
    const t = await startTestApp({ worker: false });
    try {
      const { storageUrl } = t.container.config;
      if (!storageUrl.startsWith('file://')) return ctx.skip('local storage only');
      // What a `put` cut off by kill -9 leaves in the parts' folder: never renamed, never named by a record.
      const part = path.join(fileURLToPath(storageUrl), '.parts', `${uuidv7()}.part`);
      fs.writeFileSync(part, 'partial');
      const written = new Date(Date.now() - 2 * HOUR_MS);
      fs.utimesSync(part, written, written);
      await t.container.sweeper.sweepOnce();
      assert.equal(fs.existsSync(part), false);
    } finally {
      await t.close();
    }
  });

  test('the sweep removes expired dashboard sessions and e-mail links and keeps the live ones', async () => {
    const clock = new ManualClock();
    const t = await startTestApp({ clock, worker: false, env: { SESSION_TTL: '2h' } });
    try {
      const people = t.container.services.people;
      const password = 'correct horse battery';
      await people.signUp({ email: 'ann@example.com', password, lang: 'en' });
      const signIn = () => people.signIn({ email: 'ann@example.com', password, address: '203.0.113.1' });
      // Every sign-in makes a session; none of these ever signs out.
      for (let i = 0; i < 3; i += 1) await signIn();
      clock.advance(HOUR_MS);
      const live = await signIn();
      clock.advance(HOUR_MS + 60_000);
      await t.container.sweeper.sweepOnce();
      const rows = await t.container.db.db.selectFrom('sessions').select('expires_at').execute();
      assert.deepEqual(rows, [{ expires_at: live.expiresAt.toISOString() }]);
      assert.ok(await people.session(live.token), 'the live session still works');
      // E-mail links too: a reset link (an hour) goes once expired, the sign-up's (48 hours) stays.
      const links = () =>
        t.container.db.db.selectFrom('person_tokens').select('purpose').orderBy('purpose').execute();
      await people.requestPasswordReset('ann@example.com');
      assert.deepEqual(await links(), [{ purpose: 'confirm' }, { purpose: 'reset' }]);
      clock.advance(HOUR_MS + 60_000);
      await t.container.sweeper.sweepOnce();
      assert.deepEqual(await links(), [{ purpose: 'confirm' }]);
    } finally {
      await t.close();
    }
  });
});

test('library settling and provider deletions run apart, each one pass at a time', async () => {
  const t = await startTestApp({ worker: false });
  try {
    let settles = 0;
    let deletes = 0;
    let release: () => void = () => {};
    const warned: string[] = [];
    const { db, clock, storage } = t.container;
    const idempotency = new IdempotencyStore({ db, clock });
    const sweeper = new Sweeper({
      db,
      clock,
      storage,
      idempotency,
      uploads: t.container.services.uploads,
      log: {
        warn: (_fields: unknown, message?: string) => {
          warned.push(message ?? '');
        },
      } as unknown as Pick<FastifyBaseLogger, 'warn'>,
      settleRecords: async () => {
        settles += 1;
        if (settles === 2) throw new Error('database gone for a moment');
        return 0;
      },
      // A provider that does not answer: its pass never ends while the test runs.
      deleteUpstreamCopies: () => {
        deletes += 1;
        return new Promise((resolve) => {
          release = () => resolve(0);
        });
      },
    });
    sweeper.start(60_000, 10);
    await new Promise((resolve) => setTimeout(resolve, 200));
    sweeper.stop();
    release();
    assert.ok(settles >= 5, `settled ${settles} times while a deletion pass hung`);
    assert.equal(deletes, 1, 'a deletion pass never overlaps the one before');
    assert.deepEqual(warned, ['settling due library records failed']);
  } finally {
    await t.close();
  }
});
