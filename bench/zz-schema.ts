import { createDb, migrateToLatest } from '../src/db/index.ts';
const db = createDb('sqlite:/tmp/zz-schema.db');
await migrateToLatest(db);
const { sql } = await import('kysely');
const r = await sql<{ sql: string }>`select sql from sqlite_master where tbl_name in ('tasks','jobs','ledger_entries','transfers') and sql is not null`.execute(db.db);
for (const row of r.rows) console.log(row.sql);
await db.db.destroy();
