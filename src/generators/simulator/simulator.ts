import fs from 'node:fs';
import type { OutputPlan } from '../../catalog/index.ts';
import type { Clock } from '../../lib/index.ts';
import {
  type GeneratedFile,
  type GenerationOutputs,
  type GenerationRequest,
  type GenerationStatus,
  type Generator,
  GeneratorTransientError,
  GeneratorUnavailable,
  type RunStart,
} from '../generator.ts';
import { RenderPool } from './media/render-pool.ts';

/** Test-mode markers, like a payment provider's magic card numbers (CONTRACT §10). */
export const SIM_MARKERS = {
  fail: '[sim:fail]',
  refuse: '[sim:refuse]',
  slow: '[sim:slow]',
  unavailable: '[sim:unavailable]',
  /** Polls of the run never answer and ignore their signal: only the worker's deadline ends the task. */
  hang: '[sim:hang]',
  /** `create` and `status` each answer a 429-like transient error a few times before they work. */
  flaky: '[sim:flaky]',
} as const;

/** Transient failures `[sim:flaky]` gives before answering: `create` per task, `status` per run. */
export const FLAKY_FAILURES = 2;

type Outcome = 'succeed' | 'fail' | 'refuse' | 'hang';

/**
 * Everything a run needs is in its handle, derived from the run's key and start alone, so the simulator
 * keeps no state, survives restarts, and `find` gives the same handle `create` did.
 */
interface SimHandle {
  v: 2;
  key: string;
  startedAtMs: number;
  durationMs: number;
  outcome: Outcome;
  flaky: boolean;
}

/** True when any string inside the settings (at any depth) contains the marker. */
export function hasMarker(value: unknown, marker: string): boolean {
  if (typeof value === 'string') return value.includes(marker);
  if (Array.isArray(value)) return value.some((item) => hasMarker(item, marker));
  if (value !== null && typeof value === 'object')
    return Object.values(value).some((item) => hasMarker(item, marker));
  return false;
}

/**
 * The built-in generator for every model: takes the model's typical time divided by SIM_SPEED, reports
 * progress, and renders real files of the promised kinds from the mode's plan.
 */
export class Simulator implements Generator {
  readonly #clock: Clock;
  readonly #simSpeed: number;

  readonly #callLog: string | null;
  readonly #renderer: RenderPool;
  /**
   * Failures `[sim:flaky]` has given so far, by call kind and task or run key. In memory: a restart only
   * means a few more 429s, which is what a flaky provider looks like anyway.
   */
  readonly #flakyFailures = new Map<string, number>();

  /** `renderer`: where files are drawn (default: on the calling thread). */
  constructor(deps: { clock: Clock; simSpeed: number; callLog?: string | null; renderer?: RenderPool }) {
    this.#clock = deps.clock;
    this.#simSpeed = deps.simSpeed;
    this.#callLog = deps.callLog ?? null;
    this.#renderer = deps.renderer ?? new RenderPool(0);
  }

  async ensureAvailable(request: { settings: Readonly<Record<string, unknown>> }): Promise<void> {
    if (hasMarker(request.settings, SIM_MARKERS.unavailable))
      throw new GeneratorUnavailable('simulated outage');
  }

  async create(request: GenerationRequest, run: RunStart): Promise<string> {
    const handle = this.#handleOf(request, run);
    // Counted per task: on a channel every retry is a new run under a new key, so a count per run key
    // would fail every create of the task, never the first few.
    if (handle.flaky) this.#flake('create', request.taskId);
    // One line per started run: several processes append to one file, so duplicate runs can be counted.
    if (this.#callLog) fs.appendFileSync(this.#callLog, `${request.taskId}\n`);
    return JSON.stringify(handle);
  }

  /** The run a `create` under the same key made: the handle is derived from the key, so it always exists. */
  async find(request: GenerationRequest, run: RunStart): Promise<string | null> {
    return JSON.stringify(this.#handleOf(request, run));
  }

  #handleOf(request: GenerationRequest, run: RunStart): SimHandle {
    const marked = (marker: string): boolean => hasMarker(request.settings, marker);
    const slow = marked(SIM_MARKERS.slow) ? 10 : 1;
    const outcome: Outcome = marked(SIM_MARKERS.hang)
      ? 'hang'
      : marked(SIM_MARKERS.refuse)
        ? 'refuse'
        : marked(SIM_MARKERS.fail)
          ? 'fail'
          : 'succeed';
    return {
      v: 2,
      key: run.key,
      startedAtMs: run.startedAt.getTime(),
      durationMs: Math.round((request.plan.workSeconds * 1000 * slow) / this.#simSpeed),
      outcome,
      flaky: marked(SIM_MARKERS.flaky),
    };
  }

  /** Throws a 429-like error for the first FLAKY_FAILURES calls of this kind and task (`create`) or run. */
  #flake(call: 'create' | 'status', key: string): void {
    const id = `${call}:${key}`;
    const failures = this.#flakyFailures.get(id) ?? 0;
    if (failures >= FLAKY_FAILURES) return;
    // Bounded: forgetting old runs only gives them a few more 429s.
    if (this.#flakyFailures.size >= 10_000) this.#flakyFailures.clear();
    this.#flakyFailures.set(id, failures + 1);
    throw new GeneratorTransientError('simulated 429: too many requests', { retryAfterMs: 1_000 });
  }

  async status(handle: string): Promise<GenerationStatus> {
    const run = JSON.parse(handle) as SimHandle;
    // Never answers, whatever the signal says: a stalled provider connection.
    if (run.outcome === 'hang') return new Promise<never>(() => {});
    if (run.flaky) this.#flake('status', run.key);
    const elapsed = this.#clock.now().getTime() - run.startedAtMs;
    // A refusal comes early, as a provider's moderation would; a failure halfway through.
    const endMs =
      run.outcome === 'refuse'
        ? run.durationMs * 0.1
        : run.outcome === 'fail'
          ? run.durationMs * 0.5
          : run.durationMs;
    if (elapsed < endMs) {
      // A clock a few milliseconds behind the run's start (re-measured, or another process's) is not -1 %.
      const share = Math.max(0, elapsed) / Math.max(1, run.durationMs);
      const progress = Math.min(99, Math.floor(share * 100));
      return {
        state: 'running',
        progress,
        pollAfterMs: Math.min(2_000, Math.max(20, Math.round(run.durationMs / 40))),
      };
    }
    if (run.outcome === 'refuse')
      return { state: 'failed', code: 'content_refused', reason: 'simulated refusal' };
    if (run.outcome === 'fail')
      return { state: 'failed', code: 'generation_failed', reason: 'simulated failure' };
    return { state: 'succeeded' };
  }

  async outputs(
    _handle: string,
    request: GenerationRequest,
    dir: string,
    signal: AbortSignal,
  ): Promise<GenerationOutputs> {
    const files: GeneratedFile[] = [];
    for (const output of request.plan.outputs) {
      files.push(await this.#render(output, dir, signal));
    }
    return { files, caption: request.plan.caption, texts: request.plan.texts };
  }

  async cancel(): Promise<void> {
    // Nothing runs anywhere: the handle alone describes the run.
  }

  async #render(output: OutputPlan, dir: string, signal: AbortSignal): Promise<GeneratedFile> {
    const rendered = await this.#renderer.render(output, { dir, signal });
    return {
      path: rendered.path,
      kind: output.kind,
      filename: output.filename,
      contentType: rendered.contentType,
      sizeBytes: rendered.sizeBytes,
      caption: output.caption,
    };
  }
}
