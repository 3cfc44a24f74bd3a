/**
 * `tasks.stream`, `tasks.wait` and `tasks.run` against a small fake that speaks CONTRACT §12 exactly:
 * `GET /v1/tasks/{id}?wait=N` long-polls, `GET /v1/tasks/{id}/events` sends `event: task` with `id:` per
 * change and `event: done` after the final state, and honours Last-Event-ID.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { Client, ConnectionError, type Task, TaskFailedError, WaitTimeoutError } from '../src/index.ts';

const base = {
  model: 'image',
  mode: 'default',
  settings: { prompt: 'x' },
  price: { amount_minor: 100, currency: 'RUB' },
  created_at: '2026-01-01T00:00:00Z',
  started_at: null,
};
const state = (id: string, status: Task['status'], progress: number, extra: object = {}): Task =>
  ({ ...base, id, status, progress, ...extra }) as Task;

interface Fake {
  url: string;
  /** Last-Event-ID of each events connection, in order (null when absent). */
  resumes: Array<string | null>;
  /** `wait` of each GET /v1/tasks/{id}. */
  waits: Array<string | null>;
  /** How POST /v1/tasks ends for a task: the states the events route sends. */
  mode: 'events' | 'events-fail' | 'events-broken' | 'no-events' | 'always-running';
  close(): Promise<void>;
}

function send(res: http.ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json', 'x-request-id': 'fake' });
  res.end(JSON.stringify(body));
}

async function startFake(): Promise<Fake> {
  const fake = { resumes: [], waits: [], mode: 'events' } as unknown as Fake;
  const polls = new Map<string, number>();
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://fake');
    const events = /^\/v1\/tasks\/([^/]+)\/events$/.exec(url.pathname);
    const one = /^\/v1\/tasks\/([^/]+)$/.exec(url.pathname);
    if (req.method === 'POST' && url.pathname === '/v1/tasks') {
      req.resume();
      return send(res, 202, state(`t-${fake.mode}`, 'queued', 0));
    }
    if (req.method === 'GET' && events) {
      if (fake.mode === 'no-events' || fake.mode === 'always-running') {
        return send(res, 404, { error: { code: 'not_found', message: 'No such address' } });
      }
      const id = events[1]!;
      if (fake.mode === 'events-broken') {
        // A proxy that cuts every stream before its first event.
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write('retry: 10\n\n', () => res.socket?.destroy());
        return;
      }
      const resume = (req.headers['last-event-id'] as string | undefined) ?? null;
      fake.resumes.push(resume);
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const final =
        fake.mode === 'events-fail'
          ? state(id, 'failed', 40, { error: { code: 'content_refused', message: 'refused' } })
          : state(id, 'succeeded', 100);
      const all = [state(id, 'queued', 0), state(id, 'running', 10), state(id, 'running', 50), final];
      const from = resume === null ? 0 : Number(resume);
      // The first connection breaks after two events, as a proxy cutting an idle stream would.
      const upTo = resume === null ? 2 : all.length;
      res.write(': connected\n\n');
      for (let i = from; i < upTo; i++)
        res.write(`event: task\nid: ${i + 1}\ndata: ${JSON.stringify(all[i])}\n\n`);
      if (resume === null) {
        // Destroyed once the bytes are out: the client sees a body that stops without `done`.
        res.write('retry: 10\n\n', () => res.socket?.destroy());
        return;
      }
      res.end(`event: done\ndata: ${JSON.stringify(final)}\n\n`);
      return;
    }
    if (req.method === 'GET' && one) {
      const id = one[1]!;
      const wait = url.searchParams.get('wait');
      fake.waits.push(wait);
      const n = (polls.get(id) ?? 0) + 1;
      polls.set(id, n);
      if (fake.mode === 'always-running') {
        // As the service does: a long-poll of a task that stays running answers after its wait.
        const answer = () => send(res, 200, state(id, 'running', n * 10));
        return void (wait === null ? answer() : setTimeout(answer, Number(wait) * 1000));
      }
      if (n < 2) return send(res, 200, state(id, 'running', n * 10));
      return send(res, 200, state(id, 'succeeded', 100));
    }
    send(res, 404, { error: { code: 'not_found', message: 'No such address' } });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  fake.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  fake.close = () => new Promise((resolve) => server.close(() => resolve()));
  return fake;
}

