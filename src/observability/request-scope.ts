/**
 * The request a piece of code runs for, carried by AsyncLocalStorage, so a task transition committed deep
 * in a service logs its request id without every signature passing it along.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { FastifyInstance } from 'fastify';

interface Scope {
  requestId: string;
}

const storage = new AsyncLocalStorage<Scope>();

/** The id of the request the caller runs for; undefined outside requests (the worker, the sweeper). */
export function currentRequestId(): string | undefined {
  return storage.getStore()?.requestId;
}

/**
 * Enters the request's scope at its first hook. Reading a body resumes in the socket's async context, not
 * the request's, so the scope is entered again before validation (as @fastify/request-context does).
 * `enterWith` rather than `run` + an AsyncResource per request: the scope holds for the rest of the
 * hook's callback and everything it starts, and the next event of any socket starts from that socket's
 * own context, so a scope never leaks to another request; it costs one small object per request
 * (the AsyncResource was about 5 % of a poll's CPU, docs/performance.md).
 */
export function installRequestScope(app: FastifyInstance): void {
  app.addHook('onRequest', (request, _reply, done) => {
    storage.enterWith({ requestId: request.id });
    done();
  });
  app.addHook('preValidation', (request, _reply, done) => {
    if (storage.getStore()?.requestId !== request.id) storage.enterWith({ requestId: request.id });
    done();
  });
}
