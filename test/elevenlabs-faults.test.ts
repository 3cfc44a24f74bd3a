/**
 * The ElevenLabs adapter's classification of what goes wrong (PROVIDERS.md §6 "Errors", "Normalised
 * mapping"; CONTRACT §11): refusals, 429 and 5xx as lost runs to retry, no credit, a wrong key, other 4xx,
 * a restart in the middle of a call, and a channel's own upstream model.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ElevenLabsAdapter } from '../src/generators/adapters/elevenlabs/index.ts';
import { ChannelOutOfCredit, UpstreamRunLost } from '../src/generators/adapters/types.ts';
import { GeneratorTransientError } from '../src/generators/generator.ts';
import { pollingTestDeps, testChannel } from './fakes/adapter-deps.ts';
import { catalogRequest } from './fakes/elevenlabs-kit.ts';
import { type ElevenLabsRig, elevenLabsRig, KEY } from './fakes/elevenlabs-rig.ts';
import { pollToEnd, runStart, runToEnd } from './fakes/suno-kit.ts';

let rig: ElevenLabsRig;
let fake: ElevenLabsRig['fake'];
let adapter: ElevenLabsRig['adapter'];
let records: ElevenLabsRig['records'];
const build: ElevenLabsRig['build'] = (...args) => rig.build(...args);

before(async () => {
  rig = await elevenLabsRig();
  ({ fake, adapter, records } = rig);
});
after(() => rig.close());

describe('faults (CONTRACT §11, PROVIDERS.md §6 "Errors")', () => {
  const dialogue = () =>
    catalogRequest('voice', { mode: 'text_to_dialogue', text: 'Hello.', voice: 'rec-a' }, records);

  test('copyright_violation is content_refused', async () => {
    const request = catalogRequest(
      'voice',
      { mode: 'text_to_dialogue', text: 'Sing it [elevenlabs:copyright]', voice: 'rec-a' },
      records,
    );
    const { status } = await runToEnd(adapter, request);
    assert.equal(status.state, 'failed');
    assert.equal((status as { code: string }).code, 'content_refused');
  });

  test('429 (too_many_concurrent_requests, system_busy) and 5xx: a lost run to retry, Retry-After kept', async () => {
    const replies = [
      {
        status: 429,
        body: { detail: { status: 'too_many_concurrent_requests', message: 'slow down' } },
        headers: { 'retry-after': '3' },
      },
      { status: 429, body: { detail: { status: 'system_busy', message: 'busy' } } },
      { status: 503, body: { detail: { status: 'unavailable', message: 'down' } } },
    ];
    for (const [index, reply] of replies.entries()) {
      fake.failures.add(reply);
      const request = dialogue();
      const handle = await adapter.create(request, runStart(), AbortSignal.timeout(5_000));
      await assert.rejects(pollToEnd(adapter, handle, request), (e: unknown) => {
        assert.ok(e instanceof UpstreamRunLost && e instanceof GeneratorTransientError);
        if (index === 0) assert.equal(e.retryAfterMs, 3_000);
        return true;
      });
      // The record is gone: the retry is a new run.
      await assert.rejects(adapter.status(handle, request, AbortSignal.timeout(1_000)), UpstreamRunLost);
    }
  });

  test('a 2xx without audio (a gateway’s HTML page, JSON) is a lost run to retry, not a failed task', async () => {
    const replies = [
      {
        status: 200,
        body: '<html><body>upstream gateway</body></html>',
        headers: { 'content-type': 'text/html' },
      },
      { status: 200, body: { status: 'ok' } },
    ];
    for (const reply of replies) {
      fake.failures.add(reply);
      const request = dialogue();
      const handle = await adapter.create(request, runStart(), AbortSignal.timeout(5_000));
      await assert.rejects(pollToEnd(adapter, handle, request), UpstreamRunLost);
    }
  });

  test('quota_exceeded disables the channel; invalid_api_key is transient; other 4xx generation_failed', async () => {
    fake.failures.add({
      status: 401,
      body: { detail: { status: 'quota_exceeded', message: 'quota used up' } },
    });
    let request = dialogue();
    let handle = await adapter.create(request, runStart(), AbortSignal.timeout(5_000));
    await assert.rejects(pollToEnd(adapter, handle, request), ChannelOutOfCredit);

    const wrongKey = build('wrong-key');
    handle = await wrongKey.create(request, runStart(), AbortSignal.timeout(5_000));
    await assert.rejects(pollToEnd(wrongKey, handle, request), GeneratorTransientError);

    fake.failures.add({
      status: 400,
      body: { detail: { status: 'max_character_limit_exceeded', message: 'too long' } },
    });
    request = dialogue();
    handle = await adapter.create(request, runStart(), AbortSignal.timeout(5_000));
    const status = await pollToEnd(adapter, handle, request);
    assert.deepEqual(status, {
      state: 'failed',
      code: 'generation_failed',
      reason: 'text-to-dialogue: too long',
    });

    fake.failures.add({
      status: 422,
      body: { detail: [{ loc: ['body', 'inputs'], msg: 'bad', type: 'value_error' }] },
    });
    request = dialogue();
    handle = await adapter.create(request, runStart(), AbortSignal.timeout(5_000));
    const invalid = await pollToEnd(adapter, handle, request);
    assert.equal(invalid.state, 'failed');
    assert.match((invalid as { reason: string }).reason, /body\.inputs: bad/);
  });

  test('audio larger than the output cap fails the run at once, as a download over it would', async () => {
    const small = new ElevenLabsAdapter({
      ...pollingTestDeps(testChannel('elevenlabs', fake.url, KEY, ['voice']), { inputs: rig.inputs }),
      maxOutputBytes: 60,
    });
    const calls = fake.callsTo('/v1/text-to-dialogue').length;
    const { status } = await runToEnd(small, dialogue());
    assert.equal(status.state, 'failed');
    assert.equal((status as { code: string }).code, 'generation_failed');
    assert.match((status as { reason: string }).reason, /larger than the service stores \(60 bytes\)/);
    assert.equal(fake.callsTo('/v1/text-to-dialogue').length - calls, 1, 'one billed call, not retried');
  });

  test('a restart in the middle of a call: find answers null, a saved handle is a lost run', async () => {
    const request = dialogue();
    const run = runStart();
    const handle = await adapter.create(request, run, AbortSignal.timeout(5_000));
    assert.equal(await adapter.find(request, run, AbortSignal.timeout(1_000)), handle);
    const restarted = build();
    assert.equal(await restarted.find(request, run, AbortSignal.timeout(1_000)), null);
    await assert.rejects(restarted.status(handle, request, AbortSignal.timeout(1_000)), UpstreamRunLost);
  });

  test('a channel upstream_models entry overrides the dialogue model', async () => {
    const custom = build(KEY, { upstreamModels: { text_to_dialogue: 'eleven_v3_custom' } });
    await runToEnd(custom, dialogue());
    const last = fake.callsTo('/v1/text-to-dialogue').at(-1);
    assert.equal((last?.json as { model_id?: string } | undefined)?.model_id, 'eleven_v3_custom');
  });
});
