import { type Kysely, sql } from 'kysely';

// A key's daily limit (403 key_daily_limit_exceeded) and `GET /v1/me` summed the key's transfers of the
// Moscow day through the index `transfers (key_id, created_at)`: a walk over every task of the key that
// day, in the transaction every creation of the account waits for, and one more index page of its own
// written by every creation. A sum per key and Moscow day, kept in the transactions that change it (a hold
// adds its amount, a void takes it away again), makes both one row, and the index goes. Filled from
// today's transfers: no other day is ever read. Frozen in time: written against Kysely<unknown>.

const moscowParts = new Intl.DateTimeFormat('en-US', {
  timeZone: 'Europe/Moscow',
  year: 'numeric',
  month: '2-digit',
  day: '2-digit',
  hour: '2-digit',
  minute: '2-digit',
  second: '2-digit',
  hourCycle: 'h23',
});

/** The UTC instant the Moscow calendar day of `at` starts. */
function moscowDayStart(at: Date): Date {
  const parts = Object.fromEntries(moscowParts.formatToParts(at).map((p) => [p.type, p.value]));
  const wall = Date.UTC(
    Number(parts.year),
    Number(parts.month) - 1,
    Number(parts.day),
    Number(parts.hour),
    Number(parts.minute),
    Number(parts.second),
  );
  const offsetMs = wall - Math.floor(at.getTime() / 1000) * 1000;
  return new Date(Date.UTC(Number(parts.year), Number(parts.month) - 1, Number(parts.day)) - offsetMs);
}

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('key_day_spend')
    .addColumn('key_id', 'text', (col) => col.notNull())
    .addColumn('day_start', 'text', (col) => col.notNull())
    .addColumn('spent_minor', 'bigint', (col) => col.notNull())
    .addPrimaryKeyConstraint('key_day_spend_pk', ['key_id', 'day_start'])
    .execute();
  const dayStart = moscowDayStart(new Date()).toISOString();
  await sql`insert into key_day_spend (key_id, day_start, spent_minor)
    select key_id, ${dayStart}, sum(amount_minor) from transfers
    where key_id is not null and status in ('pending', 'posted') and created_at >= ${dayStart}
    group by key_id`.execute(db);
  await db.schema.dropIndex('transfers_key_day').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createIndex('transfers_key_day')
    .on('transfers')
    .columns(['key_id', 'created_at'])
    .execute();
  await db.schema.dropTable('key_day_spend').execute();
}
