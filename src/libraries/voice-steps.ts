/**
 * Runs the singing voice's steps after creation (reference "Singing voices", CONTRACT §7) as
 * `VOICE_STEPS` in singing-voices.ts declares them: verify and retry, each refused with its 409 outside
 * the state it starts from.
 */
import type { z } from 'zod';
import type { KeyPrincipal } from '../accounts/index.ts';
import { LIBRARY_WAIT_MS } from '../generators/index.ts';
import { askGenerator } from './ask-generator.ts';
import { transition, viewOf } from './records.ts';
import type { LibraryService, RecordView } from './service.ts';
import {
  RECORDING_FILES,
  RECORDING_SECONDS,
  singingVoices,
  VOICE_STEPS,
  type VoiceState,
  type verifyBody,
} from './singing-voices.ts';
import type { PendingStep, StoredRecord } from './types.ts';

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
  const step = VOICE_STEPS.verify;
  const before = await service.record(principal, singingVoices, id);
  if (before.status !== step.from) throw step.refused();
  await askGenerator(singingVoices.failCode, () => generator.ensureAvailable(body));
  const budget = await downloads?.open(principal.accountId, 'request');
  const recording = await resolveInput(body.recording_url, 'recording_url', RECORDING_FILES, budget).finally(
    () => budget?.close(),
  );
  const check = await askGenerator(singingVoices.failCode, () =>
    generator.checkRecording(
      {
        recordId: id,
        phrase: String(before.data['phrase'] ?? ''),
        name: body.name,
        recordingUrl: body.recording_url,
        minSeconds: RECORDING_SECONDS.min,
        typicalMs: step.typicalMs,
        ...(recording.durationSeconds === undefined ? {} : { recordingSeconds: recording.durationSeconds }),
      },
      AbortSignal.timeout(LIBRARY_WAIT_MS),
    ),
  );
  const now = clock.now();
  const after: StoredRecord = {
    ...before,
    status: step.to,
    readyAt: new Date(now.getTime() + check.afterMs).toISOString(),
    updatedAt: now.toISOString(),
    private: {
      ...before.private,
      phrases: phrasesOf(before),
      next: check.outcome.ok
        ? ({ status: step.succeeds, name: body.name } satisfies PendingStep<VoiceState>)
        : ({ status: 'failed', error: check.outcome.reason } satisfies PendingStep<VoiceState>),
    },
  };
  if (!(await transition(db.db, before, after))) throw step.refused();
  return viewOf(singingVoices, after);
}

/** POST /v1/models/music/voices/{id}/retry: a new phrase from the same source recording. */
export async function retryVoice(
  service: LibraryService,
  principal: KeyPrincipal,
  id: string,
): Promise<RecordView> {
  const { db, clock, generator } = service.deps;
  const step = VOICE_STEPS.retry;
  const before = await service.record(principal, singingVoices, id);
  if (before.status !== step.from) throw step.refused();
  const avoid = phrasesOf(before);
  const attempt = (typeof before.private['attempt'] === 'number' ? before.private['attempt'] : 1) + 1;
  const phrase = await askGenerator(singingVoices.failCode, () =>
    generator.issuePhrase(
      { recordId: id, attempt, language: String(before.data['language'] ?? 'en'), avoid },
      AbortSignal.timeout(LIBRARY_WAIT_MS),
    ),
  );
  const after: StoredRecord = {
    ...before,
    status: step.to,
    error: null,
    data: { ...before.data, phrase },
    private: { ...before.private, attempt, phrases: [...avoid, phrase] },
    updatedAt: clock.now().toISOString(),
  };
  if (!(await transition(db.db, before, after))) throw step.refused();
  return viewOf(singingVoices, after);
}
