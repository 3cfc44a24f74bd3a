import { setTimeout as sleep } from 'node:timers/promises';
import { type ConnectionOptions, type Job, Queue, Worker } from 'bullmq';
import type { DispatchReply, DispatchRequest, Timing } from '../dispatch/messages.ts';
import { serveRequests } from '../dispatch/rpc.ts';
import { busyBetween, busyCpuSeconds } from '../tools.ts';
import { announceAndAwaitStop } from './messages.ts';

/**
 * The landmark of the dispatch bench: BullMQ with no-op jobs, on the Redis at 127.0.0.1:BENCH_REDIS_PORT.
 * BullMQ makes its own connections with ioredis (its usual client, a dev dependency pinned here), as a
 * user of BullMQ would. BENCH_BULLMQ_CONCURRENCY: the Worker's concurrency.
 */

const port = Number(process.env.BENCH_REDIS_PORT);
const concurrency = Number(process.env.BENCH_BULLMQ_CONCURRENCY ?? '32');
/** BullMQ's documented settings for a worker's connection: no per-request retry limit. */
async function connection(): Promise<ConnectionOptions> {
  return { host: '127.0.0.1', port, maxRetriesPerRequest: null };
}

let round = 0;

function timingOf(job: Job): Timing {
  return {
    created: job.timestamp,
    running: job.processedOn ?? Number.NaN,
    finished: job.finishedOn ?? Date.now(),
  };
}

/** A worker with a no-op processor that resolves once `expected()` jobs completed. */
async function startWorker(
  name: string,
  expected: () => number,
): Promise<{ worker: Worker; done: Promise<Timing[]> }> {
  const timings: Timing[] = [];
  const worker = new Worker(name, async () => {}, { connection: await connection(), concurrency });
  const done = new Promise<Timing[]>((resolve, reject) => {
    worker.on('completed', (job) => {
      timings.push(timingOf(job));
      if (timings.length >= expected()) resolve(timings);
    });
    worker.on('failed', (_job, error) => reject(error));
  });
  return { worker, done };
}

async function drain(id: number, jobs: number): Promise<DispatchReply> {
  const name = `bench-drain-${++round}`;
  const queue = new Queue(name, { connection: await connection() });
  for (let from = 0; from < jobs; from += 1000) {
    const count = Math.min(1000, jobs - from);
    await queue.addBulk(Array.from({ length: count }, (_, i) => ({ name: 'noop', data: { i: from + i } })));
  }
  const startedAt = Date.now();
  const cpuBefore = busyCpuSeconds();
  const { worker, done } = await startWorker(name, () => jobs);
  const timings = await done;
  const cpu = busyBetween(cpuBefore, busyCpuSeconds());
  await worker.close();
  await queue.obliterate({ force: true });
  await queue.close();
  return { id, type: 'bullmq-result', startedAt, timings, cpu };
}

async function steady(id: number, rate: number, seconds: number): Promise<DispatchReply> {
  const name = `bench-steady-${++round}`;
  const queue = new Queue(name, { connection: await connection() });
  const total = Math.round(rate * seconds);
  const { worker, done } = await startWorker(name, () => total);
  await worker.waitUntilReady();
  const startedAt = Date.now();
  const adds: Promise<unknown>[] = [];
  for (let i = 0; i < total; i++) {
    const due = startedAt + (i * 1000) / rate;
    const wait = due - Date.now();
    if (wait > 0) await sleep(wait);
    adds.push(queue.add('noop', { i }));
  }
  await Promise.all(adds);
  const timings = await done;
  await worker.close();
  await queue.obliterate({ force: true });
  await queue.close();
  return { id, type: 'bullmq-result', startedAt, timings };
}

serveRequests(async (request: DispatchRequest) => {
  if (request.type === 'bullmq-drain') return drain(request.id, request.jobs);
  if (request.type === 'bullmq-steady') return steady(request.id, request.rate, request.seconds);
  throw new Error(`the BullMQ child does not do ${request.type}`);
});
// No HTTP port: port 0 only says the child is ready.
// Queues and workers close their own connections when each round ends.
announceAndAwaitStop(0, async () => {});
