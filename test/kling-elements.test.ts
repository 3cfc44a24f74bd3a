/**
 * The element library of `video-elements` on a Kling channel end to end (CONTRACT §11, PROVIDERS.md §5
 * "Elements"): a creation goes to Kling asynchronously and the POST answers 201 once Kling says the element
 * is ready, the body mapped field by field; the record keeps Kling's element_id, which a task's
 * element_list names; a refusal is 502 element_create_failed with no record left; a busy Kling is 503.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { KLING_KEYS, type KlingWorld, startKlingWorld } from './fakes/kling-kit.ts';
import { expectError, waitForFinal } from './helpers.ts';
import {
  assertNoUpstreamUrl,
  channelCounts,
  deleteRecordAndSweep,
  sweepAgain,
  until,
} from './providers-kit.ts';

let w: KlingWorld;

before(async () => {
  w = await startKlingWorld();
});
after(async () => {
  await w.close();
});

const ELEMENTS = '/v1/models/video-elements/elements';

/** The last element creation body Kling received. */
function lastElementBody(): Record<string, unknown> {
  const posts = w.fake.calls.filter(
    (c) => c.method === 'POST' && c.path === '/v1/general/advanced-custom-elements',
  );
  return posts.at(-1)?.body as Record<string, unknown>;
}

/** The last element creation Kling took, as the fake keeps it. */
function lastElementTask() {
  return [...w.fake.tasks.values()].filter((t) => t.kind === 'element').at(-1);
}

test('a character from two pictures: frontal + refer images, tag o_102, then used in a task', async () => {
  const res = await w.t.call(w.account.key, 'POST', ELEMENTS, {
    name: 'Captain with a very long name',
    description: 'a sea captain',
    tag: 'character',
    image_urls: [w.files.front, w.files.side],
  });
  assert.equal(res.statusCode, 201, res.body);
  const element = res.json();
  assert.equal(element.cover_url, w.files.front, 'the cover is our own file');
  assertNoUpstreamUrl(element, [w.fake.url]);
  const { callback_url: _callback, external_task_id, ...body } = lastElementBody();
  assert.equal(external_task_id, `element-${element.id}`);
  assert.deepEqual(body, {
    element_name: 'Captain with a very ',
    element_description: 'a sea captain',
    reference_type: 'image_refer',
    element_image_list: {
      frontal_image: w.absolute(w.files.front),
      refer_images: [{ image_url: w.absolute(w.files.side) }],
    },
    tag_list: [{ tag_id: 'o_102' }],
  });
  const task = lastElementTask();
  assert.equal(task?.status, 'succeed');
  const created = await w.t.call(w.account.key, 'POST', '/v1/tasks', {
    model: 'video-elements',
    settings: { prompt: `${element.label} sails away` },
  });
  assert.equal(created.statusCode, 202, created.body);
  const done = await waitForFinal(w.t, w.account.key, created.json().id, 60_000);
  assert.equal(done.status, 'succeeded', JSON.stringify(done));
  const video = w.fake.calls.filter((c) => c.path === '/v1/videos/omni-video').at(-1)?.body as Record<
    string,
    unknown
  >;
  assert.deepEqual(video['element_list'], [{ element_id: task?.elementId }]);
  assert.equal(video['prompt'], '<<<element_1>>> sails away');
});

test('one picture of an object: the picture is also the one refer image, no tag_list', async () => {
  const res = await w.t.call(w.account.key, 'POST', ELEMENTS, {
    name: 'Red car',
    tag: 'vehicle',
    image_urls: [w.files.side],
  });
  assert.equal(res.statusCode, 201, res.body);
  const body = lastElementBody();
  assert.deepEqual(body['element_image_list'], {
    frontal_image: w.absolute(w.files.side),
    refer_images: [{ image_url: w.absolute(w.files.side) }],
  });
  assert.equal('tag_list' in body, false);
  assert.equal(body['element_description'], '');
});

test('a character from a video: video_refer with the one video', async () => {
  const res = await w.t.call(w.account.key, 'POST', ELEMENTS, {
    name: 'Walker',
    tag: 'character',
    video_url: w.files.mp4,
  });
  assert.equal(res.statusCode, 201, res.body);
  const body = lastElementBody();
  assert.equal(body['reference_type'], 'video_refer');
  assert.deepEqual(body['element_video_list'], { refer_videos: [{ video_url: w.absolute(w.files.mp4) }] });
  assert.equal(res.json().type, 'video');
});

