/**
 * The small IPC protocol between `bench/run.ts` and its server children. Servers run in child processes
 * so that the load generator (in the parent) and the server under test each get one of the two cores.
 */

/** Operator token of the bench app (the child sets it, the parent uses it for setup calls). */
export const BENCH_ADMIN_TOKEN = 'bench-admin-token-0123456789';

/** Child → parent: listening on 127.0.0.1:port. */
export interface ReadyMessage {
  type: 'ready';
  port: number;
}

/** Parent → child: close and exit (the child removes its temporary data). */
export interface StopMessage {
  type: 'stop';
}

export function isReadyMessage(message: unknown): message is ReadyMessage {
  return (
    typeof message === 'object' &&
    message !== null &&
    (message as { type?: unknown }).type === 'ready' &&
    typeof (message as { port?: unknown }).port === 'number'
  );
}

export function isStopMessage(message: unknown): message is StopMessage {
  return typeof message === 'object' && message !== null && (message as { type?: unknown }).type === 'stop';
}

/**
 * Tells the parent the port, then runs `close` once when the parent asks to stop or goes away (so an
 * interrupted bench leaves no server or temporary folder behind).
 */
export function announceAndAwaitStop(port: number, close: () => Promise<void>): void {
  let closing = false;
  const stop = (): void => {
    if (closing) return;
    closing = true;
    close()
      .catch((error: unknown) => {
        process.stderr.write(`bench server: close failed: ${String(error)}\n`);
        process.exitCode = 1;
      })
      // process.exit (not a natural exit) so that --cpu-prof writes its profile even with open handles.
      .finally(() => process.exit());
  };
  process.on('message', (message) => {
    if (isStopMessage(message)) stop();
  });
  process.on('disconnect', stop);
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  const ready: ReadyMessage = { type: 'ready', port };
  process.send?.(ready);
}
