import { type Kysely, sql } from 'kysely';

// The operator's account search composes what it looks for into Unicode NFC, and the operator API keeps
// the names it is sent in NFC, but names stored before keep the form they were sent in: one sent
// decomposed ("и" + U+0306 for "й") was found by no search typed on a keyboard. Each is rewritten in NFC
// (names are not unique, so no two collide). Frozen in time: written against Kysely<unknown>, with the
// rule of the day spelled out here rather than imported.
export async function up(db: Kysely<unknown>): Promise<void> {
  const { rows } = await sql<{ id: string; name: string }>`select id, name from accounts`.execute(db);
  for (const row of rows) {
    const stored = row.name.normalize('NFC');
    if (stored === row.name) continue;
    await sql`update accounts set name = ${stored} where id = ${row.id}`.execute(db);
  }
}

export async function down(): Promise<void> {
  // The forms the names were sent in are not kept: nothing to undo.
}
