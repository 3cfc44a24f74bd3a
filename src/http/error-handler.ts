import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { violationsOf } from '../catalog/index.ts';
import { isLockTimeout, isNulInText } from '../db/index.ts';
import { type ApiError, errors, isApiError } from '../errors.ts';
import { translate } from '../i18n/index.ts';
import { hasNul } from '../lib/index.ts';
import { NOT_JSON } from './json-body.ts';
import { type ApiLinks, notFoundAt } from './not-found.ts';
import { zodIssuesOf } from './validator.ts';

/** Sends an ApiError as `{ error: { code, message } }` in the request's language. */
export function sendError(request: FastifyRequest, reply: FastifyReply, error: ApiError): FastifyReply {
  const message = error.detail
    ? error.detail[request.lang]
    : translate(error.code, request.lang, error.params);
  return reply
    .code(error.status)
    .headers(withPolicies(reply, error.headers))
    .type('application/json; charset=utf-8')
    .send({ error: { code: error.code, message }, ...error.body });
}

/**
 * The refusal's headers; a limit of its own (the helpers' hour) is added to the account's RateLimit and
 * RateLimit-Policy already set on the answer, as the lists of policies they are, instead of replacing them.
 */
function withPolicies(reply: FastifyReply, headers: Record<string, string>): Record<string, string> {
  const merged = { ...headers };
  for (const name of ['RateLimit-Policy', 'RateLimit']) {
    const before = reply.getHeader(name);
    if (merged[name] !== undefined && typeof before === 'string' && before !== '') {
      merged[name] = `${before}, ${merged[name]}`;
    }
  }
  return merged;
}

const both = (en: string, ru: string): { en: string; ru: string } => ({ en, ru });

/** Translates what the framework throws (body parsing, schema validation) into the reference's codes. */
function fromFramework(error: FastifyError, request: FastifyRequest, links: ApiLinks): ApiError | null {
  const issues = zodIssuesOf(error);
  if (issues !== null) {
    const where = error.validationContext ?? 'body';
    // An empty path segment (`GET /v1/tasks/`) names nothing: no such address, as for any other.
    const params = (request.params ?? {}) as Record<string, unknown>;
    if (where === 'params' && Object.values(params).some((value) => value === '')) {
      return notFoundAt(links, request.method, request.url);
    }
    const violations = violationsOf(issues, `${where}.`);
    const first = violations[0];
    return errors.invalidRequest(
      first
        ? both(`${first.field}: ${first.en}`, `${first.field}: ${first.ru}`)
        : both('The request does not match its schema.', 'Запрос не соответствует схеме.'),
    );
  }
  switch (error.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return errors.requestTooLarge(request.routeOptions.bodyLimit ?? 16 * 1024);
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return errors.invalidRequest(NOT_JSON);
    // @fastify/multipart on POST /v1/files: a field declared as JSON that is not, or more parts than the one
    // `file` part it takes. The plugin's own 406 and 413 were unhandled here (500) and are not in the table.
    case 'FST_INVALID_JSON_FIELD_ERROR':
    case 'FST_FIELDS_LIMIT':
    case 'FST_FILES_LIMIT':
    case 'FST_PARTS_LIMIT':
      return errors.invalidRequest(
        both(
          'Send the file in one multipart part named "file".',
          'Передайте файл одной частью multipart с именем «file».',
        ),
      );
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return errors.invalidRequest(
        both(
          'The body is not as long as its Content-Length says.',
          'Длина тела не совпадает с заголовком Content-Length.',
        ),
      );
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      // An upload takes any media type (its content is what counts), but not a header that is none.
      if (request.routeOptions.url === '/v1/files') {
        return errors.invalidRequest(
          both(
            'The Content-Type header is not a media type: send the file with its own type (image/png, audio/mpeg, …) or as multipart/form-data with a part named "file".',
            'Заголовок Content-Type — не тип данных: передайте файл с его типом (image/png, audio/mpeg, …) или как multipart/form-data с частью «file».',
          ),
        );
      }
      return errors.invalidRequest(
        both(
          'Send the body as JSON with Content-Type: application/json.',
          'Отправьте тело в формате JSON с Content-Type: application/json.',
        ),
      );
  }
  return byStatus(error, request, links);
}

/**
 * Whatever else the framework and its plugins refuse (multipart limits, static files, URL parsing),
 * by its HTTP status: the reference's table has no 400, 403, 406, 414, 415 or 431, so each becomes the
 * nearest code it does have.
 */
function byStatus(error: FastifyError, request: FastifyRequest, links: ApiLinks): ApiError | null {
  const status = error.statusCode;
  if (error instanceof SyntaxError || status === 400 || status === 406 || status === 415) {
    return errors.invalidRequest(both('The request is malformed.', 'Запрос составлен неверно.'));
  }
  // A refused static path says no more than a missing one.
  if (status === 403 || status === 404 || status === 414)
    return notFoundAt(links, request.method, request.url);
  if (status === 408) return errors.requestTimeout();
  if (status === 413) return errors.requestTooLarge(request.routeOptions.bodyLimit ?? 16 * 1024);
  if (status === 431) return errors.headersTooLarge();
  if (status !== undefined && status >= 400 && status < 500) {
    return errors.invalidRequest(both('The request is malformed.', 'Запрос составлен неверно.'));
  }
  return null;
}

/** A caller's input the database refused to store, or a row lock the request gave up waiting for. */
function fromDatabase(error: unknown): ApiError | null {
  if (isLockTimeout(error)) return errors.busy(error);
  return isNulInText(error) ? errors.nulInText() : null;
}

/**
 * Refuses a request with a NUL character (`%00`, `\u0000`) in a path parameter, a query value, its parsed
 * body or a cookie, before a route reads it: PostgreSQL refuses such text (22021, `fromDatabase`) where
 * SQLite stores or looks it up, so `/v1/tasks/%00` was 422 on one engine and 404 on the other, and a
 * dashboard sign-in with one was a 500 page on PostgreSQL. Now 422 invalid_request on both, after
 * authentication (the hook runs once the body is parsed), answered by each context's error handler (JSON
 * for the API, a page for the dashboard). Installed on the root, so every route has it.
 */
export function installNulGuard(app: FastifyInstance): void {
  // A callback, not an async function: it runs on every request.
  app.addHook('preValidation', (request, _reply, done) => {
    const cookies = (request as { cookies?: unknown }).cookies;
    const found = hasNul(request.params) || hasNul(request.query) || hasNul(request.body) || hasNul(cookies);
    done(found ? errors.nulInText() : undefined);
  });
}

/**
 * The only place errors become responses. Anything that is not an ApiError or a known framework error
 * is 500 internal_error with a generic message: driver and stack text never leave the process.
 */
export function installErrorHandler(app: FastifyInstance, links: ApiLinks): void {
  app.setErrorHandler((error: FastifyError, request, reply) => {
    const apiError = isApiError(error)
      ? error
      : (fromDatabase(error) ?? fromFramework(error, request, links));
    if (apiError) {
      if (apiError.status >= 500) request.log.error({ err: apiError.cause ?? apiError }, apiError.code);
      return sendError(request, reply, apiError);
    }
    request.log.error({ err: error }, 'unhandled error');
    return sendError(request, reply, errors.internal(error));
  });
}
