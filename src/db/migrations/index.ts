import type { Migration, MigrationProvider } from 'kysely/migration';
import * as m0001 from './0001-initial.ts';
import * as m0002 from './0002-libraries.ts';
import * as m0003 from './0003-uploads.ts';
import * as m0004 from './0004-rate-limits.ts';
import * as m0005 from './0005-first-release-tasks.ts';
import * as m0006 from './0006-run-intent.ts';
import * as m0007 from './0007-idempotency-claims.ts';
import * as m0008 from './0008-uploads-by-account.ts';
import * as m0009 from './0009-channels.ts';
import * as m0010 from './0010-run-callbacks.ts';
import * as m0011 from './0011-artifact-upstream-ids.ts';
import * as m0012 from './0012-webhooks.ts';
import * as m0013 from './0013-people.ts';
import * as m0014 from './0014-topups.ts';
import * as m0015 from './0015-tasks-by-account-id.ts';
import * as m0016 from './0016-epochs.ts';
import * as m0017 from './0017-drop-tasks-account-created.ts';
import * as m0018 from './0018-active-task-counts.ts';
import * as m0019 from './0019-partial-indexes.ts';
import * as m0020 from './0020-upstream-deletes.ts';
import * as m0021 from './0021-jobs-due.ts';
import * as m0022 from './0022-drop-tasks-account-model-status.ts';
import * as m0023 from './0023-lent-artifact-links.ts';
import * as m0024 from './0024-key-day-spend.ts';
import * as m0025 from './0025-upstream-cancels.ts';
import * as m0026 from './0026-library-uploads.ts';
import * as m0027 from './0027-task-artifact-views.ts';
import * as m0028 from './0028-people-email-nfc.ts';
import * as m0029 from './0029-delivery-receivers.ts';
import * as m0030 from './0030-ended-task-folders.ts';
import * as m0031 from './0031-people-expiry.ts';
import * as m0032 from './0032-account-names-nfc.ts';
import * as m0033 from './0033-topups-needs-operator.ts';

/** Numbered, append-only migrations; the same set runs on SQLite and PostgreSQL. */
export const migrations: Record<string, Migration> = {
  '0001-initial': m0001,
  '0002-libraries': m0002,
  '0003-uploads': m0003,
  '0004-rate-limits': m0004,
  '0005-first-release-tasks': m0005,
  '0006-run-intent': m0006,
  '0007-idempotency-claims': m0007,
  '0008-uploads-by-account': m0008,
  '0009-channels': m0009,
  '0010-run-callbacks': m0010,
  '0011-artifact-upstream-ids': m0011,
  '0012-webhooks': m0012,
  '0013-people': m0013,
  '0014-topups': m0014,
  '0015-tasks-by-account-id': m0015,
  '0016-epochs': m0016,
  '0017-drop-tasks-account-created': m0017,
  '0018-active-task-counts': m0018,
  '0019-partial-indexes': m0019,
  '0020-upstream-deletes': m0020,
  '0021-jobs-due': m0021,
  '0022-drop-tasks-account-model-status': m0022,
  '0023-lent-artifact-links': m0023,
  '0024-key-day-spend': m0024,
  '0025-upstream-cancels': m0025,
  '0026-library-uploads': m0026,
  '0027-task-artifact-views': m0027,
  '0028-people-email-nfc': m0028,
  '0029-delivery-receivers': m0029,
  '0030-ended-task-folders': m0030,
  '0031-people-expiry': m0031,
  '0032-account-names-nfc': m0032,
  '0033-topups-needs-operator': m0033,
};

export const migrationProvider: MigrationProvider = {
  async getMigrations() {
    return migrations;
  },
};
