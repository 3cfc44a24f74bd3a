import type { Db, Tx } from '../db/index.ts';
import { errors } from '../errors.ts';
import { credit, type LedgerEntry, ledgerOf, MAX_PAGE } from '../ledger/index.ts';
import { type Clock, characters } from '../lib/index.ts';
import type { ModelPatch, ModelService, ModelView } from '../models/index.ts';
import { type AccountView, createAccount, getAccount } from './accounts.ts';
import { type IssuedKey, issueKey, type KeyView, listKeys, revokeKey } from './keys.ts';

/** Most ledger entries one page of the operator's ledger holds, and its default. */
export const LEDGER_PAGE_MAX = MAX_PAGE;
/**
 * Bounds of the operator's inputs, checked here so the API and the command line refuse alike; lengths in
 * characters (code points), as the API's schemas count them.
 */
export const ACCOUNT_NAME_MAX = 200;
export const CREDIT_REFERENCE_MAX = 200;
export const MAX_ACTIVE_LIMIT = 10_000;
export const KEY_NAME_MAX = 200;
/** Most models one key may be restricted to. */
export const KEY_MODELS_MAX = 50;

/** See AdminService's `isPaymentReference`. */
export type PaymentReferenceCheck = (tx: Tx, accountId: string, reference: string) => Promise<boolean>;

/**
 * The operator's operations (CONTRACT §9). The admin routes and the CLI both call this service and hold
 * no logic of their own.
 */
export class AdminService {
  readonly #db: Db;
  readonly #clock: Clock;
  readonly #models: ModelService;
  readonly #onKeyRevoked: () => void;
  readonly #isPaymentReference: PaymentReferenceCheck;

  /**
   * `onKeyRevoked` runs once a revocation has committed: this process's key cache forgets at once, without
   * waiting for the notification that tells the other processes (`KeyAuthenticator`).
   */
  constructor(deps: {
    db: Db;
    clock: Clock;
    models: ModelService;
    onKeyRevoked?: () => void;
    /**
     * Whether a reference is the payment id of one of the account's top-ups (the payments module's
     * `isTopupPayment`): the reference that top-up's success credits under, which a credit must not take.
     */
    isPaymentReference?: PaymentReferenceCheck;
  }) {
    this.#db = deps.db;
    this.#clock = deps.clock;
    this.#models = deps.models;
    this.#onKeyRevoked = deps.onKeyRevoked ?? (() => {});
    this.#isPaymentReference = deps.isPaymentReference ?? (async () => false);
  }

