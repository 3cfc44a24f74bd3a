/**
 * Where music-metadata reads untrusted audio and video: a small pool of worker threads (piscina, as
 * the simulator's render pool), each probe with a time limit and every thread with a heap limit.
 *
 * music-metadata decodes some structures in one synchronous pass. On the calling thread that stalled
 * every request the process serves: a 96 MB MP4 whose sample tables (`stts`, `stsz`) hold 8 million
 * entries each blocked the event loop 5–7 s, a 78 MB MP3 whose ID3v2 tag holds 6 million tiny frames
 * 17–19 s (measured on two shared cores). Normal files of the same size take milliseconds. Running the
 * same library in a thread keeps every answer it gave (the tests compare both) and bounds the cost of a
 * hostile file by the limits below, whichever parser it targets.
 */
import { Piscina } from 'piscina';
import { threadExecArgv } from '../lib/index.ts';
import type { ProbeResult } from './probe.ts';
import type { ProbeJob } from './probe-thread.ts';

export interface ProbePoolOptions {
  /** Most threads probing at once; further probes wait in the pool's queue. (Default: 2) */
  threads?: number;
  /**
   * Longest a probe may take, waiting in the queue included (milliseconds); its thread is then
   * stopped and the probe reads as nothing. (Default: 10_000)
   */
  timeoutMs?: number;
  /**
   * Heap of each thread (megabytes); a probe that needs more reads as nothing. Normal files need a few;
   * a million sample-table entries need 64 to 96. (Default: 256)
   */
  maxHeapMb?: number;
}

export class ProbePool {
  readonly #pool: Piscina<ProbeJob, ProbeResult>;
  readonly #timeoutMs: number;
  #answered = 0;
  #abandoned = 0;

  /** Threads start on the first probe; idle ones stop after 30 s and never keep the process alive. */
  constructor(options: ProbePoolOptions = {}) {
    this.#timeoutMs = options.timeoutMs ?? 10_000;
    this.#pool = new Piscina<ProbeJob, ProbeResult>({
      filename: new URL('./probe-thread.ts', import.meta.url).href,
      name: 'probeWithMusicMetadata',
      execArgv: threadExecArgv(),
      minThreads: 0,
      maxThreads: options.threads ?? 2,
      idleTimeout: 30_000,
      resourceLimits: { maxOldGenerationSizeMb: options.maxHeapMb ?? 256 },
    });
    // A thread that fails between probes is replaced; the probe it ran has already been answered.
    this.#pool.on('error', () => {});
  }

  /**
   * music-metadata's length and frame size of the file at `path`, read in a thread. Nothing when the
   * probe fails, exceeds its time limit or runs its thread out of memory: the caller's other sources
   * (our `moov` reader, ffprobe in its own process) fill what they can.
   */
  async probe(path: string, isVideo: boolean): Promise<ProbeResult> {
    try {
      const result = await this.#pool.run(
        { path, isVideo },
        { signal: AbortSignal.timeout(this.#timeoutMs) },
      );
      this.#answered += 1;
      return result;
    } catch {
      this.#abandoned += 1;
      return {};
    }
  }

  /** Probes answered by a thread so far. */
  get probedInThreads(): number {
    return this.#answered;
  }

  /** Probes given up so far: timed out, out of memory, or their thread failed. */
  get abandoned(): number {
    return this.#abandoned;
  }

  /** Stops the threads; probes still running read as nothing. */
  async close(): Promise<void> {
    await this.#pool.destroy();
  }
}
