/**
 * Shared pieces of the worker tests: task bodies, waiting, a worker built on a test app's backends with
 * some dependencies replaced, and fakes of the generator and the blob store that misbehave on purpose.
 */
import type { Readable } from 'node:stream';
import { findModel } from '../src/catalog/index.ts';
import type {
  GenerationOutputs,
  GenerationRequest,
  GenerationStatus,
  Generator,
  RunStart,
} from '../src/generators/index.ts';
import { Simulator } from '../src/generators/index.ts';
import type { Clock } from '../src/lib/clock.ts';
import type { BlobInfo, BlobStore, ByteRange } from '../src/storage/index.ts';
import { Worker, type WorkerDeps, type WorkerOptions } from '../src/worker/worker.ts';
import type { TestApp } from './helpers.ts';

/** A model-3d task (two result files: the model and its preview). */
export const body3d = (prompt = 'a teapot'): { model: string; settings: Record<string, unknown> } => ({
  model: 'model-3d',
  settings: { task_type: 'text_to_model', prompt, texture: false, pbr: false },
});

export async function until(check: () => Promise<boolean>, what: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

export async function statusOf(
  t: TestApp,
  key: string,
  id: string,
): Promise<Record<string, unknown> & { status: string; error?: { code: string } }> {
  return (await t.call(key, 'GET', `/v1/tasks/${id}`)).json();
}

export async function taskRow(t: TestApp, id: string) {
  return t.container.db.db.selectFrom('tasks').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
}

/** A worker on the test app's database and storage, with some dependencies replaced. */
export function workerOf(t: TestApp, deps: Partial<WorkerDeps> = {}, options: WorkerOptions = {}): Worker {
  const c = t.container;
  return new Worker(
    {
      db: c.db,
      clock: c.clock,
      storage: c.storage,
      generator: c.generator,
      findModel,
      resultRetentionMs: c.config.resultRetentionMs,
      timeScale: c.config.simSpeed,
      log: c.log,
      ...deps,
    },
    { pollIntervalMs: 50, ...options },
  );
}

/** A promise that settles only when `release` is called: a call that stalls and ignores its signal. */
export function stall<T>(): { promise: Promise<T>; release: () => void } {
  let release = (): void => {};
  const promise = new Promise<T>((_resolve, reject) => {
    release = () => reject(new Error('released'));
  });
  promise.catch(() => {});
  return { promise, release };
}

/**
 * The simulator behind a fake upstream that remembers its runs by run key, as a provider honouring an
 * idempotency key does; each hook may replace a call.
 */
export class FakeGenerator implements Generator {
  readonly sim: Simulator;
  /** create() calls the worker made. */
  creates = 0;
  /** Runs the upstream started (a create that reached it with a key it had not seen). */
  upstreamRuns = 0;
  statusCalls = 0;
  readonly #runs = new Map<string, string>();
  readonly #stalls: Array<() => void> = [];
  onCreate: ((call: number, reached: () => Promise<string>, signal: AbortSignal) => Promise<string>) | null =
    null;
  onStatus: ((call: number) => Promise<GenerationStatus> | null) | null = null;

  constructor(clock: Clock) {
    this.sim = new Simulator({ clock, simSpeed: 1000 });
  }

  /** A call that never answers and ignores its signal, until the test ends. */
  hang<T>(): Promise<T> {
    const s = stall<T>();
    this.#stalls.push(s.release);
    return s.promise;
  }

  releaseAll(): void {
    for (const release of this.#stalls.splice(0)) release();
  }

  ensureAvailable(request: { settings: Readonly<Record<string, unknown>> }): Promise<void> {
    return this.sim.ensureAvailable(request);
  }

  async create(request: GenerationRequest, run: RunStart, signal: AbortSignal): Promise<string> {
    this.creates += 1;
    const reached = async (): Promise<string> => {
      const known = this.#runs.get(run.key);
      if (known) return known;
      this.upstreamRuns += 1;
      const handle = await this.sim.create(request, run);
      this.#runs.set(run.key, handle);
      return handle;
    };
    return this.onCreate ? this.onCreate(this.creates, reached, signal) : reached();
  }

  async find(_request: GenerationRequest, run: RunStart): Promise<string | null> {
    return this.#runs.get(run.key) ?? null;
  }

  async status(handle: string, _request: GenerationRequest, _signal: AbortSignal): Promise<GenerationStatus> {
    this.statusCalls += 1;
    const replaced = this.onStatus?.(this.statusCalls);
    return replaced ?? this.sim.status(handle);
  }

  outputs(
    handle: string,
    request: GenerationRequest,
    dir: string,
    signal: AbortSignal,
  ): Promise<GenerationOutputs> {
    return this.sim.outputs(handle, request, dir, signal);
  }

  cancel(_handle: string, _signal: AbortSignal): Promise<void> {
    return this.sim.cancel();
  }
}

/** A blob store that passes through to a real one, except where a hook replaces `put` or `delete`. */
export class FaultyStore implements BlobStore {
  readonly inner: BlobStore;
  /** Keys of every put that reached the real store. */
  readonly stored: string[] = [];
  puts = 0;
  onPut: ((call: number, key: string) => Promise<never> | null) | null = null;
  /** Runs before a put goes through (something else happening meanwhile). */
  beforePut: ((call: number) => Promise<void>) | null = null;
  onDelete: ((key: string) => Promise<never> | null) | null = null;

  constructor(inner: BlobStore) {
    this.inner = inner;
  }

  async put(
    key: string,
    body: Readable,
    options?: { contentType?: string; signal?: AbortSignal },
  ): Promise<BlobInfo> {
    this.puts += 1;
    await this.beforePut?.(this.puts);
    const replaced = this.onPut?.(this.puts, key);
    if (replaced) {
      body.destroy();
      return replaced;
    }
    const info = await this.inner.put(key, body, options);
    this.stored.push(key);
    return info;
  }

  get(key: string, range?: ByteRange): Promise<{ body: Readable; sizeBytes: number } | null> {
    return this.inner.get(key, range);
  }

  stat(key: string): Promise<BlobInfo | null> {
    return this.inner.stat(key);
  }

  async delete(key: string): Promise<void> {
    const replaced = this.onDelete?.(key);
    if (replaced) return replaced;
    return this.inner.delete(key);
  }

  deleteFolder(folder: string): Promise<void> {
    return this.inner.deleteFolder(folder);
  }

  ping(): Promise<void> {
    return this.inner.ping();
  }
}
