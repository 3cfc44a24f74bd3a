/**
 * How long a call may wait for its task (CONTRACT §12): `?wait=N` on GET /v1/tasks/{id} and
 * `Prefer: wait=N` (RFC 7240) on POST /v1/tasks, both at most 60 s.
 */
import type { FastifyReply } from 'fastify';
import { errors } from '../errors.ts';

/** Longest wait a call may ask for (seconds). */
export const MAX_WAIT_SECONDS = 60;

/**
 * The seconds of `?wait=`: absent or 0 is no wait; an integer 1–60 waits; anything else is 422
 * invalid_request naming `wait`.
 */
export function waitParam(text: string | undefined): number {
  if (text === undefined || text === '') return 0;
  // Digits only, leading zeros allowed however many (`0000000001` is 1, as `Prefer: wait=` reads them).
  const seconds = /^\d+$/.test(text) ? Number(text) : Number.NaN;
  if (!(seconds >= 0 && seconds <= MAX_WAIT_SECONDS)) {
    throw errors.invalidRequest({
      en: `wait: must be a whole number of seconds from 1 to ${MAX_WAIT_SECONDS} (0 answers at once), got "${text.slice(0, 20)}".`,
      ru: `wait: должно быть целым числом секунд от 1 до ${MAX_WAIT_SECONDS} (0 — ответ сразу), получено «${text.slice(0, 20)}».`,
    });
  }
  return seconds;
}

/**
 * The seconds of the `wait` preference among the `Prefer` headers (RFC 7240 §2: comma-separated
 * preferences, names case-insensitive, a value a token or a quoted string, parameters after `;`, only the
 * first `wait` counts). More than 60 is taken as 60; a malformed value or 0 is no wait, since a server
 * ignores preferences it cannot honour rather than refusing the request (RFC 7240 §2).
 */
export function preferWait(header: string | string[] | undefined): number {
  if (header === undefined) return 0;
  const preferences = splitOutsideQuotes(Array.isArray(header) ? header.join(',') : header);
  for (const preference of preferences) {
    const [head = ''] = preference.split(';');
    const equals = head.indexOf('=');
    const name = (equals === -1 ? head : head.slice(0, equals)).trim().toLowerCase();
    if (name !== 'wait') continue;
    const value =
      equals === -1
        ? ''
        : head
            .slice(equals + 1)
            .trim()
            .replace(/^"(.*)"$/, '$1');
    // Any run of digits is a number of seconds, however long: one past 60 is taken as 60.
    if (!/^\d+$/.test(value)) return 0;
    return /^0*\d{1,2}$/.test(value) ? Math.min(Number(value), MAX_WAIT_SECONDS) : MAX_WAIT_SECONDS;
  }
  return 0;
}

/**
 * The comma-separated items of a header, a comma inside a quoted string (with its `\"` escapes, RFC 9110
 * §5.6.4) being part of its item: `x="a,wait=3", wait=2` is two preferences, not three.
 */
function splitOutsideQuotes(text: string): string[] {
  const items: string[] = [];
  let start = 0;
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quoted && c === '\\') i++;
    else if (c === '"') quoted = !quoted;
    else if (c === ',' && !quoted) {
      items.push(text.slice(start, i));
      start = i + 1;
    }
  }
  items.push(text.slice(start));
  return items;
}

/**
 * An abort signal for the call: aborts when its client goes away before the answer, which then has its
 * log line and series as closed by the client (499), since no answer will end. A client already gone
 * (while the call read its task) aborts it at once: its `close` has been and will not come again.
 */
export function clientGone(reply: FastifyReply): AbortSignal {
  const controller = new AbortController();
  const gone = (): void => {
    controller.abort();
    if (!reply.raw.writableFinished) reply.closedByClient();
  };
  if (reply.raw.destroyed) gone();
  else reply.raw.once('close', gone);
  return controller.signal;
}
