/**
 * The request a piece of code runs for, carried by AsyncLocalStorage, so a task transition committed deep
 * in a service logs its request id without every signature passing it along.
 */
import { AsyncLocalStorage, AsyncResource } from 'node:async_hooks';
import type { FastifyInstance, FastifyRequest } from 'fastify';

interface Scope {
  requestId: string;
}

const storage = new AsyncLocalStorage<Scope>();
const resources = new WeakMap<FastifyRequest, AsyncResource>();

/** The id of the request the caller runs for; undefined outside requests (the worker, the sweeper). */
export function currentRequestId(): string | undefined {
  return storage.getStore()?.requestId;
}

/**
 * Enters the request's scope at its first hook. Reading a body resumes in the socket's async context, not
 * the request's, so the scope is entered again before validation (as @fastify/request-context does).
 */
export function installRequestScope(app: FastifyInstance): void {
  app.addHook('onRequest', (request, _reply, done) => {
    storage.run({ requestId: request.id }, () => {
      resources.set(request, new AsyncResource('gta-request'));
      done();
    });
  });
  app.addHook('preValidation', (request, _reply, done) => {
    const resource = resources.get(request);
    if (resource) resource.runInAsyncScope(done);
    else done();
  });
}
