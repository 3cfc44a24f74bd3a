import { randomBytes, scrypt as scryptCallback, timingSafeEqual } from 'node:crypto';
import { promisify } from 'node:util';
import { characters } from '../lib/index.ts';

const scrypt = promisify(scryptCallback) as (
  password: string,
  salt: Buffer,
  keylen: number,
  options: { N: number; r: number; p: number; maxmem: number },
) => Promise<Buffer>;

/** scrypt cost: N = 2^15, r = 8, p = 1 (OWASP's minimum for scrypt), about 32 MiB and ~100 ms a hash (measured on a busy 2-core machine). */
const COST = { N: 2 ** 15, r: 8, p: 1 } as const;
const KEY_BYTES = 32;

/** Shortest and longest passwords accepted (CONTRACT §13). */
export const PASSWORD_MIN = 8;
export const PASSWORD_MAX = 200;

/**
 * UTF-16 units one character of a password may take before NFC joins it: a letter with its combining
 * marks, decomposed, takes up to six (three code points outside the BMP).
 */
const UNITS_PER_CHARACTER = 6;

/**
 * Whether a password's length in characters (code points of its NFC form, as it is hashed: an emoji is
 * one, not its two UTF-16 units, and `é` typed as `e` and an accent is one too) is within the bounds. A
 * string too long to be within them is refused by its size, without walking it.
 */
export function passwordFits(password: string, min = 0): boolean {
  if (password.length > UNITS_PER_CHARACTER * PASSWORD_MAX) return false;
  const count = characters(password.normalize('NFC'));
  return count >= min && count <= PASSWORD_MAX;
}

const maxmem = (n: number, r: number): number => 256 * n * r;

/** A new `scrypt$N$r$p$salt$hash` string (salt and hash base64url). */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const hash = await scrypt(password.normalize('NFC'), salt, KEY_BYTES, {
    ...COST,
    maxmem: maxmem(COST.N, COST.r),
  });
  return `scrypt$${COST.N}$${COST.r}$${COST.p}$${salt.toString('base64url')}$${hash.toString('base64url')}`;
}

/** Whether `password` matches a stored string, compared in constant time; false for malformed strings. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, n, r, p, salt, hash] = stored.split('$');
  if (scheme !== 'scrypt' || !salt || !hash) return false;
  const cost = { N: Number(n), r: Number(r), p: Number(p) };
  if (!Number.isInteger(cost.N) || !Number.isInteger(cost.r) || !Number.isInteger(cost.p)) return false;
  const expected = Buffer.from(hash, 'base64url');
  const actual = await scrypt(password.normalize('NFC'), Buffer.from(salt, 'base64url'), expected.length, {
    ...cost,
    maxmem: maxmem(cost.N, cost.r),
  });
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}

/** A hash of no one's password: unknown e-mails are checked against it, so they take as long as known ones. */
export const DUMMY_HASH =
  'scrypt$32768$8$1$AAAAAAAAAAAAAAAAAAAAAA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA';
