import { z } from 'zod';
import { MAX_EVENT_LIST_ITEMS, TASK_EVENT_TYPES, WEBHOOK_URL_MAX_LENGTH } from '../../events/index.ts';
import { timestamp } from '../../lib/index.ts';
import { IDEMPOTENCY_KEY_PATTERN } from '../../tasks/index.ts';
import { PATH_PARAM_MAX } from '../limits.ts';

/**
 * The error object of every refusal (reference "Error object"): the `Error` component of the OpenAPI
 * document. Loose, because not_found and method_not_allowed add their `docs`, `openapi` and `llms` links.
 */
/** A path parameter naming something (an id, a token, a key): any text the router hands over. */
export const pathParam = z.string().min(1).max(PATH_PARAM_MAX);

/**
 * An optional query field where an empty value (`?status=`, `?cursor=`) is none given, as an empty
 * `?model=` is no filter: a form or a client that sends every field of its query, empty or not, is not
 * refused for the ones it left blank (docs/decisions.md).
 */
export function emptyIsNone<T extends z.ZodType>(schema: T) {
  return z.preprocess(blankIsAbsent, schema.optional());
}

const blankIsAbsent = (value: unknown): unknown => (value === '' ? undefined : value);

/**
 * A list's `limit` query parameter, 1 to `max`, `fallback` when absent: a whole number in decimal digits,
 * as the reference writes it; `0x10`, `1e1`, ` 5` or `5.0` is refused rather than read as some number. The
 * bound is checked after the digits: a value past any integer (`100000000000000000000`) is then told the
 * list's bound, not JavaScript's largest safe integer. An empty `?limit=` is no limit given, as an empty
 * filter (`?model=`) is no filter: a form or a client that sends every field of its query, empty or not,
 * gets the default page. Every refusal (`abc`, `-1`, `0`, `101`) says the same words, naming both bounds:
 * zod's own read "expected number, received NaN" for `abc` and `-1`, and named one bound only otherwise.
 */
export function pageLimit(max: number): z.ZodType<number | undefined>;
export function pageLimit(max: number, fallback: number): z.ZodType<number>;
export function pageLimit(max: number, fallback?: number): z.ZodType<number | undefined> {
  const limit = z.preprocess((value, ctx) => {
    const number = typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : Number.NaN;
    if (Number.isInteger(number) && number >= 1 && number <= max) return number;
    ctx.addIssue({
      code: 'custom',
      input: value,
      message: `expected a whole number from 1 to ${max}`,
      params: { ru: `ожидается целое число от 1 до ${max}` },
    });
    return value;
  }, z.number().min(1).max(max).int());
  return fallback === undefined ? emptyIsNone(limit) : z.preprocess(blankIsAbsent, limit.default(fallback));
}

/**
 * The body of a POST that takes none (a cancel, a retry, a secret's rotation): none (Fastify's `null`, or a
 * JSON `null`), or an empty object as clients that always send JSON do. Any field is refused by name, as
 * an unknown field is elsewhere, so `{"secret": "…"}` sent to a rotation is not answered with another
 * secret as if it had been read.
 */
export const noBody = z.strictObject({}).nullish();

/**
 * The `Idempotency-Key` header of a creation (CONTRACT §4), declared with the form the service takes so the
 * document does not offer keys it refuses. `parseIdempotencyKey` reads it from the raw header lines (two
 * headers are refused, not joined) and refuses any other form in the caller's language.
 */
export const idempotencyKeyHeader = z.string().optional().meta({
  description: 'label of a repeatable creation: 1 to 255 printable ASCII characters',
  minLength: 1,
  maxLength: 255,
  pattern: IDEMPOTENCY_KEY_PATTERN.source,
});

/** The request headers of a file download, declared so the OpenAPI document lists them as parameters. */
export const downloadHeaders = z.object({
  range: z
    .string()
    .optional()
    .describe('bytes=<start>-[<end>] or bytes=-<suffix>: one part of the file (206)'),
  'if-range': z
    .string()
    .optional()
    .describe('the ETag (or the Last-Modified date) the part must come from; another answers the whole file'),
  'if-match': z
    .string()
    .optional()
    .describe('ETags (or *) the file must still have; another answers 412 precondition_failed'),
  'if-none-match': z
    .string()
    .optional()
    .describe('an ETag (or *): 304 without the file when it still names it'),
  'if-unmodified-since': z
    .string()
    .optional()
    .describe('an HTTP date: 412 precondition_failed when the file is newer (read without If-Match)'),
  'if-modified-since': z
    .string()
    .optional()
    .describe('an HTTP date: 304 without the file when it is not newer (read without If-None-Match)'),
});

export const errorSchema = z
  .looseObject({
    error: z.object({
      code: z.string().describe('stable code for programs'),
      message: z.string().describe('in the language asked for (?lang= or Accept-Language)'),
    }),
  })
  .meta({ id: 'Error' });

/** Error answers documented on every authenticated route. */
export const errorResponses = {
  401: errorSchema.describe('invalid_api_key'),
  429: errorSchema.describe('rate_limited'),
} as const;

const modeSchema = z.object({ name: z.string(), settings_schema: z.record(z.string(), z.unknown()) });
/** A model as GET /v1/models lists it (CONTRACT §2). */
export const modelSchema = z
  .object({
    key: z.string(),
    kind: z.enum(['3d', 'video', 'audio', 'speech', 'image']),
    name: z.string(),
    available: z.boolean(),
    mode_field: z.string().nullable(),
    max_active: z.number().int(),
    modes: z.array(modeSchema),
  })
  .meta({ id: 'Model' });

