/**
 * Waiting across processes (CONTRACT §12), with real processes on one database: two API processes
 * without workers and a worker alone. A task created through the first API and finished by the worker
 * wakes a long-poll and an event stream held by the second. On PostgreSQL the worker's NOTIFY wakes them;
 * on SQLite (no notifications across processes) the periodic revision check does. And a real process
 * stopped with SIGTERM ends its streams and waiting calls and exits.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sharedProcessEnv, startTestApp, type TestApp } from './helpers.ts';
import { exited, freePort, type Server, startServer, startWorker } from './processes.ts';
import { openStream } from './sse.ts';

test('a task finished by a worker process wakes a long-poll and a stream held by another API process', async () => {
  let t: TestApp | null = null;
  const children: Server[] = [];
  try {
    t = await startTestApp({ worker: false });
    const env = { ...sharedProcessEnv(t), SIM_SPEED: '50', WORKER: 'off' };
    const [portA, portB] = [await freePort(), await freePort()];
    const apiA = await startServer({ ...env, PORT: String(portA) });
    children.push(apiA);
    const apiB = await startServer({ ...env, PORT: String(portB) });
    children.push(apiB);
    const account = await t.account({ balanceMinor: 10_000_000 });
    const auth = { authorization: `Bearer ${account.key}` };

    const created = await fetch(`${apiA.base}/v1/tasks`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'model-3d',
        settings: { task_type: 'text_to_model', prompt: 'a chair seen from another process' },
      }),
    });
    assert.equal(created.status, 202);
    const id = ((await created.json()) as { id: string }).id;

    // Both held by B while no worker runs: the task stays queued until one starts.
    const stream = await openStream(`${apiB.base}/v1/tasks/${id}/events`, auth);
    assert.equal(stream.status, 200);
    await stream.until((events) => events.length === 1);
    const started = Date.now();
    const longPoll = fetch(`${apiB.base}/v1/tasks/${id}?wait=60`, { headers: auth });

    children.push(await startWorker(env));
    const answer = await longPoll;
    const received = Date.now();
    const elapsed = received - started;
    const task = (await answer.json()) as { status: string; finished_at: string };
    assert.equal(task.status, 'succeeded', JSON.stringify(task));
    assert.ok(elapsed < 50_000, `the long-poll answered after ${elapsed} ms of a 60 s wait`);

    const events = await stream.ended;
    assert.deepEqual(
      [events[0]?.event, events.at(-1)?.event],
      ['task', 'done'],
      JSON.stringify(events.map((e) => [e.event, e.id])),
    );
    const statuses = events.filter((e) => e.event === 'task').map((e) => JSON.parse(e.data).status);
    assert.equal(statuses.at(-1), 'succeeded');
    const plain = await fetch(`${apiA.base}/v1/tasks/${id}`, { headers: auth });
    assert.equal(events.at(-1)?.data, await plain.text(), 'done is the task as GET answers it');
    process.stdout.write(
      `# ${t.container.db.dialect.name}: long-poll on the other API process answered ${elapsed} ms after the worker started, ${received - Date.parse(task.finished_at)} ms after the task finished\n`,
    );
  } finally {
    for (const child of children) if (child.child.exitCode === null) child.child.kill('SIGTERM');
    for (const child of children) await exited(child.child);
    await t?.close();
  }
});

test('SIGTERM ends the open streams and waiting calls of an API process, which then exits', async () => {
  let t: TestApp | null = null;
  let api: Server | null = null;
  try {
    t = await startTestApp({ worker: false });
    const port = await freePort();
    api = await startServer({ ...sharedProcessEnv(t), WORKER: 'off', PORT: String(port) });
    const account = await t.account({ balanceMinor: 10_000_000 });
    const auth = { authorization: `Bearer ${account.key}` };
    const created = await fetch(`${api.base}/v1/tasks`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'model-3d',
        settings: { task_type: 'text_to_model', prompt: 'a chair' },
      }),
    });
    const id = ((await created.json()) as { id: string }).id;
    const stream = await openStream(`${api.base}/v1/tasks/${id}/events`, auth);
    await stream.until((events) => events.length === 1);
    const longPoll = fetch(`${api.base}/v1/tasks/${id}?wait=60`, { headers: auth });
    await new Promise((resolve) => setTimeout(resolve, 300));

    api.child.kill('SIGTERM');
    assert.equal(await exited(api.child), 0, api.output());
    const events = await stream.ended;
    assert.deepEqual(
      events.map((e) => e.event),
      ['task'],
      'the stream ended without a done: the task is not final',
    );
    const answer = await longPoll;
    assert.equal(answer.status, 200);
    assert.equal(((await answer.json()) as { status: string }).status, 'queued');
  } finally {
    if (api && api.child.exitCode === null) api.child.kill('SIGKILL');
    await t?.close();
  }
});
