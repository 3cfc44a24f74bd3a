import type { IncomingHttpHeaders } from 'node:http';
import type { Socket } from 'node:net';
import type { Readable } from 'node:stream';
import { Transform, type TransformCallback } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { errors } from '../errors.ts';

/** Time to receive a request's headers (milliseconds). Node's default is a minute. */
export const HEADERS_TIMEOUT_MS = 10_000;
/** How often Node looks for connections past their header or request timeout (milliseconds). */
export const CONNECTIONS_CHECK_MS = 2_000;
/** What a request body must bring in each window unless it ends first (bytes): 6.4 KB/s at 10 s. */
export const MIN_BODY_BYTES_PER_WINDOW = 64 * 1024;

/**
 * Passes a request body through and fails it with 408 request_timeout when a window of `windowMs`
 * brings less than `minBytes` (Apache's mod_reqtimeout `body=…,MinRate=…` in one rule): a stalled body
 * and one trickled a byte at a time both end within a window or two instead of holding the connection.
 * Waiting on our own consumer counts too, which is why the rate asked for is modest.
 */
export class BodyPace extends Transform {
  #received = 0;
  readonly #timer: NodeJS.Timeout;

  constructor(windowMs: number, minBytes = MIN_BODY_BYTES_PER_WINDOW) {
    super();
    this.#timer = setInterval(() => {
      if (this.#received < minBytes) this.destroy(errors.requestTimeout());
      this.#received = 0;
    }, windowMs);
    this.#timer.unref();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.#received += chunk.length;
    callback(null, chunk);
  }

  override _flush(callback: TransformCallback): void {
    this.stop();
    callback();
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    this.stop();
    callback(error);
  }

  /** Ends the watch (the answer went out, nobody reads the body any more). */
  stop(): void {
    clearInterval(this.#timer);
  }
}

/**
 * `source` seen through `guard`, a stream that may fail the body (too slow, too large). The source is
 * never destroyed here: destroying a request destroys its socket, and the refusal (408, 413) still has to
 * go out on it (with `Connection: close`).
 */
export function guarded<T extends Transform>(source: Readable, guard: T): T {
  const forward = (error: Error): void => void guard.destroy(error);
  source.on('error', forward);
  // An unread guard that fails must not become an uncaught error; readers attach their own listener.
  guard.on('error', () => {});
  guard.on('close', () => {
    source.off('error', forward);
    source.unpipe(guard);
  });
  source.pipe(guard);
  return guard;
}

/** `source` seen through a BodyPace (`guarded`). */
export function paced(source: Readable, windowMs: number): BodyPace {
  return guarded(source, new BodyPace(windowMs));
}

/**
 * Every request body the app parses goes through a BodyPace. Multipart bodies are read by their plugin
 * straight from the socket, so the upload route watches its file part itself. An answer that goes out
 * before its body was read whole closes the connection.
 */
export function installBodyPace(app: FastifyInstance, windowMs: number): void {
  // Callbacks, not async functions: both run on every request, polls included.
  app.addHook('preParsing', (request, reply, payload, done) => {
    const { headers } = request;
    if (!hasBody(headers) || headers['content-type']?.toLowerCase().startsWith('multipart/'))
      return done(null, payload);
    const guard = paced(payload, windowMs);
    reply.raw.once('close', () => guard.stop());
    done(null, guard);
  });
  // An answer sent before its request's body was read whole (a refused upload, a body past a limit) ends
  // the connection: the rest of the body would otherwise keep it busy, and a shutdown waiting for it. A
  // request without a body has nothing left to read, even when it is answered before Node marks it
  // complete (a preflight or a refused query, answered in the same turn as its headers arrived): its
  // connection stays open for the next request, pipelined ones included.
  app.addHook('onSend', (request, reply, payload, done) => {
    if (!request.raw.complete && hasBody(request.headers)) {
      reply.header('connection', 'close');
      linger(request.raw.socket);
    }
    done(null, payload);
  });
}

/** How long a connection closed with its request's body unread still takes that body in (milliseconds). */
export const LINGER_MS = 2_000;

/**
 * Node ends a `Connection: close` answer by destroying the socket once the answer is written. With the
 * client's body still coming in, the kernel then resets the connection, and a client that is still
 * writing (fetch) saw `write EPIPE` instead of the answer, a 413 file_too_large one upload in three. The
 * socket instead stops writing and reads (and drops) what still comes, until the client closes its side
 * or `LINGER_MS` passes (the "lingering close" of RFC 9112 §9.6), so the answer is read first.
 */
function linger(socket: Socket): void {
  socket.destroySoon = () => {
    const timer = setTimeout(() => socket.destroy(), LINGER_MS);
    timer.unref();
    socket.once('close', () => clearTimeout(timer));
    socket.once('end', () => socket.destroy());
    socket.end();
    socket.resume();
  };
}

/** Whether a request says a body follows its headers (RFC 9112 §6.3). */
function hasBody(headers: IncomingHttpHeaders): boolean {
  return (
    headers['transfer-encoding'] !== undefined ||
    (headers['content-length'] !== undefined && headers['content-length'] !== '0')
  );
}
