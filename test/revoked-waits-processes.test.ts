/**
 * A key revoked in one process ends the calls it holds open in another (issue 18), with real processes
 * on one database: the test's app revokes through the operator API, a second API process holds the key's
 * long-poll and event stream. On SQLite the second process learns of it from the `keys` epoch, on
 * PostgreSQL (TEST_DATABASE_URL) from the revoking transaction's NOTIFY. Before, the calls stayed open
 * until their wait ran out or the stream's next heartbeat, holding the account's waiting places.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sharedProcessEnv, startTestApp, type TestApp } from './helpers.ts';
import { exited, freePort, type Server, startServer } from './processes.ts';
import { openStream } from './sse.ts';

test('a key revoked by another process ends its long-poll and stream at once and frees their places', async () => {
  let t: TestApp | null = null;
  let api: Server | null = null;
  try {
    t = await startTestApp({ worker: false });
    api = await startServer({
      ...sharedProcessEnv(t),
      WORKER: 'off',
      PORT: String(await freePort()),
      // Two places, and one heartbeat a minute: a stream that ended within seconds was not ended by one.
      STREAMS_PER_ACCOUNT: '2',
      STREAM_HEARTBEAT: '60s',
    });
    const account = await t.account({ balanceMinor: 10_000_000 });
    const second = await t.admin('POST', `/admin/v1/accounts/${account.id}/keys`, {});
    assert.equal(second.statusCode, 201, second.body);
    const auth = { authorization: `Bearer ${account.key}` };
    const otherAuth = { authorization: `Bearer ${second.json().key as string}` };
    const created = await t.call(account.key, 'POST', '/v1/tasks', {
      model: 'model-3d',
      settings: { task_type: 'text_to_model', prompt: 'a chair revoked elsewhere' },
    });
    assert.equal(created.statusCode, 202, created.body);
    const id = created.json().id as string;

    // Both of the account's places on the other process, taken by the key about to be revoked.
    const stream = await openStream(`${api.base}/v1/tasks/${id}/events`, auth);
    assert.equal(stream.status, 200);
    await stream.until((events) => events.length === 1);
    const base = api.base;
    const poll = () => fetch(`${base}/v1/tasks/${id}?wait=60`, { headers: auth });
    let longPoll = poll();
    let refused = await fetch(`${api.base}/v1/tasks/${id}?wait=1`, { headers: otherAuth });
    for (let i = 0; refused.status !== 429; i++) {
      // Until the long-poll holds its place, the probe may take it for its second; and a long-poll that
      // came while a probe held that place was refused itself (429) and is sent again.
      assert.ok(i < 50, `the other key still finds a place: ${refused.status}`);
      const early = await Promise.race([
        longPoll,
        new Promise<null>((resolve) => setTimeout(resolve, 0, null)),
      ]);
      if (early?.status === 429) longPoll = poll();
      refused = await fetch(`${api.base}/v1/tasks/${id}?wait=1`, { headers: otherAuth });
    }

    const revoked = await t.admin('DELETE', `/admin/v1/keys/${account.keyId}`);
    assert.equal(revoked.statusCode, 204, revoked.body);
    const revokedAt = Date.now();
    const answer = await longPoll;
    assert.equal(answer.status, 401);
    assert.equal(((await answer.json()) as { error: { code: string } }).error.code, 'invalid_api_key');
    const events = await stream.ended;
    assert.deepEqual(
      events.map((e) => e.event),
      ['task'],
      'the stream ends without done',
    );
    const elapsed = Date.now() - revokedAt;
    assert.ok(elapsed < 10_000, `the calls ended ${elapsed} ms after the revocation`);
    process.stdout.write(
      `# ${t.container.db.dialect.name}: the other process ended the calls ${elapsed} ms after the revocation\n`,
    );

    // Their places are back: the account's other key waits on that process again.
    const started = Date.now();
    const waited = await fetch(`${api.base}/v1/tasks/${id}?wait=1`, { headers: otherAuth });
    assert.equal(waited.status, 200, await waited.text());
    assert.ok(Date.now() - started >= 900, 'it waited: it had a place');
  } finally {
    if (api && api.child.exitCode === null) api.child.kill('SIGTERM');
    if (api) await exited(api.child);
    await t?.close();
  }
});
