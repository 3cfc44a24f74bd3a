import type { Migration, MigrationProvider } from 'kysely/migration';
import * as m0001 from './0001-initial.ts';

/** Numbered, append-only migrations; the same set runs on SQLite and PostgreSQL. */
export const migrations: Record<string, Migration> = {
  '0001-initial': m0001,
};

export const migrationProvider: MigrationProvider = {
  async getMigrations() {
    return migrations;
  },
};
