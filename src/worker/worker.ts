import os from 'node:os';
import type { FastifyBaseLogger } from 'fastify';
import type { ModelSpec } from '../catalog/index.ts';
import type { Db } from '../db/index.ts';
import { calledBackRunOf, type Generator, type RunPlacement } from '../generators/index.ts';
import type { Clock } from '../lib/index.ts';
import { Alarm, BoundedMap, uuidv7 } from '../lib/index.ts';
import type { TaskTelemetry } from '../observability/index.ts';
import type { BlobStore } from '../storage/index.ts';
import { TASKS_CHANNEL } from '../tasks/index.ts';
import { ShutdownSignal } from './failures.ts';
import { type ClaimedJob, claimJobs, renewLease, type SlotShares } from './queue.ts';
import { RunFolders } from './run-folder.ts';
import { RunWakes } from './run-wakes.ts';
import { TaskRun } from './task-run.ts';

export interface WorkerDeps {
  db: Db;
  /** Leases and deadlines are measured on it: the database's time in production (DbClock). */
  clock: Clock;
  storage: BlobStore;
  generator: Generator;
  /**
   * Channels of GENERATORS_FILE (the channel router): where each run goes, its slot and its channel's
   * health. Unset: every run goes to `generator` directly.
   */
  placement?: RunPlacement;
  findModel(key: string): ModelSpec | undefined;
  /** How long result files are kept after success (milliseconds). */
  resultRetentionMs: number;
  /** Divides the catalog's typical times, as the simulator does, to size task timeouts. */
  timeScale: number;
  log: Pick<FastifyBaseLogger, 'info' | 'warn' | 'error'>;
  /** Told of each transition a run commits: a log line and the task series (CONTRACT §15). */
  telemetry?: Pick<TaskTelemetry, 'transition'>;
}

/**
 * Longest a free slot waits for others to free up before the next claim while the queue is backlogged
 * (milliseconds): the gathered slots are filled by one claim transaction instead of one each.
 */
const CLAIM_GATHER_MS = 5;

/**
 * Tasks a worker runs at once unless WORKER_CONCURRENCY says otherwise: more than one account's unfinished
 * tasks under the default limits (10 per model), since a run mostly waits for its provider.
 */
export const DEFAULT_WORKER_CONCURRENCY = 128;
/** Tasks whose waits in a row a worker counts at most. */
const MAX_WAITING_TASKS = 10_000;

/** Limits of one run. */
export interface RunOptions {
  /** Attempts that fail with a transient error before the task fails with `generation_failed`. */
  maxAttempts: number;
  /** Timeout of one generator call (create, find, status, cancel) and of one delete (milliseconds). */
  callTimeoutMs: number;
  /** Timeout of downloading the outputs and of storing one result file (milliseconds). */
  transferTimeoutMs: number;
}

export interface WorkerOptions {
  /**
   * Tasks run at once by this worker (WORKER_CONCURRENCY). A quarter of the slots is kept for accounts
   * that hold fewer than a quarter of them (queue.ts, `SlotShares`). (Default: DEFAULT_WORKER_CONCURRENCY)
   */
  concurrency?: number;
  /** Lease of a claimed job (milliseconds), renewed at a third of it. (Default: 30 s) */
  leaseMs?: number;
  /** Poll for jobs written by other processes (milliseconds). (Default: 1 s) */
  pollIntervalMs?: number;
  /**
   * Attempts of a task whose run keeps failing with transient errors (a provider's 429 or 5xx, network)
   * before it fails; restarts, lease take-overs and our own storage or database failing do not count.
   * (Default: 5)
   */
  maxAttempts?: number;
  /** Timeout of one generator call (milliseconds). (Default: 60 s) */
  callTimeoutMs?: number;
  /** Timeout of downloading a run's outputs and of storing one result file (milliseconds). (Default: 10 minutes) */
  transferTimeoutMs?: number;
}

