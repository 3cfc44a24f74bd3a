import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { errors } from '../../errors.ts';
import { LIBRARIES } from '../../libraries/index.ts';
import type { TaskView } from '../../tasks/index.ts';
import { openArtifact, parseIdempotencyKey, parseRange } from '../../tasks/index.ts';
import { TASK_BODY_LIMIT } from '../limits.ts';
import { keyRevocation, stillAuthenticated } from '../plugins/auth.ts';
import { cacheSecondsUntil, rangeHeaderOf, sendBytes, storedEtag } from '../send-bytes.ts';
import type { AppDeps } from '../types.ts';
import { clientGone, preferWait, waitParam } from '../waiting.ts';
import {
  downloadHeaders,
  emptyIsNone,
  errorResponses,
  errorSchema,
  idempotencyKeyHeader,
  locationHeader,
  mediaResponse,
  noBody,
  pageLimit,
  pathParam,
  pollHeader,
  preferenceAppliedHeader,
  replayedHeader,
  taskRequestSchema,
  taskSchema,
  withHeaders,
} from './schemas.ts';

const tags = ['tasks'];
/** The ETag of a result file's download (send-bytes.ts), for If-Range. */
const ETAG_HEADER = {
  description: "the file's strong validator, for If-Range",
  schema: { type: 'string' },
} as const;

/** What every answer of a result file's download says of the file (send-bytes.ts and the route). */
const FILE_HEADERS = {
  ETag: ETAG_HEADER,
  'Last-Modified': {
    description: 'when the file was made (the end of its task), an HTTP date',
    schema: { type: 'string' },
  },
  'Accept-Ranges': { description: '"bytes": parts of the file may be asked for', schema: { type: 'string' } },
  'Content-Disposition': {
    description: "attachment, with the file's name (filename, and filename* in UTF-8)",
    schema: { type: 'string' },
  },
} as const;

/** Media types of result files: images, video, audio, 3D models and documents (JSON, text, archives). */
const ARTIFACT_TYPES = ['image/*', 'video/*', 'audio/*', 'model/*', 'application/*', 'text/*'];
const taskId = z.object({ id: pathParam });
/** The refusals of a library item named in the settings, from the libraries' own declarations. */
const ITEM_REFUSALS = [
  ...new Set(LIBRARIES.flatMap((d) => [d.refusals.missing, d.refusals.notReady ?? d.refusals.missing])),
].join(', ');
/**
 * What pricing refuses: a price is never refused for money, the key's daily limit or an Idempotency-Key,
 * and asks no generator whether it is reachable.
 */
const priceRefusals = {
  ...errorResponses,
  403: errorSchema.describe('model_not_allowed_for_key'),
  404: errorSchema.describe('model_not_found'),
  413: errorSchema.describe('request_too_large (body, or linked files together), file_too_large'),
  422: errorSchema.describe(
    `invalid_request, invalid_settings, unknown_setting, file_type, file_empty; a library item in the settings: ${ITEM_REFUSALS}`,
  ),
  503: errorSchema.describe('model_unavailable'),
};

/** What a creation refuses besides: the hold, the key's daily limit and the Idempotency-Key. */
const refusals = {
  ...priceRefusals,
  402: errorSchema.describe('insufficient_funds'),
  403: errorSchema.describe('model_not_allowed_for_key, key_daily_limit_exceeded'),
  409: errorSchema.describe('idempotency_conflict, request_in_progress'),
  503: errorSchema.describe('model_unavailable, sg_unavailable'),
};

