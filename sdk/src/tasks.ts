import { ApiError, ConnectionError, RateLimitError, TaskFailedError, WaitTimeoutError } from './errors.ts';
import { parseEventStream } from './sse.ts';
import { anySignal, randomKey, type Transport } from './transport.ts';
import type { SettingsByModel, Task, TaskList } from './types.gen.ts';

/** A model key the client knows the settings of, or any other key (settings then untyped). */
export type ModelKey = keyof SettingsByModel | (string & {});
/** Settings of `M`: the union of its modes' settings when the model is known. */
export type SettingsOf<M extends ModelKey> = M extends keyof SettingsByModel
  ? SettingsByModel[M]
  : Record<string, unknown>;
/** Task event types a webhook can receive (CONTRACT §12). */
export type TaskEventType =
  | 'task.started'
  | 'task.progress'
  | 'task.succeeded'
  | 'task.failed'
  | 'task.canceled';

/** Body of a task creation (and, without the webhook fields, of a price request). */
export interface TaskParams<M extends ModelKey = ModelKey> {
  model: M;
  settings: SettingsOf<M>;
  /** Receives this task's signed events (Standard Webhooks). */
  webhook_url?: string;
  /** Events sent to `webhook_url`. (Default: task.succeeded, task.failed, task.canceled) */
  webhook_events?: TaskEventType[];
}

/** Options of `tasks.create`. */
export interface CreateOptions {
  /** Idempotency-Key of the creation. (Default: a random UUID, the same on every retry of this call) */
  idempotencyKey?: string;
  /** Ask the service to answer with the final task if it is final within this many seconds (1–60). */
  wait?: number;
  signal?: AbortSignal;
}

/** Options of `tasks.wait` and `tasks.run`. */
export interface WaitOptions {
  /** Give up (WaitTimeoutError) after this long (milliseconds). (Default: 600_000) */
  timeoutMs?: number;
  /**
   * Called with each new state seen, the final one included: a state the service repeats (a long-poll
   * that ended with no change, a stream's first event after the creation's answer) is not reported again.
   */
  onUpdate?: (task: Task) => void;
  /**
   * Ends the call with the signal's reason, as `fetch` does. In `run`, the task created before the abort
   * keeps running: `onUpdate` was given it first.
   */
  signal?: AbortSignal;
}

/** Query of `tasks.list`. */
export interface ListQuery {
  /** 1–100. (Default: 20) */
  limit?: number;
  status?: Task['status'];
  model?: string;
  cursor?: string;
}

const FINAL: ReadonlySet<string> = new Set(['succeeded', 'failed', 'canceled']);
/** Whether the task has reached a final state. */
export const isFinal = (task: Pick<Task, 'status'>): boolean => FINAL.has(task.status);
const DEFAULT_WAIT_MS = 600_000;
/** Without long-polling the service answers at once; polls are then spaced by at least this (ms). */
const MIN_POLL_MS = 1_000;
/** Spacing of plain polls, the service's `Retry-After` for a task that is not final. */
const PLAIN_POLL_MS = 5_000;
/** The longest delay a timer keeps (runtimes fire a longer one at once). */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** `c.tasks`: create, read, list, cancel, wait for, stream, run and download tasks. */
export class Tasks {
  readonly #t: Transport;
  constructor(transport: Transport) {
    this.#t = transport;
  }