/**
 * Runs queued tasks on the generator. Many tasks run at once and a slow one never holds up others. A
 * claimed task always reaches a final state with its hold settled, at the latest at its deadline, unless
 * this process stops first, in which case its lease lapses and another worker resumes it from the stored
 * generator handle (or, with no handle saved yet, from its recorded run key).
 */
export class Worker {
  readonly id = `worker-${os.hostname()}-${process.pid}-${uuidv7().slice(-8)}`;
  readonly #deps: WorkerDeps;
  readonly #concurrency: number;
  readonly #leaseMs: number;
  readonly #pollIntervalMs: number;
  readonly #runOptions: RunOptions;
  readonly #running = new Map<
    string,
    { abort: AbortController; done: Promise<void>; accountId: string | null }
  >();
  /** Runs sleeping between status reads, woken by their callbacks. */
  readonly #runWakes = new RunWakes();
  /** The runs' temporary folders, kept empty between runs (one per slot at most). */
  readonly #folders: RunFolders;
  /**
   * Waits in a row that use up no attempt, per task (TaskRun); an entry goes when its run moves on, and
   * the oldest when tasks canceled while they waited have left too many behind.
   */
  readonly #waits = new BoundedMap<string, number>(MAX_WAITING_TASKS);
  #stopping = false;
  #loop: Promise<void> | null = null;
  readonly #alarm = new Alarm();
  #unlisten: Promise<() => Promise<void>> | null = null;
  /** Free slots that start the next claim at once while the queue is backlogged (see #runEnded). */
  readonly #claimBatch: number;
  /** The last claim filled every free slot: more jobs are probably due. */
  #backlogged = false;
  #gatherTimer: NodeJS.Timeout | null = null;

