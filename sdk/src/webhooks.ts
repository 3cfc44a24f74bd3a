import { Webhook } from 'standardwebhooks';
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

/**
 * Checks a delivery per Standard Webhooks (standardwebhooks.com): the HMAC-SHA256 of `id.timestamp.body`
 * under `secret` (`whsec_…`; any of the signatures in the header, so a rotated secret keeps working) and a
 * timestamp within five minutes. `payload` must be the raw body as received, not re-serialised JSON.
 * Resolves with the parsed event; throws WebhookVerificationError otherwise.
 */
export function verify(payload: string | Uint8Array, headers: HeadersLike, secret: string): WebhookEvent {
  const body = typeof payload === 'string' ? payload : new TextDecoder().decode(payload);
  try {
    return new Webhook(secret).verify(body, pick(headers)) as WebhookEvent;
  } catch (error) {
    throw new WebhookVerificationError((error as Error).message, { cause: error });
  }
}

/** `webhooks.verify(payload, headers, secret)`, usable without a client. */
export const webhooks = { verify } as const;
