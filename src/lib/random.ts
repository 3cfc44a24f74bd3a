import { randomBytes } from 'node:crypto';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
/** Bytes at or past this are redrawn: 248 = 4 × 62, so every character keeps the same chance. */
const UNBIASED_BELOW = 256 - (256 % BASE62.length);

/**
 * `length` uniformly random base62 characters (about 5.95 bits each). A byte taken modulo 62 would
 * make the first eight characters likelier than the rest, so bytes of 248 and above are dropped and
 * drawn again (rejection sampling); one in 32 bytes is dropped on average.
 */
export function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const byte of randomBytes(length - out.length + 8)) {
      if (byte >= UNBIASED_BELOW) continue;
      out += BASE62[byte % BASE62.length];
      if (out.length === length) break;
    }
  }
  return out;
}
