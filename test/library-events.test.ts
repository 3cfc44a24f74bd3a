import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ManualClock } from '../src/lib/clock.ts';
import type { InputResolver } from '../src/libraries/index.ts';
import { startTestApp, type TestApp } from './helpers.ts';

// CONTRACT §12: `library.ready` and `library.failed` webhooks carry the record as GET answers it; they are
// queued when a record that learns or waits reaches ready or failed, whether somebody reads it or not.

const file = (name: string): string => `https://files.test/${name}`;
const fakeProbe: InputResolver = async () => ({ format: 'mp3', sizeBytes: 1000, durationSeconds: 30 });
const STYLES = '/v1/models/music-styles/styles';

describe('library events (CONTRACT §12)', () => {
  const clock = new ManualClock();
  let t: TestApp;
  before(async () => {
    t = await startTestApp({ clock, resolveLibraryInput: fakeProbe, worker: false });
  });
  after(() => t.close());

  /** An endpoint of the account subscribed to `events`, as the webhook API stores one. */
  async function endpoint(accountId: string, events: string[]): Promise<string> {
    const id = `we_${Math.random().toString(36).slice(2)}`;
    await t.container.db.db
      .insertInto('webhook_endpoints')
      .values({
        id,
        account_id: accountId,
        url: 'https://hooks.test/in',
        events: JSON.stringify(events),
        description: null,
        secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
        previous_secret: null,
        previous_secret_expires_at: null,
        created_at: clock.now().toISOString(),
        deleted_at: null,
      })
      .execute();
    return id;
  }

  async function deliveries(accountId: string) {
    return t.container.db.db
      .selectFrom('webhook_deliveries')
      .selectAll()
      .where('account_id', '=', accountId)
      .orderBy('id')
      .execute();
  }

  test('a style that trains: library.ready with the record as GET answers it, without any read', async () => {
    const a = await t.account();
    const hook = await endpoint(a.id, ['library.ready', 'library.failed']);
    const style = (await t.call(a.key, 'POST', STYLES, { name: 'Mine', track_urls: [file('t.mp3')] })).json();
    const bad = (
      await t.call(a.key, 'POST', STYLES, { name: 'Bad [sim:fail]', track_urls: [file('t.mp3')] })
    ).json();
    assert.equal(style.status, 'training');
    assert.deepEqual(await deliveries(a.id), [], 'nothing while training');
    clock.advance(2_000); // SIM_SPEED 1000: 7 minutes of training take 420 ms
    const changed = await t.container.services.libraries.settleDue();
    assert.ok(changed >= 2);
    const sent = await deliveries(a.id);
    assert.deepEqual(sent.map((d) => [d.type, d.record_id, d.webhook_id, d.task_id, d.state]).sort(), [
      ['library.failed', bad.id, hook, null, 'pending'],
      ['library.ready', style.id, hook, null, 'pending'],
    ]);
    const ready = sent.find((d) => d.type === 'library.ready')!;
    const body = JSON.parse(ready.body);
    assert.deepEqual(Object.keys(body), ['type', 'timestamp', 'data']);
    assert.equal(body.type, 'library.ready');
    assert.match(body.timestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    assert.deepEqual(body.data, (await t.call(a.key, 'GET', `${STYLES}/${style.id}`)).json());
    const failed = JSON.parse(sent.find((d) => d.type === 'library.failed')!.body);
    assert.equal(failed.data.status, 'failed');
    assert.equal(typeof failed.data.error, 'string');
    // Read again and settled again: the change happened once, so did its event.
    await t.call(a.key, 'GET', STYLES);
    await t.container.services.libraries.settleDue();
    assert.equal((await deliveries(a.id)).length, 2);
  });

  test('a reader that settles the record first sends the event once; concurrent settlers too', async () => {
    const a = await t.account();
    await endpoint(a.id, ['library.ready']);
    const style = (await t.call(a.key, 'POST', STYLES, { name: 'Mine', track_urls: [file('t.mp3')] })).json();
    clock.advance(2_000);
    await Promise.all([
      t.call(a.key, 'GET', `${STYLES}/${style.id}`),
      t.call(a.key, 'GET', STYLES),
      t.container.services.libraries.settleDue(),
      t.container.services.libraries.settleDue(),
    ]);
    const sent = await deliveries(a.id);
    assert.deepEqual(
      sent.map((d) => [d.type, d.record_id]),
      [['library.ready', style.id]],
    );
  });

  test('records without states, endpoints of other types and other accounts get nothing', async () => {
    const a = await t.account();
    const b = await t.account();
    await endpoint(a.id, ['task.succeeded']);
    await endpoint(b.id, ['library.ready', 'library.failed']);
    const image = await t.call(a.key, 'POST', '/v1/models/image/styles', {
      name: 'Ink',
      image_urls: [file('i.png')],
    });
    assert.equal(image.statusCode, 201, image.body);
    await t.call(a.key, 'POST', STYLES, { name: 'Mine', track_urls: [file('t.mp3')] });
    clock.advance(2_000);
    await t.container.services.libraries.settleDue();
    assert.deepEqual(await deliveries(a.id), []);
    assert.deepEqual(await deliveries(b.id), []);
  });

  test('a record ready at creation sends library.ready with the creation', async () => {
    const a = await t.account();
    await endpoint(a.id, ['library.ready']);
    const voice = await t.call(a.key, 'POST', '/v1/models/voice/voices', {
      name: 'My voice',
      sample_urls: [file('s1.mp3')],
    });
    assert.equal(voice.statusCode, 201, voice.body);
    assert.equal(voice.json().status, 'ready');
    const sent = await deliveries(a.id);
    assert.deepEqual(
      sent.map((d) => [d.type, d.record_id]),
      [['library.ready', voice.json().id]],
    );
    assert.deepEqual(JSON.parse(sent[0]!.body).data, voice.json());
  });
});
