/**
 * Secrets and signatures of Standard Webhooks (CONTRACT §12): a secret is `whsec_` + base64 of random
 * bytes; a signature is `v1,` + base64 HMAC-SHA256 of `id.timestamp.body` under those bytes, made by the
 * `standardwebhooks` package itself so receivers using it agree with us by construction.
 */
import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';

/** Random bytes of a new secret (the specification asks for 24 to 64). */
const SECRET_BYTES = 32;

/** A new signing secret, `whsec_` + base64 of 32 random bytes. */
export function newSecret(): string {
  return `whsec_${randomBytes(SECRET_BYTES).toString('base64')}`;
}

/** The headers of one attempt of one delivery. */
export interface SignedHeaders {
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
  'content-type': 'application/json';
}

/**
 * Signs `body` for the attempt at `at` with every secret given (the current one first; during a
 * rotation's overlap the previous one too, space-separated as the specification allows).
 */
export function signDelivery(id: string, at: Date, body: string, secrets: readonly string[]): SignedHeaders {
  // The timestamp is whole seconds: sign exactly what the header says.
  const seconds = Math.floor(at.getTime() / 1000);
  const signedAt = new Date(seconds * 1000);
  return {
    'webhook-id': id,
    'webhook-timestamp': String(seconds),
    'webhook-signature': secrets.map((secret) => new Webhook(secret).sign(id, signedAt, body)).join(' '),
    'content-type': 'application/json',
  };
}