  #tx<T>(fn: (tx: Tx) => Promise<T>): Promise<T> {
    return this.#db.dialect.transaction(this.#db.db, fn);
  }

  /**
   * The name is kept in Unicode NFC, the form the operator's search composes what it looks for into
   * (`findAccounts`): a name sent decomposed (`й` as `и` and a combining breve) was found by no search.
   */
  createAccount(name: string): Promise<AccountView> {
    const trimmed = name.trim().normalize('NFC');
    if (trimmed === '' || characters(trimmed) > ACCOUNT_NAME_MAX) {
      throw errors.invalidRequest({
        en: `name: 1 to ${ACCOUNT_NAME_MAX} characters besides spaces.`,
        ru: `name: от 1 до ${ACCOUNT_NAME_MAX} символов, не считая пробелов.`,
      });
    }
    return this.#tx((tx) => createAccount(tx, { name: trimmed, at: this.#clock.now() }));
  }

  getAccount(id: string): Promise<AccountView> {
    return getAccount(this.#db.db, id);
  }

  /**
   * Credits once per reference; `created` is false when the reference was already used. The reference is
   * taken without spaces around it, as the console's form takes it, so the same-looking reference is one.
   */
  credit(
    accountId: string,
    amountMinor: number,
    given: string,
  ): Promise<{ entry: LedgerEntry; created: boolean }> {
    const reference = given.trim();
    if (!Number.isSafeInteger(amountMinor) || amountMinor < 1) {
      throw errors.invalidRequest({
        en: 'amount_minor: a whole number of kopecks, at least 1.',
        ru: 'amount_minor: целое число копеек, не меньше 1.',
      });
    }
    if (reference.length < 1 || characters(reference) > CREDIT_REFERENCE_MAX) {
      throw errors.invalidRequest({
        en: `reference: 1 to ${CREDIT_REFERENCE_MAX} characters besides spaces.`,
        ru: `reference: от 1 до ${CREDIT_REFERENCE_MAX} символов, не считая пробелов.`,
      });
    }
    return this.#tx(async (tx) => {
      await this.#db.dialect.lockAccount(tx, accountId);
      await getAccount(tx, accountId);
      if (await this.#isPaymentReference(tx, accountId, reference)) throw errors.creditReferenceIsPayment();
      return credit(tx, { accountId, amountMinor, reference, at: this.#clock.now() });
    });
  }

  /** A page of the account's ledger, newest first (ledgerOf); 404 account_not_found for an unknown account. */
  async ledger(
    accountId: string,
    page: { cursor?: string | undefined; limit?: number | undefined } = {},
  ): Promise<{ entries: LedgerEntry[]; next_cursor: string | null }> {
    await getAccount(this.#db.db, accountId);
    const { entries, next } = await ledgerOf(this.#db.db, accountId, page);
    return { entries, next_cursor: next };
  }

  /** An account's keys, newest first (revoked ones too); 404 account_not_found for an unknown account. */
  async keys(accountId: string): Promise<KeyView[]> {
    await getAccount(this.#db.db, accountId);
    return listKeys(this.#db.db, accountId);
  }

  issueKey(
    accountId: string,
    input: { name?: string | null; models?: string[] | null; dailyLimitMinor?: number | null },
  ): Promise<IssuedKey> {
    const { name, models, dailyLimitMinor } = input;
    if (name != null && characters(name) > KEY_NAME_MAX) {
      throw errors.invalidRequest({
        en: `name: at most ${KEY_NAME_MAX} characters.`,
        ru: `name: не больше ${KEY_NAME_MAX} символов.`,
      });
    }
    // An empty list is refused, never read as "every model": that would widen the key.
    if (models != null && (models.length < 1 || models.length > KEY_MODELS_MAX)) {
      throw errors.invalidRequest({
        en: `models: 1 to ${KEY_MODELS_MAX} model keys, or none for every model.`,
        ru: `models: от 1 до ${KEY_MODELS_MAX} ключей моделей или ничего для всех моделей.`,
      });
    }
    if (dailyLimitMinor != null && (!Number.isSafeInteger(dailyLimitMinor) || dailyLimitMinor < 0)) {
      throw errors.invalidRequest({
        en: 'daily_limit_minor: a whole number of kopecks, at least 0.',
        ru: 'daily_limit_minor: целое число копеек, не меньше 0.',
      });
    }
    for (const model of models ?? []) {
      if (!this.#models.find(model)) throw errors.modelNotFound(model);
    }
    return this.#tx(async (tx) => {
      await this.#db.dialect.lockAccount(tx, accountId);
      await getAccount(tx, accountId);
      // A blank name is no name, as the dashboard keeps it.
      const named = name?.trim() || null;
      // A model named twice is kept once, as the API keeps it (the command line stored both).
      const unique = models == null ? null : [...new Set(models)];
      return issueKey(tx, { accountId, ...input, name: named, models: unique, at: this.#clock.now() });
    });
  }

  async revokeKey(keyId: string): Promise<void> {
    await this.#tx((tx) => revokeKey(tx, keyId, this.#clock.now()));
    this.#onKeyRevoked();
  }

  async updateModel(key: string, patch: ModelPatch): Promise<ModelView> {
    // Nothing to change is refused, as the API refuses `{}`: the command line printed the model unchanged.
    if (patch.available === undefined && patch.maxActive === undefined) {
      throw errors.invalidRequest({
        en: 'Send available and/or max_active.',
        ru: 'Передайте available и/или max_active.',
      });
    }
    const max = patch.maxActive;
    if (max !== undefined && max !== null && (!Number.isInteger(max) || max < 1 || max > MAX_ACTIVE_LIMIT)) {
      throw errors.invalidRequest({
        en: `max_active: a whole number from 1 to ${MAX_ACTIVE_LIMIT}.`,
        ru: `max_active: целое число от 1 до ${MAX_ACTIVE_LIMIT}.`,
      });
    }
    const view = await this.#models.update(key, patch);
    if (!view) throw errors.modelNotFound(key);
    return view;
  }

  /**
   * On first start with an empty database: a demo account with a balance and one key, printed once
   * (CONTRACT §1). Returns null when any account exists already. Processes starting together take turns,
   * so exactly one of them makes it (issue 10.11).
   */
  async ensureDemoAccount(balanceMinor: number): Promise<{ account: AccountView; key: IssuedKey } | null> {
    return this.#tx(async (tx) => {
      await this.#db.dialect.lockStep(tx, 'demo-account');
      const any = await tx.selectFrom('accounts').select('id').limit(1).executeTakeFirst();
      if (any) return null;
      const at = this.#clock.now();
      const account = await createAccount(tx, { name: 'Demo', at });
      await credit(tx, { accountId: account.id, amountMinor: balanceMinor, reference: 'demo-start', at });
      const key = await issueKey(tx, { accountId: account.id, name: 'demo', at });
      return { account: await getAccount(tx, account.id), key };
    });
  }
}
