/**
 * Pending steps the generator ends (CONTRACT §11: asynchronous creations at a provider become
 * `processing` → `ready`/`failed`): at `ready_at` the record's generator is asked where the step stands,
 * lazily on read like the clock's steps. A step still running is asked again `pollMs` later; a generator
 * that cannot answer now (busy, unreachable) leaves the record as it is until the next read.
 */
import {
  GeneratorTransientError,
  GeneratorUnavailable,
  type LibraryGenerator,
  type SettleAnswer,
} from '../generators/index.ts';
import type { StepAsker } from './records.ts';
import type { StoredRecord } from './types.ts';

/** Limit of one question about a step (milliseconds): a read never waits longer for the generator. */
export const SETTLE_ASK_MS = 30_000;

/**
 * Longest a step the generator ends may run, from its start (the record's last change), before the
 * record turns `failed`: the reference's longest learning is 10 minutes, so a step still running after
 * an hour is taken as one that never ends, rather than asked about every few seconds for ever.
 */
export const POLLED_STEP_LIMIT_MS = 60 * 60_000;

/** The record once the generator's answer is applied. Pure. */
export function applyAnswer(r: StoredRecord, answer: SettleAnswer, now: Date): StoredRecord {
  const poll = r.private.poll;
  if (!poll) return r;
  if (answer.state === 'running') {
    if (now.getTime() - Date.parse(r.updatedAt) < POLLED_STEP_LIMIT_MS) {
      return { ...r, readyAt: new Date(now.getTime() + poll.pollMs).toISOString() };
    }
    return applyAnswer(
      r,
      { state: 'failed', reason: 'the generator did not end the step within an hour' },
      now,
    );
  }
  const { next, poll: _asked, ...rest } = r.private;
  const at = now.toISOString();
  if (answer.state === 'failed') {
    return { ...r, status: 'failed', error: answer.reason, readyAt: null, private: rest, updatedAt: at };
  }
  return {
    ...r,
    status: next?.status ?? r.status,
    name: next?.name ?? r.name,
    data: { ...r.data, ...next?.data, ...answer.data },
    error: null,
    readyAt: null,
    private: answer.upstreamId === undefined ? rest : { ...rest, upstream_id: answer.upstreamId },
    updatedAt: at,
  };
}

/** Asks `generatorFor(record)` (the record's own channel where it has one) about due polled steps. */
export function stepAsker(generatorFor: (r: StoredRecord) => Promise<LibraryGenerator>): StepAsker {
  return async (r, now, signal) => {
    const poll = r.private.poll;
    if (!poll || r.readyAt === null || r.readyAt > now.toISOString()) return r;
    let answer: SettleAnswer;
    try {
      const generator = await generatorFor(r);
      if (!generator.settle) return r;
      answer = await generator.settle(
        { model: r.model, library: r.library, recordId: r.id, step: poll.step, upstreamId: poll.upstreamId },
        signal
          ? AbortSignal.any([signal, AbortSignal.timeout(SETTLE_ASK_MS)])
          : AbortSignal.timeout(SETTLE_ASK_MS),
      );
    } catch (error) {
      // Busy or unreachable: the step is still pending; the next read asks again.
      if (error instanceof GeneratorUnavailable || error instanceof GeneratorTransientError) return r;
      if (error instanceof DOMException && error.name === 'TimeoutError') return r;
      throw error;
    }
    return applyAnswer(r, answer, now);
  };
}
