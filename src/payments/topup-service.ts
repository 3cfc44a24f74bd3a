/**
 * Wallet top-ups (CONTRACT §14). A top-up is created with its provider's payment (the top-up id is the
 * payment's idempotence key) and moves pending → succeeded | canceled only from what the provider answers
 * when the payment is read back: a notification, a GET of the top-up, the test page's buttons and the
 * sweep all end in `settle(paymentId)`. On `succeeded` one transaction moves the top-up and credits the
 * wallet through the ledger with the payment id as reference; the conditional update (only a pending
 * top-up moves) and the ledger's unique reference make a second credit impossible, whatever the number
 * of notifications, readers, processes and restarts.
 */
import type { Logger } from 'pino';
import { type Db, isUniqueViolation, type TopupsTable, type Tx } from '../db/index.ts';
import { errors, isApiError } from '../errors.ts';
import { credit } from '../ledger/index.ts';
import type { Clock } from '../lib/index.ts';
import { SharedCalls, uuidv7 } from '../lib/index.ts';
import type { IdempotencyStore } from '../tasks/index.ts';
import { type PaymentProvider, type ProviderPayment, ProviderUnavailable } from './provider.ts';
import { pageOf, view } from './topup-list.ts';

/** Smallest and largest top-up (kopecks). */
export const TOPUP_MIN_MINOR = 100;
export const TOPUP_MAX_MINOR = 100_000_000;
/** A page of a list. */
export const TOPUP_PAGE = 20;
/** How long a top-up may stay pending before a payment the provider no longer knows ends it (ms). */
export const TOPUP_EXPIRY_MS = 24 * 60 * 60 * 1000;

export type TopupStatus = TopupsTable['status'];

/** A top-up as the API answers it. */
export interface TopupView {
  id: string;
  status: TopupStatus;
  amount_minor: number;
  currency: 'RUB';
  confirmation_url: string | null;
  return_url: string;
  cancellation_reason: string | null;
  created_at: string;
  updated_at: string;
}

/** The operator's view adds whose it is and the provider's payment. */
export interface AdminTopupView extends TopupView {
  account_id: string;
  provider: string;
  payment_id: string;
  /** When its succeeded payment was found not creditable; null otherwise. */
  needs_operator_at: string | null;
}

export interface TopupServiceDeps {
  db: Db;
  clock: Clock;
  idempotency: IdempotencyStore;
  /** null: `PAYMENTS=off`, every creation is 503 payments_unavailable. */
  provider: PaymentProvider | null;
  publicBaseUrl: string;
  log: Logger;
}

type Row = TopupsTable;

/** The ledger's refusals of a succeeded payment's credit that no retry changes, and why, as logged. */
const UNCREDITABLE: Readonly<Partial<Record<string, string>>> = {
  // The reference was taken by another amount (an operator's credit made before the API refused that).
  credit_reference_conflict:
    "a succeeded payment's reference is already credited with another amount; not credited",
  // The balance would pass 2^53 kopecks (the ledger's amountTooLarge).
  invalid_request: 'a succeeded payment would take the balance past the largest exact amount; not credited',
};

/**
 * Whether `reference` is the payment id of one of the account's top-ups: the ledger reference its
 * success credits under (CONTRACT §14), which an operator's credit must not take first.
 */
export async function isTopupPayment(tx: Tx, accountId: string, reference: string): Promise<boolean> {
  const row = await tx
    .selectFrom('topups')
    .select('id')
    .where('payment_id', '=', reference)
    .where('account_id', '=', accountId)
    .executeTakeFirst();
  return row !== undefined;
}

export class TopupService {
  readonly #deps: TopupServiceDeps;
  /** Read-backs of payments, one at a time per payment id (`settle`). */
  readonly #reads = new SharedCalls<TopupStatus | 'unknown'>();

  constructor(deps: TopupServiceDeps) {
    this.#deps = deps;
  }

  /** The configured provider's name, or null when top-ups are off. */
  get mode(): string | null {
    return this.#deps.provider?.name ?? null;
  }

