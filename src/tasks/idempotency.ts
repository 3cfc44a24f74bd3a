/**
 * Idempotency-Key handling (CONTRACT §4), shared by task creation and library creations.
 *
 * The first request with a key inserts a `processing` row in a transaction of its own; the creation's
 * own transaction turns it `done` with the resource id, so a replay and the resource can never
 * disagree. A refused request deletes the row, so the key may be reused. A `processing` row whose lock
 * ran out belonged to a crashed (or very slow) process and may be taken over.
 *
 * Every claim carries a random token, and completing or releasing touches only the row that still holds
 * it (issue 10.1): a request overtaken after its lock ran out can neither create a second resource (its
 * whole creation transaction rolls back, so no second hold) nor free the key under the request that took
 * it over.
 */
import { createHash, randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Db, Tx } from '../db/index.ts';
import { isUniqueViolation } from '../db/index.ts';
import { errors, isApiError } from '../errors.ts';
import type { Clock } from '../lib/index.ts';

/**
 * How long a processing row blocks others before it counts as abandoned (milliseconds). Acceptance is
 * bounded well below it (URL downloads: `DOWNLOAD_TIMEOUT`, 30 s); a request that overruns it anyway is
 * fenced by its claim token.
 */
export const PROCESSING_LOCK_MS = 60_000;
/** How long keys are kept (CONTRACT §4: at least 24 hours). */
export const IDEMPOTENCY_RETENTION_MS = 48 * 60 * 60 * 1000;
/** How often a request that waits for the original under its key (`run`'s `waitMs`) looks again (ms). */
const WAIT_POLL_MS = 200;
/**
 * Printable ASCII, the space included (as for X-Request-Id); HTTP trims spaces at either end. The OpenAPI
 * document declares the header with it (`idempotencyKeyHeader`).
 */
export const IDEMPOTENCY_KEY_PATTERN = /^[\x20-\x7e]{1,255}$/;

/** Canonical JSON: object keys sorted at every depth, so key order never changes the hash. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

export function requestHash(scope: string, body: unknown): string {
  return createHash('sha256').update(scope).update('\n').update(canonicalJson(body)).digest('hex');
}

/**
 * The request's Idempotency-Key, from its header lines as sent (Node's `rawHeaders`: name, value, name, …),
 * or null without one. Its form: 1–255 printable characters. The header is one value: sent twice, it is
 * refused, where a joined `a, b` would make a third key that neither of the two matches.
 */
export function parseIdempotencyKey(rawHeaders: readonly string[]): string | null {
  let value: string | undefined;
  let count = 0;
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    if (rawHeaders[i]?.toLowerCase() !== 'idempotency-key') continue;
    value = rawHeaders[i + 1];
    count++;
  }
  if (count === 0) return null;
  if (count > 1) {
    throw errors.invalidRequest({
      en: 'Send one Idempotency-Key header, not several.',
      ru: 'Отправьте один заголовок Idempotency-Key, а не несколько.',
    });
  }
  if (value === undefined || !IDEMPOTENCY_KEY_PATTERN.test(value)) {
    throw errors.invalidRequest({
      en: 'Idempotency-Key must be 1 to 255 printable characters.',
      ru: 'Idempotency-Key должен состоять из 1–255 печатных символов.',
    });
  }
  return value;
}

/**
 * Marks the key done with the created resource, inside the creation's transaction. Throws ClaimLost
 * when another request has taken the key over, so the whole creation rolls back.
 *
 * `status` null: the request answers only later (a creation that waits, `Prefer: wait=N`), and records its
 * code with `answered`; until then, and at most until `answerBy`, a replay is 409 request_in_progress, as
 * for any request still being processed (CONTRACT §4). A request that never records its code (its process
 * ended) is replayed as 202, the creation's own answer.
 */
export type CompleteClaim = (
  tx: Tx,
  status: number | null,
  resourceId: string,
  answerBy?: Date,
) => Promise<void>;

