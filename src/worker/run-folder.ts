import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

/**
 * A run's own temporary folder, where the generator writes its outputs. Made on first use, since most of
 * a run never needs it (a run that fails or is canceled before its outputs), and removed with one
 * `rmdir` when it is empty (the recursive removal walks the folder: a quarter of a zero-work run's CPU
 * time in bench:dispatch's profile).
 */
export class RunFolder {
  #made: Promise<string> | null = null;

  /** The folder's path; makes it on the first call. */
  path(): Promise<string> {
    this.#made ??= fsp.mkdtemp(path.join(os.tmpdir(), 'gta-run-'));
    return this.#made;
  }

  /** Removes the folder and whatever is in it; nothing when it was never made. */
  async remove(): Promise<void> {
    const made = this.#made;
    if (made === null) return;
    this.#made = null;
    const dir = await made.catch(() => null);
    if (dir === null) return;
    try {
      await fsp.rmdir(dir);
    } catch {
      await fsp.rm(dir, { recursive: true, force: true });
    }
  }
}
