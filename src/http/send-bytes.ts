import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { errors } from '../errors.ts';
import type { ByteRange } from '../storage/index.ts';
import { clientGone } from './waiting.ts';

/** The policy of every stored file answered: nothing loads, nothing runs, a unique origin. */
export const STORED_FILE_POLICY = "default-src 'none'; sandbox";

/**
 * The strong validator of a stored file, made from what names it: a result file (task and index) and an
 * upload's link never name other bytes, so the name is enough.
 */
export function storedEtag(identity: string): string {
  return `"${createHash('sha256').update(identity).digest('base64url').slice(0, 22)}"`;
}

/** What tells one version of a stored file from another: its ETag and its modification time. */
export interface StoredValidators {
  /** storedEtag of the file. */
  etag: string;
  /** When its bytes were made (ISO 8601); sent as `Last-Modified`, to the second. */
  modifiedAt: string;
}

/** An HTTP-date's instant in whole seconds, or null when the text is no date. */
function dateSeconds(text: string | undefined): number | null {
  if (text === undefined) return null;
  const ms = Date.parse(text);
  return Number.isFinite(ms) ? Math.floor(ms / 1000) : null;
}

/** The `Last-Modified` value of a file made at `modifiedAt` (an IMF-fixdate, RFC 9110 §5.6.7). */
export function lastModifiedOf(modifiedAt: string): string {
  return new Date(Math.floor(Date.parse(modifiedAt) / 1000) * 1000).toUTCString();
}

/**
 * The preconditions of RFC 9110 §13.2.2 in their order, for a GET or HEAD of a stored file: 412 when
 * `If-Match` names neither this file's ETag (compared strongly, so never a weak tag) nor `*`, or, without
 * `If-Match`, when `If-Unmodified-Since` is before its modification; 304 when `If-None-Match` names its
 * ETag (compared weakly) or is `*`, or, without `If-None-Match`, when `If-Modified-Since` is not before its
 * modification; null when the file is to be answered. A date that does not parse is ignored (§13.1.3).
 */
export function preconditionOf(request: FastifyRequest, file: StoredValidators): 412 | 304 | null {
  const modified = Math.floor(Date.parse(file.modifiedAt) / 1000);
  const ifMatch = request.headers['if-match'];
  if (ifMatch !== undefined) {
    if (!ifMatch.split(',').some((tag) => tag.trim() === '*' || tag.trim() === file.etag)) return 412;
  } else {
    const since = dateSeconds(request.headers['if-unmodified-since']);
    if (since !== null && modified > since) return 412;
  }
  const ifNoneMatch = request.headers['if-none-match'];
  if (ifNoneMatch !== undefined) {
    const opaque = (tag: string): string => tag.trim().replace(/^W\//, '');
    const wanted = opaque(file.etag);
    return ifNoneMatch.split(',').some((tag) => tag.trim() === '*' || opaque(tag) === wanted) ? 304 : null;
  }
  const since = dateSeconds(request.headers['if-modified-since']);
  return since !== null && modified <= since ? 304 : null;
}

/**
 * The request's Range header, if it is to be honoured: an `If-Range` that is neither this file's ETag
 * (compared strongly) nor exactly its `Last-Modified` date asks for the whole file (RFC 9110 §13.1.5), and
 * a failed precondition comes first (§13.2.2): 412 or 304, whatever the range.
 */
export function rangeHeaderOf(request: FastifyRequest, file: StoredValidators): string | undefined {
  const range = request.headers.range;
  if (range === undefined || preconditionOf(request, file) !== null) return undefined;
  const ifRange = request.headers['if-range']?.toString().trim();
  if (ifRange === undefined) return range;
  const current =
    ifRange.startsWith('"') || ifRange.startsWith('W/')
      ? ifRange === file.etag
      : dateSeconds(ifRange) === Math.floor(Date.parse(file.modifiedAt) / 1000);
  return current ? range : undefined;
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
 * `Accept-Ranges`, its validators (`ETag`, `Last-Modified`) and the right Content-Length; 412 when a
 * precondition fails, and 304 without the bytes when the client's copy is current (`preconditionOf`).
 * Shared by result downloads and upload direct links.
 */
export function sendBytes(
  reply: FastifyReply,
  file: {
    body: Readable;
    contentType: string;
    sizeBytes: number;
    range: ByteRange | null;
    cacheSeconds: number;
  } & StoredValidators,
): FastifyReply {
  const precondition = preconditionOf(reply.request, file);
  if (precondition === 412) {
    // An error, not the file: nothing of it is read, and no attachment is offered for the JSON.
    file.body.destroy();
    reply.removeHeader('Content-Disposition');
    throw errors.preconditionFailed();
  }
  reply
    .type(file.contentType)
    .header('Accept-Ranges', 'bytes')
    .header('ETag', file.etag)
    .header('Last-Modified', lastModifiedOf(file.modifiedAt))
    .header('Cache-Control', `private, max-age=${file.cacheSeconds}`)
    .header('X-Content-Type-Options', 'nosniff')
    // Opened on its own, a stored file is an inert document: no script of an SVG or HTML-looking file runs
    // in the service's origin, where the dashboard's session lives. Embedding (img, audio, video) is unaffected.
    .header('Content-Security-Policy', STORED_FILE_POLICY);
  if (precondition === 304) {
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
  // A client that leaves mid-file gets no answer end, so no onResponse: its line and series say 499.
  clientGone(reply);
  return reply.send(file.body);
}
