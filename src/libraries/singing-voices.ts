/**
 * Singing voices of `music` (reference "Singing voices", CONTRACT §7): a piece of the caller's singing
 * is processed (`processing`), then the person records a phrase (`pending_recording`), the recording is
 * checked (`verifying`) and the voice becomes `ready` or `failed` (with `error`); retry from `failed`
 * issues a new phrase. The states and steps are declared here; decisions are in `notes` below.
 */

import { z } from 'zod';
import { addRule, twoDecimals } from '../catalog/index.ts';
import { errors } from '../errors.ts';
import { ruDecimal } from '../i18n/index.ts';
import { exactSeconds, timestamp } from '../lib/index.ts';
import { defineLibrary } from './define.ts';
import { AUDIO_FILES, urlField, visibleText } from './fields.ts';
import { boundsOf } from './limits.ts';
import type { RecordStep } from './types.ts';

/** Reference: "the piece is 10 to 240 seconds long". */
export const PIECE_SECONDS = { min: 10, max: 240 } as const;
/** CONTRACT §7: the generator accepts a recording of the phrase of at least 3 seconds. */
export const RECORDING_SECONDS = { min: 3 } as const;

/** The states of a singing voice, in the order a voice passes them (CONTRACT §7). */
export const VOICE_STATES = ['processing', 'pending_recording', 'verifying', 'ready', 'failed'] as const;
export type VoiceState = (typeof VOICE_STATES)[number];

/**
 * The singing voice's state machine. Creation starts in `processing` (`learns` below: about 30 s) and
 * moves to `pending_recording` with a phrase; then:
 */
export const VOICE_STEPS = {
  /** POST …/verify: `verifying` for about `typicalMs`, then `ready` with the name sent, or `failed`. */
  verify: {
    from: 'pending_recording',
    to: 'verifying',
    typicalMs: 20_000,
    succeeds: 'ready',
    refused: errors.voiceNotVerifiable,
  },
  /** POST …/retry: back to `pending_recording` with a new phrase from the same source recording. */
  retry: { from: 'failed', to: 'pending_recording', refused: errors.voiceNotRetryable },
} as const satisfies Record<string, RecordStep<VoiceState>>;

/** Files of the verify step's `recording_url`. */
export const RECORDING_FILES = AUDIO_FILES;

const languageNames = new Intl.DisplayNames(['en'], { type: 'language', fallback: 'none' });

/** True for a two-letter ISO 639-1 code the platform knows. */
export function isIso6391(code: string): boolean {
  return /^[a-z]{2}$/.test(code) && languageNames.of(code) !== undefined;
}

const seconds = twoDecimals(z.number().min(0).max(3600));

const body = z
  .strictObject({
    source_url: urlField.describe('direct link to a recording of the caller singing'),
    start_seconds: seconds,
    end_seconds: seconds,
    language: z
      .string()
      .refine(isIso6391, {
        message: 'must be an ISO 639-1 code such as en',
        params: { ru: 'должен быть кодом ISO 639-1, например en' },
      })
      .default('en'),
  })
  .superRefine((b, ctx) => {
    // Exact to the microsecond: a piece of exactly 10 s is not refused for a rounding error.
    const length = exactSeconds(b.end_seconds - b.start_seconds);
    if (length < PIECE_SECONDS.min || length > PIECE_SECONDS.max) {
      addRule(
        ctx,
        'end_seconds',
        `the piece (end_seconds − start_seconds) must be ${PIECE_SECONDS.min} to ${PIECE_SECONDS.max} seconds long`,
        `фрагмент (end_seconds − start_seconds) должен длиться от ${PIECE_SECONDS.min} до ${PIECE_SECONDS.max} секунд`,
      );
    }
  });

/** Body of POST …/voices/{id}/verify (CONTRACT §7). */
export const verifyBody = z.strictObject({
  recording_url: urlField.describe('direct link to a recording of the phrase in the same voice'),
  name: visibleText(1, 100),
});

export const singingVoices = defineLibrary({
  model: 'music',
  segment: 'voices',
  title: 'singing voice',
  body,
  record: z.object({
    id: z.string(),
    name: z.string().nullable().describe('null until the voice is verified'),
    status: z.enum(VOICE_STATES),
    language: z.string(),
    phrase: z.string().optional().describe('present when status is pending_recording'),
    error: z.string().optional().describe('present when status is failed'),
    created_at: timestamp(),
  }),
  limits: {
    piece_seconds: PIECE_SECONDS,
    recording_seconds: RECORDING_SECONDS,
    // The name is given with verify.
    ...boundsOf(verifyBody, ['name']),
    language: 'ISO 639-1 code, default en',
  },
  files: { source_url: AUDIO_FILES },
  // recording_url belongs to the verify step, which probes it itself (voice-steps.ts).
  laterFiles: { recording_url: RECORDING_FILES },
  states: VOICE_STATES,
  failCode: 'library_create_failed',
  refusals: { missing: 'voice_not_found', notReady: 'voice_not_ready' },
  notes: {
    rules:
      `The piece (\`end_seconds\` − \`start_seconds\`) is ${PIECE_SECONDS.min}–${PIECE_SECONDS.max} s and ` +
      'must lie within the source file when its length is known (`422 invalid_request` naming `end_seconds`). ' +
      "`language` is an ISO 639-1 code known to the platform's language data.",
    decisions:
      "`name` is null until the voice is verified; the name sent with verify becomes the voice's name when " +
      "it turns `ready`. `phrase` is shown only in `pending_recording`. The recording's length goes to the " +
      `generator's check; the simulator accepts any recording of at least ${RECORDING_SECONDS.min} seconds ` +
      '(one whose length cannot be read fails) and fails a verify whose `name` contains `[sim:fail]` ' +
      '(CONTRACT §7). Phrases come from a word list ' +
      'seeded by the voice\'s id and attempt, in Russian for `language: "ru"`, otherwise English, and a ' +
      'retry never repeats an earlier phrase. Verify and retry are not idempotent-keyed: they are state ' +
      'transitions, and repeating them answers 409.',
  },
  learns: {
    initial: 'processing',
    typicalMs: 30_000,
    succeeds: 'pending_recording',
    async gains(ctx, plan) {
      const language = String(plan.data['language']);
      const phrase = await ctx.generator.issuePhrase(
        { recordId: ctx.recordId, attempt: 1, language, avoid: [] },
        ctx.signal,
      );
      return { phrase };
    },
  },
  steps: VOICE_STEPS,
  async prepare(b, ctx) {
    const source = ctx.inputs['source_url']?.[0];
    if (source?.durationSeconds !== undefined && b.end_seconds > source.durationSeconds + 0.01) {
      throw errors.invalidRequest({
        en: `body.end_seconds: the recording is only ${source.durationSeconds.toFixed(2)} s long`,
        ru: `body.end_seconds: запись длится только ${ruDecimal(source.durationSeconds.toFixed(2))} с`,
      });
    }
    return {
      name: null,
      data: { language: b.language },
      private: { source_url: b.source_url, start_seconds: b.start_seconds, end_seconds: b.end_seconds },
    };
  },
  view: (r) => ({
    language: r.data['language'],
    ...(r.status === 'pending_recording' ? { phrase: r.data['phrase'] } : {}),
  }),
});
