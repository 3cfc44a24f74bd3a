import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { InputRule, ModeSpec } from '../catalog/index.ts';
import type { UploadsTable } from '../db/index.ts';
import { ApiError } from '../errors.ts';
import type { UploadService } from '../files/index.ts';
import { type InputResolverDeps, resolveInputs } from './inputs.ts';

const RULE: InputRule = { formats: ['mp3'], maxBytes: 1_000_000 };
const mode: Pick<ModeSpec, 'inputRules'> = { inputRules: { audio: RULE, audio2: RULE } };

/** Own uploads whose answers come after `delayMs`; every one is a WAV, which the rule refuses. */
function uploads(delayMs: Readonly<Record<string, number>>): InputResolverDeps {
  const byUrl = async (url: string): Promise<UploadsTable | null> => {
    await sleep(delayMs[url] ?? 0);
    return {
      format: 'wav',
      size_bytes: 1000,
      duration_seconds: 2,
      width: null,
      height: null,
    } as UploadsTable;
  };
  return { uploads: { byUrl } as unknown as UploadService };
}

const refusedAt =
  (field: string) =>
  (error: unknown): boolean => {
    assert.ok(error instanceof ApiError);
    assert.deepEqual([error.code, error.params.field], ['file_type', field]);
    return true;
  };

describe('resolveInputs', () => {
  it('reports the first refusal in the fields’ order, not the first to finish failing', async () => {
    const deps = uploads({ 'https://x.test/a.wav': 40, 'https://x.test/b.wav': 0 });
    const settings = { audio: ['https://x.test/a.wav'], audio2: ['https://x.test/b.wav'] };
    await assert.rejects(resolveInputs(mode, settings, deps, 'acc'), refusedAt('settings.audio.0'));
  });

  it('reports the first refusal in a field’s own order', async () => {
    const deps = uploads({ 'https://x.test/a.wav': 40, 'https://x.test/b.wav': 0 });
    const settings = { audio: ['https://x.test/a.wav', 'https://x.test/b.wav'] };
    await assert.rejects(resolveInputs(mode, settings, deps, 'acc'), refusedAt('settings.audio.0'));
  });
});
