import { setTimeout as sleep } from 'node:timers/promises';
import type { TasksTable } from '../db/index.ts';
import type { ChannelOutcome } from '../generators/index.ts';
import {
  ChannelBusy,
  ChannelOutOfCredit,
  GenerationError,
  type GenerationRequest,
  type RunStart,
  type UpstreamCost,
  UpstreamTrace,
} from '../generators/index.ts';
import { scrubSecrets } from '../observability/index.ts';
import {
  isFinal,
  markFailed,
  recordProgress,
  recordRunKey,
  runKeyOf,
  saveHandleTogether,
} from '../tasks/index.ts';
import { backoffMs } from './backoff.ts';
import { bounded } from './calls.ts';
import {
  moveToRunning,
  recordOutcome,
  recordUpstreamCost,
  requeueJob,
  type Started,
} from './channel-runs.ts';
import { RunDeadline, runTimeoutMs } from './deadline.ts';
import {
  CreateUnconfirmed,
  DeadlineExceeded,
  isCallTimeout,
  isOwnTransient,
  isRunLost,
  isTransient,
  isUpstreamTransient,
  retryAfterOf,
  ShutdownSignal,
} from './failures.ts';
import { channelOfRecords, missingInput, requestOf } from './inputs.ts';
import { type ClaimedJob, releaseJob } from './queue.ts';
import { storeResults } from './results.ts';
import { type RunFolder, RunFolders } from './run-folder.ts';
import type { RunWakes } from './run-wakes.ts';
import { upstreamCancelMade } from './upstream-cancels.ts';
import type { RunOptions, WorkerDeps } from './worker.ts';

/** Longest wait between polls that failed transiently (milliseconds). */
const MAX_POLL_BACKOFF_MS = 30_000;

/** Attempts of a run on a channel: the first and 3 retries (CONTRACT §11). */
const CHANNEL_MAX_ATTEMPTS = 4;
/** Wait before asking again for a free slot (milliseconds); not an attempt. */
const SLOT_WAIT_MS = 1_000;
/** Longest of the waits that use up no attempt (a provider's free slot, our own storage) (milliseconds). */
const MAX_FREE_WAIT_MS = 30_000;
/**
 * Longest wait before a retry that a provider's Retry-After can ask for (milliseconds): the backoff's own
 * ceiling. A longer ask (a day, a date years ahead) would keep the task and its hold waiting that long, and
 * a run that exists upstream its channel's slot too, with no deadline looking at it.
 */
const MAX_RETRY_AFTER_MS = 5 * 60_000;

/**
 * One claim of one task: start or resume its run, poll it, store its files and settle the task. Ends with
 * the task final and its hold settled, or with the job given back (shutdown, lost lease, a transient
 * failure to retry later). Every external call is bounded (`bounded`), and the run's deadline aborts it
 * wherever it waits.
 */
export class TaskRun {
  readonly #deps: WorkerDeps;
  readonly #options: RunOptions;
  readonly #job: ClaimedJob;
  readonly #workerId: string;
  readonly #abort: AbortController;
  readonly #deadline: RunDeadline;
  readonly #wakes: RunWakes | null;
  readonly #folders: RunFolders;
  readonly #waits: Map<string, number>;
  /** This claim ended in a wait that uses up no attempt (#waitFree). */
  #waiting = false;
  /** The run's key once known: its callbacks wake it between status reads. */
  #runKey: string | null = null;
  /** The generator's handle once known, for a best-effort cancel when the run ends early. */
  #handle: string | null = null;
  /** The run's channel once known, to record how the run ended. */
  #channel: string | null = null;
  /** The run's create refused it before any call reached the provider (settings it cannot take). */
  #refusedBeforeCall = false;
  /** The upstream cost the provider reported with success. */
  #cost: UpstreamCost | null = null;
  /** The task as claimed and when its run moved to running, for the transitions' log lines. */
  #task: TasksTable | null = null;
  #startedAt: Date | null = null;

  constructor(input: {
    deps: WorkerDeps;
    options: RunOptions;
    job: ClaimedJob;
    workerId: string;
    abort: AbortController;
    /** Where callbacks wake the run. (Default: it sleeps the whole poll interval) */
    wakes?: RunWakes;
    /** Where the run's temporary folder comes from. (Default: a folder of its own) */
    folders?: RunFolders;
    /**
     * Waits in a row that use up no attempt (a provider's free slot, our storage or database down), per
     * task, so each is longer than the last. (Default: the run's own)
     */
    waits?: Map<string, number>;
  }) {
    this.#deps = input.deps;
    this.#options = input.options;
    this.#job = input.job;
    this.#workerId = input.workerId;
    this.#abort = input.abort;
    this.#deadline = new RunDeadline(input.deps.clock, input.abort);
    this.#wakes = input.wakes ?? null;
    this.#folders = input.folders ?? new RunFolders(0);
    this.#waits = input.waits ?? new Map();
  }

