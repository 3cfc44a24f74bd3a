/**
 * A YooKassa fake (PROVIDERS.md §8) on loopback: `POST /v3/payments` with HTTP Basic and Idempotence-Key
 * (same key + same body → the same payment; the same key with another body → 400 invalid_request; no key
 * → 400), `GET /v3/payments/{id}`, a confirmation page `/checkout/{id}` whose Pay and Decline buttons move
 * the payment and send the notification, and test controls: make a payment succeed or cancel, send its
 * notification (once, twice, forged), answer 500/429 or hang on demand.
 */
import { createHash, randomUUID } from 'node:crypto';
import {
  type FakeCall,
  type FakeReply,
  type FakeRequest,
  type FakeServer,
  startFakeServer,
} from './server.ts';

export interface FakePayment {
  id: string;
  status: 'pending' | 'waiting_for_capture' | 'succeeded' | 'canceled';
  paid: boolean;
  amount: { value: string; currency: string };
  confirmation: { type: 'redirect'; confirmation_url: string; return_url: string };
  created_at: string;
  description: string;
  metadata: Record<string, string>;
  test: boolean;
  cancellation_details?: { party: string; reason: string };
}

export interface YookassaFakeOptions {
  shopId?: string;
  secretKey?: string;
  port?: number;
  /** Where notifications go (`…/v1/payments/yookassa/notifications` of the service). */
  notifyUrl?: string;
}

const error = (status: number, code: string, description: string, parameter?: string): FakeReply => ({
  status,
  body: { type: 'error', id: randomUUID(), code, description, ...(parameter ? { parameter } : {}) },
});

export class YookassaFake {
  readonly shopId: string;
  readonly secretKey: string;
  notifyUrl: string | null;
  readonly payments = new Map<string, FakePayment>();
  /** Answer the next `count` API calls with `status` (500, 429…). */
  failing: { status: number; count: number } | null = null;
  /**
   * The next `count` creations are carried out and then answered 500 (PROVIDERS.md §8: "outcome unknown:
   * repeat with the same key, or GET").
   */
  failAfterCreate = 0;
  /** While set, `GET /payments/{id}` never answers (a provider that hangs mid read-back). */
  holdReads = false;
  /** How many GET /payments/{id} were received. */
  reads = 0;
  /** The id the next created payment gets instead of a new one (a provider that repeats itself). */
  nextId: string | null = null;
  readonly #keys = new Map<string, { hash: string; id: string }>();
  #server: FakeServer | null = null;

  private constructor(options: YookassaFakeOptions) {
    this.shopId = options.shopId ?? '100500';
    this.secretKey = options.secretKey ?? 'test_secret_key';
    this.notifyUrl = options.notifyUrl ?? null;
  }

  static async start(options: YookassaFakeOptions = {}): Promise<YookassaFake> {
    const fake = new YookassaFake(options);
    fake.#server = await startFakeServer((request) => fake.#handle(request), options.port ?? 0);
    return fake;
  }

  /** The service's settings that point PAYMENTS=yookassa at this fake. */
  get env(): Record<string, string> {
    return {
      PAYMENTS: 'yookassa',
      YOOKASSA_SHOP_ID: this.shopId,
      YOOKASSA_SECRET_KEY: this.secretKey,
      YOOKASSA_BASE_URL: this.baseUrl,
    };
  }

  /** The API's base, what YOOKASSA_BASE_URL takes. */
  get baseUrl(): string {
    return `${this.#server?.url}/v3`;
  }

  get url(): string {
    return this.#server?.url ?? '';
  }

  /** Every request received, in order. */
  get calls(): FakeCall[] {
    return this.#server?.calls ?? [];
  }

  async close(): Promise<void> {
    await this.#server?.close();
  }

  /** The payment moves to succeeded (the payer paid). */
  succeed(id: string): FakePayment {
    const payment = this.#payment(id);
    payment.status = 'succeeded';
    payment.paid = true;
    return payment;
  }

  /** The payment is canceled (the payer declined, or it expired). */
  cancel(id: string, reason = 'expired_on_confirmation'): FakePayment {
    const payment = this.#payment(id);
    payment.status = 'canceled';
    payment.cancellation_details = { party: 'yoo_money', reason };
    return payment;
  }

  /** A notification's body for the payment as it is now; `forge` overrides the object's fields. */
  notification(id: string, forge: Partial<FakePayment> = {}): Record<string, unknown> {
    const payment = { ...(this.payments.get(id) ?? { id }), ...forge };
    const status = (payment as Partial<FakePayment>).status ?? 'succeeded';
    return { type: 'notification', event: `payment.${status}`, object: payment };
  }

