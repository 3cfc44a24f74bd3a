import type { FileHandle } from 'node:fs/promises';
import http from 'node:http';
import { Readable } from 'node:stream';

/**
 * Buffers a download reads into, reused from one download to the next: serving a 50 MB file through
 * fs.createReadStream allocates a fresh 64 KiB buffer per read (800 per file), and the allocation, the
 * garbage collector and one thread-pool round trip per 64 KiB took most of the CPU (docs/performance.md,
 * Downloads). Large buffers are few and shared, so memory stays flat whatever the number of downloads:
 * a download that cannot get one, or whose client reads slowly, goes on with a small one.
 */
export class BufferPool {
  readonly #size: number;
  /** Buffers of this pool that exist at most (in use or free); 0: no limit. */
  readonly #limit: number;
  /** Free buffers kept for reuse at most. */
  readonly #keep: number;
  readonly #free: Buffer[] = [];
  #made = 0;

  constructor(options: { size: number; limit?: number; keep: number }) {
    this.#size = options.size;
    this.#limit = options.limit ?? 0;
    this.#keep = options.keep;
  }

  get size(): number {
    return this.#size;
  }

  /** A free buffer, a new one while under the limit, or null when the limit is reached. */
  take(): Buffer | null {
    const free = this.#free.pop();
    if (free) return free;
    if (this.#limit > 0 && this.#made >= this.#limit) return null;
    this.#made++;
    // Outside Node's shared 8 KiB slab, which allocUnsafe would use for small sizes: each buffer is its own.
    return Buffer.allocUnsafeSlow(this.#size);
  }

  /** Gives a buffer back once nothing refers to its bytes any more. */
  give(buffer: Buffer): void {
    if (this.#free.length < this.#keep) this.#free.push(buffer);
    else this.#made--;
  }

  /** Forgets a buffer that cannot be reused (a write of it may still be pending); it is garbage-collected. */
  drop(): void {
    this.#made--;
  }
}

/**
 * Reads of fast clients: few syscalls and thread-pool hops per megabyte. 16 × 512 KiB = 8 MiB at most, which
 * one core fills at full speed (the throughput was the same with 32).
 */
const LARGE = new BufferPool({ size: 512 * 1024, limit: 16, keep: 16 });
/** Reads of slow clients (and when no large buffer is free): the size fs.createReadStream reads. */
const SMALL = new BufferPool({ size: 64 * 1024, keep: 32 });

/**
 * The bytes `start`..`end` (inclusive) of an open file as a stream; it closes the file when it ends or is
 * destroyed. Read like any stream, it reads into a new buffer each time (the reader may keep them). Piped
 * into an HTTP response, which is how Fastify sends a stream, it writes the response itself: it reads into
 * a pooled buffer, writes it, and reads into the same buffer again only once the response has handed the
 * bytes to the kernel (the write's callback), so at most one buffer per download is in use, none is
 * allocated per read, and a slow client holds the next read back (backpressure) instead of filling memory.
 */
export class FileBody extends Readable {
  readonly #file: FileHandle;
  #position: number;
  readonly #end: number;
  /** Wakes the pump when the stream is destroyed while it waits for a write. */
  #wake: (() => void) | null = null;

  constructor(file: FileHandle, start: number, end: number) {
    super({ highWaterMark: SMALL.size });
    this.#file = file;
    this.#position = start;
    this.#end = end;
  }

  override _read(size: number): void {
    const length = Math.min(Math.max(size, SMALL.size), this.#end - this.#position + 1);
    if (length <= 0) {
      this.push(null);
      return;
    }
    this.#file.read(Buffer.allocUnsafe(length), 0, length, this.#position).then(
      ({ bytesRead, buffer }) => {
        if (bytesRead === 0) {
          this.destroy(truncated());
          return;
        }
        this.#position += bytesRead;
        this.push(bytesRead === length ? buffer : buffer.subarray(0, bytesRead));
      },
      (error: unknown) => this.destroy(error as Error),
    );
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    this.#wake?.();
    this.#file.close().then(
      () => callback(error),
      (closeError: unknown) => callback(error ?? (closeError as Error)),
    );
  }

  override pipe<T extends NodeJS.WritableStream>(destination: T, options?: { end?: boolean }): T {
    // Only an HTTP response is known to be done with a chunk when its write calls back (a Transform could
    // pass the same buffer on); and only a stream nobody has read from yet.
    if (
      !(destination instanceof http.ServerResponse) ||
      this.readableFlowing !== null ||
      this.readableDidRead
    ) {
      return super.pipe(destination, options);
    }
    this.#pump(destination, options?.end !== false).then(
      () => {
        // Ends the readable side as a consumed stream ends: 'end', then 'close' (Fastify waits for either).
        if (this.destroyed) return;
        this.push(null);
        this.resume();
      },
      (error: unknown) => {
        // A response closed under the write (the client left) is the response's end, not a read error:
        // Fastify destroys this stream then, as it does any piped stream.
        if (!this.destroyed && !destination.destroyed) this.destroy(error as Error);
      },
    );
    return destination;
  }

  async #pump(response: http.ServerResponse, end: boolean): Promise<void> {
    let pool = LARGE;
    let buffer = LARGE.take();
    if (!buffer) {
      pool = SMALL;
      buffer = SMALL.take() as Buffer;
    }
    let writing = false;
    try {
      while (this.#position <= this.#end && !this.destroyed) {
        const length = Math.min(buffer.length, this.#end - this.#position + 1);
        const { bytesRead } = await this.#file.read(buffer, 0, length, this.#position);
        if (this.destroyed) return;
        if (bytesRead === 0) throw truncated();
        this.#position += bytesRead;
        writing = true;
        const flowing = await this.#write(response, buffer.subarray(0, bytesRead));
        // Destroyed while writing: the write may still hold the buffer, which is then dropped, not reused.
        if (this.destroyed) return;
        writing = false;
        // A client that keeps the socket full reads slower than we do: a small buffer serves it as well,
        // and the large one goes back to a client that can use it.
        if (!flowing && pool === LARGE) {
          LARGE.give(buffer);
          pool = SMALL;
          buffer = SMALL.take() as Buffer;
        }
      }
      if (end && !this.destroyed) response.end();
    } finally {
      if (writing) pool.drop();
      else pool.give(buffer);
    }
  }

  /**
   * Writes a chunk and resolves once the response no longer needs its bytes (or the stream was destroyed,
   * then with the chunk possibly still referenced: the caller drops the buffer). True when the socket
   * took the chunk at once (no backpressure).
   */
  #write(response: http.ServerResponse, chunk: Buffer): Promise<boolean> {
    return new Promise((resolve, reject) => {
      let flowing = true;
      this.#wake = () => resolve(flowing);
      flowing = response.write(chunk, (error) => {
        this.#wake = null;
        if (error) reject(error);
        else resolve(flowing);
      });
    });
  }
}

function truncated(): Error {
  return new Error('the stored file is shorter than its recorded size');
}