  get #signal(): AbortSignal {
    return this.#abort.signal;
  }

  async run(): Promise<void> {
    const { db } = this.#deps;
    const task = this.#job.task;
    if (!task || isFinal(task.status)) {
      await db.db.deleteFrom('jobs').where('id', '=', this.#job.id).execute();
      return;
    }
    this.#task = task;
    const folder = this.#folders.forRun();
    try {
      await this.#drive(task, folder);
    } catch (error) {
      await this.#handleFailure(task.id, error);
    } finally {
      this.#deadline.disarm();
      if (!this.#waiting) this.#waits.delete(task.id);
      await folder.release();
    }
  }

  async #drive(task: TasksTable, folder: RunFolder): Promise<void> {
    const started: Started | null =
      task.status === 'queued'
        ? await this.#begin(task)
        : {
            at: new Date(task.started_at ?? this.#deps.clock.now().toISOString()),
            key: task.run_key,
            channel: task.channel,
          };
    if (started === null) return;
    this.#channel = started.channel;
    this.#startedAt = started.at;
    if (task.status === 'queued') this.#logTransition('running');
    this.#runKey = started.key;
    const request: GenerationRequest = { ...requestOf(this.#deps.findModel, task), channel: started.channel };
    // A channel's `timeout` replaces the catalog's run limit: both count from the move to running, just
    // before the upstream creation, and one deadline serves both (PROVIDERS.md "Rules").
    const limitMs =
      this.#deps.placement?.timeoutMs(started.channel) ?? runTimeoutMs(request.plan, this.#deps.timeScale);
    // A run resumed after its deadline (a long outage) ends here, before any call but the upstream cancel
    // its timeout asks for: the upstream run it resumes is known before the deadline is looked at.
    this.#handle = task.provider_ref;
    this.#deadline.arm(started.at.getTime() + limitMs);
    this.#deadline.mustBeBeforeDeadline();
    const handle = task.provider_ref ?? (await this.#startRun(task, request, started));
    if (handle === null) return;
    this.#handle = handle;
    if (await this.#poll(task.id, handle, request)) await this.#finish(task.id, handle, request, folder);
  }

  /**
   * queued → running with the run's key (the intent) and its channel (its slot), once the inputs are
   * checked. Null when the task was canceled after the claim (the cancel voided the hold and removed the
   * job), or when no channel has a free slot: the task stays queued and the job comes back shortly.
   */
  async #begin(task: TasksTable): Promise<Started | null> {
    const { db, clock } = this.#deps;
    const missing = await missingInput(db, task, clock.now());
    if (missing) throw new GenerationError('input_unavailable', missing);
    const moved = await moveToRunning(this.#deps, {
      taskId: task.id,
      model: task.model,
      avoid: task.avoid_channel,
      // Library records made at a channel exist only there: the run goes there or waits for its slot.
      channel: channelOfRecords(task),
      at: clock.now(),
      // Each run after a failed one has a key of its own, so no provider mistakes it for the earlier one.
      key: runKeyOf(task.id, this.#job.attempts + 1),
    });
    if (moved !== 'wait') return moved;
    await releaseJob(db, {
      jobId: this.#job.id,
      workerId: this.#workerId,
      runAt: new Date(clock.now().getTime() + backoffMs(1, { baseMs: SLOT_WAIT_MS })),
    });
    return null;
  }

  /**
   * The run's handle, saved with the task: found by its key when an earlier claim recorded the run but
   * never saved a handle (it may have reached the provider), created otherwise. Null when the task was
   * canceled meanwhile.
   */
  async #startRun(
    task: TasksTable,
    request: GenerationRequest,
    started: { at: Date; key: string | null },
  ): Promise<string | null> {
    const { db, generator } = this.#deps;
    const recordedEarlier = task.status === 'running' && started.key !== null;
    let key = started.key;
    if (key === null) {
      // Running since before run keys were recorded: record one now, unless the task was canceled.
      key = runKeyOf(task.id);
      if (!(await recordRunKey(db.db, task.id, key))) return null;
      this.#runKey = key;
    }
    const run: RunStart = { key, startedAt: started.at };
    const found = recordedEarlier ? await this.#call('find', (s) => generator.find(request, run, s)) : null;
    const handle = found ?? (await this.#create(request, run));
    this.#handle = handle;
    // Handles saved at the same moment are saved by one statement (batches.ts).
    if (await saveHandleTogether(db, { taskId: task.id, handle })) return handle;
    await this.#cancelUpstream();
    return null;
  }

  /**
   * The generator's create. One that timed out on a generator whose create is idempotent by run key may
   * have started the run upstream: it is reported as `CreateUnconfirmed`, so the retry repeats it under
   * the same key (#handleFailure).
   */
  async #create(request: GenerationRequest, run: RunStart): Promise<string> {
    const { generator } = this.#deps;
    const trace = new UpstreamTrace();
    try {
      return await trace.run(() => this.#call('create', (s) => generator.create(request, run, s)));
    } catch (error) {
      this.#refusedBeforeCall = error instanceof GenerationError && !trace.reached;
      if (this.#signal.aborted || !isCallTimeout(error) || !generator.isCreateIdempotent?.(request))
        throw error;
      throw new CreateUnconfirmed(`create of run ${run.key} got no answer in time`, { cause: error });
    }
  }

  /**
   * Polls until the run is done: true when it succeeded, false when the task was canceled meanwhile. A
   * callback of the run ends the wait between two reads (CONTRACT §11); the poll interval is the fallback.
   */
  async #poll(taskId: string, handle: string, request: GenerationRequest): Promise<boolean> {
    const key = this.#runKey;
    const watch = key === null ? null : (this.#wakes?.watch(key) ?? null);
    try {
      return await this.#pollUntilDone(taskId, handle, request, (ms) =>
        watch ? watch.sleep(ms, this.#signal) : sleep(ms, undefined, { signal: this.#signal }),
      );
    } finally {
      watch?.close();
    }
  }

  async #pollUntilDone(
    taskId: string,
    handle: string,
    request: GenerationRequest,
    wait: (ms: number) => Promise<void>,
  ): Promise<boolean> {
    const { db, generator, log } = this.#deps;
    let failures = 0;
    for (;;) {
      this.#deadline.mustBeBeforeDeadline();
      let status: Awaited<ReturnType<typeof generator.status>>;
      try {
        status = await this.#call('status', (s) => generator.status(handle, request, s));
        failures = 0;
      } catch (error) {
        // A poll that fails transiently loses nothing: the run goes on upstream. Ask again later, until
        // the deadline, without using up an attempt. An upstream task that is gone for good cannot be
        // polled back: the run ends here and a new one starts (#handleFailure).
        if (this.#signal.aborted || !isTransient(error) || isRunLost(error)) throw error;
        failures += 1;
        log.warn({ err: error, taskId, failures }, 'polling the generator failed; asking again');
        const delayMs = backoffMs(failures, {
          retryAfterMs: retryAfterOf(error),
          maxMs: MAX_POLL_BACKOFF_MS,
        });
        await sleep(delayMs, undefined, { signal: this.#signal });
        continue;
      }
      if (status.state === 'failed') throw new GenerationError(status.code, status.reason);
      if (status.state === 'succeeded') {
        this.#cost = status.cost ?? null;
        return true;
      }
      const stillRunning = await db.dialect.transaction(db.db, (tx) =>
        recordProgress(tx, taskId, status.progress, this.#deps.clock.now()),
      );
      if (!stillRunning) {
        // Canceled by the caller: the cancel already voided the hold and removed the job.
        await this.#cancelUpstream();
        return false;
      }
      await wait(status.pollAfterMs);
    }
  }

  /** Downloads the outputs, then stores them and marks the task succeeded (results.ts). */
  async #finish(
    taskId: string,
    handle: string,
    request: GenerationRequest,
    folder: RunFolder,
  ): Promise<void> {
    const { generator, db } = this.#deps;
    const { transferTimeoutMs, callTimeoutMs } = this.#options;
    const dir = await folder.path();
    const outputs = await folder.writing(() =>
      this.#call('outputs', (s) => generator.outputs(handle, request, dir, s), transferTimeoutMs),
    );
    const cost = this.#cost;
    if (cost) await recordUpstreamCost(db.db, taskId, cost);
    const succeeded = await storeResults({
      deps: this.#deps,
      taskId,
      outputs,
      signal: this.#signal,
      putTimeoutMs: transferTimeoutMs,
      deleteTimeoutMs: callTimeoutMs,
      beforeCommit: () => this.#deadline.mustBeBeforeDeadline(),
    });
    if (succeeded) this.#logTransition('succeeded');
    // Only now may the generator forget the outputs: had a put failed, the run would resume from its saved
    // handle and read them again (a synchronous provider's local record), not start a new billed call.
    await this.#release(handle);
    await this.#record({ kind: 'succeeded' });
  }

  async #handleFailure(taskId: string, error: unknown): Promise<void> {
    const { db, clock, log, resultRetentionMs } = this.#deps;
    const reason: unknown = this.#signal.aborted ? this.#signal.reason : null;
    const fail = async (code: GenerationError['code'], message: string): Promise<boolean> => {
      const failed = await db.dialect.transaction(db.db, (tx) => {
        // The provider's reason may quote the request it got, our key with it (scrubSecrets).
        const failure = { code, reason: scrubSecrets(message) };
        return markFailed(tx, taskId, failure, clock.now(), resultRetentionMs);
      });
      if (failed) this.#logTransition('failed', code);
      return failed;
    };
    if (reason instanceof ShutdownSignal) {
      // A cancel removes the job, so the run may learn of it as a lost lease before its next read: no
      // worker resumes a canceled task, so the upstream task is canceled here (CONTRACT §11).
      if (await this.#isCanceled(taskId)) await this.#cancelUpstream();
      // Stopping or lease lost: give the job back at once; the next worker resumes from the stored handle.
      await releaseJob(db, { jobId: this.#job.id, workerId: this.#workerId, runAt: clock.now() }).catch(
        () => {},
      );
      return;
    }
    if (reason instanceof DeadlineExceeded) {
      await this.#cancelUpstream();
      await fail('timeout', 'the generation took longer than its deadline');
      await this.#record({ kind: 'transient', error: 'the run passed its timeout' });
      return;
    }
    if (error instanceof GenerationError) {
      await fail(error.code, error.message);
      // An input of the caller's that cannot be read, or a refusal before any call reached the provider,
      // says nothing of the channel: neither a failure nor a working answer (which would close a half-open
      // circuit) is counted for it.
      if (error.code !== 'input_unavailable' && !this.#refusedBeforeCall)
        await this.#record({ kind: 'refused', error: error.message });
      return;
    }
    if (error instanceof ChannelBusy && this.#channel !== null) {
      // No free slot upstream (PROVIDERS.md §3): the task waits queued, as it would for a slot of ours,
      // without using up an attempt or counting against the channel; another channel may take it first.
      const delayMs = this.#waitFree(taskId);
      log.info(
        { taskId, channel: this.#channel, delayMs },
        'the provider had no free slot; the task waits queued',
      );
      await this.#requeue(this.#channel, new Date(clock.now().getTime() + delayMs));
      return;
    }
    if (isOwnTransient(error)) {
      // Our storage or database failed, not the run: it resumes later from its saved state (its upstream
      // run goes on) without using up an attempt, until it succeeds or its deadline ends it.
      const delayMs = this.#waitFree(taskId);
      log.warn({ err: error, taskId, delayMs }, 'our storage or database failed; the run resumes later');
      const runAt = new Date(clock.now().getTime() + delayMs);
      await releaseJob(db, { jobId: this.#job.id, workerId: this.#workerId, runAt });
      return;
    }
    if (error instanceof ChannelOutOfCredit && this.#channel !== null) {
      // The channel is switched off; the run moves on at once, without using up an attempt.
      await this.#record({ kind: 'out_of_credit', error: error.message });
      await this.#requeue(this.#channel, clock.now());
      return;
    }
    if (!isTransient(error)) {
      log.error({ err: error, taskId }, 'task run broke; not retried');
      await fail('generation_failed', 'the run broke');
      return;
    }
    const attempts = this.#job.attempts + 1;
    log.warn({ err: error, taskId, attempt: attempts }, 'task run failed; will retry');
    if (isUpstreamTransient(error))
      await this.#record({
        kind: 'transient',
        error: error instanceof Error ? error.message : String(error),
      });
    const maxAttempts =
      this.#channel === null
        ? this.#options.maxAttempts
        : Math.min(this.#options.maxAttempts, CHANNEL_MAX_ATTEMPTS);
    if (attempts >= maxAttempts) {
      await fail('generation_failed', 'the run kept failing');
      return;
    }
    const retryAfterMs = Math.min(retryAfterOf(error) ?? 0, MAX_RETRY_AFTER_MS);
    const runAt = new Date(clock.now().getTime() + backoffMs(attempts, { retryAfterMs }));
    // No upstream task yet, or the upstream task is lost (expired, unknown, cancelled upstream): the retry
    // is a fresh run, on another channel where there is one. With a live handle the upstream task goes
    // on, and the retry resumes it on its channel. So does a create that timed out where repeating it
    // under the same key joins the run it may have started (Cog, PROVIDERS.md §3): a new key would start a
    // second run upstream, which the first would hold the provider's slot against.
    const unconfirmed = error instanceof CreateUnconfirmed;
    if (this.#channel !== null && !unconfirmed && (this.#handle === null || isRunLost(error))) {
      await this.#requeue(this.#channel, runAt, attempts);
      return;
    }
    await releaseJob(db, {
      jobId: this.#job.id,
      workerId: this.#workerId,
      runAt,
      attempts,
    });
  }

  /**
   * The wait before the next claim of a task whose run waits without using up an attempt: each in a row
   * longer than the last (1 s, 2 s, 4 s … 30 s), so a busy provider or a storage outage is not asked every
   * second, nor the task moved back and forth as often.
   */
  #waitFree(taskId: string): number {
    const waits = (this.#waits.get(taskId) ?? 0) + 1;
    this.#waits.set(taskId, waits);
    this.#waiting = true;
    return backoffMs(waits, { baseMs: SLOT_WAIT_MS, maxMs: MAX_FREE_WAIT_MS });
  }

  /** Back to the queue for a fresh run that prefers another channel than `avoid`. */
  #requeue(avoid: string, runAt: Date, attempts?: number): Promise<void> {
    const job = { jobId: this.#job.id, workerId: this.#workerId, taskId: this.#job.taskId };
    return requeueJob(this.#deps.db, {
      ...job,
      avoid,
      runAt,
      ...(attempts === undefined ? {} : { attempts }),
    });
  }

  /** One line and the task series for a transition this run committed (CONTRACT §15). */
  #logTransition(status: 'running' | 'succeeded' | 'failed', errorCode?: string): void {
    const task = this.#task;
    if (task === null) return;
    this.#deps.telemetry?.transition({
      taskId: task.id,
      accountId: task.account_id,
      model: task.model,
      status,
      errorCode,
      channel: this.#channel,
      startedAt: this.#startedAt,
      at: this.#deps.clock.now(),
    });
  }

  #record(outcome: ChannelOutcome): Promise<void> {
    return recordOutcome(this.#deps, this.#channel, outcome);
  }

  /** One generator or storage call, bounded by its timeout and the run. */
  #call<T>(
    what: string,
    call: (signal: AbortSignal) => Promise<T>,
    timeoutMs = this.#options.callTimeoutMs,
  ): Promise<T> {
    return bounded(what, call, { signal: this.#signal, timeoutMs });
  }

  /** Best effort: what the generator still keeps of a stored run only costs memory until it expires. */
  async #release(handle: string): Promise<void> {
    const { generator } = this.#deps;
    if (!generator.release) return;
    await bounded('release', (s) => generator.release?.(handle, s) ?? Promise.resolve(), {
      timeoutMs: this.#options.callTimeoutMs,
    }).catch(() => {});
  }

  /** True when the task was canceled by its caller; false also when the database cannot tell now. */
  async #isCanceled(taskId: string): Promise<boolean> {
    const row = await this.#deps.db.db
      .selectFrom('tasks')
      .select('status')
      .where('id', '=', taskId)
      .executeTakeFirst()
      .catch(() => undefined);
    return row?.status === 'canceled';
  }

  /**
   * Best effort: the run may be canceled already, or the provider unable to stop it. A cancel the caller
   * asked for is owed until made: when this attempt fails, the sweeper asks again (upstream-cancels.ts).
   */
  async #cancelUpstream(): Promise<void> {
    const handle = this.#handle;
    if (handle === null) return;
    try {
      await bounded('cancel', (s) => this.#deps.generator.cancel(handle, s), {
        timeoutMs: this.#options.callTimeoutMs,
      });
    } catch {
      return;
    }
    if (this.#task) await upstreamCancelMade(this.#deps.db, this.#task.id).catch(() => {});
  }
}
