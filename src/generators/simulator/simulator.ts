import fs from 'node:fs';
import type { OutputPlan } from '../../catalog/index.ts';
import type { Clock } from '../../lib/clock.ts';
import {
  type GeneratedFile,
  type GenerationOutputs,
  type GenerationRequest,
  type GenerationStatus,
  type Generator,
  GeneratorUnavailable,
} from '../generator.ts';
import { RenderPool } from './media/render-pool.ts';

/** Test-mode markers, like a payment provider's magic card numbers (CONTRACT §10). */
export const SIM_MARKERS = {
  fail: '[sim:fail]',
  refuse: '[sim:refuse]',
  slow: '[sim:slow]',
  unavailable: '[sim:unavailable]',
} as const;

type Outcome = 'succeed' | 'fail' | 'refuse';

/** Everything a run needs is in its handle, so the simulator keeps no state and survives restarts. */
interface SimHandle {
  v: 1;
  startedAtMs: number;
  durationMs: number;
  outcome: Outcome;
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

  async create(request: GenerationRequest): Promise<string> {
    const slow = hasMarker(request.settings, SIM_MARKERS.slow) ? 10 : 1;
    const outcome: Outcome = hasMarker(request.settings, SIM_MARKERS.refuse)
      ? 'refuse'
      : hasMarker(request.settings, SIM_MARKERS.fail)
        ? 'fail'
        : 'succeed';
    // One line per started run: several processes append to one file, so duplicate runs can be counted.
    if (this.#callLog) fs.appendFileSync(this.#callLog, `${request.taskId}\n`);
    const handle: SimHandle = {
      v: 1,
      startedAtMs: this.#clock.now().getTime(),
      durationMs: Math.round((request.plan.workSeconds * 1000 * slow) / this.#simSpeed),
      outcome,
    };
    return JSON.stringify(handle);
  }

  async status(handle: string): Promise<GenerationStatus> {
    const run = JSON.parse(handle) as SimHandle;
    const elapsed = this.#clock.now().getTime() - run.startedAtMs;
    // A refusal comes early, as a provider's moderation would; a failure halfway through.
    const endMs =
      run.outcome === 'refuse'
        ? run.durationMs * 0.1
        : run.outcome === 'fail'
          ? run.durationMs * 0.5
          : run.durationMs;
    if (elapsed < endMs) {
      const progress = Math.min(99, Math.floor((elapsed / Math.max(1, run.durationMs)) * 100));
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
