/**
 * video-elements tasks over HTTP on the real app and worker, with a GENERATORS_FILE whose Kling channel
 * points at the fake Kling (CONTRACT §11, PROVIDERS.md §5): every version (v3.0, v3.0 with own scenes,
 * v4.0-omni, v4.0) succeeds with the video from our storage, captured once; the callback address is ours
 * and Kling's callbacks are taken; a risk-control failure is content_refused with the hold voided; a 429
 * storm is retried to success; an output link that died upstream does not matter.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { type KlingWorld, startKlingWorld } from './fakes/kling-kit.ts';
import { waitForFinal } from './helpers.ts';
import { assertCapturedOnce, assertNoUpstreamUrl } from './providers-kit.ts';

let w: KlingWorld;
let label: string;
let elementId: string;

before(async () => {
  w = await startKlingWorld();
  const res = await w.t.call(w.account.key, 'POST', '/v1/models/video-elements/elements', {
    name: 'Kite',
    tag: 'object',
    image_urls: [w.files.front],
  });
  assert.equal(res.statusCode, 201, res.body);
  label = res.json().label;
  elementId = [...w.fake.tasks.values()].find((t) => t.kind === 'element')?.elementId ?? '';
});
after(async () => {
  await w.close();
});

/** Runs a task to its end; its final view and the body Kling received for it (found by its run key). */
async function run(settings: Record<string, unknown>) {
  const created = await w.t.call(w.account.key, 'POST', '/v1/tasks', { model: 'video-elements', settings });
  assert.equal(created.statusCode, 202, created.body);
  const id = created.json().id as string;
  const task = await waitForFinal(w.t, w.account.key, id, 90_000);
  const upstream = [...w.fake.tasks.values()].filter((t) =>
    String(t.body['external_task_id'] ?? '').startsWith(`${id}/`),
  );
  return { id, task, body: upstream.at(-1)?.body ?? {}, kind: upstream.at(-1)?.kind };
}

async function assertVideo(id: string, task: Record<string, unknown>): Promise<void> {
  assert.equal(task['status'], 'succeeded', JSON.stringify(task));
  assertNoUpstreamUrl(task, [w.fake.url]);
  await assertCapturedOnce(w.t.container, id);
  const file = await w.t.call(w.account.key, 'GET', `/v1/tasks/${id}/artifacts/0`);
  assert.equal(file.statusCode, 200);
  assert.equal(file.headers['content-type'], 'video/mp4');
}

test('every version and own scenes succeed, with their bodies as PROVIDERS.md §5 maps them', async () => {
  const [v3, shots, omni4, v4] = await Promise.all([
    run({ prompt: `${label} over green hills`, length: 6 }),
    run({
      multi_shot: true,
      length: 5,
      shots: [
        { prompt: `${label} rises`, duration: 2 },
        { prompt: 'the sun sets', duration: 3 },
      ],
    }),
    run({ model_version: 'v4.0-omni', prompt: `${label} dives` }),
    run({ model_version: 'v4.0', prompt: 'a plain kite', length: 4 }),
  ]);
  for (const r of [v3, shots, omni4, v4]) await assertVideo(r.id, r.task);
  assert.equal(v3.kind, 'omni-video');
  assert.equal(v3.body['model_name'], 'kling-v3-omni');
  assert.equal(v3.body['prompt'], '<<<element_1>>> over green hills');
  assert.deepEqual(v3.body['element_list'], [{ element_id: elementId }]);
  assert.equal(v3.body['duration'], '6');
  for (const r of [v3, shots, omni4, v4]) {
    const run = (await w.t.admin('GET', `/admin/v1/tasks/${r.id}/run`)).json();
    assert.deepEqual(
      run.upstream_cost,
      { amount: 10, currency: 'units' },
      'final_unit_deduction is the cost',
    );
    assert.equal(r.body['mode'], 'std');
    assert.equal(r.body['sound'], 'off');
    assert.equal(r.body['aspect_ratio'], '16:9');
    const callback = new URL(String(r.body['callback_url']));
    assert.equal(callback.origin, new URL(w.t.container.config.publicBaseUrl).origin);
    assert.match(callback.pathname, /^\/v1\/callbacks\/kling-main\/[A-Za-z0-9]+$/);
  }
  assert.deepEqual(shots.body['multi_prompt'], [
    { index: 1, prompt: '<<<element_1>>> rises', duration: '2' },
    { index: 2, prompt: 'the sun sets', duration: '3' },
  ]);
  assert.equal(shots.body['shot_type'], 'customize');
  assert.equal(omni4.kind, 'omni-video');
  assert.equal(omni4.body['model_name'], 'kling-v4-omni');
  assert.equal(v4.kind, 'text2video');
  assert.equal(v4.body['model_name'], 'kling-v4');
  assert.equal('element_list' in v4.body, false);
});

test("Kling's callbacks reach our address and are stored for the run", async () => {
  const { id, task } = await run({ prompt: 'a callback kite' });
  await assertVideo(id, task);
  const bodies = await w.t.container.db.db
    .selectFrom('callback_bodies')
    .select(['body', 'channel'])
    .where('run_key', 'like', `${id}/%`)
    .execute();
  const states = bodies.map((b) => (JSON.parse(b.body) as { task_status: string }).task_status);
  // The final callback may come after the run already read the end; the first change is always taken.
  assert.ok(states.includes('processing'), `callbacks stored: ${states.join(', ')}`);
  assert.ok(bodies.every((b) => b.channel === 'kling-main'));
});

test('a risk-control failure is content_refused and the hold is voided', async () => {
  const { id, task } = await run({ prompt: '[kling:policy] a kite' });
  assert.equal(task.status, 'failed');
  assert.equal((task['error'] as { code: string }).code, 'content_refused');
  const types = (
    await w.t.container.db.db.selectFrom('ledger_entries').select('type').where('task_id', '=', id).execute()
  )
    .map((e) => e.type)
    .sort();
  assert.deepEqual(types, ['hold', 'void']);
});

test('a 429 storm is retried until the task succeeds', async () => {
  w.fake.fail('429', '429');
  const { id, task } = await run({ prompt: 'a stormy kite' });
  await assertVideo(id, task);
});

test('an output link that died upstream: the task is read again and the video stored', async () => {
  w.fake.staleLinks = 1;
  const { id, task } = await run({ prompt: 'a late kite' });
  await assertVideo(id, task);
  assert.equal(w.fake.staleLinks, 0);
});
