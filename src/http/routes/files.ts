import type { Readable } from 'node:stream';
import multipart from '@fastify/multipart';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { type ApiError, errors, isApiError } from '../../errors.ts';
import { MAX_UPLOAD_BYTES, multipartFilename } from '../../files/index.ts';
import { timestamp } from '../../lib/index.ts';
import { presetSample } from '../../libraries/index.ts';
import { parseRange } from '../../tasks/index.ts';
import { paced } from '../body-pace.ts';
import { encodedBodyRefusal } from '../json-body.ts';
import {
  cacheSecondsUntil,
  rangeHeaderOf,
  STORED_FILE_POLICY,
  sendBytes,
  storedEtag,
} from '../send-bytes.ts';
import type { AppDeps } from '../types.ts';
import { clientGone } from '../waiting.ts';
import { errorResponses, errorSchema, locationHeader, pathParam, withHeaders } from './schemas.ts';

/** Room for a multipart body's boundaries and part headers beside its file. */
const MULTIPART_ROOM = 1024 * 1024;

const tags = ['files'];
const uploadSchema = z
  .object({
    id: z.string(),
    url: z.string().describe('absolute direct link, works without an API key until expires_at'),
    filename: z.string(),
    content_type: z.string(),
    kind: z.enum(['image', 'video', 'audio', 'document']),
    size: z.number().int(),
    duration_seconds: z.number().nullable().describe('audio and video'),
    width: z.number().int().nullable(),
    height: z.number().int().nullable(),
    created_at: timestamp(),
    expires_at: timestamp(),
  })
  .meta({ id: 'Upload' });
const idParams = z.object({ id: pathParam });

/** POST /v1/files and the upload's metadata (CONTRACT §6); registered inside the authenticated context. */
export async function fileRoutes(app: FastifyInstance, deps: AppDeps): Promise<void> {
  // Own context: the upload's stream parser must not reach other routes, its GET and DELETE included
  // (a 17 KB JSON body on DELETE was never read, so never 413, and the file was deleted).
  await app.register(async (context) => uploadRoute(context, deps));
  const uploads = deps.services.uploads;
  const r = app.withTypeProvider<ZodTypeProvider>();

  r.get(
    '/v1/files/:id',
    {
      schema: {
        tags,
        operationId: 'getFile',
        summary: 'An upload',
        params: idParams,
        response: { 200: uploadSchema, ...errorResponses, 404: errorSchema.describe('file_not_found') },
      },
    },
    async (request) => uploads.get(request.principal!, request.params.id),
  );

  r.delete(
    '/v1/files/:id',
    {
      schema: {
        tags,
        operationId: 'deleteFile',
        summary: 'Delete an upload; its direct link answers 404 from then on',
        params: idParams,
        response: {
          204: z.null().describe('deleted'),
          ...errorResponses,
          404: errorSchema.describe('file_not_found'),
        },
      },
    },
    async (request, reply) => {
      await uploads.delete(request.principal!, request.params.id);
      return reply.code(204).send(null);
    },
  );
}

/** POST /v1/files, in a context of its own: only multipart is parsed, any other body is a stream. */
async function uploadRoute(app: FastifyInstance, deps: AppDeps): Promise<void> {
  const uploads = deps.services.uploads;
  // The JSON and text parsers inherited from the app would read a 100 MB body into memory whatever it
  // holds (a 90 MB JSON-typed body took 3.4 GB): in this context only multipart is parsed.
  app.removeAllContentTypeParsers();
  // One more byte than allowed reaches the service, which refuses it with 413 file_too_large.
  await app.register(multipart, { limits: { fileSize: MAX_UPLOAD_BYTES + 1, files: 1, fields: 5 } });
  // A raw body of any other type, JSON included, is passed through as a stream, never buffered.
  app.addContentTypeParser('*', (_request, payload, done) => done(null, payload));
  const r = app.withTypeProvider<ZodTypeProvider>();

  r.post(
    '/v1/files',
    {
      bodyLimit: MAX_UPLOAD_BYTES + MULTIPART_ROOM,
      // After authentication, before the body is asked for (`Expect: 100-continue`) or read.
      onRequest: async (request) => {
        const refused = refusedByHeaders(request);
        if (refused) throw refused;
        await uploads.checkRoom(request.principal!, rawFileBytes(request));
      },
      schema: {
        tags,
        operationId: 'uploadFile',
        summary: 'Upload an own file to get a direct link for URL settings',
        description:
          "multipart/form-data with one part `file`, or a raw body with its Content-Type and ?filename=. Types are recognised by content: jpeg, png, webp, mp3, wav, ogg, m4a, flac, aac, mp4, mov; up to 100 MB, and within the account's upload quota.",
        querystring: z.strictObject({
          // Cleaned and cut to 200 characters like a multipart part's name, never refused for its length.
          filename: z.string().optional().describe('name of a raw upload; cut to 200 characters'),
          lang: z.string().optional(),
        }),
        response: {
          201: withHeaders(uploadSchema, 'the upload and its direct link', { Location: locationHeader }),
          ...errorResponses,
          408: errorSchema.describe('request_timeout: the body stalled or trickled'),
          413: errorSchema.describe('file_too_large, storage_quota_exceeded'),
          422: errorSchema.describe('file_type, file_empty, invalid_request'),
        },
      },
    },
    async (request, reply) => {
      // A client that leaves mid-body gets no answer, so no onResponse: its line and series say 499.
      clientGone(reply);
      let upload: Awaited<ReturnType<typeof uploads.upload>>;
      if (request.isMultipart()) {
        // The first part's headers must come within a body window; the file part is then watched itself.
        const files = request.files();
        const first = await withinWindow(files.next(), deps.config.bodyTimeoutMs).catch(malformedMultipart);
        const part = first.done ? undefined : first.value;
        if (part?.fieldname !== 'file') {
          throw errors.invalidRequest({
            en: 'Send the file in a multipart part named "file".',
            ru: 'Передайте файл в части multipart с именем «file».',
          });
        }
        upload = await uploads.upload(request.principal!, {
          body: paced(part.file, deps.config.bodyTimeoutMs),
          filename: multipartFilename(part.filename),
          // Only one file is stored: a second file part (busboy's files limit) refuses the body rather
          // than being dropped unseen. Fields around the file are skipped, as before it.
          rest: () =>
            withinWindow(files.next(), deps.config.bodyTimeoutMs).then((next) => {
              if (!next.done) malformedMultipart(null);
            }, malformedMultipart),
        });
      } else {
        const body = request.body;
        // No body reached a parser (none sent, or Content-Length: 0 without a type): the file is empty.
        if (!body || typeof (body as { pipe?: unknown }).pipe !== 'function') throw errors.fileEmpty('file');
        upload = await uploads.upload(request.principal!, {
          body: body as Readable,
          ...(request.query.filename ? { filename: request.query.filename } : {}),
        });
      }
      return reply.code(201).header('Location', `/v1/files/${upload.id}`).send(upload);
    },
  );
}

