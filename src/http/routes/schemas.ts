import { z } from 'zod';

/** The error object of every refusal (reference "Error object"). */
export const errorSchema = z.object({
  error: z.object({ code: z.string().describe('stable code for programs'), message: z.string() }),
});

/** Error answers documented on every authenticated route. */
export const errorResponses = {
  401: errorSchema.describe('invalid_api_key'),
  429: errorSchema.describe('rate_limited'),
} as const;

const modeSchema = z.object({ name: z.string(), settings_schema: z.record(z.string(), z.unknown()) });
/** A model as GET /v1/models lists it (CONTRACT §2). */
export const modelSchema = z.object({
  key: z.string(),
  kind: z.enum(['3d', 'video', 'audio', 'speech', 'image']),
  name: z.string(),
  available: z.boolean(),
  mode_field: z.string().nullable(),
  max_active: z.number().int(),
  modes: z.array(modeSchema),
});
