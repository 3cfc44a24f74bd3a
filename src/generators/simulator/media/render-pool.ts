/**
 * Where the simulator's files are drawn. Synthesising and encoding a four-minute song takes seconds of
 * CPU; on the process's own event loop that would stall every request the process serves (the embedded
 * worker shares it with the API). So renderers that compute in JavaScript run in a small pool of
 * worker threads (piscina); video is drawn by an ffmpeg child process already and stays where it is.
 */
import { Piscina } from 'piscina';
import type { OutputPlan } from '../../../catalog/index.ts';
import { threadExecArgv } from '../../../lib/index.ts';
import { produce, type RenderedFile, type RenderOptions, renderOutput } from './index.ts';
import type { RenderJob } from './render-thread.ts';

/** Formats whose work happens in another process anyway. */
const OUT_OF_PROCESS: ReadonlySet<OutputPlan['format']> = new Set(['mp4']);

export class RenderPool {
  readonly #pool: Piscina<RenderJob, void> | null;

  /** `threads`: size of the pool; 0 renders on the calling thread. Threads start on first use. */
  constructor(threads: number) {
    this.#pool =
      threads > 0
        ? new Piscina<RenderJob, void>({
            filename: new URL('./render-thread.ts', import.meta.url).href,
            execArgv: threadExecArgv(),
            minThreads: 0,
            maxThreads: threads,
            idleTimeout: 30_000,
          })
        : null;
  }

  /** Renders one planned output into `options.dir`; aborting `options.signal` stops the thread's work. */
  render(plan: OutputPlan, options: RenderOptions): Promise<RenderedFile> {
    const pool = this.#pool;
    if (!pool || OUT_OF_PROCESS.has(plan.format)) return renderOutput(plan, options);
    return produce(plan.format, options, (path) =>
      pool.run({ plan, path }, options.signal ? { signal: options.signal } : {}),
    );
  }

  /** Renders finished by the threads so far (the pool's own count). */
  get renderedInThreads(): number {
    return this.#pool?.completed ?? 0;
  }

  /** Stops the threads; renders still running are abandoned. */
  async close(): Promise<void> {
    await this.#pool?.destroy();
  }
}
