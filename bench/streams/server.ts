/**
 * The server side of `npm run bench:streams`: the real app (`buildApp` on `createContainer`, as
 * `src/main.ts` runs it) in a child process started with --expose-gc, driven over IPC by the bench. It
 * reports its memory after a full collection, and makes task transitions through the same functions the
 * worker calls, answering with the moment each one committed.
 */
import { buildApp } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { createContainer } from '../../src/container.ts';
import { markRunning, recordProgress } from '../../src/tasks/index.ts';

export type ServerRequest =
  | { type: 'memory' }
  | { type: 'transition'; taskId: string; kind: 'running' | 'progress'; progress: number }
  | { type: 'stop' };

export type ServerReply =
  | { type: 'ready'; port: number }
  | { type: 'memory'; rss: number; heapUsed: number; external: number }
  | { type: 'transition'; taskId: string; startedAt: number; committedAt: number };

const send = (message: ServerReply): void => {
  process.send?.(message);
};

const config = loadConfig(process.env);
const container = await createContainer(config);
const app = await buildApp(container);
await app.listen({ port: 0, host: '127.0.0.1' });
const address = app.server.address();
send({ type: 'ready', port: typeof address === 'object' && address ? address.port : 0 });

const { db, dialect } = container.db;
process.on('message', async (message: ServerRequest) => {
  if (message.type === 'memory') {
    (globalThis as { gc?: () => void }).gc?.();
    const usage = process.memoryUsage();
    send({ type: 'memory', rss: usage.rss, heapUsed: usage.heapUsed, external: usage.external });
  } else if (message.type === 'transition') {
    const at = container.clock.now();
    const startedAt = performance.timeOrigin + performance.now();
    await dialect.transaction(db, (tx) =>
      message.kind === 'running'
        ? markRunning(tx, message.taskId, at, `${message.taskId}/1`)
        : recordProgress(tx, message.taskId, message.progress, at),
    );
    // The change is committed (and its notification sent) when the transaction's promise settles.
    send({
      type: 'transition',
      taskId: message.taskId,
      startedAt,
      committedAt: performance.timeOrigin + performance.now(),
    });
  } else if (message.type === 'stop') {
    await app.close();
    await container.close();
    process.exit(0);
  }
});
