/**
 * Read side of the wallet for the dashboard's overview (CONTRACT §13): balances, and what was spent per
 * Moscow day and model. "Spent" is what was captured: a hold that was voided cost nothing, and one still
 * pending is shown as held, not spent.
 */
import { sql } from 'kysely';
import type { Db, Tx } from '../db/index.ts';
import { type Clock, moscowDay } from '../lib/index.ts';
import { type Balances, balancesOf } from './ledger.ts';

/** Spend of the last `days` Moscow days, oldest first. */
export interface SpendByDay {
  /** The Moscow calendar days (`YYYY-MM-DD`), oldest first, today last. */
  days: string[];
  /** Captured kopecks per model, one number per day of `days`; models without spend are left out. */
  byModel: Record<string, number[]>;
}

const DAY_MS = 24 * 60 * 60 * 1000;

/** The Moscow day's date (`YYYY-MM-DD`) of the instant that starts it. */
function moscowDate(start: Date): string {
  return new Date(start.getTime() + 12 * 60 * 60 * 1000).toLocaleDateString('en-CA', {
    timeZone: 'Europe/Moscow',
  });
}

/**
 * Captured amounts of the account grouped by Moscow day and model over the `days` days ending with the
 * day of `now`. Grouped in the database: the day of each entry is a `case` over the days' UTC starts
 * (stored times are ISO text in UTC, so they compare as text on both dialects).
 */
export async function spendByDay(tx: Tx, accountId: string, days: number, now: Date): Promise<SpendByDay> {
  const starts: Date[] = [];
  let start = moscowDay(now).start;
  for (let i = 0; i < days; i += 1) {
    starts.unshift(start);
    // The day before starts somewhere in the 24 hours before this one's start.
    start = moscowDay(new Date(start.getTime() - DAY_MS / 2)).start;
  }
  const first = starts[0];
  const end = moscowDay(now).end;
  if (first === undefined) return { days: [], byModel: {} };
  const bucket = sql<number>`case ${sql.join(
    starts
      .slice(1)
      .map((s, i) => sql`when ledger_entries.created_at < ${s.toISOString()} then ${sql.lit(i)}`),
    sql` `,
  )} else ${sql.lit(days - 1)} end`;
  const rows = await tx
    .selectFrom('ledger_entries')
    .innerJoin('tasks', 'tasks.id', 'ledger_entries.task_id')
    .select((eb) => [
      bucket.as('day'),
      'tasks.model as model',
      eb.fn.sum<number | string>('ledger_entries.amount_minor').as('amount'),
    ])
    .where('ledger_entries.account_id', '=', accountId)
    .where('ledger_entries.type', '=', 'capture')
    .where('ledger_entries.created_at', '>=', first.toISOString())
    .where('ledger_entries.created_at', '<', end.toISOString())
    // By position: PostgreSQL would not match the select's `case` to a copy with other parameter numbers.
    .groupBy([sql`1`, sql`2`])
    .execute();
  const byModel: Record<string, number[]> = {};
  for (const row of rows) {
    const series = byModel[row.model] ?? new Array<number>(days).fill(0);
    series[Number(row.day)] = Number(row.amount);
    byModel[row.model] = series;
  }
  return { days: starts.map(moscowDate), byModel };
}

/** What the overview page shows of an account's wallet. */
export interface WalletOverview {
  balances: Balances;
  spend: SpendByDay;
}

/** The wallet's read side as a service, so pages never query the database themselves. */
export class WalletReader {
  readonly #db: Db;
  readonly #clock: Clock;

  constructor(deps: { db: Db; clock: Clock }) {
    this.#db = deps.db;
    this.#clock = deps.clock;
  }

  /** Balances and the spend of the last `days` Moscow days; null for an unknown account. */
  async overview(accountId: string, days = 30): Promise<WalletOverview | null> {
    const balances = await balancesOf(this.#db.db, accountId);
    if (!balances) return null;
    return { balances, spend: await spendByDay(this.#db.db, accountId, days, this.#clock.now()) };
  }
}
