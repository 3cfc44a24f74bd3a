import fs from 'node:fs';
import fsp from 'node:fs/promises';
import { makeTempFolder } from '../lib/index.ts';

const removeTree = (dir: string): Promise<void> => fsp.rm(dir, { recursive: true, force: true });

/**
 * The temporary folders of a worker's runs, where generators write their outputs. Making and removing a
 * folder costs about 0.2-0.4 ms of CPU on an ext4 disk, more than the rest of a zero-work run's path
 * together (bench:dispatch's profile), so a folder a run leaves empty is kept for the next run instead:
 * at most `keep` of them, removed when the worker stops.
 */
export class RunFolders {
  readonly #idle: string[] = [];
  readonly #keep: number;

  constructor(keep: number) {
    this.#keep = keep;
  }

  /** A folder for one run, made (or taken from the kept ones) on its first use. */
  forRun(): RunFolder {
    return new RunFolder(this);
  }

  /** An empty folder: a kept one, or a new one. */
  async take(): Promise<string> {
    return this.#idle.pop() ?? makeTempFolder('run');
  }

  /**
   * Takes a run's folder back: kept when `reusable` and found empty, removed with whatever is in it
   * otherwise. The emptiness check reads the folder synchronously: about 5 µs of CPU for an empty
   * folder, where the thread pool's round trip of `fsp.readdir` cost a zero-work run a fifth of its rate
   * (bench:dispatch). It reads the local temporary disk, which SQLite already writes synchronously.
   */
  async give(dir: string, reusable: boolean): Promise<void> {
    if (reusable && this.#idle.length < this.#keep && isEmptyFolder(dir)) {
      this.#idle.push(dir);
      return;
    }
    await removeTree(dir);
  }

  /** Removes the kept folders (the worker stopped: no run holds one). */
  async clear(): Promise<void> {
    await Promise.all(this.#idle.splice(0).map(removeTree));
  }
}

function isEmptyFolder(dir: string): boolean {
  try {
    return fs.readdirSync(dir).length === 0;
  } catch {
    return false;
  }
}

/** One run's folder: nothing is made until the run asks for the path. */
export class RunFolder {
  readonly #folders: RunFolders;
  #made: Promise<string> | null = null;
  /**
   * A writer was handed the folder and did not come back (timeout, abort): it may still write into it,
   * so the folder is never given to another run.
   */
  #abandoned = false;

  constructor(folders: RunFolders) {
    this.#folders = folders;
  }

  /** The folder's path; made on the first call. */
  path(): Promise<string> {
    this.#made ??= this.#folders.take();
    return this.#made;
  }

  /** Runs `write` (a generator writing into the folder); if it throws, the folder is not reused. */
  async writing<T>(write: () => Promise<T>): Promise<T> {
    this.#abandoned = true;
    const result = await write();
    this.#abandoned = false;
    return result;
  }

  /** Ends the run's use of the folder; nothing when it was never made. */
  async release(): Promise<void> {
    const made = this.#made;
    if (made === null) return;
    this.#made = null;
    const dir = await made.catch(() => null);
    if (dir !== null) await this.#folders.give(dir, !this.#abandoned);
  }
}
