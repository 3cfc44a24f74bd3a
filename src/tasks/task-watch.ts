/**
 * Waiting for tasks to change (CONTRACT §12): long-polls, `Prefer: wait` and event streams subscribe here.
 * One LISTEN per process on the task-changed channel wakes the subscribers of the task named by each
 * notification; nothing sleeps in a loop per request. A periodic check, one query for every watched task,
 * catches what no notification reports: changes made by other processes on SQLite (which cannot notify
 * across processes) and, on PostgreSQL, anything sent while the LISTEN connection was being made again.
 */
import type { Db } from '../db/index.ts';
import { TASK_CHANGED_CHANNEL } from './task-events.ts';

/** Ids per query of the periodic check, well under either engine's limit of bound parameters. */
const CHECK_CHUNK = 500;

/** What a watcher needs to know of a task after reading it. */
export interface WatchedState {
  /** The task's `revision`: counted up by every visible change (status, progress, requeue). */
  revision: number;
  final: boolean;
}

export interface TaskWatchOptions {
  /**
   * Period of the check that compares the watched tasks' revisions with what their watchers saw
   * (milliseconds). SQLite needs it for other processes' changes (about 1 s); on PostgreSQL it is only a
   * safety net behind LISTEN (about 10 s).
   */
  checkIntervalMs: number;
  /** Streams and waiting calls one account may hold open at once in this process. */
  perAccount: number;
  /** Told when the periodic check fails; the next one tries again. */
  onError?: (error: unknown) => void;
}

/** One caller's interest in one task, made before its first read so that no change can slip between. */
export class TaskSubscription {
  readonly taskId: string;
  /** The revision the caller last read; the periodic check wakes it when the task's moved past. */
  seenRevision = -1;
  #woken = false;
  #resolve: ((woken: boolean) => void) | null = null;
  readonly #release: () => void;

  constructor(taskId: string, release: () => void) {
    this.taskId = taskId;
    this.#release = release;
  }

  /** The task may have changed: a pending `changed` resolves, or the next one at once. */
  wake(): void {
    this.#woken = true;
    this.#resolve?.(true);
  }

  /**
   * Resolves true when the task may have changed since the last call (at once when it did meanwhile),
   * false after `timeoutMs` or when `signal` aborts, whichever comes first.
   */
  changed(timeoutMs: number, signal: AbortSignal): Promise<boolean> {
    if (this.#woken) {
      this.#woken = false;
      return Promise.resolve(true);
    }
    if (signal.aborted || timeoutMs <= 0) return Promise.resolve(false);
    return new Promise<boolean>((resolve) => {
      const finish = (woken: boolean): void => {
        clearTimeout(timer);
        signal.removeEventListener('abort', onAbort);
        this.#resolve = null;
        if (woken) this.#woken = false;
        resolve(woken);
      };
      const onAbort = (): void => finish(false);
      const timer = setTimeout(() => finish(false), timeoutMs);
      signal.addEventListener('abort', onAbort, { once: true });
      this.#resolve = finish;
    });
  }

  /** Stops watching; call it once, when the caller is done. */
  close(): void {
    this.#resolve?.(false);
    this.#release();
  }
}

/**
 * The process's hub of task watchers. It starts listening on the first subscription (a process that
 * never waits, like a worker alone, opens no LISTEN connection) and counts the streams and waiting calls
 * of each account against `perAccount`.
 */
export class TaskWatch {
  readonly #db: Db;
  readonly #options: TaskWatchOptions;
  readonly #watchers = new Map<string, Set<TaskSubscription>>();
  readonly #open = new Map<string, number>();
  readonly #closing = new AbortController();
  #starting: Promise<void> | null = null;
  #stopListening: (() => Promise<void>) | null = null;
  #timer: NodeJS.Timeout | null = null;
  #checking = false;

  constructor(db: Db, options: TaskWatchOptions) {
    this.#db = db;
    this.#options = options;
  }

  /** Aborts when the process shuts down: every stream ends and every waiting call answers at once. */
  get closing(): AbortSignal {
    return this.#closing.signal;
  }

  /** Streams and waiting calls one account may hold open at once in this process. */
  get perAccount(): number {
    return this.#options.perAccount;
  }

