/**
 * The end of a successful run: its files go to storage under a per-run prefix, then the task turns
 * `succeeded` with them and the hold is captured. Whatever breaks in between (a put, the deadline, a
 * cancel that won the race), the files this run stored and no artifact points at are deleted, so a failed
 * finish leaves no bytes behind.
 */
import fs from 'node:fs';
import type { GenerationOutputs } from '../generators/index.ts';
import { uuidv7 } from '../lib/index.ts';
import { markSucceededTogether, type Success } from '../tasks/index.ts';
import { bounded } from './calls.ts';
import { TransientFailure } from './failures.ts';
import type { WorkerDeps } from './worker.ts';

export interface StoreResultsInput {
  deps: Pick<WorkerDeps, 'db' | 'clock' | 'storage' | 'log' | 'resultRetentionMs'>;
  taskId: string;
  outputs: GenerationOutputs;
  /** The run's signal: its end stops a put in progress. */
  signal: AbortSignal;
  /** Timeout of storing one file, and of deleting one (milliseconds). */
  putTimeoutMs: number;
  deleteTimeoutMs: number;
  /** Throws when the run must not commit any more (its deadline passed). */
  beforeCommit(): void;
}

/** Stores the files and marks the task succeeded; false when the task was canceled meanwhile. */
export async function storeResults(input: StoreResultsInput): Promise<boolean> {
  const { deps, taskId, outputs } = input;
  const { db, clock } = deps;
  // Keys are unique per run: if a lost lease ever lets two runs finish, the loser removes only its own files.
  const runId = uuidv7();
  const stored: string[] = [];
  try {
    const artifacts: Success['artifacts'] = [];
    for (const [idx, file] of outputs.files.entries()) {
      const storageKey = `results/${taskId}/${runId}/${idx}`;
      // Before the put: one that fails or times out may still have written the object (a server that
      // answered late), which no artifact and no sweep would ever name again.
      stored.push(storageKey);
      await putFile(input, storageKey, file.path, file.contentType);
      artifacts.push({ ...file, storageKey });
    }
    input.beforeCommit();
    const now = clock.now();
    const success: Success = {
      caption: outputs.caption,
      texts: outputs.texts,
      artifacts,
    };
    // Runs ending together move in one batch (batches.ts).
    const succeeded = await markSucceededTogether(db, {
      taskId,
      success,
      at: now,
      retentionMs: deps.resultRetentionMs,
    });
    // Canceled while the files were being stored: nothing was captured, so the files go too.
    if (!succeeded) await removeOrphans(input, stored);
    return succeeded;
  } catch (error) {
    await removeOrphans(input, stored);
    throw error;
  }
}

async function putFile(
  input: StoreResultsInput,
  key: string,
  file: string,
  contentType: string,
): Promise<void> {
  const { storage } = input.deps;
  const body = fs.createReadStream(file);
  try {
    await bounded(
      'storing a result file',
      (signal) =>
        storage.put(key, body, { contentType, signal }).catch((error: unknown) => {
          // Storage is on our side: any failure of it is worth another attempt.
          throw signal.aborted
            ? error
            : new TransientFailure('storing a result file failed', { cause: error });
        }),
      { signal: input.signal, timeoutMs: input.putTimeoutMs },
    );
  } finally {
    // The put may still be running after we gave up on it; stop reading for it.
    body.destroy();
  }
}

/** Deletes the stored files no artifact row points at (the commit of a success may have gone through). */
async function removeOrphans(input: StoreResultsInput, stored: readonly string[]): Promise<void> {
  if (stored.length === 0) return;
  const { db, storage, log } = input.deps;
  try {
    const rows = await db.db
      .selectFrom('artifacts')
      .select('storage_key')
      .where('task_id', '=', input.taskId)
      .execute();
    const kept = new Set(rows.map((a) => a.storage_key));
    const timeoutMs = input.deleteTimeoutMs;
    await Promise.all(
      stored
        .filter((key) => !kept.has(key))
        .map((key) => bounded('deleting a result file', () => storage.delete(key), { timeoutMs })),
    );
  } catch (error) {
    log.error(
      { err: error, taskId: input.taskId, keys: stored },
      'files of a failed finish were not deleted',
    );
  }
}
