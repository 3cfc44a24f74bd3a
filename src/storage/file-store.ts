import fs from 'node:fs';
import fsp, { type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { uuidv7 } from '../lib/index.ts';
import type { BlobInfo, BlobStore, ByteRange } from './blob-store.ts';
import { FileBody } from './file-body.ts';
import { resolveInside } from './secure-path.ts';

/**
 * The folder of the writes under way (`put`), `<uuid>.part` each, under the root: on the same filesystem
 * as the keys, so the rename into place is atomic, and the one folder the sweep of abandoned writes reads.
 * No key reaches it: every part of a key begins with a letter or a digit (`resolveInside`).
 */
const PARTS_FOLDER = '.parts';
/** The name of a write under way in `PARTS_FOLDER`. */
const PART_NAME = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\.part$/;
/**
 * Time since its last write after which a `.part` file is taken for abandoned. A write under way adds to
 * it as bytes come, and every `put` reads a local file or stops at its caller's timeout, so only a write
 * of a process that was killed stays untouched this long, whatever host or pid namespace wrote it.
 */
const ABANDONED_PART_MS = 60 * 60_000;

/** Objects as files under one directory; writes go to a temporary name and are renamed into place. */
export class FileStore implements BlobStore {
  readonly #root: string;
  readonly #parts: string;

  constructor(root: string) {
    this.#root = path.resolve(root);
    this.#parts = path.join(this.#root, PARTS_FOLDER);
    fs.mkdirSync(this.#parts, { recursive: true });
  }

  async put(key: string, body: Readable, options: { signal?: AbortSignal } = {}): Promise<BlobInfo> {
    const target = resolveInside(this.#root, key);
    const temp = path.join(this.#parts, `${uuidv7()}.part`);
    const file = await this.#create(temp);
    try {
      await pipeline(body, fs.createWriteStream('', { fd: file }), { signal: options.signal });
      await this.#moveInto(temp, target);
    } catch (error) {
      await fsp.rm(temp, { force: true });
      throw error;
    }
    const stat = await fsp.stat(target);
    return { sizeBytes: stat.size };
  }

  /** Creates the file `temp` in the parts' folder, and the folder again if someone removed it. */
  async #create(temp: string): Promise<FileHandle> {
    try {
      return await fsp.open(temp, 'wx');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      await fsp.mkdir(this.#parts, { recursive: true });
      return fsp.open(temp, 'wx');
    }
  }

  /**
   * Renames `temp` to `target`, making the target's folders. A delete of the last file of a folder removes
   * the folder and the empty ones above it (`delete`), which may happen between the `mkdir` and the
   * rename, or within the `mkdir` itself (between its making a parent and its child): either step then
   * starts again.
   */
  async #moveInto(temp: string, target: string): Promise<void> {
    for (let attempt = 1; ; attempt += 1) {
      try {
        await fsp.mkdir(path.dirname(target), { recursive: true });
        await fsp.rename(temp, target);
        return;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT' || attempt >= 10) throw error;
      }
    }
  }

  /**
   * Opens the file once and takes its size from the open descriptor (no second lookup of the path, and
   * the size is that of the file being read even if the key is replaced meanwhile).
   */
  async get(key: string, range?: ByteRange): Promise<{ body: Readable; sizeBytes: number } | null> {
    let file: FileHandle;
    try {
      file = await fsp.open(resolveInside(this.#root, key), 'r');
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'EISDIR') return null;
      throw error;
    }
    try {
      const stat = await file.stat();
      if (!stat.isFile()) {
        await file.close();
        return null;
      }
      const start = range?.start ?? 0;
      const end = range ? Math.min(range.end, stat.size - 1) : stat.size - 1;
      return { body: new FileBody(file, start, end), sizeBytes: stat.size };
    } catch (error) {
      await file.close();
      throw error;
    }
  }

  async stat(key: string): Promise<BlobInfo | null> {
    try {
      const stat = await fsp.stat(resolveInside(this.#root, key));
      return stat.isFile() ? { sizeBytes: stat.size } : null;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw error;
    }
  }

  /**
   * Removes the file, then every folder above it that this leaves empty, up to the root: a task's
   * `results/<task>/<run>/` would otherwise stay behind after its files expire, one inode each, forever.
   * A folder still holding anything (another file, a write under way) is left as it is.
   */
  async delete(key: string): Promise<void> {
    const file = resolveInside(this.#root, key);
    await fsp.rm(file, { force: true });
    await this.#removeEmptyFolders(path.dirname(file));
  }

  async deleteFolder(folder: string): Promise<void> {
    const dir = resolveInside(this.#root, folder);
    await fsp.rm(dir, { recursive: true, force: true });
    await this.#removeEmptyFolders(path.dirname(dir));
  }

  /** Removes `from` and every folder above it while they are empty, up to the root (never the root). */
  async #removeEmptyFolders(from: string): Promise<void> {
    for (let dir = from; dir !== this.#root && dir.startsWith(this.#root + path.sep); ) {
      try {
        await fsp.rmdir(dir);
      } catch {
        return;
      }
      dir = path.dirname(dir);
    }
  }

  /**
   * Removes the `.part` files of writes that a killed process (`kill -9`, a crash, the OOM killer) left
   * behind; resolves with how many. Only the parts' folder is read, however many files are stored. A write
   * under way is never touched (`ABANDONED_PART_MS`), and one that ends meanwhile has renamed its file away.
   */
  async removeAbandonedWrites(now: number = Date.now()): Promise<number> {
    let entries: fs.Dir;
    try {
      entries = await fsp.opendir(this.#parts);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 0;
      throw error;
    }
    let removed = 0;
    for await (const entry of entries) {
      if (!entry.isFile() || !PART_NAME.test(entry.name)) continue;
      const file = path.join(this.#parts, entry.name);
      const stat = await fsp.stat(file).catch(() => null);
      if (stat === null || now - stat.mtimeMs < ABANDONED_PART_MS) continue;
      await fsp.rm(file, { force: true });
      removed += 1;
    }
    return removed;
  }

  async ping(): Promise<void> {
    await fsp.access(this.#root, fs.constants.W_OK);
  }
}
