import { createHash } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database } from '../db/index.ts';

/**
 * Keys marked until a time of their own: signed-out console sessions, whose signed cookie would otherwise
 * stay valid until it expires. Kept in the database on both engines (the `rate_limits` table, in the
 * layout of rate-limiter-flexible's PostgreSQL store, which drops its expired rows there), so every API
 * process sees a mark, and a restart forgets none. A key is stored as its digest, never in the clear.
 */
export class ExpiringMarks {
  readonly #db: Kysely<Database>;
  readonly #prefix: string;
  readonly #now: () => number;

  constructor(keyPrefix: string, db: Kysely<Database>, now: () => number = Date.now) {
    this.#db = db;
    this.#prefix = `${keyPrefix}:`;
    this.#now = now;
  }

  #stored(key: string): string {
    return this.#prefix + createHash('sha256').update(key).digest('base64url');
  }

  /** Marks `key` for `seconds` (at least one); the marks of this prefix that expired go. */
  async mark(key: string, seconds: number): Promise<void> {
    const now = this.#now();
    const expire = now + Math.max(1, Math.ceil(seconds)) * 1000;
    await this.#db
      .insertInto('rate_limits')
      .values({ key: this.#stored(key), points: 1, expire })
      .onConflict((oc) => oc.column('key').doUpdateSet({ points: 1, expire }))
      .execute();
    await this.#db
      .deleteFrom('rate_limits')
      .where('key', 'like', `${this.#prefix}%`)
      .where('expire', '<=', now)
      .execute();
  }

  /** Whether `key` is marked now. */
  async marked(key: string): Promise<boolean> {
    const row = await this.#db
      .selectFrom('rate_limits')
      .select('key')
      .where('key', '=', this.#stored(key))
      .where('expire', '>', this.#now())
      .executeTakeFirst();
    return row !== undefined;
  }
}
