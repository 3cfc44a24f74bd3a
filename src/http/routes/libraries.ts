import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import {
  LIBRARIES,
  type LibraryDecl,
  libraryPath,
  retryVoice,
  singingVoices,
  verifyBody,
  verifyVoice,
} from '../../libraries/index.ts';
import { parseIdempotencyKey } from '../../tasks/index.ts';
import type { AppDeps } from '../types.ts';
import { keyMayUse } from './model-access.ts';
import {
  errorResponses,
  errorSchema,
  idempotencyKeyHeader,
  locationHeader,
  noBody,
  pathParam,
  replayedHeader,
  withHeaders,
} from './schemas.ts';

const tags = ['libraries'];
const recordId = z.object({ id: pathParam });
const forbidden = errorSchema.describe('model_not_allowed_for_key');
const notFound = errorSchema.describe('record_not_found');

/** `cloned voice` → `ClonedVoice`: the record's component name and the stem of its operation ids. */
const pascal = (title: string): string =>
  title.replace(/(?:^|\s+)(\w)/g, (_match, letter: string) => letter.toUpperCase());
/**
 * Each library's record schema, registered once as a component of the document (`ClonedVoice`, …): the
 * registry refuses a second schema under a taken name, and apps are built many times in one process.
 */
const RECORDS = new Map(LIBRARIES.map((decl) => [decl, decl.record.meta({ id: pascal(decl.title) })]));
const recordOf = (decl: LibraryDecl): z.ZodType => RECORDS.get(decl) ?? decl.record;

/**
 * The schema of a constant the list answers as it is (element tags, omni voice presets): its shape read
 * from the value, so the document names the fields the answer has (`key`, `name`, `views`…).
 */
function shapeOf(value: unknown): z.ZodType {
  if (typeof value === 'string') return z.string();
  if (typeof value === 'number') return z.number();
  if (typeof value === 'boolean') return z.boolean();
  if (Array.isArray(value)) return z.array(value.length > 0 ? shapeOf(value[0]) : z.unknown());
  if (value !== null && typeof value === 'object') {
    return z.object(Object.fromEntries(Object.entries(value).map(([k, v]) => [k, shapeOf(v)])));
  }
  return z.unknown();
}

/** Schema of a list response: `{ <segment>: [record], ...extras, limits }` (CONTRACT §7). */
function listSchema(decl: LibraryDecl): z.ZodType {
  const extras = Object.fromEntries(Object.entries(decl.listExtras ?? {}).map(([k, v]) => [k, shapeOf(v)]));
  return z.object({
    [decl.segment]: z.array(recordOf(decl)),
    ...extras,
    limits: z.record(z.string(), z.unknown()).describe('bounds of the creation fields'),
  });
}

/**
 * Personal libraries (reference "Element library" … "Other libraries", CONTRACT §7). Each library is
 * registered at its own concrete address, so a library path on a model without it is 404 not_found and
 * OpenAPI lists each with its creation body.
 */
