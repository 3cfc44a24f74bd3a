/**
 * A value read at most once per turn of the event loop: the first call of a turn reads it, later calls of
 * the same turn get that value, and a value older than `maxAgeMs` is read again (a turn that polls more
 * than once, past 1,024 ready sockets, could take in a request after the read). For caches that must
 * notice another process's change: every request handled in a turn arrived before the turn began, so a
 * read during the turn comes after each of their arrivals, and under load one read serves them all.
 */
export function oncePerTurn<T>(
  read: () => T,
  options: { now?: () => number; maxAgeMs?: number } = {},
): () => T {
  const now = options.now ?? (() => performance.now());
  const maxAgeMs = options.maxAgeMs ?? 1;
  let readThisTurn = false;
  let readAt = 0;
  let value: T;
  return () => {
    const at = now();
    if (readThisTurn && at - readAt < maxAgeMs) return value;
    value = read();
    readAt = at;
    if (!readThisTurn) {
      readThisTurn = true;
      setImmediate(() => {
        readThisTurn = false;
      });
    }
    return value;
  };
}
