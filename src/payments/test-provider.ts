/**
 * The test mode (`PAYMENTS=test`): payments without any provider, kept in the database (`test_payments`)
 * so every process of the service sees the same payment. The confirmation page is the service's own
 * `/topups/{id}/pay`, whose Pay and Decline buttons move the payment and then settle the top-up by reading
 * the payment back, exactly as a provider's notification would.
 */
import type { Db } from '../db/index.ts';
import type { Clock } from '../lib/index.ts';
import { uuidv7 } from '../lib/index.ts';
import type { PaymentProvider, PaymentRequest, ProviderPayment } from './provider.ts';

export class TestProvider implements PaymentProvider {
  readonly name = 'test';
  readonly #db: Db;
  readonly #clock: Clock;
  readonly #publicBaseUrl: string;

  constructor(deps: { db: Db; clock: Clock; publicBaseUrl: string }) {
    this.#db = deps.db;
    this.#clock = deps.clock;
    this.#publicBaseUrl = deps.publicBaseUrl;
  }

  /** One payment per top-up id, like YooKassa's Idempotence-Key: a repeated creation answers the first. */
  async create(request: PaymentRequest): Promise<ProviderPayment> {
    const at = this.#clock.now().toISOString();
    const existing = await this.#byTopup(request.topupId);
    if (existing) return existing;
    await this.#db.db
      .insertInto('test_payments')
      .values({
        id: `test_${uuidv7()}`,
        topup_id: request.topupId,
        amount_minor: request.amountMinor,
        status: 'pending',
        cancellation_reason: null,
        created_at: at,
        updated_at: at,
      })
      .onConflict((oc) => oc.column('topup_id').doNothing())
      .execute();
    const made = await this.#byTopup(request.topupId);
    if (!made) throw new Error(`test payment of ${request.topupId} vanished`);
    return made;
  }

  async read(paymentId: string): Promise<ProviderPayment | null> {
    const row = await this.#db.db
      .selectFrom('test_payments')
      .selectAll()
      .where('id', '=', paymentId)
      .executeTakeFirst();
    return row ? this.#view(row) : null;
  }

  /** The payer's answer on the confirmation page: a pending payment succeeds or is canceled, once. */
  async decide(
    paymentId: string,
    outcome: 'succeeded' | 'canceled',
    reason = 'declined_by_payer',
  ): Promise<void> {
    await this.#db.db
      .updateTable('test_payments')
      .set({
        status: outcome,
        cancellation_reason: outcome === 'canceled' ? reason : null,
        updated_at: this.#clock.now().toISOString(),
      })
      .where('id', '=', paymentId)
      .where('status', '=', 'pending')
      .execute();
  }

  /** Unpaid for a day: canceled, as YooKassa cancels its own unconfirmed payments. */
  async expire(paymentId: string): Promise<void> {
    await this.decide(paymentId, 'canceled', 'expired_on_confirmation');
  }

  async #byTopup(topupId: string): Promise<ProviderPayment | null> {
    const row = await this.#db.db
      .selectFrom('test_payments')
      .selectAll()
      .where('topup_id', '=', topupId)
      .executeTakeFirst();
    return row ? this.#view(row) : null;
  }

  #view(row: {
    id: string;
    topup_id: string;
    amount_minor: number | string;
    status: string;
    cancellation_reason: string | null;
  }): ProviderPayment {
    const status = row.status === 'succeeded' || row.status === 'canceled' ? row.status : 'pending';
    return {
      id: row.id,
      status,
      amountMinor: Number(row.amount_minor),
      currency: 'RUB',
      topupId: row.topup_id,
      confirmationUrl: status === 'pending' ? `${this.#publicBaseUrl}/topups/${row.topup_id}/pay` : null,
      cancellationReason: status === 'canceled' ? (row.cancellation_reason ?? 'declined_by_payer') : null,
    };
  }
}