export async function libraryRoutes(app: FastifyInstance, deps: AppDeps): Promise<void> {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const libraries = deps.services.libraries;

  for (const decl of LIBRARIES) {
    const path = libraryPath(decl);
    const what = decl.title;
    // "an element", "an image style", "a cloned voice".
    const article = /^[aeiou]/i.test(what) ? 'an' : 'a';
    const name = pascal(decl.title);
    const record = recordOf(decl);
    const preValidation = keyMayUse(decl.model);
    r.get(
      path,
      {
        preValidation,
        schema: {
          tags,
          operationId: `list${name}s`,
          summary: `Your ${what} records, newest first, with the limits`,
          response: { 200: listSchema(decl), ...errorResponses, 403: forbidden },
        },
      },
      async (request) => libraries.list(request.principal!, decl),
    );

    r.post(
      path,
      {
        preValidation,
        schema: {
          tags,
          operationId: `create${name}`,
          summary: `Create ${article} ${what}`,
          description: decl.learns
            ? `Answers 201 at once with status ${decl.learns.initial}; poll GET ${path}/{id}.`
            : 'Waits for the generator (client timeout of at least five minutes) and answers 201 with the record.',
          headers: z.object({ 'idempotency-key': idempotencyKeyHeader }),
          body: decl.body,
          response: {
            201: withHeaders(record, `the ${what}`, {
              Location: locationHeader,
              'Idempotent-Replayed': replayedHeader,
            }),
            ...errorResponses,
            403: forbidden,
            // Only a persona names another object of the caller's (its song's task).
            ...(decl.segment === 'personas' ? { 404: errorSchema.describe('task_not_found') } : {}),
            409: errorSchema.describe(
              'idempotency_conflict, request_in_progress, element_name_taken, persona_exists, too_many_records',
            ),
            413: errorSchema.describe('request_too_large (linked files together), file_too_large'),
            422: errorSchema.describe('invalid_request, file_type, file_empty'),
            502: errorSchema.describe(decl.failCode),
            503: errorSchema.describe('sg_unavailable, model_unavailable'),
          },
        },
      },
      async (request, reply) => {
        const key = parseIdempotencyKey(request.raw.rawHeaders);
        const created = await libraries.create(request.principal!, decl, request.body, key);
        if (created.replayed) reply.header('Idempotent-Replayed', 'true');
        // A replay answers with the original status, which is always 201 for library creations.
        return reply
          .code(created.status as 201)
          .header('Location', `${path}/${String(created.record['id'])}`)
          .send(created.record);
      },
    );

    r.get(
      `${path}/:id`,
      {
        preValidation,
        schema: {
          tags,
          operationId: `get${name}`,
          summary: `${article === 'an' ? 'An' : 'A'} ${what}`,
          params: recordId,
          response: { 200: record, ...errorResponses, 403: forbidden, 404: notFound },
        },
      },
      async (request) => libraries.get(request.principal!, decl, request.params.id),
    );

    r.delete(
      `${path}/:id`,
      {
        preValidation,
        schema: {
          tags,
          operationId: `delete${name}`,
          summary: `Delete ${article} ${what}; results already made stay as they are`,
          description:
            'A copy the provider keeps (a cloned voice, a music finetune, an element, an image style made at a ' +
            'provider channel) is deleted there too, by the service within seconds of the 204.',
          params: recordId,
          response: { 204: z.null().describe('deleted'), ...errorResponses, 403: forbidden, 404: notFound },
        },
      },
      async (request, reply) => {
        await libraries.delete(request.principal!, decl, request.params.id);
        return reply.code(204).send(null);
      },
    );
  }

  const voicePath = libraryPath(singingVoices);
  const voiceKeyMayUse = keyMayUse(singingVoices.model);
  r.post(
    `${voicePath}/:id/verify`,
    {
      preValidation: voiceKeyMayUse,
      schema: {
        tags,
        operationId: 'verifySingingVoice',
        summary: 'Send the recording of the phrase; the voice turns verifying, then ready or failed',
        params: recordId,
        body: verifyBody,
        response: {
          200: recordOf(singingVoices),
          ...errorResponses,
          403: forbidden,
          404: notFound,
          409: errorSchema.describe('voice_not_verifiable'),
          // The recording is probed as a creation's links are.
          413: errorSchema.describe('request_too_large, file_too_large'),
          422: errorSchema.describe('invalid_request, file_type, file_empty'),
          // The generator refused the check (a provider channel): the library's code, as for creation.
          502: errorSchema.describe(singingVoices.failCode),
          503: errorSchema.describe('sg_unavailable'),
        },
      },
    },
    async (request) => verifyVoice(libraries, request.principal!, request.params.id, request.body),
  );

  r.post(
    `${voicePath}/:id/retry`,
    {
      preValidation: voiceKeyMayUse,
      schema: {
        tags,
        operationId: 'retrySingingVoice',
        summary: 'A new phrase from the same source recording (failed voices only)',
        params: recordId,
        body: noBody,
        response: {
          200: recordOf(singingVoices),
          ...errorResponses,
          403: forbidden,
          404: notFound,
          409: errorSchema.describe('voice_not_retryable'),
          // The generator refused to issue a new phrase.
          502: errorSchema.describe(singingVoices.failCode),
          503: errorSchema.describe('sg_unavailable'),
        },
      },
    },
    async (request) => retryVoice(libraries, request.principal!, request.params.id),
  );
}
