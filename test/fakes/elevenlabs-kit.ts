/**
 * What the ElevenLabs and Recraft fakes share: multipart bodies read back into fields and files, a queue
 * of failures the next calls meet (refusals, 429 storms, 5xx), and a short MP3 made by the simulator's
 * encoder.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { findModel, type InputFile, validateSettings } from '../../src/catalog/index.ts';
import type { GenerationRequest } from '../../src/generators/generator.ts';
import { renderMp3 } from '../../src/generators/simulator/media/mp3.ts';
import type { FakeReply, FakeRequest } from './server.ts';

/** One file of a multipart body. */
export interface FakeFile {
  field: string;
  filename: string;
  type: string;
  size: number;
}

/** A multipart body: text fields (repeated ones in order) and files. */
export interface FakeForm {
  fields: Record<string, string[]>;
  files: FakeFile[];
}

/** Reads a multipart request back; null when the request is not multipart. */
export async function readForm(request: FakeRequest): Promise<FakeForm | null> {
  const type = request.headers['content-type'] ?? '';
  if (!type.startsWith('multipart/form-data')) return null;
  const data = await new Response(new Uint8Array(request.raw), {
    headers: { 'content-type': type },
  }).formData();
  const form: FakeForm = { fields: {}, files: [] };
  for (const [field, value] of data.entries()) {
    if (typeof value === 'string') form.fields[field] = [...(form.fields[field] ?? []), value];
    else form.files.push({ field, filename: value.name, type: value.type, size: value.size });
  }
  return form;
}

/** Failures served in order to the next calls whose path matches, before the fake's own answers. */
export class FailureQueue {
  readonly #queue: Array<{ path: RegExp; reply: FakeReply }> = [];

  /** Queues `count` times `reply` for calls whose path matches `path` (default: any). */
  add(reply: FakeReply, count = 1, path: RegExp = /.*/): void {
    for (let i = 0; i < count; i++) this.#queue.push({ path, reply });
  }

  /** The next queued failure for the path, taken from the queue; null when none is queued. */
  take(pathname: string): FakeReply | null {
    const at = this.#queue.findIndex((item) => item.path.test(pathname));
    if (at < 0) return null;
    return this.#queue.splice(at, 1)[0]?.reply ?? null;
  }

  get size(): number {
    return this.#queue.length;
  }
}

/** A real MP3 of `seconds` seconds (the simulator's encoder), so the service sniffs it as audio. */
export async function fakeMp3(seconds: number, seed: string): Promise<Buffer> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gta-fake-mp3-'));
  try {
    const file = path.join(dir, 'a.mp3');
    await renderMp3(
      { kind: 'audio', format: 'mp3', filename: 'a.mp3', caption: '', seed, durationSeconds: seconds },
      file,
    );
    return fs.readFileSync(file);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** A request of `model` as the service accepts it (defaults filled in, the real plan); audio inputs probed as 30 s mp3. */
export function catalogRequest(
  modelKey: string,
  settings: Record<string, unknown>,
  records?: Record<string, Record<string, unknown>>,
): GenerationRequest {
  const model = findModel(modelKey);
  assert.ok(model, modelKey);
  const checked = validateSettings(model, settings);
  assert.ok(checked.ok, `settings rejected: ${JSON.stringify(checked.ok ? null : checked.violations)}`);
  const audio = checked.settings['audio'];
  const files: InputFile[] = Array.isArray(audio)
    ? [
        {
          field: 'audio',
          position: 0,
          url: String(audio[0]),
          format: 'mp3',
          sizeBytes: 1_000,
          durationSeconds: 30,
        },
      ]
    : [];
  const inputs = { files, ...(records === undefined ? {} : { records }) };
  return {
    taskId: 'task-1',
    model: modelKey,
    mode: checked.mode.name,
    settings: checked.settings,
    inputs,
    plan: checked.mode.plan(checked.settings, inputs),
  };
}
