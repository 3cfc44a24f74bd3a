import fs from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { FastifyBaseLogger } from 'fastify';
import type { GenerationPlan, ModelSpec } from '../catalog/index.ts';
import type { Db, TasksTable } from '../db/index.ts';
import { GenerationError, type GenerationRequest, type Generator } from '../generators/index.ts';
import type { Clock } from '../lib/clock.ts';
import { uuidv7 } from '../lib/ids.ts';
import type { BlobStore } from '../storage/index.ts';
import {
  isFinal,
  markFailed,
  markRunning,
  markSucceeded,
  recordProgress,
  type Success,
  TASKS_CHANNEL,
} from '../tasks/transitions.ts';
import { type ClaimedJob, claimJobs, releaseJob, renewLease } from './queue.ts';

export interface WorkerDeps {
  db: Db;
  clock: Clock;
  storage: BlobStore;
  generator: Generator;
  findModel(key: string): ModelSpec | undefined;
  /** How long result files are kept after success (milliseconds). */
  resultRetentionMs: number;
  /** Divides the catalog's typical times, as the simulator does, to size task timeouts. */
  timeScale: number;
  log: Pick<FastifyBaseLogger, 'info' | 'warn' | 'error'>;
}

export interface WorkerOptions {
  /** Tasks run at once by this worker. (Default: 32) */
  concurrency?: number;
  /** Lease of a claimed job (milliseconds), renewed at a third of it. (Default: 30 s) */
  leaseMs?: number;
  /** Poll for jobs written by other processes (milliseconds). (Default: 1 s) */
  pollIntervalMs?: number;
  /** Attempts of a task whose run keeps breaking on our side before it fails. (Default: 5) */
  maxAttempts?: number;
}

class ShutdownSignal extends Error {
  override name = 'ShutdownSignal';
}

/**
 * Runs queued tasks on the generator. Many tasks run at once and a slow one never holds up others. A
 * claimed task always reaches a final state with its hold settled, unless this process stops first, in
 * which case its lease lapses and another worker resumes it from the stored generator handle.
 */
export class Worker {
  readonly id = `worker-${os.hostname()}-${process.pid}-${uuidv7().slice(-8)}`;
  readonly #deps: WorkerDeps;
  readonly #concurrency: number;
  readonly #leaseMs: number;
  readonly #pollIntervalMs: number;
  readonly #maxAttempts: number;
  readonly #running = new Map<string, { abort: AbortController; done: Promise<void> }>();
  #stopping = false;
  #loop: Promise<void> | null = null;
  #wakeUp: (() => void) | null = null;
  #unlisten: Promise<() => Promise<void>> | null = null;

  constructor(deps: WorkerDeps, options: WorkerOptions = {}) {
    this.#deps = deps;
    this.#concurrency = options.concurrency ?? 32;
    this.#leaseMs = options.leaseMs ?? 30_000;
    this.#pollIntervalMs = options.pollIntervalMs ?? 1_000;
    this.#maxAttempts = options.maxAttempts ?? 5;
  }

