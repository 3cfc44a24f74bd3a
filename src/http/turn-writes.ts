import type { Server } from 'node:http';
import type { Socket } from 'node:net';

type WriteCallback = (error?: Error | null) => void;
type Chunks = Array<{ chunk: unknown; encoding: BufferEncoding }>;

function writeNow(socket: Socket, write: () => void): void {
  try {
    write();
  } catch (error) {
    // A write that throws never calls its stream back: the connection would hang on it for good.
    socket.destroy(error instanceof Error ? error : new Error(String(error)));
  }
}

/**
 * The connections' writes of one turn, sent when its I/O is done: one a socket at most, since a stream
 * starts its next write only when the one before is done.
 *
 * Each turn holds its writes in a map of its own, dropped when they are sent. One map kept for good grew
 * old, and so did the tables it makes as it grows and shrinks: a scavenge takes every pointer from the old
 * generation as alive, even from a table already given up, so the held writes of later turns (the answer's
 * text, its callbacks) outlived two scavenges and were moved to the old generation, about 1.2 KB an answer.
 * A full collection then came every second or so under load (a poll's p99 29-58 ms instead of about 9).
 */
class TurnWrites {
  #held: Map<Socket, () => void> | null = null;
  #flushing = false;
  readonly #flush = (): void => {
    const held = this.#held;
    if (held === null) return;
    this.#flushing = true;
    try {
      // Writes made meanwhile go out at once, so none is added to the map while it is read; a socket
      // destroyed meanwhile still finds its own write here (release).
      for (const socket of held.keys()) this.release(socket);
    } finally {
      this.#flushing = false;
      this.#held = null;
    }
  };

  /** Holds the socket's write until the end of this turn; runs it now while the turn's writes are sent. */
  hold(socket: Socket, write: () => void): void {
    if (this.#flushing) {
      writeNow(socket, write);
      return;
    }
    if (this.#held === null) {
      this.#held = new Map();
      setImmediate(this.#flush);
    }
    this.#held.set(socket, write);
  }

  /** Sends the socket's held write now, if it holds one. */
  release(socket: Socket): void {
    const held = this.#held;
    const write = held?.get(socket);
    if (held == null || write === undefined) return;
    held.delete(socket);
    writeNow(socket, write);
  }
}

/**
 * Sends what the server's connections write during one turn of the event loop together, once the turn's
 * I/O is done (`setImmediate`), instead of a system call the moment each answer ends (the "cork" of a
 * loop iteration that uWebSockets makes). Under load a turn serves dozens of requests, and each answer
 * written at once woke its client again: on the bench's host the kernel's wake-up of the load generator
 * (`sock_def_readable`, by `perf`) cost the server about 10 µs of a poll's 66, since the generator went
 * back to sleep between two answers. Written back to back, the answers find their reader awake.
 *
 * A write is held only until the end of its own turn, so an idle server's answer waits for nothing. One
 * made while the turn's immediates run after the flush (the answers of a group commit, itself an
 * immediate) goes out with the next turn's: under load, after one more turn of requests. The answer is
 * complete when its write is held (Fastify's `reply.sent` is true); the socket reports the write done only
 * once it is made, so the answer's `finish`, its log line and a `Connection: close` come after it.
 * Writes made while the held ones are sent (a download's next chunk) go out at once, and a socket destroyed
 * while it holds a write sends it first (an answer Node or the app writes just before closing the
 * connection, the answers a shutdown ends with), as it would have been sent before.
 */
export function coalesceTurnWrites(server: Server): void {
  const writes = new TurnWrites();
  server.on('connection', (socket: Socket) => {
    const write = socket._write;
    const writev = socket._writev;
    const destroy = socket.destroy;
    socket._write = (chunk: unknown, encoding: BufferEncoding, callback: WriteCallback): void =>
      writes.hold(socket, () => write.call(socket, chunk, encoding, callback));
    if (writev !== undefined)
      socket._writev = (chunks: Chunks, callback: WriteCallback): void =>
        writes.hold(socket, () => writev.call(socket, chunks, callback));
    socket.destroy = (error?: Error): Socket => {
      writes.release(socket);
      return destroy.call(socket, error);
    };
  });
}
