import fs from 'node:fs';
import os from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { DEFAULT_WORKER_CONCURRENCY } from '../src/worker/index.ts';
import { type ServerChild, startServer } from './child.ts';
import type { Timing } from './dispatch/messages.ts';
import {
  type DispatchResult,
  dispatchTable,
  drainCpuTable,
  isLandmark,
  roundsTable,
  statementsTable,
} from './dispatch/report.ts';
import { ask } from './dispatch/rpc.ts';
import { pinPostgresServer, type RedisServer, startRedis } from './dispatch/services.ts';
import { drainOf, latencyOf } from './dispatch/stats.ts';
import { benchPostgres } from './postgres-server.ts';
import { runBench } from './report.ts';
import { createScaleDatabase } from './scale/database.ts';
import { CREATE_BODY, call, createAccount, raiseActiveLimit } from './setup.ts';
import {
  busyBetween,
  busyCpuSeconds,
  type CpuPlan,
  ensureBenchTools,
  pinProcess,
  planCpus,
} from './tools.ts';

/**
 * `npm run bench:dispatch`: how fast the worker takes queued tasks to running and to succeeded, on SQLite
 * and on PostgreSQL, beside BullMQ on Redis processing as many no-op jobs in the same run. Every run goes
 * to a generator that does nothing (bench/dispatch/zero-generator.ts), so the figures are the worker's
 * own. Two modes per scenario:
 * - drain: N tasks queued through POST /v1/tasks with the worker stopped, then the worker starts; rates
 *   are N over the time from its start to the last task running (finished);
 * - steady: tasks created at a steady rate while the worker runs; create → running latency p50/p99.
 * Options (env): BENCH_QUICK=1 or --quick, BENCH_DISPATCH_TASKS, BENCH_DISPATCH_RATE (per second),
 * BENCH_DISPATCH_SECONDS, BENCH_DISPATCH_DATABASES (sqlite,postgres), BENCH_DATABASE_URL (a PostgreSQL
 * server; unset: the bench starts one of its own and stops it, bench/postgres-server.ts), BENCH_PROFILE_DIR
 * (--cpu-prof of the app), BENCH_DISPATCH_STATEMENTS=1 (the time of each SQL statement in the drain),
 * BENCH_DISPATCH_ROUNDS (the scenarios again and again in turn, each of ours against its round's BullMQ).
 */

const log = (line: string): void => {
  process.stderr.write(`bench:dispatch: ${line}\n`);
};

/** Production's worker concurrency (WorkerOptions.concurrency's default), and BullMQ's here. */
const CONCURRENCY = DEFAULT_WORKER_CONCURRENCY;
/** Accounts the queued tasks are spread over (each far below the 10,000 active-task cap). */
const ACCOUNTS = 10;
/** Creation requests in flight while queuing. */
const CREATORS = 16;

interface DispatchOptions {
  tasks: number;
  rate: number;
  seconds: number;
  databases: Array<'sqlite' | 'postgres'>;
  profileDir: string | null;
  /** BENCH_DISPATCH_STATEMENTS=1: print each SQL statement's share of the drain (statementsTable). */
  statements: boolean;
  /** How many times the scenarios run, in turn (roundsTable). */
  rounds: number;
}

function readDispatchOptions(argv: readonly string[], env: NodeJS.ProcessEnv): DispatchOptions {
  const quick = argv.includes('--quick') || env.BENCH_QUICK === '1';
  const number = (name: string, fallback: number): number => {
    const text = env[name]?.trim();
    const value = text ? Number(text) : fallback;
    if (!Number.isFinite(value) || value <= 0) throw new Error(`${name} must be a positive number`);
    return value;
  };
  const databases = (env.BENCH_DISPATCH_DATABASES?.trim() || 'sqlite,postgres')
    .split(',')
    .map((d) => d.trim());
  for (const d of databases)
    if (d !== 'sqlite' && d !== 'postgres')
      throw new Error(`unknown database in BENCH_DISPATCH_DATABASES: ${d}`);
  return {
    tasks: Math.round(number('BENCH_DISPATCH_TASKS', quick ? 1_000 : 10_000)),
    rate: number('BENCH_DISPATCH_RATE', quick ? 50 : 100),
    seconds: number('BENCH_DISPATCH_SECONDS', quick ? 4 : 10),
    databases: databases as Array<'sqlite' | 'postgres'>,
    profileDir: env.BENCH_PROFILE_DIR?.trim() || null,
    statements: env.BENCH_DISPATCH_STATEMENTS?.trim() === '1',
    rounds: Math.round(number('BENCH_DISPATCH_ROUNDS', 1)),
  };
}

async function counts(app: ServerChild): Promise<{ active: number; done: number; other: number }> {
  const reply = await ask(app.process, { type: 'counts' });
  if (reply.type !== 'counts') throw new Error('unexpected reply');
  return { active: reply.queued + reply.running, done: reply.succeeded, other: reply.other };
}

