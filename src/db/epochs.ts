import type { Kysely } from 'kysely';
import { BoundedMap } from '../lib/index.ts';
import type { Tx } from './dialect.ts';
import type { Database } from './schema.ts';

/**
 * The `epochs` table: change counters that processes compare to know whether what they keep in memory
 * is still true. A change that a cache must notice moves its counter in the changing transaction
 * (`bumpEpoch`); on SQLite a cache reads the counter straight on the handle (`epochReaderOf`), which is
 * synchronous and, inside a transaction that holds SQLite's only write lock, exact: no other process can
 * have committed anything the read does not see.
 */
export type EpochReader = (name: string) => number;

/** Each SQLite handle's reader, by its Kysely adapter (one per handle, shared by its transactions). */
const readers = new WeakMap<object, EpochReader>();

/** Registers the reader of a SQLite handle (connect.ts). */
export function registerEpochReader(db: Kysely<Database>, reader: EpochReader): void {
  readers.set(db.getExecutor().adapter, reader);
}

/** The synchronous epoch reader of a SQLite handle or of one of its transactions; null on PostgreSQL. */
export function epochReaderOf(db: Kysely<Database>): EpochReader | null {
  return readers.get(db.getExecutor().adapter) ?? null;
}

/** Moves the counter `name` on in this transaction (made at 1 when no row has it yet). */
export async function bumpEpoch(tx: Tx, name: string): Promise<void> {
  await tx
    .insertInto('epochs')
    .values({ name, value: 1 })
    .onConflict((oc) => oc.column('name').doUpdateSet((eb) => ({ value: eb('epochs.value', '+', 1) })))
    .execute();
}

/**
 * Values kept while an epoch stays where it was: a value read at one epoch is never given out at another,
 * and the first look at a new epoch forgets everything kept before. For caches of rows that change rarely
 * on SQLite (`epochReaderOf`, `Db.readEpoch`): read the epoch first, then look, then read the row and keep
 * it under the epoch read before it, so a row is never kept under an epoch newer than itself.
 */
export class KeptUntilEpoch<K, V> {
  #epoch: number | null = null;
  readonly #values: BoundedMap<K, V>;

  constructor(capacity: number) {
    this.#values = new BoundedMap(capacity);
  }

  /** The value kept for `key` at `epoch`, or undefined. */
  get(epoch: number, key: K): V | undefined {
    if (epoch !== this.#epoch) {
      this.#values.clear();
      this.#epoch = epoch;
    }
    return this.#values.get(key);
  }

  /** Keeps `value`, read after `epoch` was, unless the epoch has moved on since. */
  set(epoch: number, key: K, value: V): void {
    if (epoch === this.#epoch) this.#values.set(key, value);
  }
}
