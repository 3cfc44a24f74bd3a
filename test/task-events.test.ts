/**
 * GET /v1/tasks/{id}/events (CONTRACT §12): Server-Sent Events on a real listening server.
 */
import assert from 'node:assert/strict';
import net, { type AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import type { Tx } from '../src/db/index.ts';
import { markRunning, recordProgress } from '../src/tasks/index.ts';
import { expectError, startTestApp, type TestAccount, type TestApp } from './helpers.ts';
import { openStream, type SseEvent, type SseStream } from './sse.ts';

const chair = (prompt = 'a small wooden chair') => ({
  model: 'model-3d',
  settings: { task_type: 'text_to_model', prompt },
});
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function listen(t: TestApp): Promise<string> {
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  return `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
}

const ids = (events: SseEvent[]) => events.filter((e) => e.event === 'task').map((e) => Number(e.id));
const increasing = (numbers: number[]) => numbers.every((n, i) => i === 0 || n > (numbers[i - 1] as number));

describe('task event streams', () => {
  let t: TestApp;
  let base: string;
  let acct: TestAccount;
  before(async () => {
    t = await startTestApp({ worker: false, env: { STREAM_HEARTBEAT: '1s', STREAMS_PER_ACCOUNT: '3' } });
    base = await listen(t);
    acct = await t.account({ balanceMinor: 10_000_000 });
  });
  after(() => t.close());

  const auth = () => ({ authorization: `Bearer ${acct.key}` });
  const create = async (prompt?: string): Promise<string> => {
    const res = await t.call(acct.key, 'POST', '/v1/tasks', chair(prompt));
    assert.equal(res.statusCode, 202, res.body);
    return res.json().id as string;
  };
  const stream = (id: string, headers: Record<string, string> = {}): Promise<SseStream> =>
    openStream(`${base}/v1/tasks/${id}/events`, { ...auth(), ...headers });
  const get = async (id: string) => (await t.call(acct.key, 'GET', `/v1/tasks/${id}`)).body;

  test('task on connect and on every change, increasing ids, then done with the final task, then the end', async () => {
    const id = await create();
    const s = await stream(id);
    assert.equal(s.status, 200);
    assert.match(String(s.headers['content-type']), /^text\/event-stream/);
    assert.equal(s.headers['cache-control'], 'no-cache');
    assert.equal(s.headers['x-accel-buffering'], 'no');
    assert.ok(s.headers['x-request-id']);
    await s.until((events) => events.length >= 1);
    assert.deepEqual(
      { event: s.events[0]?.event, id: s.events[0]?.id },
      { event: 'task', id: '0' },
      'the task as it is on connect',
    );
    assert.equal(s.events[0]?.data, await get(id), 'the data is what GET answers');
    t.container.worker.start();
    const events = await s.ended;
    await t.container.worker.stop();
    const last = events.at(-1) as SseEvent;
    assert.equal(last.event, 'done');
    assert.equal(last.id, null, 'done repeats no id');
    assert.equal(last.data, await get(id), 'done carries the final task as GET answers it');
    assert.equal(JSON.parse(last.data).status, 'succeeded');
    const tasks = events.filter((e) => e.event === 'task');
    assert.equal(tasks.length, events.length - 1, 'only task events before done');
    // Changes quicker than a read are sent once, with the state they led to: at least queued and final.
    assert.ok(tasks.length >= 2, `queued and the final state at least: ${JSON.stringify(ids(events))}`);
    assert.ok(increasing(ids(events)), `ids increase: ${ids(events)}`);
    const statuses = tasks.map((e) => JSON.parse(e.data).status as string);
    assert.equal(statuses[0], 'queued');
    assert.equal(statuses.at(-1), 'succeeded');
    assert.equal(tasks.at(-1)?.data, last.data);
  });

  test('one task event for each change of status or progress, each after the one before', async () => {
    const id = await create();
    const s = await stream(id);
    await s.until((events) => events.length === 1);
    const { db, dialect } = t.container.db;
    // The worker's own transitions, each committed with its notification, one at a time.
    const change = async (step: (tx: Tx) => Promise<boolean>) => {
      const seen = s.events.length;
      assert.equal(await dialect.transaction(db, step), true);
      await s.until((events) => events.length === seen + 1);
    };
    await change((tx) => markRunning(tx, id, new Date(), `${id}/1`));
    await change((tx) => recordProgress(tx, id, 30, new Date()));
    await change((tx) => recordProgress(tx, id, 70, new Date()));
    await t.call(acct.key, 'POST', `/v1/tasks/${id}/cancel`);
    const events = await s.ended;
    assert.deepEqual(
      events.map((e) => {
        const task = JSON.parse(e.data);
        return [e.event, e.id, task.status, task.progress ?? null];
      }),
      [
        ['task', '0', 'queued', 0],
        ['task', '1', 'running', 0],
        ['task', '2', 'running', 30],
        ['task', '3', 'running', 70],
        ['task', '4', 'canceled', 70],
        ['done', null, 'canceled', 70],
      ],
    );
  });

  test('Last-Event-ID resumes without repeating ids; a final task sends task (if unseen) and done', async () => {
    const id = await create();
    await t.call(acct.key, 'POST', `/v1/tasks/${id}/cancel`);
    const full = await (await stream(id)).ended;
    assert.deepEqual(
      full.map((e) => [e.event, e.id]),
      [
        ['task', '1'],
        ['done', null],
      ],
    );
    const atFinal = await (await stream(id, { 'last-event-id': '1' })).ended;
    assert.deepEqual(
      atFinal.map((e) => e.event),
      ['done'],
      'resumed at the final revision: only done',
    );
    assert.equal(atFinal[0]?.data, await get(id));
    const before = await (await stream(id, { 'last-event-id': '0' })).ended;
    assert.deepEqual(
      before.map((e) => [e.event, e.id]),
      [
        ['task', '1'],
        ['done', null],
      ],
    );
    // Not one we sent: the stream starts from the beginning.
    const garbage = await (await stream(id, { 'last-event-id': 'abc' })).ended;
    assert.equal(garbage.length, 2);
    const long = await (await stream(id, { 'last-event-id': '7'.repeat(150) })).ended;
    assert.equal(long.length, 2, 'a long value is not ours either: from the beginning, not a refusal');
    const ahead = await (await stream(id, { 'last-event-id': '1000' })).ended;
    assert.deepEqual(
      ahead.map((e) => [e.event, e.id]),
      [
        ['task', '1'],
        ['done', null],
      ],
      "an id past the task's revision was never sent: from the beginning",
    );
  });

  test('resumed at the current revision of a running task: nothing until it changes', async () => {
    const id = await create();
    const s = await stream(id, { 'last-event-id': '0' });
    await sleep(400);
    assert.deepEqual(s.events, [], 'revision 0 was seen already');
    await t.call(acct.key, 'POST', `/v1/tasks/${id}/cancel`);
    const events = await s.ended;
    assert.deepEqual(
      events.map((e) => [e.event, e.id, JSON.parse(e.data).status]),
      [
        ['task', '1', 'canceled'],
        ['done', null, 'canceled'],
      ],
    );
  });

  test('a change no notification reported (another process on SQLite) reaches the stream by the periodic check', async () => {
    const id = await create();
    const s = await stream(id);
    await s.until((events) => events.length === 1);
    // Straight to the database: no NOTIFY, no in-process bus.
    await t.container.db.db
      .updateTable('tasks')
      .set((eb) => ({ progress: 42, revision: eb('revision', '+', 1) }))
      .where('id', '=', id)
      .execute();
    const events = await s.until((all) => all.length === 2, 30_000);
    assert.equal(events[1]?.id, '1');
    assert.equal(JSON.parse(events[1]?.data ?? '{}').progress, 42);
    await t.call(acct.key, 'POST', `/v1/tasks/${id}/cancel`);
    await s.ended;
  });

  test('a comment line keeps the stream open while nothing changes; a client that leaves is forgotten', async () => {
    const id = await create();
    const s = await stream(id);
    await s.until(() => s.comments.length >= 2, 10_000);
    assert.equal(s.comments[0], 'keep-alive');
    assert.equal(s.events.length, 1, 'comments are no events');
    assert.ok(t.container.services.watch.size >= 1);
    s.close();
    const deadline = Date.now() + 10_000;
    while (t.container.services.watch.size > 0 && Date.now() < deadline) await sleep(50);
    assert.equal(t.container.services.watch.size, 0, 'no subscription left behind');
    // Its place is back: three more streams fit (STREAMS_PER_ACCOUNT=3).
    const three = await Promise.all([stream(id), stream(id), stream(id)]);
    assert.deepEqual(
      three.map((x) => x.status),
      [200, 200, 200],
    );
    for (const x of three) x.close();
    await t.call(acct.key, 'POST', `/v1/tasks/${id}/cancel`);
  });

  test('a key revoked while its stream is open ends the stream', async () => {
    const other = await t.account({ balanceMinor: 10_000_000 });
    const res = await t.call(other.key, 'POST', '/v1/tasks', chair());
    const s = await openStream(`${base}/v1/tasks/${res.json().id}/events`, {
      authorization: `Bearer ${other.key}`,
    });
    await s.until((events) => events.length >= 1);
    const revoked = await t.admin('DELETE', `/admin/v1/keys/${other.keyId}`);
    assert.ok(revoked.statusCode < 300, revoked.body);
    await s.ended;
    assert.deepEqual(
      s.events.map((e) => e.event),
      ['task'],
      'no done: the stream ended for the key',
    );
  });

  test("a stream opened with the dashboard's session ends when the person signs out", async () => {
    const people = t.container.services.people;
    const email = `stream-${Date.now()}@example.com`;
    const { accountId } = await people.signUp({ email, password: 'a long password', lang: 'en' });
    const credited = await t.admin('POST', `/admin/v1/accounts/${accountId}/credits`, {
      amount_minor: 1_000_000,
      reference: `stream-${accountId}`,
    });
    assert.equal(credited.statusCode, 201, credited.body);
    const session = await people.signIn({ email, password: 'a long password', address: '203.0.113.9' });
    const cookie = `gta_session=${session.token}`;
    const created = await t.app.inject({
      method: 'POST',
      url: '/v1/tasks',
      headers: { cookie, 'x-csrf-token': session.csrf },
      payload: chair(),
    });
    assert.equal(created.statusCode, 202, created.body);
    const s = await openStream(`${base}/v1/tasks/${created.json().id}/events`, { cookie });
    await s.until((events) => events.length >= 1);
    await people.signOut(session.token);
    await s.ended;
    assert.deepEqual(
      s.events.map((e) => e.event),
      ['task'],
      'no done: the stream ended with the session',
    );
  });

  test("another account's task, a restricted key's other model, a missing task: 404 JSON, no stream", async () => {
    const id = await create();
    const other = await t.account({ balanceMinor: 1000 });
    const restricted = (
      await t.admin('POST', `/admin/v1/accounts/${acct.id}/keys`, { models: ['image'] })
    ).json().key as string;
    for (const [key, path] of [
      [other.key, `/v1/tasks/${id}/events`],
      [restricted, `/v1/tasks/${id}/events`],
      [acct.key, '/v1/tasks/00000000-0000-7000-8000-000000000000/events'],
    ] as const) {
      const res = await t.call(key, 'GET', path);
      expectError(res, 404, 'task_not_found');
    }
    const s = await openStream(`${base}/v1/tasks/${id}/events`, { authorization: `Bearer ${other.key}` });
    assert.equal(s.status, 404);
    assert.match(String(s.headers['content-type']), /application\/json/);
    await s.ended;
    assert.equal(JSON.parse(s.body()).error.code, 'task_not_found');
    await t.call(acct.key, 'POST', `/v1/tasks/${id}/cancel`);
  });

  test('a client that leaves while its stream is being opened is forgotten, its place given back', async () => {
    const id = await create();
    const { tasks } = t.container.services;
    const read = tasks.watchState.bind(tasks);
    // The first read waits until the client has gone (a slower database, a client that gives up at once).
    let reached!: () => void;
    const reading = new Promise<void>((resolve) => {
      reached = resolve;
    });
    let leave!: () => void;
    const left = new Promise<void>((resolve) => {
      leave = resolve;
    });
    tasks.watchState = async (...args) => {
      tasks.watchState = read;
      reached();
      await left;
      return read(...args);
    };
    const socket = net.connect(Number(new URL(base).port), '127.0.0.1');
    socket.write(
      `GET /v1/tasks/${id}/events HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${acct.key}\r\n\r\n`,
    );
    try {
      await reading;
    } finally {
      tasks.watchState = read;
    }
    socket.destroy();
    await sleep(100);
    leave();
    // Past a heartbeat (1 s): a stream that missed its client's leaving would still be there.
    await sleep(1_500);
    assert.equal(t.container.services.watch.size, 0, 'no subscription left behind');
    const three = await Promise.all([stream(id), stream(id), stream(id)]);
    assert.deepEqual(
      three.map((x) => x.status),
      [200, 200, 200],
      'its place is back',
    );
    for (const x of three) x.close();
    await t.call(acct.key, 'POST', `/v1/tasks/${id}/cancel`);
  });

  test("HEAD answers a stream's headers and ends: the connection serves the next request, no place is kept", async () => {
    const id = await create();
    const socket = net.connect(Number(new URL(base).port), '127.0.0.1');
    let received = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      received += chunk;
    });
    const until = async (pattern: RegExp, what: string): Promise<void> => {
      const deadline = Date.now() + 5_000;
      while (!pattern.test(received) && Date.now() < deadline) await sleep(20);
      assert.match(received, pattern, what);
    };
    try {
      // Three HEADs on one kept-alive connection (STREAMS_PER_ACCOUNT=3), then a plain GET on it.
      for (let i = 0; i < 3; i++) {
        socket.write(
          `HEAD /v1/tasks/${id}/events HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${acct.key}\r\n\r\n`,
        );
        await until(new RegExp(`(HTTP/1.1 200 OK[^]*?\r\n\r\n){${i + 1}}`), `HEAD ${i + 1} answered`);
      }
      assert.match(received, /content-type: text\/event-stream/);
      assert.doesNotMatch(received, /event: task/, 'a HEAD has no body');
      socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
      await until(/\{"status":"ok"\}/, 'the request after the HEADs answered on the same connection');
    } finally {
      socket.destroy();
    }
    assert.equal(t.container.services.watch.size, 0, 'no subscription left behind');
    const three = await Promise.all([stream(id), stream(id), stream(id)]);
    assert.deepEqual(
      three.map((x) => x.status),
      [200, 200, 200],
      'the HEADs hold no place',
    );
    for (const x of three) x.close();
    await t.call(acct.key, 'POST', `/v1/tasks/${id}/cancel`);
  });

  test('past STREAMS_PER_ACCOUNT streams and waiting calls: 429 rate_limited with Retry-After', async () => {
    const id = await create();
    const open = await Promise.all([stream(id), stream(id)]);
    const waiting = t.call(acct.key, 'GET', `/v1/tasks/${id}?wait=20`);
    await sleep(300);
    const refused = await stream(id);
    assert.equal(refused.status, 429);
    await refused.ended;
    assert.equal(JSON.parse(refused.body()).error.code, 'rate_limited');
    assert.ok(Number(refused.headers['retry-after']) > 0);
    expectError(await t.call(acct.key, 'GET', `/v1/tasks/${id}?wait=5`), 429, 'rate_limited');
    // A final task's stream and long-poll take no place: both answer at once.
    const done = await create();
    await t.call(acct.key, 'POST', `/v1/tasks/${done}/cancel`);
    const finalStream = await stream(done);
    assert.equal(finalStream.status, 200);
    await finalStream.ended;
    assert.match(finalStream.body(), /event: done/);
    assert.equal((await t.call(acct.key, 'GET', `/v1/tasks/${done}?wait=5`)).statusCode, 200);
    // POST with Prefer still creates the task; the preference is simply not applied.
    const created = await t.call(acct.key, 'POST', '/v1/tasks', chair(), { prefer: 'wait=5' });
    assert.equal(created.statusCode, 202);
    assert.equal(created.headers['preference-applied'], undefined);
    // Plain reads are unaffected, and so is another account.
    assert.equal((await t.call(acct.key, 'GET', `/v1/tasks/${id}`)).statusCode, 200);
    await t.call(acct.key, 'POST', `/v1/tasks/${id}/cancel`);
    await t.call(acct.key, 'POST', `/v1/tasks/${created.json().id}/cancel`);
    for (const s of open) await s.ended;
    assert.equal((await waiting).json().status, 'canceled');
  });
});

describe('event streams and the request limit', () => {
  test('a stream and a waiting call count once each against the request limit', async () => {
    const t = await startTestApp({
      limits: { accountRequests: 6, wrongKeyAttempts: 100, windowSeconds: 60 },
    });
    try {
      const base = await listen(t);
      const acct = await t.account({ balanceMinor: 10_000_000 });
      const created = await t.call(acct.key, 'POST', '/v1/tasks', chair()); // 1
      const id = created.json().id as string;
      const s = await openStream(`${base}/v1/tasks/${id}/events`, { authorization: `Bearer ${acct.key}` }); // 2
      const events = await s.ended;
      assert.ok(events.length >= 2, 'several events on one request');
      const waited = await t.call(acct.key, 'GET', `/v1/tasks/${id}?wait=30`); // 3
      assert.equal(waited.statusCode, 200);
      const after = await t.call(acct.key, 'GET', `/v1/tasks/${id}`); // 4
      assert.match(String(after.headers.ratelimit), /;r=2;/, String(after.headers.ratelimit));
    } finally {
      await t.close();
    }
  });
});

describe('shutdown', () => {
  test('app.close ends every open stream and waiting call, and returns promptly', async () => {
    const t = await startTestApp({ worker: false });
    let closed = false;
    try {
      const base = await listen(t);
      const acct = await t.account({ balanceMinor: 10_000_000 });
      const id = (await t.call(acct.key, 'POST', '/v1/tasks', chair())).json().id as string;
      const streams = await Promise.all(
        [1, 2, 3].map(() =>
          openStream(`${base}/v1/tasks/${id}/events`, { authorization: `Bearer ${acct.key}` }),
        ),
      );
      for (const s of streams) await s.until((events) => events.length === 1);
      const waiting = fetch(`${base}/v1/tasks/${id}?wait=60`, {
        headers: { authorization: `Bearer ${acct.key}` },
      });
      await sleep(300);
      const started = Date.now();
      // The task stays queued (its hold too): the ledger check at close holds either way.
      await t.close();
      closed = true;
      assert.ok(Date.now() - started < 30_000, 'closing did not wait for the streams to end by themselves');
      for (const s of streams) await s.ended;
      const answer = await waiting;
      assert.equal(answer.status, 200);
      assert.equal(((await answer.json()) as { status: string }).status, 'queued');
    } finally {
      if (!closed) await t.close();
    }
  });
});

describe('a resumed stream with nothing new', () => {
  test('answers its headers at once, long before the first heartbeat, then the change when it comes', async () => {
    const t = await startTestApp({ worker: false, env: { STREAM_HEARTBEAT: '60s' } });
    try {
      const base = await listen(t);
      const acct = await t.account({ balanceMinor: 10_000_000 });
      const id = (await t.call(acct.key, 'POST', '/v1/tasks', chair())).json().id as string;
      const opening = openStream(`${base}/v1/tasks/${id}/events`, {
        authorization: `Bearer ${acct.key}`,
        'last-event-id': '0',
      });
      // Headers held back until the first write would come with the heartbeat, a minute later.
      const s = await Promise.race([
        opening,
        sleep(10_000).then(() => {
          throw new Error('no headers within 10 s of a resumed stream with nothing to send');
        }),
      ]);
      assert.equal(s.status, 200);
      assert.match(String(s.headers['content-type']), /^text\/event-stream/);
      assert.deepEqual(s.events, []);
      await t.call(acct.key, 'POST', `/v1/tasks/${id}/cancel`);
      const events = await s.ended;
      assert.deepEqual(
        events.map((e) => e.event),
        ['task', 'done'],
      );
    } finally {
      await t.close();
    }
  });
});
