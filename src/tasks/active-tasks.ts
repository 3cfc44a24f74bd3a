/**
 * The active-task limit (429 too_many_active): unfinished (queued or running) tasks per account and model,
 * kept as a count (`active_task_counts`, migration 0018) in the very transactions that change it, so the
 * check is one row instead of a walk over every unfinished task. A creation takes a place and checks the
 * new count in one statement; the move to a final state gives it back (`transitions.ts`). A creation that
 * is refused later in its transaction (money, daily limit) rolls its place back with everything else.
 */
import { type ActiveTaskCountsTable, prepared, rowsJson, type Tx } from '../db/index.ts';
import { errors } from '../errors.ts';

const placeTaken = prepared<{ accountId: string; model: string }, Pick<ActiveTaskCountsTable, 'active'>>(
  (db, value) =>
    db
      .insertInto('active_task_counts')
      .values({ account_id: value('accountId'), model: value('model'), active: 1 })
      .onConflict((oc) =>
        oc
          .columns(['account_id', 'model'])
          .doUpdateSet((eb) => ({ active: eb('active_task_counts.active', '+', 1) })),
      )
      .returning('active'),
);

const placeGivenBack = prepared<{ accountId: string; model: string }, never>((db, value) =>
  db
    .updateTable('active_task_counts')
    .set((eb) => ({ active: eb('active', '-', 1) }))
    .where('account_id', '=', value('accountId'))
    .where('model', '=', value('model')),
);

/** Unfinished tasks of one model of an account, as counted. */
export async function activeTaskCount(tx: Tx, accountId: string, model: string): Promise<number> {
  const row = await tx
    .selectFrom('active_task_counts')
    .select('active')
    .where('account_id', '=', accountId)
    .where('model', '=', model)
    .executeTakeFirst();
  return Number(row?.active ?? 0);
}

/**
 * Counts one more unfinished task of `model`; throws 429 too_many_active (and the caller's transaction
 * must roll back) when that would pass `maxActive`. Runs under the account lock, so two creations never
 * both take the last place.
 */
export async function takeActivePlace(
  tx: Tx,
  accountId: string,
  model: string,
  maxActive: number,
): Promise<void> {
  const { rows } = await placeTaken(tx, { accountId, model });
  const row = rows[0];
  if (row === undefined) throw new Error('active_task_counts: the upsert returned no row');
  if (Number(row.active) > maxActive) throw errors.tooManyActive(model, maxActive);
}

/** One unfinished task of `model` fewer: in the transaction that moved it to a final state. */
export async function giveBackActivePlace(tx: Tx, accountId: string, model: string): Promise<void> {
  await placeGivenBack(tx, { accountId, model });
}

/** The rows of `placesGivenBack`. */
const PLACES_COLUMNS = { account_id: 'text', model: 'text', count: 'bigint' } as const;

/** `giveBackActivePlaces`' UPDATE. */
const placesGivenBack = prepared<{ rows: string }, never>((db, value, dialect) =>
  db
    .updateTable('active_task_counts')
    .from(dialect.jsonRows(value('rows'), PLACES_COLUMNS))
    .set((eb) => ({ active: eb('active_task_counts.active', '-', eb.ref('v.count')) }))
    .whereRef('active_task_counts.account_id', '=', 'v.account_id')
    .whereRef('active_task_counts.model', '=', 'v.model'),
);

/**
 * `giveBackActivePlace` for every task of a batch (batches.ts) in one statement: one row per account and
 * model, less as many as it has tasks among them. The accounts must be locked already (their settlement
 * locks them first), so the counts are taken in a creation's order: account, then count.
 */
export async function giveBackActivePlaces(
  tx: Tx,
  tasks: ReadonlyArray<{ account_id: string; model: string }>,
): Promise<void> {
  const places = new Map<string, { account_id: string; model: string; count: number }>();
  for (const { account_id, model } of tasks) {
    const key = `${account_id}\u0000${model}`;
    const place = places.get(key) ?? { account_id, model, count: 0 };
    place.count += 1;
    places.set(key, place);
  }
  if (places.size === 0) return;
  // After the accounts' writes that the same batch sends with its COMMIT on PostgreSQL, so after them too.
  await placesGivenBack.atCommit(tx, { rows: rowsJson(tx, PLACES_COLUMNS, [...places.values()]) });
}
