import assert from 'node:assert/strict';
import { test } from 'node:test';
import { GenerationError } from '../../generator.ts';
import { type Channel, ChannelOutOfCredit, UpstreamRunLost } from '../types.ts';
import { statusOf, taskBody } from './wire.ts';

const channel: Channel = {
  name: 'seedance-test',
  provider: 'seedance',
  models: ['video-omni'],
  baseUrl: 'http://127.0.0.1:9',
  secrets: { api_key: 'k' },
  priority: 0,
  weight: 1,
  maxConcurrency: 1,
  timeoutMs: 60_000,
  upstreamModels: {},
};

const kept = (images: string[], audio: string[]) => ({ upstream_id: JSON.stringify({ images, audio }) });

function omni(records: Record<string, Record<string, unknown>>, settings: Record<string, unknown>) {
  return taskBody(
    { model: 'video-omni', mode: 'default', settings: { prompt: 'a dancer', ...settings }, records },
    channel,
    (url) => url,
  );
}

const refusal = (what: RegExp) => (error: unknown) =>
  error instanceof GenerationError && error.code === 'generation_failed' && what.test(error.message);

test('video-omni: a voice without a kept sample fails the task instead of being left out', () => {
  const character = kept(['/p.png', '/b.png'], []);
  for (const voice of [kept([], []), {}, { upstream_id: 'not json' }]) {
    assert.throws(
      () => omni({ c1: character, v1: voice }, { character_ids: ['c1'], audio_ids: ['v1'] }),
      refusal(/voice v1 has no samples/),
      JSON.stringify(voice),
    );
  }
});

test('video-omni: a character without kept pictures fails the task, as a record not kept here does', () => {
  for (const character of [kept([], ['/s.mp3']), {}]) {
    assert.throws(
      () => omni({ c1: character }, { character_ids: ['c1'] }),
      refusal(/character c1 has no pictures/),
      JSON.stringify(character),
    );
  }
});

test('video-omni: a kept voice sends its first sample, a preset its stored sample', () => {
  const body = omni(
    {
      c1: kept(['/p.png', '/b.png'], []),
      v1: kept([], ['/s1.mp3', '/s2.mp3']),
      preset: { preset: true, sample_url: '/samples/preset.mp3' },
    },
    { character_ids: ['c1'], audio_ids: ['v1', 'preset'] },
  );
  assert.deepEqual(
    body.content.filter((item) => item.type === 'audio_url'),
    [
      { type: 'audio_url', audio_url: { url: '/s1.mp3' }, role: 'reference_audio' },
      { type: 'audio_url', audio_url: { url: '/samples/preset.mp3' }, role: 'reference_audio' },
    ],
  );
});

test('a failed task is classified by its error code, as an error answer is', () => {
  const failed = (code: string) => ({
    id: 'cgt-1',
    status: 'failed',
    videoUrl: null,
    error: { code, message: 'm' },
    totalTokens: null,
  });
  assert.throws(() => statusOf(failed('AccountOverdueError')), ChannelOutOfCredit);
  assert.throws(() => statusOf(failed('ServerOverloaded')), UpstreamRunLost);
  assert.deepEqual(statusOf(failed('OutputVideoSensitiveContentDetected')), {
    state: 'failed',
    code: 'content_refused',
    reason: 'Seedance task failed: OutputVideoSensitiveContentDetected m',
  });
  assert.equal((statusOf(failed('InvalidParameter')) as { code: string }).code, 'generation_failed');
});
