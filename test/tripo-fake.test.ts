/**
 * The Tripo fake itself keeps to PROVIDERS.md §1, so that tests passing against it mean something: the
 * documented rules are refused with Tripo's codes, tasks progress and belong to their key, links expire,
 * and the account's limits hold.
 */
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { makePng, makeWebp } from '../src/media/fixtures.ts';
import { TripoFake } from './fakes/tripo.ts';

let fake: TripoFake;
let dir: string;
let png: Uint8Array;
let webp: Uint8Array;

before(async () => {
  fake = await TripoFake.start({
    apiKeys: ['tsk_a', 'tsk_b'],
    queuedMs: 100,
    runningMs: 300,
    outputTtlMs: 300,
    maxConcurrentTasks: 2,
  });
  dir = await mkdtemp(path.join(os.tmpdir(), 'tripo-fake-'));
  png = await readFile(await makePng(dir, 64, 64));
  webp = await readFile(await makeWebp(dir, 64, 64));
});
after(async () => {
  await fake.close();
  await rm(dir, { recursive: true, force: true });
});

/** Tripo's answer: `data` on success, `message` on refusal. */
interface Envelope {
  code: number;
  data?: Record<string, unknown>;
  message?: string;
}

async function call(
  method: string,
  route: string,
  options: { key?: string; json?: unknown; form?: FormData } = {},
): Promise<{ status: number; body: Envelope }> {
  const headers: Record<string, string> = { authorization: `Bearer ${options.key ?? 'tsk_a'}` };
  if (options.json !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(`${fake.baseUrl}${route}`, {
    method,
    headers,
    body: options.json !== undefined ? JSON.stringify(options.json) : options.form,
  });
  return { status: response.status, body: (await response.json()) as Envelope };
}

async function upload(bytes: Uint8Array, key = 'tsk_a') {
  const form = new FormData();
  form.set('file', new Blob([new Uint8Array(bytes)]), 'pic');
  return call('POST', '/upload', { key, form });
}

const text = (extra: Record<string, unknown> = {}) => ({ type: 'text_to_model', prompt: 'a cube', ...extra });

test('uploads take JPEG/PNG only and answer an image_token', async () => {
  const ok = await upload(png);
  assert.equal(ok.status, 200);
  assert.equal(typeof ok.body.data?.['image_token'], 'string');
  const refused = await upload(webp);
  assert.deepEqual([refused.status, refused.body.code], [400, 2004]);
});

test('task bodies that break a documented rule are refused with Tripo’s code', async () => {
  const token = String((await upload(png)).body.data?.['image_token']);
  const file = { type: 'png', file_token: token };
  const cases: [unknown, number][] = [
    [{ type: 'sketch_to_model' }, 2002],
    [text({ model_version: 'v9' }), 2017],
    [text({ prompt: 'x'.repeat(1025) }), 1004],
    [text({ prompt: 'a cat 🐱' }), 1004],
    [text({ negative_prompt: 'x'.repeat(256) }), 1004],
    [text({ geometry_quality: 'detailed' }), 1004], // v2.5 when model_version is left out
    [text({ generate_parts: true }), 1004], // texture and pbr default to true
    [text({ smart_low_poly: true, face_limit: 999 }), 1004],
    [text({ quad: true, face_limit: 10_001 }), 1004],
    [text({ model_version: 'P1-20260311', face_limit: 47 }), 1004],
    [text({ orientation: 'align_image' }), 1004],
    [{ type: 'image_to_model', file: { type: 'png', file_token: 'nope' } }, 2003],
    [{ type: 'image_to_model', file: { type: 'jpg', file_token: token } }, 2003],
    [{ type: 'multiview_to_model', files: [file, file, file] }, 1004],
    [{ type: 'multiview_to_model', files: [{}, file, file, file] }, 1004],
    [{ type: 'multiview_to_model', files: [file, {}, {}, {}] }, 1004],
  ];
  for (const [body, code] of cases) {
    const answer = await call('POST', '/task', { json: body });
    assert.deepEqual([answer.status, answer.body.code], [400, code], JSON.stringify(body));
  }
  assert.equal(fake.tasks.size, 0);
  const other = await call('POST', '/task', { key: 'tsk_b', json: { type: 'image_to_model', file } });
  assert.equal(other.body.code, 2003, 'a token belongs to the key that uploaded it');
});

test('a task goes queued → running → success, visible only to its key, with links that expire', async () => {
  const created = await call('POST', '/task', { json: text({ model_version: 'v3.1-20260211' }) });
  const id = String(created.body.data?.['task_id']);
  const states: string[] = [];
  let data: Record<string, unknown> = {};
  for (let i = 0; i < 100 && data['status'] !== 'success'; i++) {
    data = (await call('GET', `/task/${id}`)).body.data ?? {};
    states.push(String(data['status']));
    await sleep(20);
  }
  assert.deepEqual([...new Set(states)], ['queued', 'running', 'success']);
  const denied = await call('GET', `/task/${id}`, { key: 'tsk_b' });
  assert.deepEqual([denied.status, denied.body.code], [404, 2001]);
  const wrongKey = await call('GET', `/task/${id}`, { key: 'tsk_x' });
  assert.deepEqual([wrongKey.status, wrongKey.body.code], [401, 1002]);
  const output = data['output'] as Record<string, string>;
  assert.deepEqual(Object.keys(output).sort(), ['pbr_model', 'rendered_image']);
  assert.equal((await fetch(output['pbr_model'] ?? '')).status, 200);
  await sleep(350);
  assert.equal((await fetch(output['pbr_model'] ?? '')).status, 403, 'expired');
});

test('P1 tasks have a limit of their own inside the shared one; beyond it 429/2000', async () => {
  const own = await TripoFake.start({ apiKeys: ['tsk_p'], queuedMs: 5_000, maxConcurrentP1Tasks: 2 });
  try {
    const post = (json: unknown) =>
      fetch(`${own.baseUrl}/task`, {
        method: 'POST',
        headers: { authorization: 'Bearer tsk_p', 'content-type': 'application/json' },
        body: JSON.stringify(json),
      });
    const p1 = text({ model_version: 'P1-20260311' });
    assert.equal((await post(p1)).status, 200);
    assert.equal((await post(p1)).status, 200);
    const third = await post(p1);
    assert.equal(third.status, 429);
    assert.equal(third.headers.get('retry-after'), '1');
    assert.equal(((await third.json()) as { code: number }).code, 2000);
    // The other versions still have room in the shared limit of 10.
    assert.equal((await post(text())).status, 200);
  } finally {
    await own.close();
  }
});

test('the account runs at most its concurrency limit; beyond it 429/2000 with Retry-After', async () => {
  await sleep(450); // earlier tasks are done
  const peak = fake.peakInFlight;
  assert.equal((await call('POST', '/task', { json: text() })).status, 200);
  assert.equal((await call('POST', '/task', { json: text() })).status, 200);
  const third = await fetch(`${fake.baseUrl}/task`, {
    method: 'POST',
    headers: { authorization: 'Bearer tsk_a', 'content-type': 'application/json' },
    body: JSON.stringify(text()),
  });
  assert.equal(third.status, 429);
  assert.equal(third.headers.get('retry-after'), '1');
  assert.equal(((await third.json()) as { code: number }).code, 2000);
  assert.equal(fake.peakInFlight, Math.max(peak, 2));
  fake.credits = 0;
  const broke = await call('POST', '/task', { key: 'tsk_b', json: text() });
  fake.credits = null;
  assert.deepEqual([broke.status, broke.body.code], [403, 2010]);
});
