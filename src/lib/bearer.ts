import type { IncomingMessage } from 'node:http';

const BEARER = /^Bearer\s+(\S+)\s*$/i;

/**
 * The token of a request's `Authorization: Bearer <token>`, or undefined when it brought none: no header,
 * another scheme, no token after the scheme, or more than one Authorization line. Node keeps the first of
 * several lines, where a proxy in front may have read (or checked) another: a request names one
 * credential, and one that names two is taken to name none.
 */
export function bearerToken(req: Pick<IncomingMessage, 'headers' | 'rawHeaders'>): string | undefined {
  const header = req.headers.authorization;
  if (header === undefined) return undefined;
  const token = BEARER.exec(header)?.[1];
  return token === undefined || authorizationLines(req.rawHeaders) > 1 ? undefined : token;
}

/** How many Authorization lines a request's raw headers (name, value, name, …) hold. */
function authorizationLines(rawHeaders: readonly string[]): number {
  let count = 0;
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i];
    if (name?.length === 13 && name.toLowerCase() === 'authorization') count += 1;
  }
  return count;
}
