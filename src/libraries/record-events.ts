/**
 * `library.ready` and `library.failed` webhooks (CONTRACT §12): sent when a record of a kind that learns
 * or waits (one with states: voices that are verified, styles that train, elements made at a provider)
 * reaches `ready` or `failed`, at its creation or later. The data is the record as GET answers it. Kinds
 * without states are ready the moment the creation answers, which says so itself.
 */
import type { Tx } from '../db/index.ts';
import { emitEvent, type LibraryEventType } from '../events/index.ts';
import { viewOf } from './records.ts';
import { findLibrary } from './registry.ts';
import type { StoredRecord } from './types.ts';

const EVENT_OF: Readonly<Record<string, LibraryEventType>> = {
  ready: 'library.ready',
  failed: 'library.failed',
};

/** Queues the record's event when its status became ready or failed (`before`: null at creation). */
export async function recordChanged(
  tx: Tx,
  before: string | null,
  after: StoredRecord,
  at: Date,
): Promise<void> {
  const type = EVENT_OF[after.status];
  if (type === undefined || before === after.status) return;
  const decl = findLibrary(after.model, after.library);
  if (!decl?.states) return;
  await emitEvent(tx, {
    accountId: after.accountId,
    type,
    recordId: after.id,
    at,
    data: async () => viewOf(decl, after),
  });
}