  constructor(deps: WorkerDeps, options: WorkerOptions = {}) {
    this.#deps = deps;
    this.#concurrency = options.concurrency ?? DEFAULT_WORKER_CONCURRENCY;
    this.#claimBatch = Math.max(1, Math.floor(this.#concurrency / 4));
    this.#folders = new RunFolders(this.#concurrency);
    this.#leaseMs = options.leaseMs ?? 30_000;
    this.#pollIntervalMs = options.pollIntervalMs ?? 1_000;
    this.#runOptions = {
      maxAttempts: options.maxAttempts ?? 5,
      callTimeoutMs: options.callTimeoutMs ?? 60_000,
      transferTimeoutMs: options.transferTimeoutMs ?? 10 * 60_000,
    };
  }

  start(): void {
    if (this.#loop) return;
    this.#stopping = false;
    this.#loop = this.#claimLoop();
    // Jobs queued by other processes wake this worker at once where the database can say so, and so do
    // callbacks another process took for a run of this one. After a lost connection, whatever was
    // notified meanwhile is looked for: every sleeping run reads its upstream task once more.
    this.#unlisten = this.#deps.db
      .listen(TASKS_CHANNEL, (payload) => {
        this.wake();
        const runKey = payload === null ? null : calledBackRunOf(payload);
        if (runKey !== null) this.wakeRun(runKey);
        else if (payload === null) this.#runWakes.wakeAll();
      })
      .catch((error: unknown) => {
        this.#deps.log.warn({ err: error }, 'cannot listen for new jobs; polling only');
        return async () => {};
      });
  }

  /** A task was queued in this process: claim it now instead of at the next poll. */
  wake(): void {
    this.#alarm.ring();
  }

  /** A callback arrived for the run: if it sleeps here between status reads, it reads its task now. */
  wakeRun(runKey: string): void {
    this.#runWakes.wake(runKey);
  }

  get activeCount(): number {
    return this.#running.size;
  }

  /** Stops claiming, stops running tasks and gives their jobs back for another worker to resume. */
  async stop(): Promise<void> {
    this.#stopping = true;
    this.#clearGather();
    this.wake();
    await this.#loop;
    this.#loop = null;
    await (await this.#unlisten)?.();
    this.#unlisten = null;
    for (const { abort } of this.#running.values()) abort.abort(new ShutdownSignal('worker stopping'));
    await Promise.allSettled([...this.#running.values()].map((r) => r.done));
    await this.#folders.clear();
  }

  /** Claims and starts due jobs once; resolves with how many were started (tests drive it directly). */
  async tick(): Promise<number> {
    this.#clearGather();
    const free = this.#concurrency - this.#running.size;
    const jobs = await claimJobs(this.#deps.db, {
      workerId: this.id,
      limit: free,
      now: this.#deps.clock.now(),
      leaseMs: this.#leaseMs,
      exclude: [...this.#running.keys()],
      expectDue: this.#backlogged,
      shares: this.#shares(),
    });
    // Every slot taken (none free to begin with, too): more jobs may be due than the claim could take.
    this.#backlogged = jobs.length === free;
    for (const job of jobs) this.#startJob(job);
    return jobs.length;
  }

  /** This worker's slots per account, and the share and reserve of SlotShares (a quarter each). */
  #shares(): SlotShares {
    const running = new Map<string, number>();
    for (const { accountId } of this.#running.values())
      if (accountId !== null) running.set(accountId, (running.get(accountId) ?? 0) + 1);
    const quarter = Math.max(1, Math.floor(this.#concurrency / 4));
    return { running, share: quarter, reserve: quarter };
  }

  async #claimLoop(): Promise<void> {
    while (!this.#stopping) {
      try {
        await this.tick();
      } catch (error) {
        this.#deps.log.error({ err: error }, 'claiming jobs failed');
      }
      // A claim that left a slot free took every due job: no second claim until a wake-up (a new job, a
      // run's end) or the poll. A wake-up that came while claiming ends this sleep at once.
      await this.#alarm.sleep(this.#pollIntervalMs);
    }
  }

  #startJob(job: ClaimedJob): void {
    const abort = new AbortController();
    const heartbeat = setInterval(
      () => {
        const until = new Date(this.#deps.clock.now().getTime() + this.#leaseMs);
        renewLease(this.#deps.db, { jobId: job.id, workerId: this.id, until }).then(
          (held) => {
            if (!held) abort.abort(new ShutdownSignal('lease lost'));
          },
          (error: unknown) => this.#deps.log.warn({ err: error }, 'lease renewal failed'),
        );
      },
      Math.max(50, Math.floor(this.#leaseMs / 3)),
    );
    const run = new TaskRun({
      deps: this.#deps,
      options: this.#runOptions,
      job,
      workerId: this.id,
      abort,
      wakes: this.#runWakes,
      folders: this.#folders,
      waits: this.#waits,
    });
    const done = run
      .run()
      .catch((error: unknown) => this.#deps.log.error({ err: error, taskId: job.taskId }, 'task run crashed'))
      .finally(() => {
        clearInterval(heartbeat);
        this.#running.delete(job.id);
        this.#runEnded();
      });
    this.#running.set(job.id, { abort, done, accountId: job.task?.account_id ?? null });
  }

  /**
   * A run ended and freed its slot. With no backlog the next claim starts at once; with one (the last
   * claim filled every slot), it waits until a quarter of the slots are free or CLAIM_GATHER_MS passed,
   * so that a draining queue costs one claim transaction per few runs instead of one per run.
   */
  #runEnded(): void {
    const free = this.#concurrency - this.#running.size;
    if (!this.#backlogged || free >= this.#claimBatch || this.#stopping) {
      this.wake();
      return;
    }
    this.#gatherTimer ??= setTimeout(() => {
      this.#gatherTimer = null;
      this.wake();
    }, CLAIM_GATHER_MS);
  }

  #clearGather(): void {
    if (this.#gatherTimer === null) return;
    clearTimeout(this.#gatherTimer);
    this.#gatherTimer = null;
  }
}
