/**
 * Driving the Suno adapter against the fake in tests: accepted `music` requests built through the
 * catalog (defaults filled in, the real plan), and a run taken from create to its end.
 */
import assert from 'node:assert/strict';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { findModel, type InputFile, validateSettings } from '../../src/catalog/index.ts';
import { createSunoAdapter } from '../../src/generators/adapters/suno/index.ts';
import type { Adapter, UpstreamArtifact } from '../../src/generators/adapters/types.ts';
import type {
  GenerationOutputs,
  GenerationRequest,
  GenerationStatus,
  RunStart,
} from '../../src/generators/generator.ts';
import { createTestDeps, type TestDeps, testChannel } from './adapter-deps.ts';
import { SunoFake, type SunoFakeOptions } from './suno.ts';

/** An own upload as a task's settings name it (any host: the path makes it ours). */
export const UPLOAD = 'http://127.0.0.1:8080/files/AbCdEfGhIjKlMnOpQrStUvWxYz012345/my%20demo.mp3';
export const UPLOAD2 = 'http://127.0.0.1:8080/files/ZyXwVuTsRqPoNmLkJiHgFeDcBa543210/second.mp3';

/** A `music` request as the service accepts it; audio fields probed as 90 s mp3 files. */
export function musicRequest(
  settings: Record<string, unknown>,
  records?: Record<string, Record<string, unknown>>,
): GenerationRequest {
  const model = findModel('music');
  assert.ok(model);
  const checked = validateSettings(model, settings);
  assert.ok(checked.ok, `settings rejected: ${JSON.stringify(checked.ok ? null : checked.violations)}`);
  const files: InputFile[] = ['audio', 'audio2'].flatMap((field) => {
    const value = checked.settings[field];
    return Array.isArray(value)
      ? [
          {
            field,
            position: 0,
            url: String(value[0]),
            format: 'mp3' as const,
            sizeBytes: 1_000,
            durationSeconds: 90,
          },
        ]
      : [];
  });
  const inputs = { files, ...(records === undefined ? {} : { records }) };
  return {
    taskId: 'task-1',
    model: 'music',
    mode: checked.mode.name,
    settings: checked.settings,
    inputs,
    plan: checked.mode.plan(checked.settings, inputs),
  };
}

export interface Rig {
  fake: SunoFake;
  test: TestDeps;
  adapter: Adapter;
  close(): Promise<void>;
}

let runs = 0;
export function runStart(): RunStart {
  runs += 1;
  return { key: `task-${runs}/1`, startedAt: new Date() };
}

/** A fake, test deps on a `suno` channel pointing at it, and the adapter. */
export async function sunoRig(
  options: SunoFakeOptions & {
    artifacts?: Record<string, UpstreamArtifact>;
    upstreamModels?: Record<string, string>;
  } = {},
): Promise<Rig> {
  const fake = await new SunoFake({ stepMs: 40, ...options }).start();
  const channel = {
    ...testChannel('suno', fake.url, fake.apiKey),
    upstreamModels: options.upstreamModels ?? {},
  };
  const test = await createTestDeps(
    channel,
    options.artifacts === undefined ? {} : { artifacts: options.artifacts },
  );
  return {
    fake,
    test,
    adapter: createSunoAdapter(test.deps),
    async close() {
      await test.close();
      await fake.close();
    },
  };
}

/** Polls until the run leaves `running` (waits are shortened; the answer's own wait is kept in `waits`). */
export async function pollToEnd(
  adapter: Adapter,
  handle: string,
  request: GenerationRequest,
  waits: number[] = [],
): Promise<Exclude<GenerationStatus, { state: 'running' }>> {
  for (let i = 0; i < 200; i++) {
    const status = await adapter.status(handle, request, AbortSignal.timeout(10_000));
    if (status.state !== 'running') return status;
    waits.push(status.pollAfterMs);
    await sleep(Math.min(status.pollAfterMs, 25));
  }
  throw new Error('the run did not end');
}

/** create → status until the end → outputs. */
export async function runToEnd(
  adapter: Adapter,
  request: GenerationRequest,
): Promise<{ handle: string; status: GenerationStatus; outputs: GenerationOutputs | null }> {
  const signal = AbortSignal.timeout(20_000);
  const handle = await adapter.create(request, runStart(), signal);
  const status = await pollToEnd(adapter, handle, request);
  if (status.state !== 'succeeded') return { handle, status, outputs: null };
  const dir = await mkdtemp(join(tmpdir(), 'suno-run-'));
  return { handle, status, outputs: await adapter.outputs(handle, request, dir, signal) };
}