describe('waiting and event streams (fake of CONTRACT §12)', () => {
  let fake: Fake;
  let c: Client;
  before(async () => {
    fake = await startFake();
    c = new Client({ apiKey: 'k', baseUrl: fake.url });
  });
  after(() => fake.close());

  test('stream: every state once, in order, across a dropped connection resumed with Last-Event-ID', async () => {
    fake.mode = 'events';
    fake.resumes.length = 0;
    const seen: string[] = [];
    for await (const task of c.tasks.stream('s1')) seen.push(`${task.status}:${task.progress}`);
    assert.deepEqual(seen, ['queued:0', 'running:10', 'running:50', 'succeeded:100']);
    assert.deepEqual(fake.resumes, [null, '2']);
  });

  test('run: create, then the event stream to the succeeded task', async () => {
    fake.mode = 'events';
    const updates: string[] = [];
    const task = await c.tasks.run(
      { model: 'image', settings: { prompt: 'x' } },
      { onUpdate: (t) => updates.push(t.status) },
    );
    assert.equal(task.status, 'succeeded');
    // The stream's first event repeats the creation's answer: each state is reported once.
    assert.deepEqual(updates, ['queued', 'running', 'running', 'succeeded']);
  });

  test('run: a timeout past a timer’s range (30 days, Infinity) does not end the wait at once', async () => {
    fake.mode = 'events';
    for (const timeoutMs of [30 * 24 * 3600 * 1000, Number.POSITIVE_INFINITY]) {
      const task = await c.tasks.run({ model: 'image', settings: { prompt: 'x' } }, { timeoutMs });
      assert.equal(task.status, 'succeeded', String(timeoutMs));
    }
  });

  test('run: a failed final state rejects with TaskFailedError and the task error code', async () => {
    fake.mode = 'events-fail';
    const error = await c.tasks.run({ model: 'image', settings: { prompt: 'x' } }).catch((e: unknown) => e);
    assert.ok(error instanceof TaskFailedError);
    assert.equal(error.code, 'content_refused');
    assert.equal(error.task.status, 'failed');
  });

  test('run: without an events route (404 not_found) it falls back to ?wait= long-polls', async () => {
    fake.mode = 'no-events';
    fake.waits.length = 0;
    const task = await c.tasks.run({ model: 'image', settings: { prompt: 'x' } }, { timeoutMs: 30_000 });
    assert.equal(task.status, 'succeeded');
    assert.equal(fake.waits.length, 2);
    assert.ok(
      fake.waits.every((w) => Number(w) >= 1 && Number(w) <= 30),
      fake.waits.join(),
    );
  });

  test('run: an event stream that keeps breaking is given up for polls', async () => {
    fake.mode = 'events-broken';
    fake.waits.length = 0;
    const task = await c.tasks.run({ model: 'image', settings: { prompt: 'x' } }, { timeoutMs: 30_000 });
    assert.equal(task.status, 'succeeded');
    assert.equal(fake.waits.length, 2);
  });

  test('wait: asks for at most 60 s per call and loops to the final task', async () => {
    fake.mode = 'events';
    fake.waits.length = 0;
    const task = await c.tasks.wait('w1', { timeoutMs: 300_000 });
    assert.equal(task.status, 'succeeded');
    assert.equal(fake.waits.length, 2);
    assert.equal(fake.waits[0], '60');
  });

  test('wait: a state the service repeats (a long-poll that ended with no change) is reported once', async () => {
    const answers = [state('w3', 'running', 10), state('w3', 'running', 10), state('w3', 'succeeded', 100)];
    const scripted = new Client({
      apiKey: 'k',
      baseUrl: 'http://fake.invalid',
      sleep: async () => {},
      fetch: async () => new Response(JSON.stringify(answers.shift()), { status: 200 }),
    });
    const updates: string[] = [];
    const task = await scripted.tasks.wait('w3', {
      onUpdate: (t) => updates.push(`${t.status}:${t.progress}`),
    });
    assert.equal(task.status, 'succeeded');
    assert.deepEqual(updates, ['running:10', 'succeeded:100']);
  });

  test('wait: WaitTimeoutError with the last state when the time is up', async () => {
    fake.mode = 'always-running';
    const started = Date.now();
    const error = await c.tasks.wait('w2', { timeoutMs: 1_200 }).catch((e: unknown) => e);
    // Within the time asked for (plus a request's time): no long-poll asks past it in whole seconds.
    assert.ok(Date.now() - started < 1_700, `${Date.now() - started} ms`);
    assert.ok(error instanceof WaitTimeoutError);
    assert.equal(error.task.status, 'running');
    assert.equal(fake.waits.at(-1) !== undefined, true);
  });

  test('stream: a connection that never gets through ends in ConnectionError after the retries', async () => {
    const dead = new Client({ apiKey: 'k', baseUrl: 'http://127.0.0.1:1', sleep: async () => {} });
    const iterate = async (): Promise<void> => {
      for await (const _ of dead.tasks.stream('x')) assert.fail('no state expected');
    };
    await assert.rejects(iterate(), ConnectionError);
  });
});
