import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { errors } from '../../errors.ts';
import { keyRevocation, stillAuthenticated } from '../plugins/auth.ts';
import type { AppDeps } from '../types.ts';
import { clientGone } from '../waiting.ts';
import { errorResponses, errorSchema, eventStreamResponse, pathParam } from './schemas.ts';

/**
 * GET /v1/tasks/{id}/events: the task's changes as Server-Sent Events (CONTRACT §12, WHATWG HTML §9.2).
 * `event: task` with the task JSON (exactly GET /v1/tasks/{id}'s body) on connect and on every change,
 * `id:` the task's revision; after a final state `event: done` with the final task, then the end. `done`
 * carries no id: it would repeat the last `task` event's, and a client resuming from that id after a
 * final state gets `done` again, which is what it needs. `Last-Event-ID: n` skips every event up to n.
 */
export async function taskEventRoutes(app: FastifyInstance, deps: AppDeps): Promise<void> {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const { tasks, watch } = deps.services;
  const heartbeatMs = deps.config.streamHeartbeatMs;

  r.get(
    '/v1/tasks/:id/events',
    {
      schema: {
        tags: ['tasks'],
        operationId: 'streamTaskEvents',
        summary: "A task's changes as Server-Sent Events",
        description:
          '`event: task` on connect and on every change of status or progress (`id:` increases per task), then `event: done` with the final task, and the stream ends. Send `Last-Event-ID` to resume. ' +
          `A comment line every ${heartbeatMs / 1000} s (STREAM_HEARTBEAT) keeps proxies open.`,
        params: z.object({ id: pathParam }),
        // Any value: one that is not ours restarts the stream (WHATWG leaves the id to the server).
        headers: z.object({ 'last-event-id': z.string().optional() }),
        response: {
          200: eventStreamResponse(
            'the stream, until the task is final',
            '`event: task` with `id: <revision>` and the task JSON as `data` on connect and on every change; then `event: done` with the final task JSON, and the end. Comment lines (`: keep-alive`) keep it open.',
          ),
          ...errorResponses,
          404: errorSchema.describe('task_not_found'),
          429: errorSchema.describe('rate_limited (also: too many streams and waiting calls open)'),
        },
      },
    },
    async (request, reply) => {
      const principal = request.principal!;
      const { id } = request.params;
      // A malformed Last-Event-ID is not one we sent: the stream starts from the beginning.
      const resumeText = request.headers['last-event-id']?.trim() ?? '';
      let sent = /^\d{1,15}$/.test(resumeText) ? Number(resumeText) : -1;
      // Subscribed before the first read, so that no change can slip between the read and the wait.
      const subscription = watch.subscribe(id);
      let state: Awaited<ReturnType<typeof tasks.watchState>>;
      let release: () => void;
      try {
        // Errors (a foreign or missing task, too many streams) are JSON answers, before any stream starts.
        state = await tasks.watchState(principal, id, request.lang);
        // An id past the task's revision is not one we sent either (another task's, a client's guess).
        if (sent > state.revision) sent = -1;
        // A final task's stream is written at once and ends, as a final task's long-poll answers at once:
        // it takes no place.
        const admitted = state.final ? () => {} : watch.admit(principal.accountId);
        if (!admitted) throw errors.tooManyStreams(watch.perAccount);
        release = admitted;
      } catch (error) {
        subscription.close();
        throw error;
      }
      // A revoked key, or a session signed out, stops opening the stream, as it stops opening everything;
      // a key's revocation ends it at once, wherever it was made.
      const stillOpen = (): Promise<boolean> => stillAuthenticated(request, deps);
      const revocation = keyRevocation(request, deps);
      const stop = AbortSignal.any([clientGone(reply), watch.closing, revocation.signal]);
      reply.hijack();
      const res = reply.raw;
      res.writeHead(200, {
        ...(reply.getHeaders() as Record<string, string>),
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-cache',
        'x-accel-buffering': 'no',
        connection: 'keep-alive',
      });
      // At once, not with the first write: a resumed stream whose task has not changed writes nothing
      // until a heartbeat, and a client must see it accepted before then.
      res.flushHeaders();
      // A client gone between two writes: nothing more is written (the loop ends at its next wait).
      const send = (text: string): void => {
        if (!res.destroyed && !res.writableEnded) res.write(text);
      };
      try {
        // A HEAD answers what a GET would (a refusal included) but has no body: it ends with its headers,
        // giving its place back, or its connection would serve nothing more until the task is final.
        if (request.method === 'HEAD') return;
        for (;;) {
          subscription.seenRevision = state.revision;
          if (state.revision > sent) {
            send(`event: task\nid: ${state.revision}\ndata: ${state.json}\n\n`);
            sent = state.revision;
          }
          if (state.final) {
            send(`event: done\ndata: ${state.json}\n\n`);
            break;
          }
          // Comment lines until the task changes, the client leaves, or the process shuts down.
          while (!(await subscription.changed(heartbeatMs, stop))) {
            if (stop.aborted) return;
            if (!(await stillOpen())) return;
            send(': keep-alive\n\n');
          }
          if (!(await stillOpen())) return;
          state = await tasks.watchState(principal, id, request.lang);
          if (revocation.signal.aborted) return;
        }
      } catch (error) {
        // Headers are gone: a failed read ends the stream; the client reconnects with Last-Event-ID.
        request.log.warn({ err: error, taskId: id }, 'event stream ended by an error');
      } finally {
        revocation.close();
        subscription.close();
        release();
        res.end();
      }
    },
  );
}
