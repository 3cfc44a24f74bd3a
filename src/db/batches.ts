/**
 * Batched writes: calls of one kind that arrive together (in the same turn of the event loop, or while
 * the batches of their kind already committing fill every lane) run as one set-based batch in one transaction: a
 * handful of statements for the whole batch instead of a handful per call. A worker's runs start and end
 * many at a time; on PostgreSQL each statement is a round trip that costs the server more than the work
 * it asks for (docs/performance.md, "Dispatch").
 *
 * Batches of one kind commit one at a time on SQLite, whose writes take turns anyway, and a few at once on
 * PostgreSQL (`dialect.batchLanes`), so a batch that waits for a row lock holds up only the calls in it.
 *
 * A batch commits whole or not at all. When it fails, nothing of it is taken for done: each of its calls
 * runs again alone, exactly as it would have without batching, so one call's failure is that call's
 * alone. A lone call runs alone from the start. Every call resolves only after its commit.
 */
import type { Kysely } from 'kysely';
import type { DialectCapabilities, Tx } from './dialect.ts';
import type { Database } from './schema.ts';

/** The database handle a batch commits on (`Db`'s part of it). */
export interface BatchHandle {
  db: Kysely<Database>;
  dialect: DialectCapabilities;
}

export interface BatchKind<I, R> {
  /** The row a call changes: calls of one key never share a batch (the second waits for the next). */
  key(item: I): string;
  /**
   * Every call of the batch, set-based, in the batch's transaction: one result per item, in their order,
   * each what `one` would have answered for it.
   */
  many(tx: Tx, items: readonly I[], dialect: DialectCapabilities): Promise<R[]>;
  /** One call alone, in a transaction of its own. */
  one(handle: BatchHandle, item: I): Promise<R>;
}

/** Most calls one batch takes; the rest wait for the next. */
export const MAX_BATCH = 64;

interface Entry<I, R> {
  item: I;
  resolve(result: R): void;
  reject(error: unknown): void;
}

interface Queue<I, R> {
  entries: Array<Entry<I, R>>;
  /** Batches committing now. */
  inFlight: number;
  /** A start of the next batches is due after the pending I/O. */
  scheduled: boolean;
}

/** The call of `kind` that joins the next batch of its handle. */
export function batched<I, R>(kind: BatchKind<I, R>): (handle: BatchHandle, item: I) => Promise<R> {
  const queues = new WeakMap<object, Queue<I, R>>();

  /** The next batch: the oldest calls, one per key, MAX_BATCH at most; the others keep their places. */
  const take = (queue: Queue<I, R>): Array<Entry<I, R>> => {
    const batch: Array<Entry<I, R>> = [];
    const keys = new Set<string>();
    const left: Array<Entry<I, R>> = [];
    for (const entry of queue.entries) {
      const key = kind.key(entry.item);
      if (batch.length < MAX_BATCH && !keys.has(key)) {
        keys.add(key);
        batch.push(entry);
      } else left.push(entry);
    }
    queue.entries = left;
    return batch;
  };

  const alone = async (handle: BatchHandle, entry: Entry<I, R>): Promise<void> => {
    try {
      entry.resolve(await kind.one(handle, entry.item));
    } catch (error) {
      entry.reject(error);
    }
  };

  const run = async (handle: BatchHandle, batch: Array<Entry<I, R>>): Promise<void> => {
    const [first] = batch;
    if (batch.length === 1 && first !== undefined) return alone(handle, first);
    let results: R[];
    try {
      results = await handle.dialect.groupCommit(handle.db, (tx) =>
        kind.many(
          tx,
          batch.map((entry) => entry.item),
          handle.dialect,
        ),
      );
    } catch {
      // Rolled back whole (or, with its COMMIT's answer lost, committed: then each call finds its row
      // moved already and answers so). Each call runs alone, so the one at fault fails by itself.
      await Promise.all(batch.map((entry) => alone(handle, entry)));
      return;
    }
    batch.forEach((entry, idx) => {
      entry.resolve(results[idx] as R);
    });
  };

  /** Starts batches of what waits, while lanes are free; each batch ended lets the next start. */
  const launch = (handle: BatchHandle, queue: Queue<I, R>): void => {
    while (queue.entries.length > 0 && queue.inFlight < handle.dialect.batchLanes) {
      queue.inFlight += 1;
      void run(handle, take(queue)).finally(() => {
        queue.inFlight -= 1;
        schedule(handle, queue);
      });
    }
  };

  const schedule = (handle: BatchHandle, queue: Queue<I, R>): void => {
    if (queue.scheduled || queue.entries.length === 0 || queue.inFlight >= handle.dialect.batchLanes) return;
    queue.scheduled = true;
    // After the event loop's pending I/O, so that the calls of the same turn make one batch.
    setImmediate(() => {
      queue.scheduled = false;
      launch(handle, queue);
    });
  };

  return (handle, item) =>
    new Promise<R>((resolve, reject) => {
      let queue = queues.get(handle.db);
      if (queue === undefined) {
        queue = { entries: [], inFlight: 0, scheduled: false };
        queues.set(handle.db, queue);
      }
      queue.entries.push({ item, resolve, reject });
      schedule(handle, queue);
    });
}