async function timingsSince(app: ServerChild, since: number): Promise<Timing[]> {
  const reply = await ask(app.process, { type: 'timings', since });
  if (reply.type !== 'timings') throw new Error('unexpected reply');
  return reply.timings;
}

async function jobsLeft(app: ServerChild): Promise<number> {
  const reply = await ask(app.process, { type: 'jobs' });
  if (reply.type !== 'jobs') throw new Error('unexpected reply');
  return reply.jobs;
}

/**
 * Waits until no task is queued or running; a task that failed or was canceled fails the bench. While
 * the worker drains, only the jobs left are counted (the tasks' statuses, counted over the whole table,
 * cost the database under test several ms a look, which BullMQ's count of its events does not); the
 * statuses are counted once at the end. The rates come from the tasks' own timestamps, not from when
 * this loop saw the end.
 */
async function settled(app: ServerChild): Promise<void> {
  for (;;) {
    if ((await jobsLeft(app)) === 0) {
      const c = await counts(app);
      if (c.other > 0) throw new Error(`${c.other} tasks failed or were canceled`);
      if (c.active === 0) return;
    }
    await sleep(100);
  }
}

/** `count` tasks through POST /v1/tasks, CREATORS at a time, spread over the accounts' keys. */
async function queueTasks(url: string, keys: readonly string[], count: number): Promise<void> {
  let next = 0;
  const creator = async (): Promise<void> => {
    while (next < count) {
      const i = next++;
      await call(url, keys[i % keys.length] as string, 'POST', '/v1/tasks', 202, CREATE_BODY);
    }
  };
  await Promise.all(Array.from({ length: CREATORS }, creator));
}

/** Our worker on one database: the drain of a full queue, then the steady mode. */
async function measureOurs(
  name: string,
  env: Record<string, string>,
  options: DispatchOptions,
  cpus: string | null,
): Promise<DispatchResult> {
  const app = await startServer('dispatch', {
    env,
    cpus,
    ...(options.profileDir === null ? {} : { profileDir: options.profileDir }),
  });
  try {
    await raiseActiveLimit(app.url);
    const keys: string[] = [];
    for (let i = 0; i < ACCOUNTS; i++) keys.push(await createAccount(app.url, `Dispatch ${i}`));

    const queuedFrom = Date.now() - 1_000;
    const queuing = Date.now();
    await queueTasks(app.url, keys, options.tasks);
    log(`${name}: ${options.tasks} tasks queued in ${((Date.now() - queuing) / 1000).toFixed(1)} s`);
    const cpuBefore = busyCpuSeconds();
    const started = await ask(app.process, { type: 'start-worker' });
    if (started.type !== 'worker-started') throw new Error('unexpected reply');
    await settled(app);
    const drainCpu = busyBetween(cpuBefore, busyCpuSeconds());
    const drain = drainOf(await timingsSince(app, queuedFrom), started.at);
    if (options.statements) {
      const reply = await ask(app.process, { type: 'statements' });
      if (reply.type !== 'statements') throw new Error('unexpected reply');
      process.stdout.write(`${statementsTable(`${name}, the drain`, reply.statements, drain.count)}\n\n`);
    }
    if (options.profileDir !== null) {
      const end = started.uptime + drain.count / drain.toFinished;
      log(
        `${name}: the drain runs from ${started.uptime.toFixed(1)} s to ${end.toFixed(1)} s into the profile ` +
          `(profile-summary --skip, --until)`,
      );
    }

    const steadyFrom = Date.now();
    await steadyCreation(app.url, keys, options);
    await settled(app);
    const latency = latencyOf(await timingsSince(app, steadyFrom));
    return { name, drain, latency, drainCpu };
  } finally {
    await app.stop();
  }
}

/** Creates `rate × seconds` tasks, one every 1/rate s, without waiting for one to answer. */
async function steadyCreation(url: string, keys: readonly string[], options: DispatchOptions): Promise<void> {
  const total = Math.round(options.rate * options.seconds);
  const start = Date.now();
  const requests: Promise<unknown>[] = [];
  for (let i = 0; i < total; i++) {
    const wait = start + (i * 1000) / options.rate - Date.now();
    if (wait > 0) await sleep(wait);
    requests.push(call(url, keys[i % keys.length] as string, 'POST', '/v1/tasks', 202, CREATE_BODY));
  }
  await Promise.all(requests);
}