const MULTIPART = /^\s*multipart\/form-data\s*(?:;|$)/i;

/**
 * What an upload's headers alone refuse: a Content-Encoding (a compressed upload would be stored
 * compressed, then refused as an unknown type) and a body declared larger than any upload may be.
 */
function refusedByHeaders(request: FastifyRequest): ApiError | null {
  const encoded = encodedBodyRefusal(request);
  if (encoded) return encoded;
  const declared = Number(request.headers['content-length']);
  const ceiling =
    MAX_UPLOAD_BYTES + (MULTIPART.test(request.headers['content-type'] ?? '') ? MULTIPART_ROOM : 0);
  return declared > ceiling ? errors.fileTooLarge('file', MAX_UPLOAD_BYTES) : null;
}

/**
 * The file's length a raw body declares (its Content-Length), or undefined: chunked, or multipart, whose
 * body also carries boundaries, part headers and fields.
 */
function rawFileBytes(request: FastifyRequest): number | undefined {
  if (MULTIPART.test(request.headers['content-type'] ?? '')) return undefined;
  const declared = Number(request.headers['content-length']);
  return Number.isSafeInteger(declared) && declared > 0 ? declared : undefined;
}

function withinWindow<T>(promise: Promise<T>, windowMs: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(errors.requestTimeout()), windowMs);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

/**
 * What the multipart parser refuses before the file part (no boundary, a body cut short, more parts or
 * fields than one upload needs) is the request's shape: 422, not busboy's status-less 500 or a 413 that
 * would blame the size.
 */
function malformedMultipart(error: unknown): never {
  if (isApiError(error)) throw error;
  throw errors.invalidRequest({
    en: 'The multipart/form-data body is malformed or has too many parts: send one part named "file".',
    ru: 'Тело multipart/form-data составлено неверно или в нём слишком много частей: передайте одну часть «file».',
  });
}

/** GET /files/:token[/name]: the direct link of an upload, no API key (registered in the open context). */
export async function directLinkRoutes(app: FastifyInstance, deps: AppDeps): Promise<void> {
  const handler = async (
    request: FastifyRequest<{ Params: { token: string } }>,
    reply: FastifyReply,
  ): Promise<unknown> => {
    const etag = storedEtag(`upload:${request.params.token}`);
    const file = await deps.services.uploads.open(request.params.token, (size, modifiedAt) =>
      parseRange(rangeHeaderOf(request, { etag, modifiedAt }), size),
    );
    return sendBytes(reply, {
      body: file.body,
      contentType: file.row.content_type,
      sizeBytes: Number(file.row.size_bytes),
      range: file.range,
      cacheSeconds: cacheSecondsUntil(file.row.expires_at, deps.clock.now(), 300),
      etag,
      modifiedAt: file.row.created_at,
    });
  };
  const schema = { hide: true } as const;
  // The samples of preset voices, sent to providers in place of a person's recording (no API key: a
  // provider fetches them; they are the same for everyone).
  app.get(
    '/samples/:file',
    { schema },
    async (request: FastifyRequest<{ Params: { file: string } }>, reply) => {
      const id = /^(.+)\.mp3$/.exec(request.params.file)?.[1];
      const sample = id === undefined ? null : presetSample(id);
      if (sample === null) throw errors.fileNotFound(request.params.file);
      const bytes = await sample;
      return reply
        .type('audio/mpeg')
        .header('Cache-Control', 'public, max-age=86400')
        .header('X-Content-Type-Options', 'nosniff')
        .header('Content-Security-Policy', STORED_FILE_POLICY)
        .send(bytes);
    },
  );
  app.get('/files/:token', { schema }, handler);
  // The name is a wildcard, not a parameter: the router refuses a parameter over 100 characters, and a
  // stored name may be 200, more once percent-encoded (a link to such an upload answered 404).
  app.get('/files/:token/*', { schema }, handler);
}
