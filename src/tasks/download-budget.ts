/**
 * Bounds on what callers' links make the server download (issues 10.1 and 10.17): all downloads of one
 * request share one time budget (30 s, well below the 60 s Idempotency-Key lock) and one byte cap, and
 * the requests of one account share a byte allowance per minute. Own uploads are never downloaded and
 * never counted.
 *
 * The per-minute allowance lives in rate-limiter-flexible, like the request limits: on PostgreSQL in the
 * shared `rate_limits` table, so several API processes count together; otherwise in memory. It counts
 * kibibytes, so a 2,000 MB allowance stays far inside the table's integer points.
 */
import type pg from 'pg';
import { type RateLimiterAbstract, RateLimiterRes } from 'rate-limiter-flexible';
import { counterStore } from '../db/index.ts';
import { type ApiError, errors } from '../errors.ts';

/** How much the links of requests may make the server download. */
export interface DownloadLimits {
  /** Time for all downloads of one request together (milliseconds). */
  timeoutMs: number;
  /** Bytes of one request's downloads together. */
  requestMaxBytes: number;
  /** Bytes of one account's downloads per minute. */
  accountBytesPerMinute: number;
}

/** The 422 code of a refusal: invalid_settings in a task, invalid_request in a library body. */
export type RefusalKind = 'settings' | 'request';

const KIB = 1024;
const MIB = 1024 * KIB;
/** Bytes counted against the account at a time while downloads stream: at most one store call per MiB. */
const CHARGE_STEP_BYTES = MIB;
const WINDOW_SECONDS = 60;

/** Whole megabytes of a limit; the refusal writes the unit in the request's language (MB, МБ). */
const mb = (bytes: number): number => Math.round(bytes / MIB);

/** Opens a budget per request and keeps each account's allowance per minute. */
export class DownloadAllowance {
  readonly #limits: DownloadLimits;
  readonly #perAccount: RateLimiterAbstract;
  readonly #points: number;

  /** With a PostgreSQL pool the allowance is shared by every API process; otherwise kept in memory. */
  constructor(limits: DownloadLimits, pgPool: pg.Pool | null = null) {
    this.#limits = limits;
    this.#points = Math.max(1, Math.floor(limits.accountBytesPerMinute / KIB));
    this.#perAccount = counterStore('download-kib', this.#points, WINDOW_SECONDS, pgPool);
  }

  /**
   * The budget of one request of `accountId`; 429 rate_limited at once when the account's allowance of
   * this minute is spent, before any download starts.
   */
  async open(accountId: string, kind: RefusalKind): Promise<DownloadBudget> {
    const used = await this.#perAccount.get(accountId);
    if (used && used.consumedPoints >= this.#points) throw this.#spent(used.msBeforeNext);
    return new DownloadBudget({
      limits: this.#limits,
      kind,
      charge: async (kib) => {
        try {
          await this.#perAccount.consume(accountId, kib);
        } catch (rejection) {
          if (rejection instanceof RateLimiterRes) throw this.#spent(rejection.msBeforeNext);
          throw rejection;
        }
      },
    });
  }

  #spent(msBeforeNext: number): ApiError {
    return errors.downloadAllowanceSpent(msBeforeNext / 1000, mb(this.#limits.accountBytesPerMinute));
  }
}

/**
 * What one request may still download. Its `signal` ends every download of the request at once: when
 * the time is up, the bytes pass the cap, the account's allowance runs out, or another link was refused.
 */
export class DownloadBudget {
  readonly #controller = new AbortController();
  readonly #timer: NodeJS.Timeout;
  readonly #limits: DownloadLimits;
  readonly #kind: RefusalKind;
  readonly #charge: (kib: number) => Promise<void>;
  #bytes = 0;
  #uncharged = 0;

  constructor(deps: { limits: DownloadLimits; kind: RefusalKind; charge: (kib: number) => Promise<void> }) {
    this.#limits = deps.limits;
    this.#kind = deps.kind;
    this.#charge = deps.charge;
    this.#timer = setTimeout(() => this.abort(this.#timeUp()), deps.limits.timeoutMs);
  }

  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  /** Ends every download of the request with `reason` (the first reason wins). */
  abort(reason: unknown): void {
    if (!this.#controller.signal.aborted) this.#controller.abort(reason);
  }

  /** Counts a chunk about to be written; throws (and ends the request's downloads) past a limit. */
  meter = async (bytes: number): Promise<void> => {
    if (this.signal.aborted) throw this.signal.reason;
    this.#bytes += bytes;
    this.#uncharged += bytes;
    if (this.#bytes > this.#limits.requestMaxBytes) {
      this.abort(errors.downloadsTooLarge(mb(this.#limits.requestMaxBytes)));
      throw this.signal.reason;
    }
    if (this.#uncharged >= CHARGE_STEP_BYTES) await this.#flush();
  };

  /** Stops the clock and counts what is left against the account (its files are in already). */
  async close(): Promise<void> {
    clearTimeout(this.#timer);
    await this.#flush().catch(() => {});
  }

  async #flush(): Promise<void> {
    const kib = Math.ceil(this.#uncharged / KIB);
    if (kib === 0) return;
    this.#uncharged = 0;
    try {
      await this.#charge(kib);
    } catch (error) {
      this.abort(error);
      throw error;
    }
  }

  #timeUp(): ApiError {
    const seconds = Math.round(this.#limits.timeoutMs / 1000);
    const field = this.#kind === 'request' ? 'body' : 'settings';
    const detail = {
      en: `${field}: the linked files could not be downloaded within ${seconds} s together; upload them with POST /v1/files and send their direct links, which are read without a download`,
      ru: `${field}: связанные файлы не удалось скачать за ${seconds} с в сумме; загрузите их через POST /v1/files и передайте их прямые ссылки — они читаются без скачивания`,
    };
    return this.#kind === 'request' ? errors.invalidRequest(detail) : errors.invalidSettings(detail);
  }
}
