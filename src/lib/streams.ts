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
