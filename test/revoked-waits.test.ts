/**
 * A key revoked while its calls wait (issue 18, CONTRACT §9 and §12): its long-polls, its `Prefer: wait`
 * creations and its event streams end at once, whether the operator API or the dashboard revoked it, and
 * give the account's waiting places back to its other keys. Before, they stayed open until their wait
 * (up to 60 s) or the stream's next heartbeat or change, holding their places. SQLite by default;
 * PostgreSQL with TEST_DATABASE_URL.
 */
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { startTestApp, type TestApp } from './helpers.ts';
import { outboxLink } from './mail-kit.ts';
import { openStream, type SseStream } from './sse.ts';
import { Browser } from './web-kit.ts';

const chair = { model: 'model-3d', settings: { task_type: 'text_to_model', prompt: 'a small wooden chair' } };
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** Far below the 60 s waits and heartbeats the calls ask for: they ended for the revocation. */
const PROMPTLY_MS = 10_000;

describe('calls of a revoked key', () => {
  let t: TestApp;
  let base: string;
  before(async () => {
    // No worker: the tasks stay queued, so only the revocation can end the calls. One heartbeat a minute:
    // a stream that ended within seconds was not ended by one.
    t = await startTestApp({ worker: false, env: { STREAMS_PER_ACCOUNT: '3', STREAM_HEARTBEAT: '60s' } });
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
  });
  after(() => t.close());

  const post = (key: string, body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${base}/v1/tasks`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    });
  const longPoll = (key: string, id: string, seconds = 60) =>
    fetch(`${base}/v1/tasks/${id}?wait=${seconds}`, { headers: { authorization: `Bearer ${key}` } });
  const stream = (key: string, id: string): Promise<SseStream> =>
    openStream(`${base}/v1/tasks/${id}/events`, { authorization: `Bearer ${key}` });

  /** Holds all three of the account's places with `key`: a long-poll, a stream, a creation that waits. */
  async function holdPlaces(key: string) {
    const created = await post(key, chair);
    assert.equal(created.status, 202);
    const id = ((await created.json()) as { id: string }).id;
    const poll = longPoll(key, id);
    const events = await stream(key, id);
    assert.equal(events.status, 200);
    await events.until((e) => e.length >= 1);
    const creation = post(key, chair, { prefer: 'wait=60' });
    // All three wait once the process watches three subscriptions (no other account waits meanwhile).
    const watch = t.container.services.watch;
    for (let i = 0; watch.size < 3; i++) {
      assert.ok(i < 500, 'the three calls wait');
      await sleep(20);
    }
    assert.equal((await longPoll(key, id, 1)).status, 429, 'the three calls hold the three places');
    return { id, poll, events, creation };
  }

  async function endPromptly(
    held: Awaited<ReturnType<typeof holdPlaces>>,
    otherKey: string,
    otherKeyId: string,
  ) {
    const revokedAt = Date.now();
    const poll = await held.poll;
    assert.equal(poll.status, 401, 'the long-poll answers 401, not the task');
    assert.equal(((await poll.json()) as { error: { code: string } }).error.code, 'invalid_api_key');
    const events = await held.events.ended;
    assert.deepEqual(
      events.map((e) => e.event),
      ['task'],
      'the stream ends without done',
    );
    const creation = await held.creation;
    assert.equal(creation.status, 202, 'the creation answers with its task as it is');
    assert.equal(((await creation.json()) as { status: string }).status, 'queued');
    const elapsed = Date.now() - revokedAt;
    assert.ok(elapsed < PROMPTLY_MS, `the calls ended ${elapsed} ms after the revocation`);
    // Their places are back: the account's other key holds three calls again.
    const again = await holdPlaces(otherKey);
    assert.equal((await t.admin('DELETE', `/admin/v1/keys/${otherKeyId}`)).statusCode, 204);
    assert.equal((await again.poll).status, 401);
    assert.equal((await again.creation).status, 202);
    await again.events.ended;
    assert.equal(t.container.services.watch.size, 0, 'nothing left waiting');
  }

  test('revoked through the operator API: every call ends at once and gives its place back', async () => {
    const account = await t.account({ balanceMinor: 10_000_000 });
    const second = await t.admin('POST', `/admin/v1/accounts/${account.id}/keys`, {});
    assert.equal(second.statusCode, 201, second.body);
    const held = await holdPlaces(account.key);
    const revoked = await t.admin('DELETE', `/admin/v1/keys/${account.keyId}`);
    assert.equal(revoked.statusCode, 204, revoked.body);
    await endPromptly(held, second.json().key as string, second.json().id as string);
  });

  test('revoked in the dashboard: every call ends at once and gives its place back', async () => {
    const browser = new Browser(t);
    const email = `revoked-waits-${Date.now()}@example.com`;
    await browser.signUp(email, 'correct horse battery');
    await browser.get(`/confirm?token=${outboxLink(t.dir, email, 'confirm')}`);
    await browser.get('/keys');
    const keys: Array<{ key: string; id: string }> = [];
    for (const name of ['first', 'second']) {
      assert.equal((await browser.post('/keys', { action: 'create', name })).statusCode, 303);
      const key = /gta_[A-Za-z0-9]{32}/.exec((await browser.get('/keys')).body)?.[0];
      assert.ok(key);
      const me = await t.call(key, 'GET', '/v1/me');
      keys.push({ key, id: me.json().key.id as string });
    }
    const [first, second] = keys;
    assert.ok(first && second);
    const accountId = (await t.call(first.key, 'GET', '/v1/me')).json().account_id as string;
    const credited = await t.admin('POST', `/admin/v1/accounts/${accountId}/credits`, {
      amount_minor: 10_000_000,
      reference: `revoked-waits-${accountId}`,
    });
    assert.equal(credited.statusCode, 201, credited.body);
    const held = await holdPlaces(first.key);
    await browser.get(`/keys?revoke=${first.id}`);
    assert.equal((await browser.post('/keys', { action: 'revoke', id: first.id })).statusCode, 303);
    await endPromptly(held, second.key, second.id);
  });
});
