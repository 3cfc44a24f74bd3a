/**
 * Provider copies of deleted records. A record made at a provider (a cloned voice at ElevenLabs, a Kling
 * element, a Recraft style) is deleted there too: the DELETE that removes it here sets
 * `upstream_delete_at` in the same UPDATE, and the sweeper asks the channel that made it to delete its
 * copy (`LibraryGenerator.deleteRecord`). An attempt that fails while the provider cannot be asked
 * (unreachable, busy, the channel switched off) is made again later, for a week at most; a refusal for
 * good is not. Either way the attempts end with a warning. A creation that failed without its outcome
 * known leaves a deleted stand-in (`unanswered`, no upstream id, created when the creation was sent): its
 * channel is asked to find what it made of it by the record id and delete that
 * (`LibraryGenerator.deleteUnanswered`).
 */
import type { Db } from '../db/index.ts';
import { GenerationError, type LibraryGenerator } from '../generators/index.ts';
import type { Clock } from '../lib/index.ts';
import type { PrivateData } from './types.ts';

/** Time between two attempts at one record (milliseconds). */
export const UPSTREAM_DELETE_RETRY_MS = 5 * 60_000;
/** How long after the record's deletion attempts go on (milliseconds). */
export const UPSTREAM_DELETE_GIVE_UP_MS = 7 * 24 * 60 * 60_000;
/** Our wait for one provider call (milliseconds). */
export const UPSTREAM_DELETE_WAIT_MS = 30_000;

export interface UpstreamDeleteDeps {
  db: Db;
  clock: Clock;
  /** The library side of a channel (LibraryServiceDeps.generatorAt); throws while it cannot be asked. */
  generatorAt?(channel: string): Promise<LibraryGenerator>;
  /** Told of every attempt given up. */
  onGiveUp?(recordId: string, error: unknown): void;
}

/** The provider copy a record leaves behind when deleted: its channel and upstream id, or null. */
export function upstreamCopyOf(p: PrivateData): { channel: string; upstreamId: string } | null {
  return typeof p.channel === 'string' && typeof p.upstream_id === 'string'
    ? { channel: p.channel, upstreamId: p.upstream_id }
    : null;
}

/**
 * One pass over the records whose provider copy is due for deletion; resolves with how many records are
 * done with (copy gone, or attempts given up). Safe in several processes at once: an attempt first moves
 * the record's time forward on the condition that nobody else did, so only one process asks at a time.
 */
export async function deleteUpstreamCopies(deps: UpstreamDeleteDeps, batch = 20): Promise<number> {
  const { db } = deps.db;
  const now = deps.clock.now();
  const due = await db
    .selectFrom('library_records')
    .select(['id', 'model', 'library', 'private', 'created_at', 'deleted_at', 'upstream_delete_at'])
    .where('upstream_delete_at', 'is not', null)
    .where('upstream_delete_at', '<=', now.toISOString())
    .orderBy('upstream_delete_at')
    .limit(batch)
    .execute();
  let gone = 0;
  for (const row of due) {
    const claimed = await db
      .updateTable('library_records')
      .set({ upstream_delete_at: new Date(now.getTime() + UPSTREAM_DELETE_RETRY_MS).toISOString() })
      .where('id', '=', row.id)
      .where('upstream_delete_at', '=', row.upstream_delete_at)
      .executeTakeFirst();
    if (Number(claimed.numUpdatedRows) === 0) continue;
    const stored = JSON.parse(row.private) as PrivateData;
    const copy = upstreamCopyOf(stored);
    const request = { model: row.model, library: row.library, recordId: row.id };
    try {
      if (copy !== null && deps.generatorAt) {
        const generator = await deps.generatorAt(copy.channel);
        await generator.deleteRecord?.(
          { ...request, upstreamId: copy.upstreamId },
          AbortSignal.timeout(UPSTREAM_DELETE_WAIT_MS),
        );
      } else if (stored.unanswered === true && typeof stored.channel === 'string' && deps.generatorAt) {
        const generator = await deps.generatorAt(stored.channel);
        await generator.deleteUnanswered?.(
          { ...request, sentAt: row.created_at },
          AbortSignal.timeout(UPSTREAM_DELETE_WAIT_MS),
        );
      }
    } catch (error) {
      // The provider refused for good (GenerationError): asking again would not change its mind.
      const deletedAt = Date.parse(row.deleted_at ?? now.toISOString());
      const final = error instanceof GenerationError;
      if (!final && now.getTime() - deletedAt < UPSTREAM_DELETE_GIVE_UP_MS) continue;
      deps.onGiveUp?.(row.id, error);
    }
    await db
      .updateTable('library_records')
      .set({ upstream_delete_at: null })
      .where('id', '=', row.id)
      .execute();
    gone += 1;
  }
  return gone;
}