  /**
   * POST /v1/topups: 201 with the pending top-up and its confirmation URL. The same Idempotency-Key and
   * body replay it; a provider that does not answer is 503 payments_unavailable and nothing is kept.
   * `waitMs`: how long a request under a key still being processed waits for it (`IdempotencyStore.run`);
   * the API's is 0, an immediate 409 request_in_progress.
   */
  async create(
    accountId: string,
    body: { amount_minor: number; return_url?: string | undefined },
    idempotencyKey: string | null,
    waitMs = 0,
  ): Promise<{ status: number; topup: TopupView; replayed: boolean }> {
    const provider = this.#deps.provider;
    if (!provider) throw errors.paymentsUnavailable(60);
    const person = await this.#deps.db.db
      .selectFrom('people')
      .select('email_confirmed_at')
      .where('account_id', '=', accountId)
      .executeTakeFirst();
    if (person && person.email_confirmed_at === null) throw errors.emailNotConfirmed();
    // Kept as the URL parser writes it: percent-encoded, so it can go into a Location header as it is.
    const returnUrl = body.return_url === undefined ? undefined : new URL(body.return_url).href;
    const request = { amount_minor: body.amount_minor, return_url: returnUrl };
    return this.#deps.idempotency.run<{ status: number; topup: TopupView; replayed: boolean }>(
      { accountId, key: idempotencyKey, scope: 'POST /v1/topups', body: request, waitMs },
      {
        replay: async (id, status) => ({
          status,
          topup: await this.get(accountId, id, false),
          replayed: true,
        }),
        create: async (complete) => {
          const id = `tp_${uuidv7(this.#deps.clock.now().getTime())}`;
          const comeBackTo = returnUrl ?? `${this.#deps.publicBaseUrl}/topups/${id}`;
          let payment: ProviderPayment;
          try {
            payment = await provider.create({
              topupId: id,
              amountMinor: body.amount_minor,
              returnUrl: comeBackTo,
              description: `Top-up ${id}`,
            });
          } catch (error) {
            if (error instanceof ProviderUnavailable) {
              this.#deps.log.warn(
                { err: error, topupId: id },
                'the payment provider did not create a payment',
              );
              throw errors.paymentsUnavailable();
            }
            throw error;
          }
          const at = this.#deps.clock.now().toISOString();
          const row: Row = {
            id,
            account_id: accountId,
            amount_minor: body.amount_minor,
            status: 'pending',
            provider: provider.name,
            payment_id: payment.id,
            confirmation_url: payment.confirmationUrl ?? comeBackTo,
            return_url: comeBackTo,
            idempotency_key: idempotencyKey,
            cancellation_reason: null,
            created_at: at,
            updated_at: at,
            needs_operator_at: null,
          };
          try {
            await this.#deps.db.dialect.transaction(this.#deps.db.db, async (tx) => {
              await tx.insertInto('topups').values(row).execute();
              await complete?.(tx, 201, id);
            });
          } catch (error) {
            if (!isUniqueViolation(error)) throw error;
            // The provider named a payment another top-up already has: never ours to credit twice.
            this.#deps.log.error(
              { topupId: id, paymentId: payment.id },
              'the payment provider answered a payment id already recorded',
            );
            throw errors.paymentsUnavailable();
          }
          return { status: 201, topup: view(row), replayed: false };
        },
      },
    );
  }

  /**
   * GET /v1/topups/{id}: another account's is 404 topup_not_found. A pending top-up is read back from its
   * provider first (`readBack`), so a lost notification never leaves it pending; a provider that does not
   * answer leaves the stored state.
   */
  async get(accountId: string, id: string, readBack = true): Promise<TopupView> {
    let row = await this.#row(id);
    if (!row || row.account_id !== accountId) throw errors.topupNotFound(id);
    if (readBack && row.status === 'pending') {
      try {
        await this.settle(row.payment_id);
      } catch (error) {
        this.#deps.log.warn(
          { err: error, topupId: id },
          'reading a payment back failed; answering the stored state',
        );
      }
      row = (await this.#row(id)) ?? row;
    }
    return view(row);
  }

  /** GET /v1/topups: the account's top-ups, newest first, `limit` a page. */
  async list(
    accountId: string,
    query: { cursor?: string | undefined; limit?: number | undefined },
  ): Promise<{ topups: TopupView[]; next_cursor: string | null }> {
    const page = await pageOf(this.#deps.db, {
      accountId,
      cursor: query.cursor,
      limit: query.limit ?? TOPUP_PAGE,
    });
    return { topups: page.rows.map(view), next_cursor: page.next };
  }

  /**
   * The account's succeeded top-ups whose payment ids are among `paymentIds` (the references of a page of
   * its ledger), as payment id → top-up id, in one query: a credit's reference names its top-up only
   * when the top-up is the account's own and was credited. An operator's credit under another
   * account's payment id is never linked to that top-up.
   */
  async ofPayments(accountId: string, paymentIds: readonly string[]): Promise<Map<string, string>> {
    const wanted = [...new Set(paymentIds)];
    if (wanted.length === 0) return new Map();
    const rows = await this.#deps.db.db
      .selectFrom('topups')
      .select(['id', 'payment_id'])
      .where('account_id', '=', accountId)
      .where('status', '=', 'succeeded')
      .where('payment_id', 'in', wanted)
      .execute();
    return new Map(rows.map((row) => [row.payment_id, row.id]));
  }

  /** The operator's list: every account's top-ups, or one account's, of a status, newest first. */
  async adminList(query: {
    account_id?: string | undefined;
    status?: TopupStatus | undefined;
    cursor?: string | undefined;
    limit?: number | undefined;
  }): Promise<{ topups: AdminTopupView[]; next_cursor: string | null }> {
    const page = await pageOf(this.#deps.db, {
      accountId: query.account_id,
      status: query.status,
      cursor: query.cursor,
      limit: query.limit ?? 50,
    });
    return {
      topups: page.rows.map((row) => ({
        ...view(row),
        account_id: row.account_id,
        provider: row.provider,
        payment_id: row.payment_id,
        needs_operator_at: row.needs_operator_at,
      })),
      next_cursor: page.next,
    };
  }

  /**
   * Reads the payment back from its provider and applies what it says: `succeeded` moves the top-up and
   * credits the wallet in one transaction (reference = the payment id), `canceled` cancels it. Answers
   * the top-up's status after that, or `unknown` for a payment no top-up has. Throws ProviderUnavailable
   * when the provider did not answer (a notification is then answered 500, so it comes again).
   *
   * Reads of one payment go one at a time in this process (`SharedCalls`): notifications and polls that
   * arrive while one runs share the next, so anyone who knows a payment's id (a payer does: it is in the
   * checkout link) cannot make the service read it from the provider once per request, pushing the shop
   * into the provider's rate limit. Each caller's answer still comes from a read begun after it arrived.
   */
  settle(paymentId: string): Promise<TopupStatus | 'unknown'> {
    return this.#reads.run(paymentId, () => this.#settleNow(paymentId));
  }

  async #settleNow(paymentId: string): Promise<TopupStatus | 'unknown'> {
    const row = await this.#deps.db.db
      .selectFrom('topups')
      .selectAll()
      .where('payment_id', '=', paymentId)
      .executeTakeFirst();
    if (!row) return 'unknown';
    if (row.status !== 'pending') return row.status;
    const provider = this.#deps.provider;
    if (!provider || provider.name !== row.provider) return 'pending';
    const payment = await provider.read(paymentId);
    return this.#apply(row, payment);
  }

  /** The test page's buttons: the payer's answer, then the same read-back as a notification. */
  async decideTest(accountId: string, id: string, outcome: 'succeeded' | 'canceled'): Promise<TopupView> {
    const row = await this.#row(id);
    const provider = this.#deps.provider;
    if (!row || row.account_id !== accountId || row.provider !== 'test' || provider?.name !== 'test')
      throw errors.topupNotFound(id);
    const test = provider as PaymentProvider & {
      decide(paymentId: string, outcome: 'succeeded' | 'canceled'): Promise<void>;
    };
    await test.decide(row.payment_id, outcome);
    await this.settle(row.payment_id);
    return view((await this.#row(id)) ?? row);
  }

  /**
   * One pass of the background sweep: pending top-ups untouched for `idleMs` are read back, oldest first,
   * at most `limit`. A lost notification still credits; a payment the provider no longer knows ends
   * canceled after a day. Answers how many were read.
   */
  async sweep(options: { idleMs?: number; limit?: number } = {}): Promise<number> {
    const now = this.#deps.clock.now();
    const before = new Date(now.getTime() - (options.idleMs ?? 60_000)).toISOString();
    const rows = await this.#deps.db.db
      .selectFrom('topups')
      .selectAll()
      .where('status', '=', 'pending')
      .where('updated_at', '<=', before)
      // Left for the operator: another read changes nothing (`#needsOperator`).
      .where('needs_operator_at', 'is', null)
      .orderBy('updated_at')
      .limit(options.limit ?? 50)
      .execute();
    for (const row of rows) {
      try {
        const status = await this.settle(row.payment_id);
        if (status === 'pending') await this.#touch(row, now);
      } catch (error) {
        this.#deps.log.warn({ err: error, topupId: row.id }, 'sweeping a pending top-up failed; next pass');
      }
    }
    return rows.length;
  }

  /** Still pending: its turn in the sweep moves to the back; past a day, a payment nobody knows ends it. */
  async #touch(row: Row, now: Date): Promise<void> {
    const provider = this.#deps.provider;
    if (provider && now.getTime() - Date.parse(row.created_at) > TOPUP_EXPIRY_MS) {
      // A day unpaid: the test mode's payment expires here (YooKassa cancels its own), and a payment the
      // provider no longer knows ends the top-up.
      if (provider.expire) {
        await provider.expire(row.payment_id);
        // Still pending (a payment this provider never made: another mode's, before a switch), it goes to
        // the back like any other, or such top-ups would stay first and the sweep would reach no other.
        if ((await this.settle(row.payment_id)) !== 'pending') return;
      } else if ((await provider.read(row.payment_id)) === null) {
        await this.#cancel(row, 'expired');
        return;
      }
    }
    await this.#deps.db.db
      .updateTable('topups')
      .set({ updated_at: now.toISOString() })
      .where('id', '=', row.id)
      .where('status', '=', 'pending')
      .execute();
  }

  async #apply(row: Row, payment: ProviderPayment | null): Promise<TopupStatus> {
    if (!payment) return 'pending';
    if (payment.status === 'canceled') {
      await this.#cancel(row, payment.cancellationReason ?? 'canceled');
      return (await this.#row(row.id))?.status ?? 'canceled';
    }
    if (payment.status !== 'succeeded') return 'pending';
    const amountMinor = Number(row.amount_minor);
    if (
      payment.id !== row.payment_id ||
      payment.amountMinor !== amountMinor ||
      payment.currency !== 'RUB' ||
      (payment.topupId !== null && payment.topupId !== row.id)
    ) {
      // Never credit what was not asked for; the operator sees it in the log.
      await this.#needsOperator(
        row,
        { topupId: row.id, paymentId: payment.id, amountMinor: payment.amountMinor },
        'a succeeded payment does not match its top-up; not credited',
      );
      return 'pending';
    }
    const at = this.#deps.clock.now();
    let credited: boolean;
    try {
      credited = await this.#deps.db.dialect.transaction(this.#deps.db.db, async (tx) => {
        const moved = await tx
          .updateTable('topups')
          .set({ status: 'succeeded', updated_at: at.toISOString() })
          .where('id', '=', row.id)
          .where('status', '=', 'pending')
          .executeTakeFirst();
        if (Number(moved.numUpdatedRows) === 0) return false;
        // The account's lock before the credit reads the balance, as an operator's credit takes it: two
        // top-ups settled at once would otherwise both pass the 2^53 check on the same old balance.
        await this.#deps.db.dialect.lockAccount(tx, row.account_id);
        await credit(tx, { accountId: row.account_id, amountMinor, reference: row.payment_id, at });
        return true;
      });
    } catch (error) {
      // A refusal of the ledger that no retry changes: crediting another way would break "the payment id
      // is the reference", and a 500 would have the provider resend forever. The top-up stays pending for
      // the operator.
      const lasting = isApiError(error) ? UNCREDITABLE[error.code] : undefined;
      if (lasting === undefined) throw error;
      await this.#needsOperator(row, { topupId: row.id, paymentId: row.payment_id, amountMinor }, lasting);
      return 'pending';
    }
    if (credited) this.#deps.log.info({ topupId: row.id, amountMinor }, 'top-up credited');
    return 'succeeded';
  }

  /**
   * A succeeded payment no read-back will make creditable: the top-up stays pending for the operator, who
   * is told once (the first read to find it marks the row); the sweep reads it no more.
   */
  async #needsOperator(row: Row, fields: Record<string, unknown>, message: string): Promise<void> {
    const marked = await this.#deps.db.db
      .updateTable('topups')
      .set({ needs_operator_at: this.#deps.clock.now().toISOString() })
      .where('id', '=', row.id)
      .where('status', '=', 'pending')
      .where('needs_operator_at', 'is', null)
      .executeTakeFirst();
    if (Number(marked.numUpdatedRows) > 0) this.#deps.log.error(fields, message);
  }

  async #cancel(row: Row, reason: string): Promise<void> {
    await this.#deps.db.db
      .updateTable('topups')
      .set({
        status: 'canceled',
        cancellation_reason: reason.slice(0, 200),
        updated_at: this.#deps.clock.now().toISOString(),
      })
      .where('id', '=', row.id)
      .where('status', '=', 'pending')
      .execute();
  }

  async #row(id: string): Promise<Row | undefined> {
    return this.#deps.db.db.selectFrom('topups').selectAll().where('id', '=', id).executeTakeFirst();
  }
}