test('Kling refuses the element: 502 element_create_failed and no record is left', async () => {
  const res = await w.t.call(w.account.key, 'POST', ELEMENTS, {
    name: '[kling:refuse] x',
    tag: 'object',
    image_urls: [w.files.front],
  });
  expectError(res, 502, 'element_create_failed');
  const list = await w.t.call(w.account.key, 'GET', ELEMENTS);
  assert.ok(!JSON.stringify(list.json().elements).includes('[kling:refuse]'));
});

test('a busy Kling (429) answers 503 sg_unavailable; nothing is saved', async () => {
  w.fake.fail('429');
  const res = await w.t.call(w.account.key, 'POST', ELEMENTS, {
    name: 'Busy',
    tag: 'object',
    image_urls: [w.files.front],
  });
  expectError(res, 503, 'sg_unavailable');
  const list = await w.t.call(w.account.key, 'GET', ELEMENTS);
  assert.ok(!JSON.stringify(list.json().elements).includes('"Busy"'));
});

test('Kling out of credit (1102) while creating an element: 503, and the channel is disabled', async () => {
  w.fake.fail('no-credit');
  const body = { name: 'Unpaid', tag: 'object', image_urls: [w.files.front] };
  expectError(await w.t.call(w.account.key, 'POST', ELEMENTS, body), 503, 'sg_unavailable');
  // CONTRACT §11: no credit disables the channel, from a library call as from a task run.
  const channel = await channelCounts(w.t, 'kling-main');
  assert.equal(channel.enabled, false);
  assert.match(String(channel.last_error), /code 1102/);
  const calls = w.fake.calls.length;
  expectError(await w.t.call(w.account.key, 'POST', ELEMENTS, body), 503, 'sg_unavailable');
  assert.equal(w.fake.calls.length, calls, 'a disabled channel is not asked');
  const enabled = await w.t.admin('PATCH', '/admin/v1/channels/kling-main', { enabled: true });
  assert.equal(enabled.statusCode, 200, enabled.body);
});

test('deleting an element deletes it at Kling (delete-elements); a 5xx there is asked again later', async () => {
  const res = await w.t.call(w.account.key, 'POST', ELEMENTS, {
    name: 'Short-lived',
    tag: 'object',
    image_urls: [w.files.front],
  });
  assert.equal(res.statusCode, 201, res.body);
  const elementId = lastElementTask()?.elementId ?? '';
  const owned = (): boolean => [...w.fake.elements.values()].some((set) => set.has(elementId));
  assert.ok(owned());
  w.fake.fail('5xx');
  assert.equal(await deleteRecordAndSweep(w.t, w.account.key, `${ELEMENTS}/${res.json().id}`), 0);
  assert.ok(owned(), 'Kling answered 500: the element is still there');
  assert.equal(await sweepAgain(w.t, res.json().id), 1);
  assert.ok(!owned(), 'the element is gone at Kling');
  const deletes = w.fake.calls.filter((c) => c.path === '/v1/general/delete-elements');
  assert.deepEqual(deletes.at(-1)?.body, { element_id: elementId });
});

test('two creations of one name at once: the loser’s element made at Kling is deleted there', async () => {
  const body = { name: 'Twin', tag: 'object', image_urls: [w.files.front] };
  const made = (): string[] =>
    [...w.fake.tasks.values()]
      .filter((t) => t.kind === 'element' && t.body['element_name'] === 'Twin')
      .map((t) => t.elementId ?? '');
  const owned = (id: string): boolean => [...w.fake.elements.values()].some((set) => set.has(id));
  const answers = await Promise.all([1, 2].map(() => w.t.call(w.account.key, 'POST', ELEMENTS, body)));
  assert.deepEqual(answers.map((r) => r.statusCode).sort(), [201, 409], answers.map((r) => r.body).join());
  expectError(answers.find((r) => r.statusCode === 409)!, 409, 'element_name_taken');
  assert.equal(made().length, 2, 'both creations reached Kling before either was saved');
  assert.equal(await w.t.container.services.libraries.deleteUpstreamCopies(), 1);
  assert.deepEqual(made().filter(owned).length, 1, 'only the saved element stays at Kling');
});