  /** How many subscriptions are open (all tasks together). */
  get size(): number {
    let count = 0;
    for (const set of this.#watchers.values()) count += set.size;
    return count;
  }

  /** Watches `taskId` until the subscription is closed. */
  subscribe(taskId: string): TaskSubscription {
    this.#ensureStarted();
    let set = this.#watchers.get(taskId);
    if (!set) {
      set = new Set();
      this.#watchers.set(taskId, set);
    }
    const subscription = new TaskSubscription(taskId, () => {
      const watchers = this.#watchers.get(taskId);
      if (!watchers?.delete(subscription)) return;
      if (watchers.size === 0) this.#watchers.delete(taskId);
    });
    set.add(subscription);
    return subscription;
  }

  /**
   * Takes one of the account's places for a stream or a waiting call; null when all are taken. The
   * returned function gives the place back (once; later calls do nothing).
   */
  admit(accountId: string): (() => void) | null {
    const open = this.#open.get(accountId) ?? 0;
    if (open >= this.#options.perAccount) return null;
    this.#open.set(accountId, open + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const now = (this.#open.get(accountId) ?? 1) - 1;
      if (now <= 0) this.#open.delete(accountId);
      else this.#open.set(accountId, now);
    };
  }

  /**
   * Reads the task with `read` until it is final or `waitMs` passed (or the process shuts down or
   * `signal` aborts), re-reading only when the task may have changed; returns the last state read.
   */
  async untilFinal<S extends WatchedState>(
    taskId: string,
    read: () => Promise<S>,
    waitMs: number,
    signal?: AbortSignal,
  ): Promise<S> {
    const stop = signal ? AbortSignal.any([signal, this.closing]) : this.closing;
    // Monotonic: the host's clock set back while the call waits must not keep it waiting for hours.
    const deadline = performance.now() + waitMs;
    const subscription = this.subscribe(taskId);
    try {
      let state = await read();
      while (!state.final) {
        subscription.seenRevision = state.revision;
        if (!(await subscription.changed(deadline - performance.now(), stop))) return state;
        state = await read();
      }
      return state;
    } finally {
      subscription.close();
    }
  }

  /** Ends every stream and waiting call, stops listening and checking. Safe to call more than once. */
  async close(): Promise<void> {
    this.#closing.abort();
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = null;
    await this.#starting?.catch(() => {});
    const stop = this.#stopListening;
    this.#stopListening = null;
    await stop?.();
  }

  #ensureStarted(): void {
    if (this.#starting || this.#closing.signal.aborted) return;
    this.#timer = setInterval(() => void this.#check(), this.#options.checkIntervalMs);
    this.#timer.unref();
    this.#starting = this.#db
      .listen(TASK_CHANGED_CHANNEL, (taskId) => (taskId === null ? this.#wakeAll() : this.#wake(taskId)))
      .then(async (stop) => {
        if (this.#closing.signal.aborted) {
          await stop();
          return;
        }
        this.#stopListening = stop;
        // Subscriptions made while the connection was being opened may have missed a notification.
        this.#wakeAll();
      })
      .catch((error: unknown) => {
        // The periodic check still finds every change, only later.
        this.#options.onError?.(error);
      });
  }

  #wake(taskId: string): void {
    const set = this.#watchers.get(taskId);
    if (set) for (const subscription of set) subscription.wake();
  }

  #wakeAll(): void {
    for (const set of this.#watchers.values()) for (const subscription of set) subscription.wake();
  }

  /** Wakes the watchers of every task whose revision moved past what they last read. */
  async #check(): Promise<void> {
    if (this.#checking || this.#watchers.size === 0) return;
    this.#checking = true;
    try {
      const ids = [...this.#watchers.keys()];
      for (let i = 0; i < ids.length; i += CHECK_CHUNK) {
        const chunk = ids.slice(i, i + CHECK_CHUNK);
        const rows = await this.#db.db
          .selectFrom('tasks')
          .select(['id', 'revision'])
          .where('id', 'in', chunk)
          .execute();
        for (const row of rows) {
          const set = this.#watchers.get(row.id);
          if (!set) continue;
          const revision = Number(row.revision);
          for (const subscription of set) if (revision > subscription.seenRevision) subscription.wake();
        }
      }
    } catch (error) {
      this.#options.onError?.(error);
    } finally {
      this.#checking = false;
    }
  }
}
