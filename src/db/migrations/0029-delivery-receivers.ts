import { type Kysely, sql } from 'kysely';

// Each delivery keeps its receiver (the URL's host and port), so that a claim can leave out every delivery
// of a host that has its share of the sender's slots in one condition. Left out one URL at a time, a dead
// receiver whose deliveries each go to a URL of their own (a task's `webhook_url` naming the task) hid every
// other host's deliveries queued behind its backlog. Pending deliveries get theirs here; finished ones are
// never claimed again. Frozen in time: written against Kysely<unknown>, with the rule of the day (WHATWG
// URL's `host`) spelled out here rather than imported.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('webhook_deliveries').addColumn('receiver', 'text').execute();
  const { rows } = await sql<{
    id: string;
    url: string;
  }>`select id, url from webhook_deliveries where state = 'pending'`.execute(db);
  for (const row of rows) {
    let receiver: string;
    try {
      receiver = new URL(row.url).host;
    } catch {
      receiver = row.url;
    }
    await sql`update webhook_deliveries set receiver = ${receiver} where id = ${row.id}`.execute(db);
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('webhook_deliveries').dropColumn('receiver').execute();
}
