/**
 * The singing voice's steps after creation (reference "Singing voices", CONTRACT §7):
 * verify (`pending_recording` → `verifying` → `ready` or `failed`) and retry (`failed` →
 * `pending_recording` with a new phrase). Any other state: 409 voice_not_verifiable / voice_not_retryable.
 */
import type { z } from 'zod';
import type { KeyPrincipal } from '../accounts/index.ts';
import { errors } from '../errors.ts';
import { LIBRARY_WAIT_MS } from '../generators/library.ts';
import { AUDIO_FILES } from './fields.ts';
import { transition, viewOf } from './records.ts';
import { askGenerator, type LibraryService, type RecordView } from './service.ts';
import { singingVoices, type verifyBody } from './singing-voices.ts';
import type { StoredRecord } from './types.ts';

/** Phrases issued to a voice so far (the current one last). */
function phrasesOf(r: StoredRecord): string[] {
  const history = Array.isArray(r.private['phrases']) ? (r.private['phrases'] as string[]) : [];
  const current = typeof r.data['phrase'] === 'string' ? r.data['phrase'] : undefined;
  return current === undefined || history.includes(current) ? history : [...history, current];
}

/** POST /v1/models/music/voices/{id}/verify. */
export async function verifyVoice(
  service: LibraryService,
  principal: KeyPrincipal,
  id: string,
  body: z.output<typeof verifyBody>,
): Promise<RecordView> {
  const { db, clock, generator, resolveInput, downloads } = service.deps;
  const before = await service.record(principal, singingVoices, id);
  if (before.status !== 'pending_recording') throw errors.voiceNotVerifiable();
  await askGenerator('library_create_failed', () => generator.ensureAvailable(body));
  const budget = await downloads?.open(principal.accountId, 'request');
  const recording = await resolveInput(body.recording_url, 'recording_url', AUDIO_FILES, budget).finally(() =>
    budget?.close(),
  );
  const check = await askGenerator('library_create_failed', () =>
    generator.checkRecording(
      {
        recordId: id,
        phrase: String(before.data['phrase'] ?? ''),
        name: body.name,
        recordingUrl: body.recording_url,
        ...(recording.durationSeconds === undefined ? {} : { recordingSeconds: recording.durationSeconds }),
      },
      AbortSignal.timeout(LIBRARY_WAIT_MS),
    ),
  );
  const now = clock.now();
  const after: StoredRecord = {
    ...before,
    status: 'verifying',
    readyAt: new Date(now.getTime() + check.afterMs).toISOString(),
    updatedAt: now.toISOString(),
    private: {
      ...before.private,
      phrases: phrasesOf(before),
      next: check.outcome.ok
        ? { status: 'ready', name: body.name }
        : { status: 'failed', error: check.outcome.reason },
    },
  };
  if (!(await transition(db.db, before, after))) throw errors.voiceNotVerifiable();
  return viewOf(singingVoices, after);
}

/** POST /v1/models/music/voices/{id}/retry: a new phrase from the same source recording. */
export async function retryVoice(
  service: LibraryService,
  principal: KeyPrincipal,
  id: string,
): Promise<RecordView> {
  const { db, clock, generator } = service.deps;
  const before = await service.record(principal, singingVoices, id);
  if (before.status !== 'failed') throw errors.voiceNotRetryable();
  const avoid = phrasesOf(before);
  const attempt = (typeof before.private['attempt'] === 'number' ? before.private['attempt'] : 1) + 1;
  const phrase = await askGenerator('library_create_failed', () =>
    generator.issuePhrase(
      { recordId: id, attempt, language: String(before.data['language'] ?? 'en'), avoid },
      AbortSignal.timeout(LIBRARY_WAIT_MS),
    ),
  );
  const after: StoredRecord = {
    ...before,
    status: 'pending_recording',
    error: null,
    data: { ...before.data, phrase },
    private: { ...before.private, attempt, phrases: [...avoid, phrase] },
    updatedAt: clock.now().toISOString(),
  };
  if (!(await transition(db.db, before, after))) throw errors.voiceNotRetryable();
  return viewOf(singingVoices, after);
}