/** Tasks and prices (reference "General", CONTRACT §3–§5). */
export async function taskRoutes(app: FastifyInstance, deps: AppDeps): Promise<void> {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const tasks = deps.services.tasks;
  const pollHint = (task: TaskView): Record<string, string> =>
    task.status === 'queued' || task.status === 'running' ? { 'Retry-After': '5' } : {};

  r.post(
    '/v1/tasks',
    {
      bodyLimit: TASK_BODY_LIMIT,
      schema: {
        tags,
        operationId: 'createTask',
        summary: 'Create a task',
        description:
          'Prices the run, holds the amount on the wallet and queues the task. Send Idempotency-Key to make retries safe. With `Prefer: wait=N` (N ≤ 60 s, RFC 7240) the answer waits up to N s: 200 with the final task if it finished, otherwise 202; both carry `Preference-Applied`. A replay (`Idempotent-Replayed: true`) answers with the original request’s status code and the task as it is then; while an original with `Prefer: wait` still waits, its code is not known yet and a replay is 409 request_in_progress (`Retry-After: 1`).',
        headers: z.object({ 'idempotency-key': idempotencyKeyHeader, prefer: z.string().optional() }),
        body: taskRequestSchema,
        response: {
          200: withHeaders(
            taskSchema,
            'the task, final within the wait of `Prefer: wait=N` (or a replay of such a creation)',
            {
              Location: locationHeader,
              'Preference-Applied': preferenceAppliedHeader,
              'Idempotent-Replayed': replayedHeader,
            },
          ),
          // A replay answers with its original's code: 202 with the task as it is now, even a final one.
          202: withHeaders(taskSchema, 'the task, queued (or as it is after the wait of `Prefer: wait=N`)', {
            Location: locationHeader,
            'Retry-After': pollHeader,
            'Idempotent-Replayed': replayedHeader,
            'Preference-Applied': preferenceAppliedHeader,
          }),
          ...refusals,
          429: errorSchema.describe('rate_limited, too_many_active'),
        },
      },
    },
    async (request, reply) => {
      const key = parseIdempotencyKey(request.raw.rawHeaders);
      const principal = request.principal!;
      const seconds = preferWait(request.headers.prefer);
      const created = await tasks.create(principal, request.body, key, request.lang, seconds);
      if (created.replayed) reply.header('Idempotent-Replayed', 'true');
      reply.header('Location', `/v1/tasks/${created.task.id}`);
      // The code of an original that waits under a key is recorded once it is known (a replay meantime
      // is 409 request_in_progress): 200 when the task ended within the wait, 202 otherwise.
      let answered = created.status;
      const record =
        key !== null && seconds > 0 && !created.replayed
          ? () => tasks.answeredAfterWait(principal, key, created.task.id, answered)
          : null;
      // The task exists by now: an account holding all its waiting places gets the usual answer at once
      // (the preference is not applied) rather than a refusal that would hide the task it made.
      const release = seconds > 0 ? deps.services.watch.admit(principal.accountId) : null;
      if (!release) {
        await record?.();
        return reply.code(created.status).headers(pollHint(created.task)).send(created.task);
      }
      // A key revoked meanwhile ends the wait at once: the answer is the task as it is then.
      const revocation = keyRevocation(request, deps);
      try {
        const state = await deps.services.watch.untilFinal(
          created.task.id,
          () => tasks.watchState(principal, created.task.id, request.lang),
          seconds * 1000,
          AbortSignal.any([clientGone(reply), revocation.signal]),
        );
        reply.header('Preference-Applied', `wait=${seconds}`);
        if (!state.final) reply.header('Retry-After', '5');
        // A replay answers with the original's code whatever its own wait saw (CONTRACT §4).
        answered = created.replayed || !state.final ? created.status : 200;
        await record?.();
        return (reply as FastifyReply)
          .code(answered)
          .type('application/json; charset=utf-8')
          .send(state.json);
      } catch (error) {
        // The wait failed (its read, a revoked key): the task stands as accepted.
        await record?.().catch(() => {});
        throw error;
      } finally {
        revocation.close();
        release();
      }
    },
  );

  /** GET /v1/tasks/{id}?wait=N: final at once, or when it becomes final, or after N s as it is then. */
  const waitFor = async (
    request: FastifyRequest,
    id: string,
    seconds: number,
    reply: FastifyReply,
  ): Promise<FastifyReply> => {
    const principal = request.principal!;
    const lang = request.lang;
    const read = () => tasks.watchState(principal, id, lang);
    // A final task is answered without taking a waiting place (and a foreign one is 404 before).
    const first = await tasks.poll(principal, id, lang);
    const release = first.final ? null : deps.services.watch.admit(principal.accountId);
    if (!first.final && !release) throw errors.tooManyStreams(deps.services.watch.perAccount);
    // A key revoked during the wait ends it at once, wherever the revocation was made.
    const revocation = first.final ? null : keyRevocation(request, deps);
    try {
      const state =
        revocation === null
          ? { json: first.json, final: true }
          : await deps.services.watch.untilFinal(
              id,
              read,
              seconds * 1000,
              AbortSignal.any([clientGone(reply), revocation.signal]),
            );
      // A key revoked (a session ended) during the wait gets no answer from it (CONTRACT §9). Not asked
      // when the process is shutting down: every waiting call then answers at once, and on PostgreSQL a
      // read at that moment held the shutdown for about a minute (test/task-events-processes.test.ts).
      const closing = deps.services.watch.closing.aborted;
      if (
        revocation !== null &&
        (revocation.signal.aborted || (!closing && !(await stillAuthenticated(request, deps))))
      )
        throw errors.invalidApiKey(request.headers.authorization !== undefined);
      if (!state.final) reply.header('Retry-After', '5');
      return reply.type('application/json; charset=utf-8').send(state.json);
    } finally {
      revocation?.close();
      release?.();
    }
  };

  r.post(
    '/v1/price',
    {
      bodyLimit: TASK_BODY_LIMIT,
      schema: {
        tags,
        operationId: 'priceTask',
        summary: 'Price a run without charge',
        body: taskRequestSchema,
        response: {
          200: z.object({
            amount_minor: z.number().int(),
            currency: z.string(),
            available_minor: z.number().int(),
          }),
          ...priceRefusals,
        },
      },
    },
    async (request) => tasks.price(request.principal!, request.body),
  );

  r.get(
    '/v1/tasks',
    {
      schema: {
        tags,
        operationId: 'listTasks',
        summary: "The caller's tasks, newest first",
        querystring: z.strictObject({
          limit: pageLimit(100, 20),
          status: emptyIsNone(z.enum(['queued', 'running', 'succeeded', 'failed', 'canceled'])),
          model: z.string().optional(),
          cursor: emptyIsNone(z.string().max(200)),
          lang: z.string().optional(),
        }),
        response: {
          200: z.object({ tasks: z.array(taskSchema), next_cursor: z.string().nullable() }),
          ...errorResponses,
          404: errorSchema.describe('model_not_found: the model filter names no model'),
        },
      },
    },
    async (request) => {
      const { limit, status, model, cursor } = request.query;
      return tasks.list(
        request.principal!,
        { limit, ...(status ? { status } : {}), ...(model ? { model } : {}), ...(cursor ? { cursor } : {}) },
        request.lang,
      );
    },
  );

  r.get(
    '/v1/tasks/:id',
    {
      schema: {
        tags,
        operationId: 'getTask',
        summary: 'A task; poll while queued or running (Retry-After: 5), or wait with ?wait=N',
        description:
          'With `wait=N` (1–60 s) the answer comes as soon as the task is final, or after N seconds with its state then.',
        params: taskId,
        querystring: z.strictObject({
          // Read by waitParam, which names `wait` in its own 422; documented as what it accepts.
          wait: z.string().optional().meta({
            type: 'integer',
            minimum: 0,
            maximum: 60,
            description: 'seconds to wait for a final state (0 or absent: answer at once)',
          }),
          lang: z.string().optional(),
        }),
        response: {
          200: withHeaders(taskSchema, 'the task', { 'Retry-After': pollHeader }),
          ...errorResponses,
          404: errorSchema.describe('task_not_found'),
          429: errorSchema.describe('rate_limited (also: too many streams and waiting calls open)'),
        },
      },
    },
    async (request, reply) => {
      const seconds = waitParam(request.query.wait);
      if (seconds > 0) return waitFor(request, request.params.id, seconds, reply);
      // The hot path of every client: the service hands over ready JSON text for finished tasks.
      const { json, final } = await tasks.poll(request.principal!, request.params.id, request.lang);
      if (!final) reply.header('Retry-After', '5');
      // Already JSON text: sent as it is (Fastify serialises only non-string payloads).
      return (reply as FastifyReply).type('application/json; charset=utf-8').send(json);
    },
  );

  r.post(
    '/v1/tasks/:id/cancel',
    {
      schema: {
        tags,
        operationId: 'cancelTask',
        summary: 'Cancel a queued or running task; its hold is released in full',
        params: taskId,
        body: noBody,
        response: {
          200: taskSchema,
          ...errorResponses,
          404: errorSchema.describe('task_not_found'),
          409: errorSchema.describe('task_not_cancelable'),
        },
      },
    },
    async (request) => tasks.cancel(request.principal!, request.params.id, request.lang),
  );

  r.get(
    '/v1/tasks/:id/artifacts/:index',
    {
      schema: {
        tags,
        operationId: 'downloadArtifact',
        summary: 'Download a result file (Range requests supported)',
        description:
          'Range: bytes=… answers 206 with that part. With If-Range, the part is answered only when it names the ETag this file answers; otherwise the whole file (200). If-None-Match naming that ETag (or `*`), or If-Modified-Since not before Last-Modified, answers 304 without the file; If-Match naming neither, or If-Unmodified-Since before Last-Modified, answers 412. If-Range may name the ETag or the Last-Modified date.',
        params: z.object({ id: pathParam, index: pathParam }),
        headers: downloadHeaders,
        response: {
          200: mediaResponse("the file, with the artifact's content_type", ARTIFACT_TYPES, {
            headers: FILE_HEADERS,
          }),
          206: mediaResponse('the asked part of the file (Range: bytes=…)', ARTIFACT_TYPES, {
            headers: {
              'Content-Range': { description: 'bytes <start>-<end>/<size>', schema: { type: 'string' } },
              ...FILE_HEADERS,
            },
          }),
          304: withHeaders(
            z.null(),
            'not modified: If-None-Match names the ETag of this file, or If-Modified-Since is not before it was made',
            FILE_HEADERS,
          ),
          ...errorResponses,
          404: errorSchema.describe('task_not_found, artifact_not_found, artifact_expired'),
          412: errorSchema.describe(
            'precondition_failed: If-Match does not name the ETag of this file, or If-Unmodified-Since is before it was made',
          ),
          416: withHeaders(errorSchema, 'range_not_satisfiable', {
            'Content-Range': {
              description: 'bytes */<size>: the size of the file',
              schema: { type: 'string' },
            },
          }),
        },
      },
    },
    async (request, reply) => {
      const etag = storedEtag(`artifact:${request.params.id}:${request.params.index}`);
      const file = await openArtifact(deps, {
        principal: request.principal!,
        taskId: request.params.id,
        index: request.params.index,
        range: (size, modifiedAt) => parseRange(rangeHeaderOf(request, { etag, modifiedAt }), size),
      });
      const ascii = file.filename.replace(/[^\x20-\x7e]|["\\]/g, '_');
      reply.header(
        'Content-Disposition',
        `attachment; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(file.filename)}`,
      );
      const cacheSeconds = cacheSecondsUntil(file.expiresAt, deps.clock.now(), 3600);
      return sendBytes(reply, { ...file, cacheSeconds, etag });
    },
  );
}
