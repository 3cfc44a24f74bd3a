/**
 * End-to-end runs on real provider channels: the real app (or real processes) with a GENERATORS_FILE whose
 * channels point at the provider fakes on loopback, and the checks every such test shares.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Container } from '../src/container.ts';
import { renderMp3 } from '../src/generators/simulator/media/mp3.ts';
import { startTestApp, type TestApp, type TestAppOptions } from './helpers.ts';
import { freePort } from './processes.ts';

/** The keys the fakes are started with, by the variable the channel files name. */
export const FAKE_KEYS = { TRIPO_API_KEY: 'tsk_e2e', SUNO_API_KEY: 'suno-e2e-key' } as const;

/** The folders of the channel files written by this test process, removed when it exits. */
const channelDirs: string[] = [];
process.once('exit', () => {
  for (const dir of channelDirs) fs.rmSync(dir, { recursive: true, force: true });
});

/** Writes a channel file (CONTRACT §11) into a fresh folder and gives its path. */
export function writeChannelFile(channels: Array<Record<string, unknown>>): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gta-channels-'));
  channelDirs.push(dir);
  const file = path.join(dir, 'channels.json');
  fs.writeFileSync(file, JSON.stringify({ channels }));
  return file;
}

/** The environment a service needs to run the channel file against the fakes. */
export function channelEnv(file: string, publicBaseUrl: string): Record<string, string> {
  return {
    GENERATORS_FILE: file,
    ...FAKE_KEYS,
    // The fakes serve their output links on loopback, which the address rules refuse in production.
    FETCH_ALLOW_ADDRESSES: '127.0.0.1',
    PUBLIC_BASE_URL: publicBaseUrl,
  };
}

/**
 * The real app on the channel file, listening on a loopback port so the fakes can post their callbacks
 * to PUBLIC_BASE_URL.
 */
export async function startChannelApp(
  channels: Array<Record<string, unknown>>,
  options: TestAppOptions = {},
): Promise<TestApp> {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const t = await startTestApp({
    ...options,
    env: { ...channelEnv(writeChannelFile(channels), base), ...options.env },
  });
  await t.app.listen({ port, host: '127.0.0.1' });
  return t;
}

/** The task's price was held once and captured once, nothing voided (its transfer posted). */
export async function assertCapturedOnce(container: Container, taskId: string): Promise<void> {
  const entries = await container.db.db
    .selectFrom('ledger_entries')
    .select('type')
    .where('task_id', '=', taskId)
    .execute();
  const types = entries.map((e) => e.type).sort();
  assert.deepEqual(types, ['capture', 'hold'], `ledger entries of task ${taskId}`);
  const transfer = await container.db.db
    .selectFrom('transfers')
    .select('status')
    .where('id', '=', taskId)
    .executeTakeFirstOrThrow();
  assert.equal(transfer.status, 'posted');
}

/** Nothing an answer carries names a fake: every file is served from our storage. */
export function assertNoUpstreamUrl(answer: unknown, origins: readonly string[]): void {
  const text = JSON.stringify(answer);
  for (const origin of origins) assert.ok(!text.includes(origin), `an answer names ${origin}: ${text}`);
}

/**
 * Deletes a library record through the API (204), then runs one pass of the sweeper's provider deletions
 * (as `Sweeper` does every few seconds) and answers how many records it was done with.
 */
export async function deleteRecordAndSweep(t: TestApp, key: string, path: string): Promise<number> {
  const deleted = await t.call(key, 'DELETE', path);
  assert.equal(deleted.statusCode, 204, deleted.body);
  return t.container.services.libraries.deleteUpstreamCopies();
}

/** Makes a deleted record's provider deletion due now (its retry time has passed), then runs one pass. */
export async function sweepAgain(t: TestApp, recordId: string): Promise<number> {
  await t.container.db.db
    .updateTable('library_records')
    .set({ upstream_delete_at: new Date().toISOString() })
    .where('id', '=', recordId)
    .execute();
  return t.container.services.libraries.deleteUpstreamCopies();
}

/** Polls `check` until it holds (or fails the test after `timeoutMs`). */
export async function until(check: () => Promise<boolean>, what: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Uploads a 30 s MP3 made by the simulator's encoder for `key`; answers the upload's direct link. */
export async function uploadMp3(t: TestApp, key: string, seed: string): Promise<string> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gta-mp3-'));
  try {
    const file = path.join(dir, 'demo.mp3');
    await renderMp3(
      { kind: 'audio', format: 'mp3', filename: 'x.mp3', caption: '', seed, durationSeconds: 30 },
      file,
    );
    const uploaded = await t.call(key, 'POST', '/v1/files?filename=demo.mp3', fs.readFileSync(file), {
      'content-type': 'audio/mpeg',
    });
    assert.equal(uploaded.statusCode, 201, uploaded.body);
    return uploaded.json().url as string;
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * The next `times` puts of result files into our storage fail, as a storage outage would (our side, not
 * the provider's); answers the function that puts the storage back.
 */
export function failResultPuts(container: Container, times = 1): () => void {
  const storage = container.storage;
  const put = storage.put;
  let left = times;
  storage.put = (key, body, options) => {
    if (key.startsWith('results/') && left > 0) {
      left -= 1;
      return Promise.reject(new Error('storage unreachable (test)'));
    }
    return put.call(storage, key, body, options);
  };
  return () => {
    storage.put = put;
  };
}

/** A channel's counters as the operator sees them (`GET /admin/v1/channels`). */
export async function channelCounts(
  t: TestApp,
  name: string,
): Promise<{ enabled: boolean; succeeded: number; failed: number; last_error: string | null }> {
  const channels = (await t.admin('GET', '/admin/v1/channels')).json().channels as Array<{
    name: string;
    enabled: boolean;
    succeeded: number;
    failed: number;
    last_error: string | null;
  }>;
  const channel = channels.find((c) => c.name === name);
  assert.ok(channel, `channel ${name}`);
  return channel;
}
