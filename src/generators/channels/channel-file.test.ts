import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { MODELS } from '../../catalog/index.ts';
import { ConfigError, loadConfig } from '../../config.ts';
import { PROVIDERS } from '../adapters/types.ts';
import { type ChannelFileOptions, parseChannels } from './channel-file.ts';
import { pickByPriorityAndWeight } from './channel-states.ts';

const OPTIONS: ChannelFileOptions = {
  models: MODELS.map((m) => m.key),
  providers: [...PROVIDERS],
  env: { TRIPO_KEY: 'tsk_1', KLING_AK: 'a', KLING_SK: 's' },
};
const TRIPO = { name: 'tripo-main', provider: 'tripo', models: ['model-3d'], api_key_env: 'TRIPO_KEY' };

function refusal(entries: unknown[]): string {
  try {
    parseChannels({ channels: entries }, OPTIONS);
  } catch (error) {
    return (error as Error).message;
  }
  assert.fail('the channel file was accepted');
}

describe('channel file (CONTRACT §11)', () => {
  it('reads a channel with its defaults and its secret from the environment', () => {
    const [channel] = parseChannels({ channels: [TRIPO] }, OPTIONS);
    assert.deepEqual(channel, {
      name: 'tripo-main',
      provider: 'tripo',
      models: ['model-3d'],
      baseUrl: 'https://api.tripo3d.ai/v2/openapi',
      secrets: { api_key: 'tsk_1' },
      priority: 0,
      weight: 1,
      maxConcurrency: 10,
      timeoutMs: 30 * 60_000,
      upstreamModels: {},
    });
    const [kling] = parseChannels(
      {
        channels: [
          {
            name: 'k',
            provider: 'kling',
            models: ['video-elements'],
            access_key_env: 'KLING_AK',
            secret_key_env: 'KLING_SK',
            base_url: 'http://127.0.0.1:9000/',
            timeout: '90s',
          },
        ],
      },
      OPTIONS,
    );
    assert.deepEqual(kling?.secrets, { access_key: 'a', secret_key: 's' });
    assert.equal(kling?.baseUrl, 'http://127.0.0.1:9000');
    assert.equal(kling?.timeoutMs, 90_000);
  });

  const cases: [string, unknown[], RegExp][] = [
    [
      'an unknown provider',
      [{ ...TRIPO, provider: 'openai' }],
      /^channel "tripo-main": unknown provider "openai"/,
    ],
    [
      'a model the provider cannot serve',
      [{ ...TRIPO, models: ['music'] }],
      /^channel "tripo-main": provider tripo cannot serve model "music"/,
    ],
    [
      'an unknown model',
      [{ ...TRIPO, models: ['model-4d'] }],
      /^channel "tripo-main": unknown model "model-4d"/,
    ],
    ['a duplicate name', [TRIPO, TRIPO], /^channel "tripo-main": the name is used twice/],
    [
      'a missing secret variable',
      [{ ...TRIPO, api_key_env: 'NOT_SET' }],
      /^channel "tripo-main": environment variable NOT_SET/,
    ],
    [
      'no secret variable at all',
      [{ ...TRIPO, api_key_env: undefined }],
      /^channel "tripo-main": provider tripo needs api_key_env/,
    ],
    [
      'a secret in the file',
      [{ ...TRIPO, api_key: 'tsk_x' }],
      /^channel "tripo-main": api_key: secrets go in environment variables/,
    ],
    ['a bad max_concurrency', [{ ...TRIPO, max_concurrency: 0 }], /^channel "tripo-main": max_concurrency/],
    ['a bad timeout', [{ ...TRIPO, timeout: '30 minutes' }], /^channel "tripo-main": timeout/],
    [
      'a cog channel without base_url',
      [{ name: 'gpu', provider: 'cog', models: ['image'] }],
      /^channel "gpu": provider cog needs base_url/,
    ],
    ['a bad name', [{ ...TRIPO, name: 'Tripo Main' }], /^channel "Tripo Main": name must be/],
  ];
  for (const [what, entries, message] of cases) {
    it(`refuses ${what}, naming the channel`, () => assert.match(refusal(entries), message));
  }

  it('stops the start through GENERATORS_FILE with a message naming the channel', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gta-channels-'));
    try {
      const file = path.join(dir, 'channels.json');
      fs.writeFileSync(
        file,
        JSON.stringify({ channels: [{ name: 'sim-a', provider: 'simulator', models: ['video'] }] }),
      );
      assert.equal(loadConfig({ GENERATORS_FILE: file }).channels[0]?.name, 'sim-a');
      fs.writeFileSync(
        file,
        JSON.stringify({ channels: [{ name: 'sim-b', provider: 'nope', models: ['video'] }] }),
      );
      assert.throws(
        () => loadConfig({ GENERATORS_FILE: file }),
        (e: Error) => e instanceof ConfigError && /GENERATORS_FILE: channel "sim-b"/.test(e.message),
      );
      fs.writeFileSync(file, '{ "channels": [');
      assert.throws(
        () => loadConfig({ GENERATORS_FILE: file }),
        (e: Error) => /^GENERATORS_FILE \/.* is not JSON/.test(e.message),
      );
      assert.throws(() => loadConfig({ GENERATORS_FILE: path.join(dir, 'missing.json') }), /cannot be read/);
      assert.deepEqual(loadConfig({}).channels, []);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('channel choice', () => {
  const channel = (name: string, priority: number, weight: number) => ({
    ...parseChannels({ channels: [TRIPO] }, OPTIONS)[0]!,
    name,
    priority,
    weight,
  });

  it('takes the lowest priority, then splits by weight', () => {
    const a = channel('a', 1, 1);
    const b = channel('b', 0, 1);
    const c = channel('c', 0, 3);
    assert.equal(pickByPriorityAndWeight([a, b, c], () => 0)?.name, 'b');
    assert.equal(pickByPriorityAndWeight([a, b, c], () => 0.24)?.name, 'b');
    assert.equal(pickByPriorityAndWeight([a, b, c], () => 0.26)?.name, 'c');
    assert.equal(pickByPriorityAndWeight([a, b, c], () => 0.99)?.name, 'c');
    assert.equal(pickByPriorityAndWeight([a], () => 0.5)?.name, 'a');
    assert.equal(
      pickByPriorityAndWeight([], () => 0.5),
      null,
    );
  });

  it('spreads runs in proportion to weight', () => {
    let seed = 7;
    const random = (): number => {
      seed = (seed * 16807) % 2147483647;
      return seed / 2147483647;
    };
    const counts = { light: 0, heavy: 0 };
    const channels = [channel('light', 0, 1), channel('heavy', 0, 4)];
    for (let i = 0; i < 5000; i++)
      counts[pickByPriorityAndWeight(channels, random)?.name as 'light' | 'heavy'] += 1;
    assert.ok(counts.heavy > 3 * counts.light && counts.heavy < 5 * counts.light, JSON.stringify(counts));
  });
});