/** The code a creation answered that recorded none in time (`CompleteClaim`): the accepted task's. */
const UNRECORDED_STATUS = 202;

/** The claim's lock ran out and another request took the key over; this request must not create. */
export class ClaimLost extends Error {
  override name = 'ClaimLost';
}

export type IdempotencyClaim =
  | {
      kind: 'new';
      complete: CompleteClaim;
      release: () => Promise<void>;
    }
  | { kind: 'replay'; status: number; resourceId: string };

export class IdempotencyStore {
  readonly #db: Db;
  readonly #clock: Clock;

  constructor(deps: { db: Db; clock: Clock }) {
    this.#db = deps.db;
    this.#clock = deps.clock;
  }

  /**
   * Claims `key` for a request with the given hash: a new claim (create, then `complete` in the creation
   * transaction or `release` on refusal), or the replay of the finished original.
   * Throws 409 idempotency_conflict for another request under the key, 409 request_in_progress while
   * the original is still being processed.
   */
  async claim(
    accountId: string,
    key: string,
    hash: string,
    lockMs = PROCESSING_LOCK_MS,
  ): Promise<IdempotencyClaim> {
    const now = this.#clock.now();
    const row = {
      account_id: accountId,
      key,
      request_hash: hash,
      state: 'processing' as const,
      response_status: null,
      resource_id: null,
      created_at: now.toISOString(),
      locked_until: new Date(now.getTime() + lockMs).toISOString(),
      claim_token: randomUUID(),
    };
    const db = this.#db.db;
    try {
      await db.insertInto('idempotency_keys').values(row).execute();
    } catch (error) {
      if (!isUniqueViolation(error)) throw error;
      const existing = await db
        .selectFrom('idempotency_keys')
        .selectAll()
        .where('account_id', '=', accountId)
        .where('key', '=', key)
        .executeTakeFirst();
      if (!existing) return this.claim(accountId, key, hash, lockMs);
      if (existing.request_hash !== hash) throw errors.idempotencyConflict();
      if (existing.state === 'done' && existing.resource_id !== null) {
        if (existing.response_status === null && existing.locked_until > now.toISOString()) {
          throw errors.requestInProgress();
        }
        return {
          kind: 'replay',
          status: existing.response_status ?? UNRECORDED_STATUS,
          resourceId: existing.resource_id,
        };
      }
      if (existing.locked_until > now.toISOString()) throw errors.requestInProgress();
      // Abandoned by a crashed process: take it over, unless another request just did.
      const taken = await db
        .updateTable('idempotency_keys')
        .set({ locked_until: row.locked_until, created_at: row.created_at, claim_token: row.claim_token })
        .where('account_id', '=', accountId)
        .where('key', '=', key)
        .where('state', '=', 'processing')
        .where('locked_until', '=', existing.locked_until)
        .executeTakeFirst();
      if (Number(taken.numUpdatedRows) === 0) throw errors.requestInProgress();
    }
    return {
      kind: 'new',
      complete: async (tx, status, resourceId, answerBy) => {
        const done = await tx
          .updateTable('idempotency_keys')
          .set({
            state: 'done',
            response_status: status,
            resource_id: resourceId,
            ...(status === null && answerBy !== undefined ? { locked_until: answerBy.toISOString() } : {}),
          })
          .where('account_id', '=', accountId)
          .where('key', '=', key)
          .where('state', '=', 'processing')
          .where('claim_token', '=', row.claim_token)
          .executeTakeFirst();
        if (Number(done.numUpdatedRows) === 0) throw new ClaimLost(`Idempotency-Key ${key} was taken over`);
      },
      release: async () => {
        // Only our own claim: a request that took the key over keeps it.
        await db
          .deleteFrom('idempotency_keys')
          .where('account_id', '=', accountId)
          .where('key', '=', key)
          .where('state', '=', 'processing')
          .where('claim_token', '=', row.claim_token)
          .execute();
      },
    };
  }