async function measureBullmq(
  redis: RedisServer,
  options: DispatchOptions,
  cpus: string | null,
): Promise<DispatchResult> {
  const child = await startServer('bullmq', {
    env: {
      BENCH_REDIS_PORT: String(redis.port),
      BENCH_BULLMQ_CONCURRENCY: String(CONCURRENCY),
    },
    cpus,
  });
  try {
    const drained = await ask(child.process, { type: 'bullmq-drain', jobs: options.tasks });
    if (drained.type !== 'bullmq-result') throw new Error('unexpected reply');
    const steady = await ask(child.process, {
      type: 'bullmq-steady',
      rate: options.rate,
      seconds: options.seconds,
    });
    if (steady.type !== 'bullmq-result') throw new Error('unexpected reply');
    return {
      name: `BullMQ ${bullmqVersion()} + Redis (no-op jobs)`,
      drain: drainOf(drained.timings, drained.startedAt),
      latency: latencyOf(steady.timings),
      drainCpu: drained.cpu ?? [],
    };
  } finally {
    await child.stop();
  }
}

function bullmqVersion(): string {
  const pkg = JSON.parse(
    fs.readFileSync(new URL('../node_modules/bullmq/package.json', import.meta.url), 'utf8'),
  ) as { version: string };
  return pkg.version;
}

/** What runs on each CPU under `plan` (`drainCpuTable`): the worker's side, then the database's side. */
function cpuRoles(plan: CpuPlan): string[] {
  const roles: string[] = [];
  const mark = (cpus: string | null, role: string): void => {
    if (cpus === null) return;
    const [from, to] = cpus.split('-').map(Number);
    if (from === undefined) return;
    for (let cpu = from; cpu <= (to ?? from); cpu++) roles[cpu] = role;
  };
  mark(plan.server, 'worker process');
  mark(plan.generator, 'database, Redis, this process');
  return roles;
}

/** One round: ours on SQLite, BullMQ, ours on PostgreSQL (a fresh database of its own), as chosen. */
async function measureRound(
  options: DispatchOptions,
  plan: CpuPlan,
  redis: RedisServer,
  postgres: string | null,
): Promise<DispatchResult[]> {
  const results: DispatchResult[] = [];
  if (options.databases.includes('sqlite')) {
    // Set empty, so that a PostgreSQL URL in this process's environment never reaches the child.
    const sqlite = { BENCH_DISPATCH_DATABASE_URL: '' };
    results.push(await measureOurs('ours, SQLite (embedded worker)', sqlite, options, plan.server));
    log(`SQLite done`);
  }
  results.push(await measureBullmq(redis, options, plan.server));
  log(`BullMQ done`);
  if (postgres !== null) {
    const database = await createScaleDatabase('pg', 'dispatch', os.tmpdir(), postgres);
    const pinned = await pinPostgresServer(database.url, plan.generator);
    log(pinned.description);
    try {
      results.push(
        await measureOurs(
          'ours, PostgreSQL (embedded worker)',
          { BENCH_DISPATCH_DATABASE_URL: database.url },
          options,
          plan.server,
        ),
      );
      log(`PostgreSQL done`);
    } finally {
      pinned.restore();
      await database.drop();
    }
  }
  return results;
}

async function main(): Promise<number> {
  ensureBenchTools();
  const options = readDispatchOptions(process.argv.slice(2), process.env);
  const cores = os.availableParallelism();
  const plan = planCpus(cores);
  // Before this process is pinned: a PostgreSQL started here must not keep this process's CPUs once the
  // bench ends (it is pinned for the measurement only, pinPostgresServer).
  const server = options.databases.includes('postgres') ? benchPostgres(process.env) : null;
  const postgres = server?.url ?? null;
  // The creating client and Redis share the other CPU, away from the worker under test.
  pinProcess(process.pid, plan.generator);
  process.stdout.write(
    `Node ${process.version}, ${cores} cores (${os.cpus()[0]?.model ?? 'unknown CPU'}); ` +
      `${options.tasks} tasks per drain; steady mode ${options.rate}/s for ${options.seconds} s; ` +
      `worker concurrency ${CONCURRENCY} (ours and BullMQ's); worker process on CPU ${plan.server ?? 'any'}, ` +
      `Redis, PostgreSQL and this process on CPU ${plan.generator ?? 'any'}\n\n`,
  );
  const rounds: DispatchResult[][] = [];
  const redis = await startRedis(plan.generator);
  try {
    for (let round = 1; round <= options.rounds; round++) {
      if (options.rounds > 1) log(`round ${round} of ${options.rounds}`);
      rounds.push(await measureRound(options, plan, redis, postgres));
    }
  } finally {
    await redis.stop();
    server?.stop();
  }
  rounds.forEach((results, i) => {
    const landmark = results.find(isLandmark);
    if (!landmark) throw new Error('no landmark');
    if (rounds.length > 1) process.stdout.write(`Round ${i + 1} of ${rounds.length}\n\n`);
    process.stdout.write(`${dispatchTable(results, landmark)}\n\n`);
    process.stdout.write(`${drainCpuTable(results, cpuRoles(plan))}\n\n`);
  });
  if (rounds.length > 1) process.stdout.write(`${roundsTable(rounds)}\n`);
  return 0;
}

runBench(main, log);
