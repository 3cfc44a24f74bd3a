import { createHash } from 'node:crypto';
import pg from 'pg';

/**
 * Distinct statements one connection keeps prepared; the rest run unnamed. The service has a few hundred
 * statement texts at most (an `in (…)` list makes one per length), so the bound only guards the server's
 * memory against an unforeseen source of texts.
 */
export const MAX_PREPARED_PER_CONNECTION = 500;

/** PostgreSQL's answer to a prepared `select *` after its table gained or lost a column. */
const CHANGED_RESULT_TYPE = '0A000';

/**
 * A client that prepares each parameterised statement once per connection and then only binds and runs
 * it: PostgreSQL skips parsing and planning it again, which was most of the server's time for the
 * service's short statements (docs/performance.md). The name is a digest of the text, so one name always
 * means one text. Kysely calls `query(text, values)`, the pool `query(text, values, callback)`; every
 * other form passes through unchanged.
 */
class PreparingClient extends pg.Client {
  readonly #names = new Map<string, string>();
  #renamed = 0;

  override query(...args: unknown[]): never {
    const [text, values, callback] = args;
    const call = super.query.bind(this) as (...a: unknown[]) => unknown;
    const plain =
      typeof text !== 'string' ||
      !Array.isArray(values) ||
      values.length === 0 ||
      args.length > 3 ||
      (args.length === 3 && typeof callback !== 'function');
    const name = plain ? null : this.#nameOf(text);
    if (name === null) return call(...args) as never;
    // A migration changed the table under a prepared statement: the next use prepares it afresh under
    // another name (this one fails; inside a transaction, so does the transaction, as any error would).
    const renameOn = (error: unknown): void => {
      if ((error as { code?: unknown } | null)?.code === CHANGED_RESULT_TYPE)
        this.#names.set(text as string, `${name}_${++this.#renamed}`);
    };
    const config = { name, text, values };
    if (typeof callback === 'function')
      return call(config, (error: unknown, result: unknown) => {
        if (error) renameOn(error);
        (callback as (e: unknown, r: unknown) => void)(error, result);
      }) as never;
    return (call(config) as Promise<unknown>).catch((error: unknown) => {
      renameOn(error);
      throw error;
    }) as never;
  }

  #nameOf(text: string): string | null {
    const known = this.#names.get(text);
    if (known !== undefined) return known;
    if (this.#names.size >= MAX_PREPARED_PER_CONNECTION) return null;
    const name = `gta_${createHash('sha1').update(text).digest('hex')}`;
    this.#names.set(text, name);
    return name;
  }
}

/** A pool whose connections prepare the statements they run (PreparingClient). */
export function preparingPool(config: pg.PoolConfig): pg.Pool {
  return new pg.Pool({ ...config, Client: PreparingClient });
}