  /**
   * Runs a creation under an optional Idempotency-Key: the finished original is replayed; otherwise
   * `create` runs with the hook that marks the key done inside its transaction, and a refused creation
   * frees the key again. The request (`scope`, `body`) is hashed only under a key: without one there is
   * nothing to compare it with.
   *
   * `waitMs`: while the original is still being processed, wait up to this long for its outcome (its
   * replay, or the key again when it was refused) before 409 request_in_progress. The API answers at once
   * (0, CONTRACT §4); a form sent twice waits, so its second send lands on the first one's resource.
   */
  async run<T>(
    claim: {
      accountId: string;
      key: string | null;
      scope: string;
      body: unknown;
      lockMs?: number;
      waitMs?: number;
    },
    handlers: {
      replay(resourceId: string, status: number): Promise<T>;
      create(complete: CompleteClaim | null): Promise<T>;
    },
  ): Promise<T> {
    const { accountId, key } = claim;
    if (key === null) return handlers.create(null);
    const hash = requestHash(claim.scope, claim.body);
    const lockMs = claim.lockMs ?? PROCESSING_LOCK_MS;
    const until = performance.now() + (claim.waitMs ?? 0);
    let claimed: IdempotencyClaim;
    for (;;) {
      try {
        claimed = await this.claim(accountId, key, hash, lockMs);
        break;
      } catch (error) {
        if (!isApiError(error) || error.code !== 'request_in_progress' || performance.now() >= until)
          throw error;
        await sleep(Math.min(WAIT_POLL_MS, until - performance.now()));
      }
    }
    if (claimed.kind === 'replay') return handlers.replay(claimed.resourceId, claimed.status);
    try {
      return await handlers.create(claimed.complete);
    } catch (error) {
      if (error instanceof ClaimLost) return this.#afterLoss({ accountId, hash }, key, handlers);
      await claimed.release();
      throw error;
    }
  }

  /** Overtaken: the request that took the key over answers for both, once it is done. */
  async #afterLoss<T>(
    claim: { accountId: string; hash: string },
    key: string,
    handlers: { replay(resourceId: string, status: number): Promise<T> },
  ): Promise<T> {
    const row = await this.#db.db
      .selectFrom('idempotency_keys')
      .select(['state', 'request_hash', 'response_status', 'resource_id', 'locked_until'])
      .where('account_id', '=', claim.accountId)
      .where('key', '=', key)
      .executeTakeFirst();
    const answered =
      row?.response_status !== null || (row?.locked_until ?? '') <= this.#clock.now().toISOString();
    if (row?.state === 'done' && row.request_hash === claim.hash && row.resource_id !== null && answered) {
      return handlers.replay(row.resource_id, row.response_status ?? UNRECORDED_STATUS);
    }
    throw errors.requestInProgress();
  }

  /**
   * Records the status the original request was finally answered with, when the creation recorded none
   * (`CompleteClaim`): a creation waited on (`Prefer: wait=N`) is answered 200 when the task ended within
   * the wait and 202 otherwise, and its replays answer the same (CONTRACT §4: the original status code).
   */
  async answered(accountId: string, key: string, resourceId: string, status: number): Promise<void> {
    await this.#db.db
      .updateTable('idempotency_keys')
      .set({ response_status: status })
      .where('account_id', '=', accountId)
      .where('key', '=', key)
      .where('state', '=', 'done')
      .where('resource_id', '=', resourceId)
      .execute();
  }

  /** Removes keys older than the retention period; returns how many. */
  async sweep(): Promise<number> {
    const cutoff = new Date(this.#clock.now().getTime() - IDEMPOTENCY_RETENTION_MS).toISOString();
    const result = await this.#db.db
      .deleteFrom('idempotency_keys')
      .where('created_at', '<', cutoff)
      .executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}