  start(): void {
    if (this.#loop) return;
    this.#stopping = false;
    this.#loop = this.#claimLoop();
    // Jobs queued by other processes wake this worker at once where the database can say so.
    this.#unlisten = this.#deps.db
      .listen(TASKS_CHANNEL, () => this.wake())
      .catch((error: unknown) => {
        this.#deps.log.warn({ err: error }, 'cannot listen for new jobs; polling only');
        return async () => {};
      });
  }

  /** A task was queued in this process: claim it now instead of at the next poll. */
  wake(): void {
    this.#wakeUp?.();
  }

  get activeCount(): number {
    return this.#running.size;
  }

  /** Stops claiming, stops running tasks and gives their jobs back for another worker to resume. */
  async stop(): Promise<void> {
    this.#stopping = true;
    this.wake();
    await this.#loop;
    this.#loop = null;
    await (await this.#unlisten)?.();
    this.#unlisten = null;
    for (const { abort } of this.#running.values()) abort.abort(new ShutdownSignal('worker stopping'));
    await Promise.allSettled([...this.#running.values()].map((r) => r.done));
  }

  /** Claims and starts due jobs once; resolves with how many were started (tests drive it directly). */
  async tick(): Promise<number> {
    const free = this.#concurrency - this.#running.size;
    const jobs = await claimJobs(this.#deps.db, {
      workerId: this.id,
      limit: free,
      now: this.#deps.clock.now(),
      leaseMs: this.#leaseMs,
      exclude: [...this.#running.keys()],
    });
    for (const job of jobs) this.#startJob(job);
    return jobs.length;
  }

  async #claimLoop(): Promise<void> {
    while (!this.#stopping) {
      let started = 0;
      try {
        started = await this.tick();
      } catch (error) {
        this.#deps.log.error({ err: error }, 'claiming jobs failed');
      }
      if (started > 0 && this.#running.size < this.#concurrency) continue;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, this.#pollIntervalMs);
        this.#wakeUp = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.#wakeUp = null;
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
    const done = this.#run(job, abort.signal)
      .catch((error: unknown) => this.#deps.log.error({ err: error, taskId: job.taskId }, 'task run crashed'))
      .finally(() => {
        clearInterval(heartbeat);
        this.#running.delete(job.id);
        this.wake();
      });
    this.#running.set(job.id, { abort, done });
  }

  async #run(job: ClaimedJob, signal: AbortSignal): Promise<void> {
    const { db } = this.#deps;
    const task = await db.db.selectFrom('tasks').selectAll().where('id', '=', job.taskId).executeTakeFirst();
    if (!task || isFinal(task.status)) {
      await db.db.deleteFrom('jobs').where('id', '=', job.id).execute();
      return;
    }
    const dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'gta-run-'));
    try {
      await this.#drive(task, job, signal, dir);
    } catch (error) {
      await this.#handleFailure(task.id, job, error, signal);
    } finally {
      await fsp.rm(dir, { recursive: true, force: true });
    }
  }

  async #drive(task: TasksTable, job: ClaimedJob, signal: AbortSignal, dir: string): Promise<void> {
    const { db, clock, generator } = this.#deps;
    if (job.attempts > this.#maxAttempts) {
      throw new GenerationError('generation_failed', `gave up after ${this.#maxAttempts} attempts`);
    }
    const request = this.#requestOf(task);
    let startedAt = task.started_at;
    if (task.status === 'queued') {
      const now = clock.now();
      await db.dialect.transaction(db.db, (tx) => markRunning(tx, task.id, now));
      startedAt = now.toISOString();
    }
    const deadlineMs = Date.parse(startedAt ?? clock.now().toISOString()) + this.#timeoutMs(request.plan);
    let handle = task.provider_ref;
    if (handle === null) {
      handle = await generator.create(request, signal);
      await db.db.updateTable('tasks').set({ provider_ref: handle }).where('id', '=', task.id).execute();
    }
    for (;;) {
      if (clock.now().getTime() > deadlineMs) {
        await generator.cancel(handle, signal).catch(() => {});
        throw new GenerationError('timeout', 'the generation took longer than its deadline');
      }
      const status = await generator.status(handle, request, signal);
      if (status.state === 'failed') throw new GenerationError(status.code, status.reason);
      if (status.state === 'succeeded') break;
      const stillRunning = await db.dialect.transaction(db.db, (tx) =>
        recordProgress(tx, task.id, status.progress),
      );
      if (!stillRunning) {
        // Canceled by the caller: the cancel already voided the hold and removed the job.
        await generator.cancel(handle, signal).catch(() => {});
        return;
      }
      await sleep(status.pollAfterMs, undefined, { signal });
    }
    await this.#finish(task.id, handle, request, dir, signal);
  }

  async #finish(
    taskId: string,
    handle: string,
    request: GenerationRequest,
    dir: string,
    signal: AbortSignal,
  ): Promise<void> {
    const { db, clock, storage, generator } = this.#deps;
    const outputs = await generator.outputs(handle, request, dir, signal);
    const artifacts: Success['artifacts'] = [];
    // Keys are unique per run: if a lost lease ever lets two runs finish, the loser removes only its own files.
    const runId = uuidv7();
    for (const [idx, file] of outputs.files.entries()) {
      const storageKey = `results/${taskId}/${runId}/${idx}`;
      await storage.put(storageKey, fs.createReadStream(file.path), {
        contentType: file.contentType,
        signal,
      });
      artifacts.push({ ...file, storageKey });
    }
    const now = clock.now();
    const succeeded = await db.dialect.transaction(db.db, (tx) =>
      markSucceeded(
        tx,
        taskId,
        {
          caption: outputs.caption,
          texts: outputs.texts,
          filesExpireAt: new Date(now.getTime() + this.#deps.resultRetentionMs),
          artifacts,
        },
        now,
      ),
    );
    // Canceled while the files were being stored: nothing was captured, so the files go too.
    if (!succeeded) await Promise.all(artifacts.map((a) => storage.delete(a.storageKey)));
  }

  async #handleFailure(taskId: string, job: ClaimedJob, error: unknown, signal: AbortSignal): Promise<void> {
    const { db, clock, log } = this.#deps;
    if (signal.aborted && signal.reason instanceof ShutdownSignal) {
      // Stopping: give the job back at once; the next worker resumes from the stored handle.
      await releaseJob(db, { jobId: job.id, workerId: this.id, runAt: clock.now() }).catch(() => {});
      return;
    }
    if (error instanceof GenerationError) {
      await db.dialect.transaction(db.db, (tx) =>
        markFailed(tx, taskId, { code: error.code, reason: error.message }, clock.now()),
      );
      return;
    }
    log.error({ err: error, taskId, attempt: job.attempts }, 'task run broke; will retry');
    if (job.attempts >= this.#maxAttempts) {
      await db.dialect.transaction(db.db, (tx) =>
        markFailed(tx, taskId, { code: 'generation_failed', reason: 'the run kept failing' }, clock.now()),
      );
      return;
    }
    // Jittered exponential backoff: 1 s, 2 s, 4 s … ± 20 %.
    const delayMs = 1_000 * 2 ** (job.attempts - 1) * (0.8 + Math.random() * 0.4);
    await releaseJob(db, {
      jobId: job.id,
      workerId: this.id,
      runAt: new Date(clock.now().getTime() + delayMs),
    });
  }

  #requestOf(task: TasksTable): GenerationRequest {
    const model = this.#deps.findModel(task.model);
    const mode = model?.modes.find((m) => m.name === task.mode);
    if (!model || !mode)
      throw new GenerationError('generation_failed', `model ${task.model}/${task.mode} is gone`);
    const settings = JSON.parse(task.settings) as Record<string, unknown>;
    const inputs = JSON.parse(task.inputs) as GenerationRequest['inputs'];
    return {
      taskId: task.id,
      model: model.key,
      mode: mode.name,
      settings,
      inputs,
      plan: mode.plan(settings, inputs),
    };
  }

  /** A run may take fifteen times the model's typical time plus a minute before it fails with `timeout`. */
  #timeoutMs(plan: GenerationPlan): number {
    return Math.round((plan.workSeconds * 1000 * 15) / this.#deps.timeScale) + 60_000;
  }
}
