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

/**
 * `oncePerTurn` for a value read asynchronously (a query on PostgreSQL): the first call of a turn starts the
 * read, later calls of the same turn share its promise, and a read started more than `maxAgeMs` ago is
 * started again. Every request handled in a turn arrived before the turn began, so the read, started during
 * the turn, sees every change committed before each of them arrived. A failed read is not shared further.
 */
export function oncePerTurnAsync<T>(
  read: () => Promise<T>,
  options: { now?: () => number; maxAgeMs?: number } = {},
): () => Promise<T> {
  const now = options.now ?? (() => performance.now());
  const maxAgeMs = options.maxAgeMs ?? 1;
  let current: Promise<T> | null = null;
  let startedAt = 0;
  return () => {
    const at = now();
    if (current !== null && at - startedAt < maxAgeMs) return current;
    const started = read();
    current = started;
    startedAt = at;
    const forget = (): void => {
      if (current === started) current = null;
    };
    setImmediate(forget);
    started.catch(forget);
    return started;
  };
}
