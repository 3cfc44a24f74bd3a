/** The real app on a channel file whose Kling channel points at the fake Kling, for the Kling end-to-end tests. */

import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdir, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { makeMp4, makePng } from '../../src/media/fixtures.ts';
import type { TestAccount, TestApp, TestAppOptions } from '../helpers.ts';
import { startChannelApp } from '../providers-kit.ts';
import { type KlingFake, startKlingFake } from './kling.ts';

export const KLING_KEYS = { KLING_ACCESS_KEY: 'kling-e2e-ak', KLING_SECRET_KEY: 'kling-e2e-sk' } as const;

export interface KlingWorld {
  fake: KlingFake;
  t: TestApp;
  account: TestAccount;
  /** Our uploads: two pictures and a 2 s video. */
  files: { front: string; side: string; mp4: string };
  /** The absolute link Kling is given for one of our uploads. */
  absolute(link: string): string;
  close(): Promise<void>;
}

/**
 * The fake, the app with channel `kling-main` (v4.0 and v4.0-omni mapped), an account and its uploads;
 * `app` adds to the app's options (a shorter call timeout).
 */
export async function startKlingWorld(app: TestAppOptions = {}): Promise<KlingWorld> {
  const fake = await startKlingFake({
    keys: { [KLING_KEYS.KLING_ACCESS_KEY]: KLING_KEYS.KLING_SECRET_KEY },
    stepMs: 150,
    urlTtlMs: 2_000,
    extraModels: ['kling-v4', 'kling-v4-omni'],
  });
  const t = await startChannelApp(
    [
      {
        name: 'kling-main',
        provider: 'kling',
        models: ['video-elements'],
        base_url: fake.url,
        access_key_env: 'KLING_ACCESS_KEY',
        secret_key_env: 'KLING_SECRET_KEY',
        upstream_models: { 'v4.0': 'kling-v4', 'v4.0-omni': 'kling-v4-omni' },
      },
    ],
    { ...app, env: { ...KLING_KEYS } },
  );
  const account = await t.account({ balanceMinor: 100_000_000 });
  const dir = join(tmpdir(), `kling-e2e-${randomUUID()}`);
  await mkdir(dir);
  const upload = async (path: string, filename: string, contentType: string): Promise<string> => {
    const res = await t.call(account.key, 'POST', `/v1/files?filename=${filename}`, await readFile(path), {
      'content-type': contentType,
    });
    assert.equal(res.statusCode, 201, res.body);
    return res.json().url as string;
  };
  const files = {
    front: await upload(await makePng(dir, 640, 640), 'front.png', 'image/png'),
    side: await upload(await makePng(dir, 600, 600), 'side.png', 'image/png'),
    mp4: await upload(await makeMp4(dir, 4, 320, 240), 'walk.mp4', 'video/mp4'),
  };
  const base = t.container.config.publicBaseUrl;
  return {
    fake,
    t,
    account,
    files,
    absolute: (link) => new URL(new URL(link, base).pathname, base).toString(),
    async close() {
      await fake.close();
      await t.close();
    },
  };
}