const artifactSchema = z
  .object({
    index: z.number().int(),
    kind: z.enum(['image', 'document', 'video', 'audio']),
    filename: z.string(),
    content_type: z.string(),
    size: z.number().int().describe('bytes'),
    caption: z.string(),
    download_path: z.string().describe('/v1/tasks/<task_id>/artifacts/<index>'),
  })
  .meta({ id: 'Artifact' });

/** A task (reference "Task", CONTRACT §3). */
export const taskSchema = z
  .object({
    id: z.string().describe('UUID'),
    model: z.string(),
    mode: z.string(),
    status: z.enum(['queued', 'running', 'succeeded', 'failed', 'canceled']),
    settings: z.record(z.string(), z.unknown()).describe('settings as accepted, defaults filled in'),
    price: z.object({ amount_minor: z.number().int(), currency: z.string() }),
    progress: z.number().int().min(0).max(100),
    created_at: timestamp(),
    started_at: timestamp().nullable(),
    finished_at: timestamp().optional().describe('present when the task is final'),
    result: z
      .object({
        caption: z.string(),
        texts: z.array(z.string()),
        files_expire_at: timestamp(),
        files_expired: z.boolean(),
        artifacts: z.array(artifactSchema),
      })
      .optional()
      .describe('present when status is succeeded'),
    error: z
      .object({ code: z.string(), message: z.string() })
      .optional()
      .describe('present when status is failed'),
  })
  .meta({ id: 'Task' });

/** Body of POST /v1/tasks and POST /v1/price. */
export const taskRequestSchema = z.strictObject({
  // No length cap: an unknown key of any length is the reference's 404 model_not_found.
  model: z.string().min(1).describe('model key from GET /v1/models'),
  settings: z
    .record(z.string(), z.unknown())
    .describe(
      'model parameters including the mode selector; the JSON Schema of each mode is in GET /v1/models and in components.schemas (Settings.<model>.<mode>)',
    ),
  webhook_url: z
    .string()
    .max(WEBHOOK_URL_MAX_LENGTH)
    .meta({ format: 'uri' })
    .optional()
    .describe('called with signed events of this task (Standard Webhooks); public http(s) addresses only'),
  webhook_events: z
    .array(z.enum(TASK_EVENT_TYPES))
    .min(1)
    .max(MAX_EVENT_LIST_ITEMS)
    .optional()
    .describe(
      'event types sent to webhook_url (default: task.succeeded, task.failed, task.canceled); repeats count once',
    ),
});

/** A response header as the OpenAPI document declares it. */
export interface HeaderDoc {
  description: string;
  schema: { type: 'string' | 'integer' };
}

/**
 * A JSON answer that also sends headers: @fastify/swagger turns a response schema's `headers` keyword
 * into the response's header declarations (and leaves it out of the body schema).
 */
export function withHeaders<T extends z.ZodType>(
  schema: T,
  description: string,
  headers: Record<string, HeaderDoc>,
): T {
  return schema.meta({ description, headers: headerSchemas(headers) });
}

/** Headers in @fastify/swagger's form: a JSON Schema each, its description beside the type. */
function headerSchemas(headers: Record<string, HeaderDoc>): Record<string, Record<string, string>> {
  return Object.fromEntries(
    Object.entries(headers).map(([name, h]) => [name, { ...h.schema, description: h.description }]),
  );
}

/** `Location` of a created resource. */
export const locationHeader: HeaderDoc = {
  description: 'address of the created resource',
  schema: { type: 'string' },
};
/** `Idempotent-Replayed: true` on the answer to a repeated Idempotency-Key (CONTRACT §4). */
export const replayedHeader: HeaderDoc = {
  description: '"true" when the answer repeats the first one of this Idempotency-Key',
  schema: { type: 'string' },
};
/** `Retry-After` of a task still queued or running: seconds until the next poll is worth it. */
export const pollHeader: HeaderDoc = {
  description: 'seconds to wait before polling again (while queued or running)',
  schema: { type: 'integer' },
};
/** `Preference-Applied: wait=N` when a creation honoured `Prefer: wait=N` (RFC 7240, CONTRACT §12). */
export const preferenceAppliedHeader: HeaderDoc = {
  description: 'the wait of `Prefer: wait=N` that was applied, as `wait=N`',
  schema: { type: 'string' },
};

/** Bytes of a file in the document: `type: string, format: binary`. */
const binarySchema = z.string().meta({ format: 'binary' });

/**
 * A non-JSON answer: the listed media types (media ranges such as `image/*` allowed), each with `schema`
 * (the file's bytes by default). Headers go to the response's header declarations.
 */
export function mediaResponse(
  description: string,
  mediaTypes: readonly string[],
  options: { schema?: z.ZodType; headers?: Record<string, HeaderDoc> } = {},
): {
  description: string;
  content: Record<string, { schema: z.ZodType }>;
  headers?: Record<string, Record<string, string>>;
} {
  const schema = options.schema ?? binarySchema;
  return {
    description,
    content: Object.fromEntries(mediaTypes.map((type) => [type, { schema }])),
    ...(options.headers ? { headers: headerSchemas(options.headers) } : {}),
  };
}

/**
 * A server-sent event stream (`text/event-stream`): a route declaring this as its 200 answer is documented
 * as a stream of text, `events` saying which events it carries and what their `data:` lines hold.
 */
export function eventStreamResponse(description: string, events: string): ReturnType<typeof mediaResponse> {
  return mediaResponse(description, ['text/event-stream'], { schema: z.string().describe(events) });
}
