/**
 * A Suno music task as `GET /api/v1/generate/record-info` shows it (PROVIDERS.md §2), read defensively:
 * a missing or malformed part is a transient failure (the provider's glitch), never a crash.
 */
import { GeneratorTransientError } from '../../generator.ts';
import { asObject, stringField } from './wire.ts';

/** Upstream states of a music task. */
export const SUNO_STATES = [
  'PENDING',
  'TEXT_SUCCESS',
  'FIRST_SUCCESS',
  'SUCCESS',
  'CREATE_TASK_FAILED',
  'GENERATE_AUDIO_FAILED',
  'CALLBACK_EXCEPTION',
  'SENSITIVE_WORD_ERROR',
] as const;
export type SunoState = (typeof SUNO_STATES)[number];

/** One generated track of a task. */
export interface SunoTrack {
  id: string;
  /** Download URL; short-lived (absent before the track is ready). */
  audioUrl?: string;
  title?: string;
  /** Lyrics of the track. */
  prompt?: string;
}

export interface SunoTask {
  status: SunoState;
  errorCode: number | null;
  errorMessage: string;
  tracks: SunoTrack[];
}

function isState(value: unknown): value is SunoState {
  return typeof value === 'string' && (SUNO_STATES as readonly string[]).includes(value);
}

/** The task in a record-info `data`; throws a transient error for a shape we cannot read. */
export function readSunoTask(data: Record<string, unknown> | null): SunoTask {
  const status = data?.['status'];
  if (!isState(status)) {
    throw new GeneratorTransientError(
      `suno record-info: unreadable status ${JSON.stringify(status ?? null)}`,
    );
  }
  const response = asObject(data?.['response']);
  const list = response?.['sunoData'];
  const tracks: SunoTrack[] = [];
  for (const item of Array.isArray(list) ? list : []) {
    const track = asObject(item);
    const id = stringField(track, 'id');
    if (id === undefined) continue;
    const audioUrl = stringField(track, 'audioUrl');
    const title = stringField(track, 'title');
    const prompt = stringField(track, 'prompt');
    tracks.push({
      id,
      ...(audioUrl === undefined ? {} : { audioUrl }),
      ...(title === undefined ? {} : { title }),
      ...(prompt === undefined ? {} : { prompt }),
    });
  }
  const code = Number(data?.['errorCode']);
  return {
    status,
    errorCode: data?.['errorCode'] === null || !Number.isFinite(code) ? null : code,
    errorMessage: stringField(data, 'errorMessage') ?? '',
    tracks,
  };
}

/** Tracks a finished task has: two songs, or one sound (PROVIDERS.md §2 on CALLBACK_EXCEPTION). */
export function expectedTracks(mode: string): number {
  return mode === 'sounds' ? 1 : 2;
}

/** True when every expected track has its audio. */
export function hasAllAudio(task: SunoTask, mode: string): boolean {
  return task.tracks.filter((t) => t.audioUrl !== undefined).length >= expectedTracks(mode);
}
