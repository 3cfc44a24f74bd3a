import { recordStatementTimes, type StatementTime } from '../../src/db/index.ts';
import type { DispatchReply, DispatchRequest, Timing } from '../dispatch/messages.ts';
import { serveRequests } from '../dispatch/rpc.ts';
import { ZeroWorkGenerator } from '../dispatch/zero-generator.ts';
import { serveBenchApp } from './serve-app.ts';

/**
 * The real app of `src/main.ts` with its worker embedded (WORKER=on, production's default) but not yet
 * started, and every run on the zero-work generator. The parent queues tasks through the API, then asks
 * for the worker to start (`start-worker`), watches the jobs left, checks the counts and reads each task's
 * timestamps.
 * BENCH_DISPATCH_DATABASE_URL: a PostgreSQL database; empty: SQLite in a temporary folder.
 * BENCH_DISPATCH_STATEMENTS=1: the worker's start also starts a recording of the statements' times, which
 * the parent ends with `statements` once the drain is over.
 */
const databaseUrl = process.env.BENCH_DISPATCH_DATABASE_URL?.trim();
// The worker starts when the parent asks (`start-worker`), after the tasks are queued.
const container = await serveBenchApp({
  name: 'dispatch',
  env: databaseUrl ? { DATABASE_URL: databaseUrl } : {},
  overrides: { generator: new ZeroWorkGenerator() },
  startWorker: false,
});
const ms = (iso: string | null): number => (iso === null ? Number.NaN : Date.parse(iso));
let statementsRecorded: (() => StatementTime[]) | null = null;

async function handle(request: DispatchRequest): Promise<DispatchReply> {
  const { db } = container.db;
  switch (request.type) {
    case 'start-worker': {
      // Taken on the clock the worker stamps `started_at` with, so the drain is measured on one clock.
      const at = container.clock.now().getTime();
      if (process.env.BENCH_DISPATCH_STATEMENTS === '1') statementsRecorded = recordStatementTimes();
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
    case 'jobs': {
      const row = await db
        .selectFrom('jobs')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .executeTakeFirst();
      return { id: request.id, type: 'jobs', jobs: Number(row?.n ?? 0) };
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
    case 'statements': {
      const statements = statementsRecorded?.() ?? [];
      statementsRecorded = null;
      return { id: request.id, type: 'statements', statements };
    }
    default:
      throw new Error(`the app child does not do ${request.type}`);
  }
}

serveRequests(handle);
