/**
 * Free helpers (reference "Free helpers"): lyrics ideas, a detailed music style, a richer image prompt.
 * At most 20 calls per hour per account across all three, shared by its keys and processes: a sliding
 * hour over `helper_calls` with the injected clock; beyond it 429 rate_limited with Retry-After (seconds
 * until the oldest call in the window leaves it). A call the generator could not take does not count:
 * 503 sg_unavailable, or 502 helper_failed when it refused or did not answer in time.
 */
import type { KeyPrincipal } from '../accounts/index.ts';
import { mayUseModel } from '../accounts/index.ts';
import { HOUR_MS } from '../config.ts';
import type { Db } from '../db/index.ts';
import { errors } from '../errors.ts';
import {
  type HelperIO,
  type HelperName,
  LIBRARY_WAIT_MS,
  type LibraryGenerator,
} from '../generators/index.ts';
import type { Clock } from '../lib/index.ts';
import { uuidv7 } from '../lib/index.ts';
import type { ModelService } from '../models/index.ts';
import { askGenerator } from './ask-generator.ts';

/** Reference "Limits": helper calls, 20 per hour per account. */
export const HELPER_CALLS_PER_HOUR = 20;

/** The model each helper belongs to (a key restricted to other models may not call it). */
export const HELPER_MODELS: Record<HelperName, string> = {
  lyrics: 'music',
  'style-boost': 'music',
  enhance: 'image',
};

export interface HelperServiceDeps {
  db: Db;
  clock: Clock;
  /**
   * The generator that runs a model's helpers: its provider's library side where a channel serves the
   * model, the simulator otherwise. May throw GeneratorUnavailable (503 sg_unavailable).
   */
  generatorFor(model: string): Promise<LibraryGenerator>;
  /** Availability of the models the helpers belong to (a switched-off model answers 503). */
  models: Pick<ModelService, 'state'>;
  /** Calls per sliding window (RATE_LIMIT_HELPERS). (Default: 20 an hour) */
  limit?: { count: number; windowMs: number };
}

export class HelperService {
  readonly #deps: HelperServiceDeps;

  constructor(deps: HelperServiceDeps) {
    this.#deps = deps;
  }

  async run<H extends HelperName>(
    principal: KeyPrincipal,
    helper: H,
    input: HelperIO[H]['input'],
  ): Promise<HelperIO[H]['output']> {
    const model = HELPER_MODELS[helper];
    if (!mayUseModel(principal, model)) throw errors.modelNotAllowedForKey(model);
    if (!(await this.#deps.models.state(model)).available) throw errors.modelUnavailable(model);
    const generator = await askGenerator('helper_failed', () => this.#deps.generatorFor(model));
    await askGenerator('helper_failed', () => generator.ensureAvailable(input));
    const callId = await this.#take(principal.accountId);
    try {
      return await askGenerator('helper_failed', () =>
        generator.runHelper(helper, input, AbortSignal.timeout(LIBRARY_WAIT_MS)),
      );
    } catch (error) {
      await this.#deps.db.db.deleteFrom('helper_calls').where('id', '=', callId).execute();
      throw error;
    }
  }

  /** Counts the call against the sliding hour, or refuses it with 429 and the wait until a slot frees. */
  async #take(accountId: string): Promise<string> {
    const { db, clock } = this.#deps;
    const { count: limit, windowMs } = this.#deps.limit ?? {
      count: HELPER_CALLS_PER_HOUR,
      windowMs: HOUR_MS,
    };
    const now = clock.now();
    const windowStart = new Date(now.getTime() - windowMs).toISOString();
    return db.dialect.transaction(db.db, async (tx) => {
      await db.dialect.lockAccount(tx, accountId);
      await tx
        .deleteFrom('helper_calls')
        .where('account_id', '=', accountId)
        .where('at', '<=', windowStart)
        .execute();
      const calls = await tx
        .selectFrom('helper_calls')
        .select('at')
        .where('account_id', '=', accountId)
        .orderBy('at', 'asc')
        .execute();
      if (calls.length >= limit) {
        const oldest = new Date(calls[calls.length - limit]?.at ?? now.toISOString()).getTime();
        const wait = Math.max(1, Math.ceil((oldest + windowMs - now.getTime()) / 1000));
        // Named beside the account's budget (which may have requests left), so the headers explain the 429.
        throw errors.rateLimited(wait, {
          'RateLimit-Policy': `"helpers";q=${limit};w=${Math.ceil(windowMs / 1000)}`,
          RateLimit: `"helpers";r=0;t=${wait}`,
        });
      }
      const id = uuidv7(now.getTime());
      await tx
        .insertInto('helper_calls')
        .values({ id, account_id: accountId, at: now.toISOString() })
        .execute();
      return id;
    });
  }
}
