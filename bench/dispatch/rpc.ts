import type { ChildProcess } from 'node:child_process';
import { type DispatchReply, type DispatchRequest, isDispatchReply, isDispatchRequest } from './messages.ts';

type Body<T> = T extends DispatchRequest ? Omit<T, 'id'> : never;

let nextId = 1;

/** Sends one request to a bench child and waits for its reply (the child's `error` reply throws). */
export function ask(
  child: ChildProcess,
  body: Body<DispatchRequest>,
  timeoutMs = 600_000,
): Promise<DispatchReply> {
  const id = nextId++;
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.off('message', onMessage);
      reject(new Error(`${body.type}: no answer within ${timeoutMs} ms`));
    }, timeoutMs);
    const onMessage = (message: unknown): void => {
      if (!isDispatchReply(message) || message.id !== id) return;
      clearTimeout(timer);
      child.off('message', onMessage);
      if (message.type === 'error') reject(new Error(`${body.type}: ${message.message}`));
      else resolve(message);
    };
    child.on('message', onMessage);
    child.send({ ...body, id });
  });
}

/** In a child: answers each request with `handle`'s reply, or an `error` reply when it throws. */
export function serveRequests(handle: (request: DispatchRequest) => Promise<DispatchReply>): void {
  process.on('message', (message) => {
    if (!isDispatchRequest(message)) return;
    handle(message).then(
      (reply) => process.send?.(reply),
      (error: unknown) =>
        process.send?.({
          id: message.id,
          type: 'error',
          message: error instanceof Error ? (error.stack ?? error.message) : String(error),
        } satisfies DispatchReply),
    );
  });
}