/**
 * A world whose element creation named `name` Kling took but never answered: the caller got 503 and Kling
 * made the element all the same. `owned`: the element is still at Kling; `recordId`: the id it was sent as.
 */
async function unansweredCreation(name: string) {
  // A call timeout of a second instead of 30 s: the POST Kling takes but never answers times out soon.
  const lost = await startKlingWorld({ adapterLimits: { callTimeoutMs: 1_000 } });
  try {
    lost.fake.fail('lost-answer');
    const res = await lost.t.call(lost.account.key, 'POST', ELEMENTS, {
      name,
      tag: 'object',
      image_urls: [lost.files.front],
    });
    expectError(res, 503, 'sg_unavailable');
    const task = [...lost.fake.tasks.values()].find((t) => t.kind === 'element');
    assert.ok(task, 'Kling took the creation');
    await until(async () => task.status === 'succeed', 'Kling to make the element');
    const owned = (): boolean =>
      [...lost.fake.elements.values()].some((set) => set.has(task.elementId ?? ''));
    const recordId = String(task.body['external_task_id']).replace(/^element-/, '');
    return { lost, task, owned, recordId };
  } catch (error) {
    await lost.close();
    throw error;
  }
}

test('a creation whose answer never came: the element Kling made is found by our external id and deleted', async () => {
  const { lost, task, owned, recordId } = await unansweredCreation('Unanswered');
  try {
    assert.ok(owned(), 'the element is at Kling, the caller has no record of it');
    assert.equal(await lost.t.container.services.libraries.deleteUpstreamCopies(), 0, 'not due at once');
    assert.equal(await sweepAgain(lost.t, recordId), 1);
    assert.ok(!owned(), 'the element is gone at Kling');
    const deletes = lost.fake.calls.filter((c) => c.path === '/v1/general/delete-elements');
    assert.deepEqual(deletes.at(-1)?.body, { element_id: task.elementId });
    const list = await lost.t.call(lost.account.key, 'GET', ELEMENTS);
    assert.deepEqual(list.json().elements, [], 'no record shows');
  } finally {
    await lost.close();
  }
});

test('an unanswered creation with over ten pages of newer creations at Kling is still found', async () => {
  const { lost, task, owned, recordId } = await unansweredCreation('Buried');
  try {
    // Other creations of the Kling account made since list before it: more than 10 pages of 100.
    const now = Date.now();
    for (let i = 0; i < 1_050; i++) {
      lost.fake.tasks.set(`newer-${i}`, {
        ...task,
        id: `newer-${i}`,
        body: { external_task_id: `element-other-${i}` },
        status: 'failed',
        elementId: null,
        createdAt: now,
        updatedAt: now,
      });
    }
    assert.equal(await sweepAgain(lost.t, recordId), 1);
    assert.ok(!owned(), 'the element is gone at Kling');
  } finally {
    await lost.close();
  }
});

test('an unanswered creation Kling never took leaves nothing to delete; one still running is asked again', async () => {
  const generator = await w.t.container.services.libraries.deps.generatorAt?.('kling-main');
  assert.ok(generator?.deleteUnanswered);
  const request = { model: 'video-elements', library: 'elements', sentAt: new Date().toISOString() };
  const deletes = (): number => w.fake.calls.filter((c) => c.path === '/v1/general/delete-elements').length;
  const before = deletes();
  await generator.deleteUnanswered({ ...request, recordId: 'never-sent' }, AbortSignal.timeout(5_000));
  assert.equal(deletes(), before, 'nothing to delete');
  const now = Date.now();
  w.fake.tasks.set('element-running', {
    id: 'element-running',
    kind: 'element',
    iss: KLING_KEYS.KLING_ACCESS_KEY,
    body: { external_task_id: 'element-still-running' },
    status: 'processing',
    message: '',
    outcome: 'succeed',
    videoUrl: null,
    videoUntil: 0,
    elementId: null,
    createdAt: now,
    updatedAt: now,
  });
  try {
    await assert.rejects(
      generator.deleteUnanswered({ ...request, recordId: 'still-running' }, AbortSignal.timeout(5_000)),
      /still making/,
    );
  } finally {
    w.fake.tasks.delete('element-running');
  }
});
