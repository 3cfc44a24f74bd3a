import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { DAY_MS, HOUR_MS, MINUTE_MS, SECOND_MS } from '../../config.ts';
import type { AppDeps } from '../types.ts';
import { keyMayUse } from './model-access.ts';
import { errorResponses, errorSchema } from './schemas.ts';

const tags = ['helpers'];

const WINDOW_UNITS: readonly [number, string][] = [
  [DAY_MS, 'day'],
  [HOUR_MS, 'hour'],
  [MINUTE_MS, 'minute'],
  [SECOND_MS, 'second'],
];

/** `20 helper calls per hour`, `5 helper calls per 10 minutes`: the limit RATE_LIMIT_HELPERS sets. */
export function helperLimitWords(limit: { count: number; windowMs: number }): string {
  const [unitMs, unit] = WINDOW_UNITS.find(([ms]) => limit.windowMs % ms === 0) ?? [1, 'millisecond'];
  const n = limit.windowMs / unitMs;
  const window = n === 1 ? unit : `${n} ${unit}s`;
  return `${limit.count} helper call${limit.count === 1 ? '' : 's'} per ${window}`;
}

/** Free helpers (reference "Free helpers"); the response fields the reference leaves open are ours. */
export async function helperRoutes(app: FastifyInstance, deps: AppDeps): Promise<void> {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const helpers = deps.services.helpers;
  // The limit as the operator set it, so the document says what the service does.
  const limit = helperLimitWords(deps.config.rateLimits.helpers);
  const refusals = {
    ...errorResponses,
    403: errorSchema.describe('model_not_allowed_for_key'),
    422: errorSchema.describe('invalid_request'),
    429: errorSchema.describe(`rate_limited: more than ${limit}`),
    502: errorSchema.describe(
      'helper_failed: the generator refused the call or did not answer in time; not counted',
    ),
    503: errorSchema.describe('sg_unavailable'),
  };
  const limitNote = `Free; at most ${limit} per account (all three helpers together).`;

  r.post(
    '/v1/models/music/lyrics',
    {
      preValidation: keyMayUse('music'),
      schema: {
        tags,
        operationId: 'suggestLyrics',
        summary: 'Lyrics ideas for a song',
        description: limitNote,
        body: z.strictObject({ prompt: z.string().trim().min(1).max(3000).describe('the song idea') }),
        response: {
          200: z.object({
            variants: z.array(
              z.object({ title: z.string(), text: z.string().describe('verses and chorus') }),
            ),
          }),
          ...refusals,
        },
      },
    },
    async (request) => helpers.run(request.principal!, 'lyrics', request.body),
  );

  r.post(
    '/v1/models/music/style-boost',
    {
      preValidation: keyMayUse('music'),
      schema: {
        tags,
        operationId: 'boostMusicStyle',
        summary: 'A detailed music style from a short one',
        description: limitNote,
        body: z.strictObject({
          style: z.string().trim().min(1).max(1000).describe('short style, e.g. "sad jazz"'),
        }),
        response: {
          200: z.object({ style: z.string().describe('genre, tempo, key, instruments, vocals, production') }),
          ...refusals,
        },
      },
    },
    async (request) => helpers.run(request.principal!, 'style-boost', request.body),
  );

  r.post(
    '/v1/models/image/enhance',
    {
      preValidation: keyMayUse('image'),
      schema: {
        tags,
        operationId: 'enhanceImagePrompt',
        summary: 'A richer picture description',
        description: limitNote,
        body: z.strictObject({ prompt: z.string().trim().min(1).max(10_000) }),
        response: { 200: z.object({ prompt: z.string().describe('the richer description') }), ...refusals },
      },
    },
    async (request) => helpers.run(request.principal!, 'enhance', request.body),
  );
}
