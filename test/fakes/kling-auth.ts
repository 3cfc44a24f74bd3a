/** The fake Kling's check of a request's JWT (PROVIDERS.md §5): HS256, signed with the access key's secret, within its times. */
import { createHmac, timingSafeEqual } from 'node:crypto';

/** A verified token's claims, or the Kling code that refuses it (1000 auth failed, 1002 invalid, 1003 not yet valid, 1004 expired). */
export type TokenCheck =
  | { ok: true; iss: string; exp: number; nbf: number }
  | { ok: false; code: number; message: string };

export function checkToken(
  header: string | undefined,
  secrets: Readonly<Record<string, string>>,
  now = Date.now(),
): TokenCheck {
  if (!header?.startsWith('Bearer ')) return { ok: false, code: 1001, message: 'Authorization is empty' };
  const parts = header.slice(7).split('.');
  if (parts.length !== 3) return { ok: false, code: 1002, message: 'Authorization is invalid' };
  const [h, p, s] = parts as [string, string, string];
  let head: Record<string, unknown>;
  let claims: Record<string, unknown>;
  try {
    head = JSON.parse(Buffer.from(h, 'base64url').toString('utf8')) as Record<string, unknown>;
    claims = JSON.parse(Buffer.from(p, 'base64url').toString('utf8')) as Record<string, unknown>;
  } catch {
    return { ok: false, code: 1002, message: 'Authorization is invalid' };
  }
  if (head['alg'] !== 'HS256' || head['typ'] !== 'JWT')
    return { ok: false, code: 1002, message: 'alg must be HS256' };
  const iss = claims['iss'];
  const secret = typeof iss === 'string' ? secrets[iss] : undefined;
  if (secret === undefined)
    return { ok: false, code: 1000, message: 'Authorization failed: unknown access key' };
  const expected = createHmac('sha256', secret).update(`${h}.${p}`).digest();
  const given = Buffer.from(s, 'base64url');
  if (given.length !== expected.length || !timingSafeEqual(given, expected))
    return { ok: false, code: 1000, message: 'Authorization failed: bad signature' };
  const exp = Number(claims['exp']);
  const nbf = Number(claims['nbf']);
  const seconds = now / 1000;
  if (!Number.isFinite(exp) || !Number.isFinite(nbf))
    return { ok: false, code: 1002, message: 'exp and nbf are required' };
  if (seconds >= exp) return { ok: false, code: 1004, message: 'Authorization expired' };
  if (seconds < nbf) return { ok: false, code: 1003, message: 'Authorization is not yet valid' };
  return { ok: true, iss: iss as string, exp, nbf };
}
