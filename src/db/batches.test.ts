import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type BatchKind, batched, MAX_BATCH } from './batches.ts';
import { createDb, migrateToLatest } from './connect.ts';

// Batched writes (batches.ts): calls that arrive together run as one `many`; a lone call runs `one`; two
// calls of one key never share a batch; a failing batch is undone whole and each call then runs alone.

async function database() {
  const db = createDb('sqlite::memory:');
  await migrateToLatest(db);
  return db;
}

/** Sets `epochs` rows (name → value), counting how each call was run. */
function counter(options: { refuse?: (name: string) => boolean } = {}) {
  const runs = { many: [] as string[][], one: [] as string[] };
  const kind: BatchKind<{ name: string; value: number }, string> = {
    key: (item) => item.name,
    async many(tx, items) {
      runs.many.push(items.map((item) => item.name));
      for (const item of items) {
        await tx.insertInto('epochs').values(item).execute();
        if (options.refuse?.(item.name)) throw new Error(`refused ${item.name}`);
      }
      return items.map((item) => `many:${item.name}`);
    },
    async one(handle, item) {
      runs.one.push(item.name);
      return handle.dialect.transaction(handle.db, async (tx) => {
        if (options.refuse?.(item.name)) throw new Error(`refused ${item.name}`);
        await tx.insertInto('epochs').values(item).execute();
        return `one:${item.name}`;
      });
    },
  };
  return { runs, call: batched(kind) };
}

test('calls of the same turn make one batch, answered in their order; a lone call runs alone', async () => {
  const db = await database();
  try {
    const { runs, call } = counter();
    const answers = await Promise.all(['a', 'b', 'c'].map((name, value) => call(db, { name, value })));
    assert.deepEqual(answers, ['many:a', 'many:b', 'many:c']);
    assert.deepEqual(runs.many, [['a', 'b', 'c']]);
    assert.equal(await call(db, { name: 'd', value: 3 }), 'one:d');
    assert.deepEqual(runs.one, ['d']);
    const rows = await db.db
      .selectFrom('epochs')
      .select(['name', 'value'])
      .where('name', 'in', ['a', 'b', 'c', 'd'])
      .orderBy('name')
      .execute();
    assert.deepEqual(
      rows.map((r) => [r.name, Number(r.value)]),
      [
        ['a', 0],
        ['b', 1],
        ['c', 2],
        ['d', 3],
      ],
    );
  } finally {
    await db.close();
  }
});

test('two calls of one key go to two batches; a batch takes MAX_BATCH calls at most', async () => {
  const db = await database();
  try {
    const { runs, call } = counter();
    const names = Array.from({ length: MAX_BATCH + 2 }, (_, i) => `n${i}`);
    const kind: BatchKind<string, string> = {
      key: (item) => item.split(':')[0] ?? item,
      async many(_tx, items) {
        runs.many.push([...items]);
        return items.map((item) => item);
      },
      async one(_handle, item) {
        runs.one.push(item);
        return item;
      },
    };
    const sameKey = batched(kind);
    const answers = await Promise.all([sameKey(db, 'x:1'), sameKey(db, 'x:2'), sameKey(db, 'y:1')]);
    assert.deepEqual(answers, ['x:1', 'x:2', 'y:1']);
    // x:2 waits for the batch after the one x:1 is in.
    assert.deepEqual(runs.many, [['x:1', 'y:1']]);
    assert.deepEqual(runs.one, ['x:2']);
    runs.many.length = 0;
    await Promise.all(names.map((name, value) => call(db, { name, value })));
    assert.deepEqual(
      runs.many.map((batch) => batch.length),
      [MAX_BATCH, 2],
    );
  } finally {
    await db.close();
  }
});

test('a failing batch is undone whole; each call then runs alone and only the faulty one fails', async () => {
  const db = await database();
  try {
    const { runs, call } = counter({ refuse: (name) => name === 'b' });
    const settled = await Promise.allSettled(['a', 'b', 'c'].map((name, value) => call(db, { name, value })));
    assert.deepEqual(
      settled.map((s) => (s.status === 'fulfilled' ? s.value : String((s.reason as Error).message))),
      ['one:a', 'refused b', 'one:c'],
    );
    assert.deepEqual(runs.many, [['a', 'b', 'c']]);
    assert.deepEqual(runs.one.sort(), ['a', 'b', 'c']);
    // The batch's writes of a (before the failure) were undone: a's row is the one its lone call wrote.
    const rows = await db.db
      .selectFrom('epochs')
      .select('name')
      .where('name', 'in', ['a', 'b', 'c'])
      .orderBy('name')
      .execute();
    assert.deepEqual(
      rows.map((r) => r.name),
      ['a', 'c'],
    );
  } finally {
    await db.close();
  }
});

test('calls that arrive while a batch commits make the next batch', async () => {
  const db = await database();
  try {
    const { runs, call } = counter();
    const first = Promise.all(['a', 'b'].map((name, value) => call(db, { name, value })));
    // Arrives after the first batch started (a later turn), before it committed.
    await new Promise((resolve) => setImmediate(resolve));
    const second = Promise.all(['c', 'd'].map((name, value) => call(db, { name, value })));
    await Promise.all([first, second]);
    assert.deepEqual(runs.many, [
      ['a', 'b'],
      ['c', 'd'],
    ]);
  } finally {
    await db.close();
  }
});
