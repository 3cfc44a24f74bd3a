/**
 * Kling's request signing (PROVIDERS.md §5): a JWT, HS256 over `{ iss: access key, exp: now + 1800,
 * nbf: now − 5 }` (seconds) with the secret key, sent as `Authorization: Bearer <jwt>`; a fresh token per
 * request (decided in PROVIDERS.md).
 */
import { createHmac } from 'node:crypto';

/** Life of a token (seconds). */
export const TOKEN_LIFE_S = 1800;
/** Clock skew allowed before now (seconds). */
export const NOT_BEFORE_S = 5;

function base64url(value: string | Buffer): string {
  return Buffer.from(value).toString('base64url');
}

/** A token for `accessKey`, signed with `secretKey`, valid from `now` − 5 s to `now` + 30 min. */
export function klingToken(accessKey: string, secretKey: string, now: Date): string {
  const seconds = Math.floor(now.getTime() / 1000);
  const header = base64url(JSON.stringify({ alg: 'HS256', typ: 'JWT' }));
  const payload = base64url(
    JSON.stringify({ iss: accessKey, exp: seconds + TOKEN_LIFE_S, nbf: seconds - NOT_BEFORE_S }),
  );
  const signature = createHmac('sha256', secretKey).update(`${header}.${payload}`).digest('base64url');
  return `${header}.${payload}.${signature}`;
}
