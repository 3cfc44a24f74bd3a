/**
 * Runs the singing voice's steps after creation (reference "Singing voices", CONTRACT §7) as
 * `VOICE_STEPS` in singing-voices.ts declares them: verify and retry, each refused with its 409 outside
 * the state it starts from.
 */
import type { z } from 'zod';
import type { KeyPrincipal } from '../accounts/index.ts';
import { errors } from '../errors.ts';
import { isPolledSettlement, LIBRARY_WAIT_MS } from '../generators/index.ts';
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
import type { PendingStep, PolledStep, StoredRecord } from './types.ts';

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
  const { db, clock, resolveInput, downloads } = service.deps;
  const step = VOICE_STEPS.verify;
  const before = await service.record(principal, singingVoices, id);
  if (before.status !== step.from) throw step.refused();
  const generator = await service.generatorOfRecord(singingVoices, before);
  const upstreamId = before.private.upstream_id;
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
        ...(upstreamId === undefined ? {} : { upstreamId }),
      },
      AbortSignal.timeout(LIBRARY_WAIT_MS),
    ),
  );
  const now = clock.now();
  const succeeds = { status: step.succeeds, name: body.name } satisfies PendingStep<VoiceState>;
  let next: PendingStep = succeeds;
  let poll: PolledStep | undefined;
  if (isPolledSettlement(check)) {
    // Only the generator can tell how the check ends: asked from `ready_at` on (polled-steps.ts).
    const asked = check.upstreamId ?? upstreamId;
    if (asked === undefined) throw errors.internal(new Error('a polled check without an upstream id'));
    poll = { step: 'verify', upstreamId: asked, pollMs: check.pollMs };
  } else if (!check.outcome.ok) {
    next = { status: 'failed', error: check.outcome.reason } satisfies PendingStep<VoiceState>;
  }
  const after: StoredRecord = {
    ...before,
    status: step.to,
    readyAt: new Date(now.getTime() + check.afterMs).toISOString(),
    updatedAt: now.toISOString(),
    private: { ...before.private, phrases: phrasesOf(before), next, ...(poll ? { poll } : {}) },
  };
  if (!(await transition(db, before, after))) throw step.refused();
  return viewOf(singingVoices, after);
}

/** POST /v1/models/music/voices/{id}/retry: a new phrase from the same source recording. */
export async function retryVoice(
  service: LibraryService,
  principal: KeyPrincipal,
  id: string,
): Promise<RecordView> {
  const { db, clock } = service.deps;
  const step = VOICE_STEPS.retry;
  const before = await service.record(principal, singingVoices, id);
  if (before.status !== step.from) throw step.refused();
  const generator = await service.generatorOfRecord(singingVoices, before);
  const upstreamId = before.private.upstream_id;
  const avoid = phrasesOf(before);
  const attempt = (typeof before.private['attempt'] === 'number' ? before.private['attempt'] : 1) + 1;
  const phrase = await askGenerator(singingVoices.failCode, () =>
    generator.issuePhrase(
      {
        recordId: id,
        attempt,
        language: String(before.data['language'] ?? 'en'),
        avoid,
        ...(upstreamId === undefined ? {} : { upstreamId }),
      },
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
  if (!(await transition(db, before, after))) throw step.refused();
  return viewOf(singingVoices, after);
}
