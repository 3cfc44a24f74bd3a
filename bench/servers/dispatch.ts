import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { buildApp } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { createContainer } from '../../src/container.ts';
import type { DispatchReply, DispatchRequest, Timing } from '../dispatch/messages.ts';
import { serveRequests } from '../dispatch/rpc.ts';
import { ZeroWorkGenerator } from '../dispatch/zero-generator.ts';
import { announceAndAwaitStop, BENCH_ADMIN_TOKEN } from './messages.ts';

/**
 * The real app of `src/main.ts` with its worker embedded (WORKER=on, production's default) but not yet
 * started, and every run on the zero-work generator. The parent queues tasks through the API, then asks
 * for the worker to start (`start-worker`), watches the counts and reads each task's timestamps.
 * BENCH_DISPATCH_DATABASE_URL: a PostgreSQL database; empty: SQLite in a temporary folder.
 */
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gta-bench-dispatch-'));
const databaseUrl = process.env.BENCH_DISPATCH_DATABASE_URL?.trim();
const config = loadConfig({
  DATA_DIR: dir,
  ADMIN_TOKEN: BENCH_ADMIN_TOKEN,
  LOG_LEVEL: 'silent',
  ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
});
const container = await createContainer(config, { generator: new ZeroWorkGenerator() });
const app = await buildApp({
  ...container,
  // The production limits (120 requests a minute per account) would turn queuing 10,000 tasks into 429s.
  limits: { accountRequests: 1e9, wrongKeyAttempts: 1e9, windowSeconds: 60 },
});
await app.listen({ port: 0, host: '127.0.0.1' });
const address = app.server.address();
if (address === null || typeof address === 'string') throw new Error('app is not listening on TCP');

const ms = (iso: string | null): number => (iso === null ? Number.NaN : Date.parse(iso));

async function handle(request: DispatchRequest): Promise<DispatchReply> {
  const { db } = container.db;
  switch (request.type) {
    case 'start-worker': {
      // Taken on the clock the worker stamps `started_at` with, so the drain is measured on one clock.
      const at = container.clock.now().getTime();
      container.worker.start();
      return { id: request.id, type: 'worker-started', at, uptime: process.uptime() };
    }
    case 'counts': {
      const rows = await db
        .selectFrom('tasks')
        .select(['status', (eb) => eb.fn.countAll<number>().as('n')])
        .groupBy('status')
        .execute();
      const count = (status: string): number => Number(rows.find((r) => r.status === status)?.n ?? 0);
      const total = rows.reduce((sum, r) => sum + Number(r.n), 0);
      const [queued, running, succeeded] = [count('queued'), count('running'), count('succeeded')];
      return {
        id: request.id,
        type: 'counts',
        queued,
        running,
        succeeded,
        other: total - queued - running - succeeded,
      };
    }
    case 'timings': {
      const rows = await db
        .selectFrom('tasks')
        .select(['created_at', 'started_at', 'finished_at'])
        .where('created_at', '>=', new Date(request.since).toISOString())
        .execute();
      const timings: Timing[] = rows.map((r) => ({
        created: ms(r.created_at),
        running: ms(r.started_at),
        finished: ms(r.finished_at),
      }));
      return { id: request.id, type: 'timings', timings };
    }
    default:
      throw new Error(`the app child does not do ${request.type}`);
  }
}

serveRequests(handle);
announceAndAwaitStop(address.port, async () => {
  await app.close();
  await container.close();
  fs.rmSync(dir, { recursive: true, force: true });
});
