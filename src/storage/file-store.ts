import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { uuidv7 } from '../lib/index.ts';
import type { BlobInfo, BlobStore, ByteRange } from './blob-store.ts';
import { resolveInside } from './secure-path.ts';

/** Objects as files under one directory; writes go to a temporary name and are renamed into place. */
export class FileStore implements BlobStore {
  readonly #root: string;

  constructor(root: string) {
    this.#root = path.resolve(root);
    fs.mkdirSync(this.#root, { recursive: true });
  }

  async put(key: string, body: Readable, options: { signal?: AbortSignal } = {}): Promise<BlobInfo> {
    const target = resolveInside(this.#root, key);
    await fsp.mkdir(path.dirname(target), { recursive: true });
    const temp = `${target}.${uuidv7()}.part`;
    try {
      await pipeline(body, fs.createWriteStream(temp), { signal: options.signal });
      await fsp.rename(temp, target);
    } catch (error) {
      await fsp.rm(temp, { force: true });
      throw error;
    }
    const stat = await fsp.stat(target);
    return { sizeBytes: stat.size };
  }

  async get(key: string, range?: ByteRange): Promise<{ body: Readable; sizeBytes: number } | null> {
    const file = resolveInside(this.#root, key);
    const stat = await this.stat(key);
    if (!stat) return null;
    const body = fs.createReadStream(file, range ? { start: range.start, end: range.end } : {});
    return { body, sizeBytes: stat.sizeBytes };
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

  async delete(key: string): Promise<void> {
    await fsp.rm(resolveInside(this.#root, key), { force: true });
  }

  async ping(): Promise<void> {
    await fsp.access(this.#root, fs.constants.W_OK);
  }
}
