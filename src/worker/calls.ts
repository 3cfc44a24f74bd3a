import { CallTimeout } from './failures.ts';

/**
 * Runs one external call (generator, storage) with a timeout of its own, inside the run's signal. It
 * settles on whichever comes first, the answer, the timeout (CallTimeout) or the run's end (the signal's
 * reason), also when the call ignores its signal: the worker stops waiting even if the call never
 * answers, and a late answer is dropped.
 *
 * One promise settled by whichever comes first, and one listener (on the run's signal): a zero-work run
 * makes four such calls, and a race of two promises with a listener on the call's own signal was a tenth
 * of what a PostgreSQL drain allocated (docs/performance.md, "A twenty-sixth session").
 */
export function bounded<T>(
  what: string,
  call: (signal: AbortSignal) => Promise<T>,
  options: { signal?: AbortSignal; timeoutMs: number },
): Promise<T> {
  const { signal, timeoutMs } = options;
  if (signal?.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const controller = new AbortController();
    let settled = false;
    const finish = (): boolean => {
      if (settled) return false;
      settled = true;
      clearTimeout(timer);
      signal?.removeEventListener('abort', onRunEnd);
      return true;
    };
    // The call sees its signal abort before the wait ends; a failure after that has no one left to tell.
    const giveUp = (reason: unknown): void => {
      if (!finish()) return;
      controller.abort(reason);
      reject(reason);
    };
    const onRunEnd = (): void => giveUp(signal?.reason);
    const timer = setTimeout(
      () => giveUp(new CallTimeout(`${what} took longer than ${timeoutMs} ms`)),
      timeoutMs,
    );
    signal?.addEventListener('abort', onRunEnd, { once: true });
    let pending: Promise<T>;
    try {
      pending = Promise.resolve(call(controller.signal));
    } catch (error) {
      pending = Promise.reject(error);
    }
    pending.then(
      (value) => {
        if (finish()) resolve(value);
      },
      (error: unknown) => {
        if (finish()) reject(error);
      },
    );
  });
}
