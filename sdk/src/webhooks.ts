import { hmacSha256, sameBytes } from './hmac-sha256.ts';
import type { TaskEventType } from './tasks.ts';
import type { Task } from './types.gen.ts';

/** Event types of webhooks (CONTRACT §12). */
export type WebhookEventType = TaskEventType | 'library.ready' | 'library.failed';

/** A webhook's body: `data` is the task as GET /v1/tasks/{id} answers it, or the library record. */
export interface WebhookEvent {
  type: WebhookEventType;
  /** ISO 8601. */
  timestamp: string;
  data: Task | Record<string, unknown>;
}

/** An account's webhook endpoint (POST /v1/webhooks answers it with its `secret`, once). */
export interface WebhookEndpoint {
  id: string;
  url: string;
  events: WebhookEventType[];
  description: string | null;
  created_at: string;
  /** Present only in the creation's answer (and its replays under the same Idempotency-Key). */
  secret?: string;
}

/** The signature or the timestamp of a delivery did not check out: do not trust its body. */
export class WebhookVerificationError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'WebhookVerificationError';
  }
}

/** Headers as a plain object (any case) or a fetch `Headers`. */
export type HeadersLike = Headers | Record<string, string | string[] | undefined>;

const NAMES = ['webhook-id', 'webhook-timestamp', 'webhook-signature'] as const;

function pick(headers: HeadersLike): Record<string, string> {
  const out: Record<string, string> = {};
  if (typeof (headers as Headers).get === 'function') {
    for (const name of NAMES) out[name] = (headers as Headers).get(name) ?? '';
    return out;
  }
  const lower = Object.fromEntries(
    Object.entries(headers).map(([key, value]) => [
      key.toLowerCase(),
      Array.isArray(value) ? value[0] : value,
    ]),
  );
  for (const name of NAMES) out[name] = lower[name] ?? '';
  return out;
}

/** How far a delivery's timestamp may be from now (Standard Webhooks' five minutes). */
const TOLERANCE_SECONDS = 5 * 60;

/** The bytes of standard base64 (secrets and signatures). */
function fromBase64(text: string): Uint8Array {
  return Uint8Array.from(atob(text), (c) => c.charCodeAt(0));
}

/**
 * Checks a delivery per Standard Webhooks (standardwebhooks.com): the HMAC-SHA256 of `id.timestamp.body`
 * under `secret` (`whsec_…`; any of the signatures in the header, so a rotated secret keeps working) and a
 * timestamp within five minutes. `payload` must be the raw body as received, not re-serialised JSON.
 * Returns the parsed event; throws WebhookVerificationError otherwise. Synchronous, with no dependency:
 * the HMAC is the SDK's own (`hmac-sha256.ts`), the same on Node and in any browser page.
 */
export function verify(payload: string | Uint8Array, headers: HeadersLike, secret: string): WebhookEvent {
  const body = typeof payload === 'string' ? payload : new TextDecoder().decode(payload);
  const { 'webhook-id': id, 'webhook-timestamp': stamp, 'webhook-signature': signatures } = pick(headers);
  if (!id || !stamp || !signatures) throw new WebhookVerificationError('Missing required headers');
  const timestamp = Number.parseInt(stamp, 10);
  if (Number.isNaN(timestamp)) throw new WebhookVerificationError('Invalid Signature Headers');
  const now = Math.floor(Date.now() / 1000);
  if (now - timestamp > TOLERANCE_SECONDS) throw new WebhookVerificationError('Message timestamp too old');
  if (timestamp - now > TOLERANCE_SECONDS) throw new WebhookVerificationError('Message timestamp too new');
  let key: Uint8Array;
  try {
    key = fromBase64(secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret);
  } catch (error) {
    throw new WebhookVerificationError('The secret is not base64', { cause: error });
  }
  if (key.length === 0) throw new WebhookVerificationError("Secret can't be empty.");
  const expected = hmacSha256(key, new TextEncoder().encode(`${id}.${timestamp}.${body}`));
  const matched = signatures.split(' ').some((versioned) => {
    const [version, signature] = versioned.split(',');
    if (version !== 'v1' || signature === undefined) return false;
    try {
      // Compared in a time that depends on the length alone.
      return sameBytes(fromBase64(signature), expected);
    } catch {
      return false;
    }
  });
  if (!matched) throw new WebhookVerificationError('No matching signature found');
  try {
    return JSON.parse(body) as WebhookEvent;
  } catch (error) {
    throw new WebhookVerificationError((error as Error).message, { cause: error });
  }
}

/** `webhooks.verify(payload, headers, secret)`, usable without a client. */
export const webhooks = { verify } as const;