  /** POST /v1/tasks: prices, holds and queues a task (202), or the final task with `wait` (200). */
  create<M extends ModelKey>(params: TaskParams<M>, options: CreateOptions = {}): Promise<Task> {
    // One key for the call: a retry after a lost answer finds the task the first attempt made.
    const key = options.idempotencyKey ?? randomKey();
    return this.#t.json<Task>({
      method: 'POST',
      path: '/v1/tasks',
      json: params,
      headers: {
        'idempotency-key': key,
        ...(options.wait ? { prefer: `wait=${waitSeconds(options.wait)}` } : {}),
      },
      idempotent: true,
      waitSeconds: options.wait ? waitSeconds(options.wait) : undefined,
      signal: options.signal,
    });
  }

  /** GET /v1/tasks/{id}; with `wait` (1–60 s) the service answers once the task is final or the time is up. */
  get(id: string, options: { wait?: number; signal?: AbortSignal } = {}): Promise<Task> {
    return this.#get(id, options, false);
  }

  /** `get`; with `rateLimitFallback`, a 429 is thrown at once for the caller's plain polls (`wait`). */
  #get(
    id: string,
    options: { wait?: number; signal?: AbortSignal | undefined },
    rateLimitFallback: boolean,
  ): Promise<Task> {
    return this.#t.json<Task>({
      method: 'GET',
      path: `/v1/tasks/${encodeURIComponent(id)}`,
      query: options.wait ? { wait: waitSeconds(options.wait) } : undefined,
      waitSeconds: options.wait ? waitSeconds(options.wait) : undefined,
      rateLimitFallback,
      signal: options.signal,
    });
  }

  /** GET /v1/tasks: one page of the caller's tasks, newest first. */
  list(query: ListQuery = {}): Promise<TaskList> {
    return this.#t.json<TaskList>({ method: 'GET', path: '/v1/tasks', query: { ...query } });
  }

  /** Every task matching `query`, page after page. */
  async *all(query: Omit<ListQuery, 'cursor'> = {}): AsyncGenerator<Task> {
    let cursor: string | undefined;
    do {
      const page = await this.list({ ...query, ...(cursor ? { cursor } : {}) });
      yield* page.tasks;
      cursor = page.next_cursor ?? undefined;
    } while (cursor);
  }

  /** POST /v1/tasks/{id}/cancel: the task turns `canceled`, its hold released; a final task: ConflictError. */
  cancel(id: string): Promise<Task> {
    return this.#t.json<Task>({ method: 'POST', path: `/v1/tasks/${encodeURIComponent(id)}/cancel` });
  }

  /**
   * The final task, by `?wait=` long-polls repeated until it is final; WaitTimeoutError after `timeoutMs`.
   * An account holding all its waiting places (429 on the long-poll) is answered by plain polls instead,
   * every 5 seconds, which take no place.
   */
  async wait(id: string, options: WaitOptions = {}): Promise<Task> {
    const onUpdate = changesOnly(options.onUpdate);
    const deadline = Date.now() + (options.timeoutMs ?? DEFAULT_WAIT_MS);
    let task: Task | undefined;
    let longPoll = true;
    for (;;) {
      const left = deadline - Date.now();
      if (task && left <= 0) throw new WaitTimeoutError(task);
      const started = Date.now();
      // Whole seconds, never past the deadline: under a second left, a plain read.
      const waitSeconds = Math.min(60, Math.floor(left / 1000));
      const asksWait = longPoll && waitSeconds >= 1;
      try {
        // A long-poll refused for the account's waiting places turns to plain polls at once, not after the
        // client's retries of the 429 (5 s each).
        task = await this.#get(
          id,
          asksWait ? { wait: waitSeconds, signal: options.signal } : { signal: options.signal },
          asksWait,
        );
      } catch (error) {
        if (!longPoll || !(error instanceof RateLimitError)) throw error;
        longPoll = false;
        continue;
      }
      onUpdate?.(task);
      if (isFinal(task)) return task;
      // A service without long-polling answers at once: space the polls instead of spinning.
      const spacing = longPoll ? MIN_POLL_MS : PLAIN_POLL_MS;
      const elapsed = Date.now() - started;
      if (elapsed < spacing) {
        await this.#t.sleep(Math.min(spacing - elapsed, Math.max(0, deadline - Date.now())), options.signal);
      }
    }
  }

  /**
   * The task's states from GET /v1/tasks/{id}/events, ending with the final one. A dropped connection is
   * resumed with Last-Event-ID (states already seen are not repeated), up to `maxRetries` times in a row.
   */
  stream(id: string, options: { signal?: AbortSignal } = {}): AsyncGenerator<Task> {
    return this.#events(id, options, false);
  }

  /** `stream`; with `rateLimitFallback`, a refused stream throws its 429 at once for `run`'s polls. */
  async *#events(
    id: string,
    options: { signal?: AbortSignal },
    rateLimitFallback: boolean,
  ): AsyncGenerator<Task> {
    let lastEventId: string | null = null;
    let last: Task | undefined;
    let failures = 0;
    // The reconnection delay; a `retry:` field changes it for the rest of the stream (WHATWG).
    let retryMs = MIN_POLL_MS;
    for (;;) {
      let response: Response;
      try {
        response = await this.#t.send({
          method: 'GET',
          path: `/v1/tasks/${encodeURIComponent(id)}/events`,
          headers: { accept: 'text/event-stream', ...(lastEventId ? { 'last-event-id': lastEventId } : {}) },
          rateLimitFallback,
          signal: options.signal,
        });
      } catch (error) {
        if (!(error instanceof ConnectionError) || ++failures > this.#t.maxRetries) throw error;
        continue;
      }
      try {
        for await (const event of parseEventStream(response.body!, { onRetry: (ms) => (retryMs = ms) })) {
          if (event.id !== null) lastEventId = event.id;
          if (event.event !== 'task' && event.event !== 'done') continue;
          const task = JSON.parse(event.data) as Task;
          failures = 0;
          // `done` repeats the final state the last `task` event may already have carried.
          if (event.event === 'task' || !last || !isFinal(last)) yield task;
          last = task;
          if (event.event === 'done') return;
        }
      } catch (error) {
        if (options.signal?.aborted) throw error;
      }
      if (last && isFinal(last)) return;
      if (++failures > this.#t.maxRetries) {
        throw new ConnectionError(`the event stream of task ${id} ended before its final state`);
      }
      await this.#t.sleep(retryMs, options.signal);
    }
  }

  /**
   * Creates a task and waits for its end: through the event stream where the service has one, by `?wait=`
   * polls otherwise, by plain polls when the account holds all its waiting places. Resolves with the
   * succeeded task; a failed or canceled one rejects with TaskFailedError (its hold released), and a task
   * still running after `timeoutMs` with WaitTimeoutError. Any other error after the creation carries the
   * created task as `task`, so that a caller retries by following it, not by paying for another.
   */
  async run<M extends ModelKey>(
    params: TaskParams<M>,
    options: WaitOptions & CreateOptions = {},
  ): Promise<Task> {
    const created = await this.create(params, options);
    const onUpdate = changesOnly(options.onUpdate);
    onUpdate?.(created);
    let final: Task;
    try {
      final = isFinal(created)
        ? created
        : await this.#follow(created, { ...options, ...(onUpdate ? { onUpdate } : {}) });
    } catch (error) {
      if ((error instanceof ApiError || error instanceof ConnectionError) && error.task === undefined)
        error.task = created;
      throw error;
    }
    if (final.status !== 'succeeded') throw new TaskFailedError(final);
    return final;
  }

  async #follow(created: Task, options: WaitOptions): Promise<Task> {
    const timeoutMs = options.timeoutMs ?? DEFAULT_WAIT_MS;
    const deadline = Date.now() + timeoutMs;
    const stop = new AbortController();
    // A timer set past 2^31-1 ms (about 24.8 days, or Infinity) fires at once: a longer one is re-armed.
    let timer: ReturnType<typeof setTimeout> | undefined;
    const arm = (): void => {
      const left = deadline - Date.now();
      timer =
        left > MAX_TIMER_MS
          ? setTimeout(arm, MAX_TIMER_MS)
          : setTimeout(() => stop.abort(), Math.max(0, left));
    };
    arm();
    const signal = options.signal ? anySignal([options.signal, stop.signal]) : stop.signal;
    let last = created;
    try {
      // Refused for the account's waiting places, the stream gives way to plain polls at once.
      for await (const task of this.#events(created.id, { signal }, true)) {
        last = task;
        options.onUpdate?.(task);
      }
      return last;
    } catch (error) {
      if (stop.signal.aborted && !options.signal?.aborted) throw new WaitTimeoutError(last);
      // No event stream at this service (an older version): 404 not_found for the address, or 405. A stream
      // that keeps breaking (a proxy buffering it), or refused because the account holds all its waiting
      // places (429), is given up for polls too.
      const missing = error instanceof ApiError && (error.code === 'not_found' || error.status === 405);
      if (!missing && !(error instanceof ConnectionError) && !(error instanceof RateLimitError)) throw error;
      const { onUpdate, signal: outer } = options;
      return this.wait(created.id, {
        timeoutMs: Math.max(0, deadline - Date.now()),
        ...(onUpdate ? { onUpdate } : {}),
        ...(outer ? { signal: outer } : {}),
      });
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * GET /v1/tasks/{id}/artifacts/{index}: the whole result file. A transfer that breaks in the middle is
   * resumed from the bytes received (`Range` with `If-Range` naming the file's ETag; a file that changed is
   * read again whole), up to `maxRetries` breaks in a row; then a ConnectionError. A break after the last
   * byte (the resume answered 416) leaves the file whole.
   */
  async download(id: string, index: number, options: { signal?: AbortSignal } = {}): Promise<Uint8Array> {
    const path = `/v1/tasks/${encodeURIComponent(id)}/artifacts/${index}`;
    let parts: Uint8Array[] = [];
    let received = 0;
    let etag: string | null = null;
    for (let failures = 0; ; ) {
      const resume: Record<string, string> =
        received > 0 && etag !== null ? { range: `bytes=${received}-`, 'if-range': etag } : {};
      let response: Response;
      try {
        response = await this.#t.send({ method: 'GET', path, headers: resume, signal: options.signal });
      } catch (error) {
        // The break came after the last byte: under If-Range a 416 means the same file has no bytes left.
        if (resume['range'] !== undefined && error instanceof ApiError && error.status === 416) {
          return concat(parts, received);
        }
        throw error;
      }
      // Anything but the part asked for is the whole file: what came before is dropped.
      if (response.status !== 206) {
        parts = [];
        received = 0;
      }
      etag = response.headers.get('etag');
      const reader = response.body!.getReader();
      try {
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          parts.push(value);
          received += value.length;
          failures = 0;
        }
      } catch (error) {
        if (options.signal?.aborted) throw error;
        if (++failures > this.#t.maxRetries) {
          throw new ConnectionError(`GET ${path}: ${(error as Error).message}`, { cause: error });
        }
        await this.#t.sleep(MIN_POLL_MS, options.signal);
        continue;
      }
      return concat(parts, received);
    }
  }
}

/** `onUpdate` called only when a task's state differs from the one it was last called with. */
function changesOnly(onUpdate: ((task: Task) => void) | undefined): ((task: Task) => void) | undefined {
  if (!onUpdate) return undefined;
  let last: string | undefined;
  return (task) => {
    // The service writes a task's view the same way each time: the same text is the same state.
    const text = JSON.stringify(task);
    if (text !== last) onUpdate(task);
    last = text;
  };
}

/** The parts of a download as one array of `length` bytes. */
function concat(parts: Uint8Array[], length: number): Uint8Array {
  const bytes = new Uint8Array(length);
  let offset = 0;
  for (const part of parts) {
    bytes.set(part, offset);
    offset += part.length;
  }
  return bytes;
}

/**
 * A wait the service takes: whole seconds from 1 to 60. `create` and `get` read `wait` alike: rounded and
 * held to that range, where the service would refuse `?wait=2.5` or `?wait=90` with a 422.
 */
function waitSeconds(wait: number): number {
  return Math.min(60, Math.max(1, Math.round(wait)));
}
