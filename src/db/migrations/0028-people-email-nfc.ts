import { type Kysely, sql } from 'kysely';

// Sign-up, sign-in and every look-up of an address take it trimmed, lowercased and in Unicode NFC
// (RFC 6532 §3.1), but addresses stored before NFC was added keep the form they were typed in: one typed
// with a decomposed accent ("e" + U+0301) could no longer sign in as typed, nor be found by the operator.
// Each is rewritten in the stored form, unless that form is another person's address already (the two
// were told apart before): that one is left as it is for the operator. Frozen in time: written against
// Kysely<unknown>, with the rule of the day spelled out here rather than imported.
export async function up(db: Kysely<unknown>): Promise<void> {
  const { rows } = await sql<{
    id: string;
    email: string;
  }>`select id, email from people order by created_at, id`.execute(db);
  const taken = new Set(rows.map((row) => row.email));
  for (const row of rows) {
    const stored = row.email.trim().toLowerCase().normalize('NFC');
    if (stored === row.email || taken.has(stored)) continue;
    await sql`update people set email = ${stored} where id = ${row.id}`.execute(db);
    taken.add(stored);
  }
}

export async function down(): Promise<void> {
  // The forms the addresses were typed in are not kept: nothing to undo.
}
