import { Transform, type TransformCallback } from 'node:stream';

/**
 * Counts the bytes passing through and fails with `onTooLarge()` as soon as more than `maxBytes` have
 * passed, so nothing past a cap is ever written. `Infinity` only counts. Shared by uploads, URL
 * downloads and the S3 store.
 */
export class ByteCounter extends Transform {
  bytes = 0;
  readonly #maxBytes: number;
  readonly #onTooLarge: () => Error;

  constructor(maxBytes = Number.POSITIVE_INFINITY, onTooLarge: () => Error = () => new Error('too large')) {
    super();
    this.#maxBytes = maxBytes;
    this.#onTooLarge = onTooLarge;
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.bytes += chunk.length;
    if (this.bytes > this.#maxBytes) callback(this.#onTooLarge());
    else callback(null, chunk);
  }
}

/**
 * The whole body of a fetch `response`, refused past `maxBytes` before it is all held: counted as it is
 * read, after the decompression fetch does by itself (a small gzip body can inflate without bound). For
 * answers of other services that are read whole (providers' APIs, the payment provider).
 */
export async function readCapped(response: Response, maxBytes: number): Promise<Buffer> {
  const chunks: Uint8Array[] = [];
  let total = 0;
  if (response.body === null) return Buffer.alloc(0);
  for await (const chunk of response.body) {
    total += chunk.byteLength;
    // Leaving the loop cancels the stream, so nothing more is inflated or read.
    if (total > maxBytes) throw new Error(`answer larger than ${maxBytes} bytes`);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, total);
}
