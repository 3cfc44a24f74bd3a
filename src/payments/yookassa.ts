/**
 * YooKassa's payments API (PROVIDERS.md §8): HTTP Basic `shopId:secretKey`, `Idempotence-Key` = the
 * top-up id on creation (same key, same body → the same payment, so a retried creation never makes a
 * second one), redirect confirmation, `metadata.topup_id`. Every call has a time limit; a network failure,
 * a timeout, 5xx, 429 or refused credentials are `ProviderUnavailable` (the caller answers 503). A creation
 * whose outcome is unknown (5xx, a failed connection) is first repeated with the same key.
 */
import { readCapped } from '../lib/index.ts';
import type { PaymentProvider, PaymentRequest, ProviderPayment } from './provider.ts';
import { minorToValue, ProviderUnavailable, valueToMinor } from './provider.ts';

/** Largest answer read from YooKassa, counted after decompression (a payment object is a few KB). */
const MAX_ANSWER_BYTES = 1024 * 1024;

/**
 * Waits before each repeat of a creation whose outcome is unknown (a 5xx, a connection that failed):
 * PROVIDERS.md §8 says to repeat it with the same key, which gives the same payment if the first one was
 * made. A creation that timed out is not repeated here: it already took the call's whole time limit.
 */
const CREATE_REPEATS_MS = [200, 800];

/** A call whose outcome YooKassa did not say: it may have been carried out. */
class OutcomeUnknown extends ProviderUnavailable {}

export interface YookassaOptions {
  shopId: string;
  secretKey: string;
  /** `https://api.yookassa.ru/v3`, or a fake's address in tests. */
  baseUrl: string;
  /** Time limit of one call (milliseconds). (Default: 10 s) */
  timeoutMs?: number;
}

export class YookassaProvider implements PaymentProvider {
  readonly name = 'yookassa';
  readonly #options: YookassaOptions;
  readonly #auth: string;

  constructor(options: YookassaOptions) {
    this.#options = options;
    this.#auth = `Basic ${Buffer.from(`${options.shopId}:${options.secretKey}`).toString('base64')}`;
  }

  async create(request: PaymentRequest): Promise<ProviderPayment> {
    const body = {
      amount: { value: minorToValue(request.amountMinor), currency: 'RUB' },
      capture: true,
      confirmation: { type: 'redirect', return_url: request.returnUrl },
      description: request.description,
      metadata: { topup_id: request.topupId },
    };
    let answer: { status: number; body: unknown } | null = null;
    for (let attempt = 0; answer === null; attempt += 1) {
      try {
        answer = await this.#call('POST', '/payments', body, request.topupId);
      } catch (error) {
        const wait = CREATE_REPEATS_MS[attempt];
        if (!(error instanceof OutcomeUnknown) || wait === undefined) throw error;
        await new Promise((resolve) => setTimeout(resolve, wait));
      }
    }
    if (answer.status !== 200)
      throw new ProviderUnavailable(`YooKassa refused the payment: ${answer.status}${reasonOf(answer.body)}`);
    const payment = parsePayment(answer.body);
    if (!payment) throw new ProviderUnavailable('YooKassa answered a payment of an unknown shape');
    return payment;
  }

  async read(paymentId: string): Promise<ProviderPayment | null> {
    const answer = await this.#call('GET', `/payments/${encodeURIComponent(paymentId)}`);
    if (answer.status === 404 || answer.status === 400) return null;
    if (answer.status !== 200)
      throw new ProviderUnavailable(`YooKassa answered ${answer.status}${reasonOf(answer.body)}`);
    const payment = parsePayment(answer.body);
    if (!payment) throw new ProviderUnavailable('YooKassa answered a payment of an unknown shape');
    return payment;
  }

  async #call(
    method: 'GET' | 'POST',
    path: string,
    body?: unknown,
    idempotenceKey?: string,
  ): Promise<{ status: number; body: unknown }> {
    const headers: Record<string, string> = { authorization: this.#auth, accept: 'application/json' };
    if (body !== undefined) headers['content-type'] = 'application/json';
    if (idempotenceKey !== undefined) headers['idempotence-key'] = idempotenceKey;
    let response: Response;
    try {
      response = await fetch(`${this.#options.baseUrl}${path}`, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(this.#options.timeoutMs ?? 10_000),
        redirect: 'error',
      });
    } catch (error) {
      const timedOut = error instanceof Error && error.name === 'TimeoutError';
      const Failure = timedOut ? ProviderUnavailable : OutcomeUnknown;
      throw new Failure(`YooKassa did not answer: ${String(error)}`, { cause: error });
    }
    let text: string;
    try {
      text = (await readCapped(response, MAX_ANSWER_BYTES)).toString('utf8');
    } catch (error) {
      throw new ProviderUnavailable(`YooKassa's answer was not read: ${String(error)}`, { cause: error });
    }
    let parsed: unknown = null;
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = null;
    }
    // 5xx: outcome unknown (repeat with the same key, or GET); 429: too many; 401/403: our shop's setup.
    if (response.status >= 500)
      throw new OutcomeUnknown(`YooKassa answered ${response.status}${reasonOf(parsed)}`);
    if (response.status === 429 || response.status === 401 || response.status === 403)
      throw new ProviderUnavailable(`YooKassa answered ${response.status}${reasonOf(parsed)}`);
    return { status: response.status, body: parsed };
  }
}

/**
 * What YooKassa's error body says (PROVIDERS.md §8: `code`, `parameter`, `description`), for the log: a
 * shop that requires receipt data answers 400 `invalid_request` naming `receipt`, which the operator must
 * see to know why every top-up is 503. Empty when the body is not such an error.
 */
function reasonOf(body: unknown): string {
  if (body === null || typeof body !== 'object') return '';
  const error = body as Record<string, unknown>;
  const parts = [error.code, error.parameter, error.description]
    .filter((part): part is string => typeof part === 'string' && part !== '')
    .map((part) => part.slice(0, 200));
  return parts.length === 0 ? '' : ` (${parts.join(': ')})`;
}

/** A payment object of YooKassa's, or null when it lacks what a top-up needs. */
export function parsePayment(body: unknown): ProviderPayment | null {
  if (body === null || typeof body !== 'object') return null;
  const p = body as Record<string, unknown>;
  const amount = p.amount as Record<string, unknown> | undefined;
  const amountMinor = valueToMinor(amount?.value);
  const status = p.status;
  if (typeof p.id !== 'string' || amountMinor === null) return null;
  if (
    status !== 'pending' &&
    status !== 'waiting_for_capture' &&
    status !== 'succeeded' &&
    status !== 'canceled'
  )
    return null;
  const metadata = p.metadata as Record<string, unknown> | undefined;
  const confirmation = p.confirmation as Record<string, unknown> | undefined;
  const cancellation = p.cancellation_details as Record<string, unknown> | undefined;
  return {
    id: p.id,
    status,
    amountMinor,
    currency: typeof amount?.currency === 'string' ? amount.currency : '',
    topupId: typeof metadata?.topup_id === 'string' ? metadata.topup_id : null,
    confirmationUrl:
      typeof confirmation?.confirmation_url === 'string' ? confirmation.confirmation_url : null,
    cancellationReason: typeof cancellation?.reason === 'string' ? cancellation.reason : null,
  };
}
