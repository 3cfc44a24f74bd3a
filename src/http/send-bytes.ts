import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { errors } from '../errors.ts';
import type { ByteRange } from '../storage/index.ts';

/** The policy of every stored file answered: nothing loads, nothing runs, a unique origin. */
export const STORED_FILE_POLICY = "default-src 'none'; sandbox";

/**
 * The strong validator of a stored file, made from what names it: a result file (task and index) and an
 * upload's link never name other bytes, so the name is enough.
 */
export function storedEtag(identity: string): string {
  return `"${createHash('sha256').update(identity).digest('base64url').slice(0, 22)}"`;
}

/**
 * True when the request's `If-None-Match` names this file's validator, or is `*` (RFC 9110 §13.1.2: a
 * comma-separated list, compared weakly): the client's copy is current and the answer is 304.
 */
export function notModified(request: FastifyRequest, etag: string): boolean {
  const header = request.headers['if-none-match'];
  if (header === undefined) return false;
  const opaque = (tag: string): string => tag.trim().replace(/^W\//, '');
  const wanted = opaque(etag);
  return header.split(',').some((tag) => tag.trim() === '*' || opaque(tag) === wanted);
}

/**
 * True when the request has an `If-Match` that names neither this file's validator nor `*` (RFC 9110
 * §13.1.1: a comma-separated list, compared strongly, so a weak tag never matches): the answer is 412.
 */
export function preconditionFailed(request: FastifyRequest, etag: string): boolean {
  const header = request.headers['if-match'];
  if (header === undefined) return false;
  return !header.split(',').some((tag) => tag.trim() === '*' || tag.trim() === etag);
}

/**
 * The request's Range header, if it is to be honoured: an `If-Range` that is not this file's validator (an
 * older ETag, or a date: stored files carry no Last-Modified) asks for the whole file (RFC 9110 §13.1.5),
 * and a failed `If-Match` or a matching `If-None-Match` comes first (§13.2.2): 412 or 304, whatever the range.
 */
export function rangeHeaderOf(request: FastifyRequest, etag: string): string | undefined {
  const range = request.headers.range;
  const ifRange = request.headers['if-range'];
  if (range === undefined || (ifRange !== undefined && String(ifRange).trim() !== etag)) return undefined;
  if (preconditionFailed(request, etag) || notModified(request, etag)) return undefined;
  return range;
}

/**
 * How long a cache may keep a stored file: at most `most` seconds, and never past the moment it stops being
 * served (`expiresAt`), after which the service answers 404 and a cached copy would outlive it.
 */
export function cacheSecondsUntil(expiresAt: string, now: Date, most: number): number {
  const left = Math.floor((Date.parse(expiresAt) - now.getTime()) / 1000);
  return Number.isFinite(left) ? Math.max(0, Math.min(most, left)) : 0;
}

/**
 * Streams stored bytes as the whole file (200) or the asked range (206 with Content-Range), with
 * `Accept-Ranges` and the right Content-Length; 412 when `If-Match` names another file, and 304 without
 * the bytes when the client's copy is current (`If-None-Match`). Shared by result downloads and upload
 * direct links.
 */
export function sendBytes(
  reply: FastifyReply,
  file: {
    body: Readable;
    contentType: string;
    sizeBytes: number;
    range: ByteRange | null;
    cacheSeconds: number;
    /** storedEtag of the file. */
    etag: string;
  },
): FastifyReply {
  if (preconditionFailed(reply.request, file.etag)) {
    // An error, not the file: nothing of it is read, and no attachment is offered for the JSON.
    file.body.destroy();
    reply.removeHeader('Content-Disposition');
    throw errors.preconditionFailed();
  }
  reply
    .type(file.contentType)
    .header('Accept-Ranges', 'bytes')
    .header('ETag', file.etag)
    .header('Cache-Control', `private, max-age=${file.cacheSeconds}`)
    .header('X-Content-Type-Options', 'nosniff')
    // Opened on its own, a stored file is an inert document: no script of an SVG or HTML-looking file runs
    // in the service's origin, where the dashboard's session lives. Embedding (img, audio, video) is unaffected.
    .header('Content-Security-Policy', STORED_FILE_POLICY);
  if (notModified(reply.request, file.etag)) {
    // The validator and the caching headers above, no body (RFC 9110 §15.4.5), and no length: a length
    // may only be the file's own (§8.6), and Fastify's HEAD route says 0 for an answer sent empty.
    file.body.destroy();
    return reply
      .code(304)
      .removeHeader('Content-Type')
      .send(reply.request.method === 'HEAD' ? Readable.from([]) : undefined);
  }
  if (file.range) {
    reply
      .code(206)
      .header('Content-Range', `bytes ${file.range.start}-${file.range.end}/${file.sizeBytes}`)
      .header('Content-Length', file.range.end - file.range.start + 1);
  } else {
    reply.header('Content-Length', file.sizeBytes);
  }
  if (reply.request.method === 'HEAD') {
    // The headers alone: the stored file is not read (Fastify would drain the whole stream for a HEAD).
    file.body.destroy();
    return reply.send(Readable.from([]));
  }
  return reply.send(file.body);
}