  /** Sends the payment's notification to `notifyUrl`; answers our status (null when unreachable). */
  async notify(id: string, forge: Partial<FakePayment> = {}): Promise<number | null> {
    if (!this.notifyUrl) throw new Error('the fake has no notifyUrl');
    try {
      const answer = await fetch(this.notifyUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(this.notification(id, forge)),
        signal: AbortSignal.timeout(15_000),
      });
      await answer.arrayBuffer();
      return answer.status;
    } catch {
      return null;
    }
  }

  #payment(id: string): FakePayment {
    const payment = this.payments.get(id);
    if (!payment) throw new Error(`no fake payment ${id}`);
    return payment;
  }

  async #handle(request: FakeRequest): Promise<FakeReply | null> {
    const checkout = /^\/checkout\/([\w-]+)(?:\/(pay|decline))?$/.exec(request.path);
    if (checkout?.[1]) return this.#checkout(checkout[1], request.method, checkout[2]);
    if (!request.path.startsWith('/v3/')) return null;
    const expected = `Basic ${Buffer.from(`${this.shopId}:${this.secretKey}`).toString('base64')}`;
    if (request.headers.authorization !== expected)
      return error(401, 'invalid_credentials', 'Login or password is incorrect');
    if (this.failing && this.failing.count > 0) {
      this.failing.count -= 1;
      return this.failing.status === 429
        ? error(429, 'too_many_requests', 'Too many requests')
        : error(this.failing.status, 'internal_server_error', 'Internal server error');
    }
    if (request.method === 'POST' && request.path === '/v3/payments') {
      const created = this.#create(request);
      if (created.status !== 200 || this.failAfterCreate === 0) return created;
      this.failAfterCreate -= 1;
      return error(500, 'internal_server_error', 'Internal server error');
    }
    const read = /^\/v3\/payments\/([\w-]+)$/.exec(request.path);
    if (request.method === 'GET' && read?.[1]) {
      this.reads += 1;
      if (this.holdReads) return new Promise<never>(() => {});
      const payment = this.payments.get(read[1]);
      return payment ? { status: 200, body: payment } : error(404, 'not_found', 'Payment not found');
    }
    return error(405, 'method_not_allowed', 'Method not allowed');
  }

  #create(request: FakeRequest): FakeReply {
    const key = request.headers['idempotence-key'];
    if (typeof key !== 'string' || key.length === 0 || key.length > 64)
      return error(400, 'invalid_request', 'Idempotence-Key is required', 'Idempotence-Key');
    const hash = createHash('sha256').update(request.raw).digest('hex');
    const earlier = this.#keys.get(key);
    if (earlier) {
      if (earlier.hash !== hash)
        return error(
          400,
          'invalid_request',
          'Idempotence key duplicated with another body',
          'Idempotence-Key',
        );
      return { status: 200, body: this.payments.get(earlier.id) };
    }
    const body = request.body as Record<string, unknown> | null;
    const amount = body?.amount as { value?: unknown; currency?: unknown } | undefined;
    const confirmation = body?.confirmation as { type?: unknown; return_url?: unknown } | undefined;
    if (typeof amount?.value !== 'string' || !/^\d+\.\d{2}$/.test(amount.value) || amount.currency !== 'RUB')
      return error(400, 'invalid_request', 'Invalid amount', 'amount.value');
    if (confirmation?.type !== 'redirect' || typeof confirmation.return_url !== 'string')
      return error(400, 'invalid_request', 'Invalid confirmation', 'confirmation');
    const id = this.nextId ?? randomUUID();
    this.nextId = null;
    const payment: FakePayment = {
      id,
      status: 'pending',
      paid: false,
      amount: { value: amount.value, currency: 'RUB' },
      confirmation: {
        type: 'redirect',
        confirmation_url: `${this.url}/checkout/${id}`,
        return_url: confirmation.return_url,
      },
      created_at: new Date().toISOString(),
      description: typeof body?.description === 'string' ? body.description : '',
      metadata: (body?.metadata as Record<string, string> | undefined) ?? {},
      test: true,
    };
    this.payments.set(id, payment);
    this.#keys.set(key, { hash, id });
    return { status: 200, body: payment };
  }

  async #checkout(id: string, method: string, action: string | undefined): Promise<FakeReply> {
    const payment = this.payments.get(id);
    if (!payment) return { status: 404, body: 'no such payment' };
    if (method === 'POST' && action) {
      if (payment.status === 'pending') {
        if (action === 'pay') this.succeed(id);
        else this.cancel(id, 'canceled_by_merchant');
        if (this.notifyUrl) await this.notify(id);
      }
      return { status: 303, headers: { location: payment.confirmation.return_url } };
    }
    return {
      status: 200,
      headers: { 'content-type': 'text/html; charset=utf-8' },
      body: `<!doctype html><title>YooKassa fake</title><p>${payment.amount.value} RUB</p>
<form method="post" action="/checkout/${id}/pay"><button>Pay</button></form>
<form method="post" action="/checkout/${id}/decline"><button>Decline</button></form>`,
    };
  }
}
