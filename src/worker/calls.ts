import { CallTimeout } from './failures.ts';

/**
 * Runs one external call (generator, storage) with a timeout of its own, inside the run's signal. It
 * settles on whichever comes first, the answer, the timeout (CallTimeout) or the run's end (the signal's
 * reason), also when the call ignores its signal: the worker stops waiting even if the call never
 * answers, and a late answer is dropped.
 */
export async function bounded<T>(
  what: string,
  call: (signal: AbortSignal) => Promise<T>,
  options: { signal?: AbortSignal; timeoutMs: number },
): Promise<T> {
  const { signal, timeoutMs } = options;
  signal?.throwIfAborted();
  const controller = new AbortController();
  const onRunEnd = (): void => controller.abort(signal?.reason);
  signal?.addEventListener('abort', onRunEnd, { once: true });
  const timer = setTimeout(
    () => controller.abort(new CallTimeout(`${what} took longer than ${timeoutMs} ms`)),
    timeoutMs,
  );
  const gaveUp = new Promise<never>((_resolve, reject) => {
    controller.signal.addEventListener('abort', () => reject(controller.signal.reason), { once: true });
  });
  gaveUp.catch(() => {});
  try {
    const pending = Promise.resolve().then(() => call(controller.signal));
    // A failure that comes after we stopped waiting has no one left to tell.
    pending.catch(() => {});
    return await Promise.race([pending, gaveUp]);
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener('abort', onRunEnd);
  }
}
