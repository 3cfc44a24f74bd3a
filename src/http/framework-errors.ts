import { randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyBaseLogger, FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { type ApiError, errors } from '../errors.ts';
import { negotiateLang, translate } from '../i18n/index.ts';
import { type Metrics, observeRefusedRequest, UNMATCHED_ROUTE } from '../observability/index.ts';
import { corsOutsideRouter } from './cors.ts';
import { sendError } from './error-handler.ts';
import { type ApiLinks, isPageVisit, type NotFoundPage, notFoundAt } from './not-found.ts';

/**
 * Fastify's `frameworkErrors`: what the router refuses before any hook runs (bad percent-encoding in
 * the path, a path parameter over `maxParamLength`). Both mean no such address: 404 not_found, with the
 * request id and language the hooks would have set; a browser's page load gets the dashboard's 404 page
 * (`pages.page`, once set), as for any other address nobody serves. No hook runs for such a request, so
 * its log line and HTTP series are written here (`observeRefusedRequest`).
 */
export function frameworkErrorHandler(
  links: ApiLinks,
  metrics: Metrics,
  pages: { page: NotFoundPage | null } = { page: null },
): (error: FastifyError, request: FastifyRequest, reply: FastifyReply) => void {
  return (error, request, reply) => {
    reply.header('x-request-id', request.id);
    reply.header('x-content-type-options', 'nosniff');
    request.lang = negotiateLang(queryLang(request.raw.url ?? ''), request.headers['accept-language']);
    if (corsOutsideRouter(request, reply)) {
      observeRefusedRequest(metrics, request, reply);
      void reply.code(204).send();
      return;
    }
    const noSuchAddress = error.code === 'FST_ERR_BAD_URL' || error.code === 'FST_ERR_MAX_PARAM_LENGTH';
    const url = request.raw.url ?? '/';
    const page = pages.page;
    if (noSuchAddress && page !== null && isPageVisit(request, url.split('?')[0] ?? '/')) {
      observeRefusedRequest(metrics, request, reply);
      page(request, reply).catch((pageError: unknown) => {
        request.log.error({ err: pageError }, '404 page failed');
        if (!reply.sent) void sendError(request, reply, notFoundAt(links, request.method, url));
      });
      return;
    }
    const apiError = noSuchAddress ? notFoundAt(links, request.method, url) : errors.internal(error);
    if (apiError.status >= 500) request.log.error({ err: error }, 'framework error');
    observeRefusedRequest(metrics, request, reply, apiError.code);
    void sendError(request, reply, apiError);
  };
}

function queryLang(url: string): string | undefined {
  const match = /[?&]lang=([A-Za-z-]{1,20})(?:&|$)/.exec(url);
  return match?.[1];
}

/** Method label of a request Node refused before it could read one. */
const UNREAD_METHOD = 'unknown';

/**
 * Node's `clientError`: requests that never became a request (unparsable, headers too large, timed
 * out). Answered in the error table's shape, in English (there are no headers to negotiate from), with
 * a fresh request id, then the connection is closed. No hook runs for them either: each answer gets its
 * log line (with that id and Node's reason) and its HTTP series (`route="unmatched"`, `method="unknown"`)
 * here, as every answered request does (CONTRACT §15).
 */
export function clientErrorHandler(
  log: Pick<FastifyBaseLogger, 'info'>,
  metrics: Metrics,
): (error: NodeJS.ErrnoException, socket: Socket) => void {
  const waiting = new WeakSet<Socket>();
  const refuse = (error: NodeJS.ErrnoException, socket: Socket): void => {
    if (socket.destroyed) return;
    const apiError = clientErrorOf(error.code);
    // An answer already under way cannot be replaced: only close the connection.
    const inFlight = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
    if (socket.writable && !inFlight?.headersSent) {
      const requestId = randomUUID();
      const body = JSON.stringify({
        error: { code: apiError.code, message: apiError.detail?.en ?? translate(apiError.code, 'en') },
      });
      socket.write(
        `HTTP/1.1 ${apiError.status} ${statusText(apiError.status)}\r\n` +
          'Content-Type: application/json; charset=utf-8\r\n' +
          `Content-Length: ${Buffer.byteLength(body)}\r\n` +
          `X-Request-Id: ${requestId}\r\n` +
          'X-Content-Type-Options: nosniff\r\n' +
          'Connection: close\r\n\r\n' +
          body,
      );
      metrics.observeRequest({ route: undefined, method: UNREAD_METHOD, status: apiError.status }, 0);
      log.info(
        {
          requestId,
          method: UNREAD_METHOD,
          route: UNMATCHED_ROUTE,
          status: apiError.status,
          errorCode: apiError.code,
          reason: error.code ?? 'unknown',
        },
        'request refused before it was read',
      );
    }
    socket.destroy(error);
  };
  return (error, socket) => {
    if (error.code === 'ECONNRESET' || socket.destroyed || waiting.has(socket)) return;
    // What does not parse follows a request read whole whose answer is still being made (a pipelined
    // request, or the rest of a body longer than its Content-Length): answers go out in order (RFC 9112
    // §9.3), so the refusal waits for that one. Written first, it was read as that request's answer.
    const inFlight = (socket as Socket & { _httpMessage?: ServerResponse | null })._httpMessage;
    if (inFlight && !inFlight.writableFinished && inFlight.req?.complete) {
      waiting.add(socket);
      socket.pause();
      inFlight.once('finish', () => refuse(error, socket));
      inFlight.once('close', () => {
        if (!inFlight.writableFinished) socket.destroy(error);
      });
      return;
    }
    refuse(error, socket);
  };
}

function clientErrorOf(code: string | undefined): ApiError {
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT') return errors.requestTimeout();
  if (code === 'HPE_HEADER_OVERFLOW') return errors.headersTooLarge();
  return errors.invalidRequest({ en: 'The request is malformed.', ru: 'Запрос составлен неверно.' });
}

function statusText(status: number): string {
  return { 408: 'Request Timeout', 413: 'Payload Too Large', 422: 'Unprocessable Entity' }[status] ?? 'Error';
}
