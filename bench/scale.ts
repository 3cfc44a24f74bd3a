import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { type ServerChild, startServer } from './child.ts';
import { runLoad } from './load.ts';
import { readOptions } from './options.ts';
import { runBench } from './report.ts';
import { type ApiProcess, startApiProcess } from './scale/api-process.ts';
import { createClients, pollBody } from './scale/clients.ts';
import { createBenchDatabase } from './scale/database.ts';
import { measureScenariosWithCpu, type Scenario } from './scale/interleave.ts';
import { type RotatingSpec, rotation, runRotating } from './scale/load.ts';
import { cpuTable, resultTable, scaleLines } from './scale/report.ts';
import { BENCH_ADMIN_TOKEN } from './servers/messages.ts';
import { CREATE_BODY } from './setup.ts';

/**
 * `npm run bench:scale`: one real API process (`src/main.ts`) against two on the same PostgreSQL
 * database, for polling and for creation, with the bare node:http baseline of `npm run bench` measured in
 * the same interleaved rounds. The production request limits stay on, so the load rotates over many
 * accounts. Exits 1 when any request failed (socket error, timeout or non-2xx answer, 429 included).
 */

/** Enough accounts that the rotation keeps each far below 120 requests a minute (see docs). */
const ACCOUNTS = { full: 2000, quick: 300 };

const log = (line: string): void => {
  process.stderr.write(`bench:scale: ${line}\n`);
};

function accountCount(quick: boolean, env: NodeJS.ProcessEnv): number {
  const text = env.BENCH_ACCOUNTS?.trim();
  const value = text ? Number(text) : quick ? ACCOUNTS.quick : ACCOUNTS.full;
  if (!Number.isInteger(value) || value <= 0) throw new Error(`BENCH_ACCOUNTS must be a positive integer`);
  return value;
}

async function main(): Promise<number> {
  const argv = process.argv.slice(2);
  const options = readOptions(argv, process.env);
  const accounts = accountCount(argv.includes('--quick') || process.env.BENCH_QUICK === '1', process.env);
  const cores = os.availableParallelism();
  process.stdout.write(
    `Node ${process.version}, ${cores} cores (${os.cpus()[0]?.model ?? 'unknown CPU'}); ` +
      `${options.connections} connections in total; ${accounts} accounts; ` +
      `per scenario ${options.warmupSeconds} s warm-up + ${options.rounds} × ${options.durationSeconds / options.rounds} s\n\n`,
  );

  const started = Date.now();
  const database = await createBenchDatabase(process.env);
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'gta-bench-scale-'));
  const apis: ApiProcess[] = [];
  const children: ServerChild[] = [];
  try {
    const startApi = async (name: string): Promise<ApiProcess> => {
      const api = await startApiProcess(name, {
        DATABASE_URL: database.url,
        DATA_DIR: path.join(tmp, name),
        STORAGE_URL: `file://${path.join(tmp, 'files')}`,
        WORKER: 'off',
        ADMIN_TOKEN: BENCH_ADMIN_TOKEN,
        LOG_LEVEL: 'warn',
      });
      apis.push(api);
      return api;
    };
    // One after the other: the first runs the migrations.
    const first = await startApi('api-1');
    const second = await startApi('api-2');
    log(`API processes listening at ${first.url} and ${second.url}; setting up ${accounts} clients`);
    const clients = await createClients([first.url, second.url], accounts, log);
    const sample = clients[0];
    if (!sample) throw new Error('no bench clients');
    const body = await pollBody(first.url, sample);
    const baseline = await startServer('baseline', { env: { BENCH_BASELINE_BODY: body } });
    children.push(baseline);
    log(`setup took ${((Date.now() - started) / 1000).toFixed(1)} s`);

    // One rotation over all scenarios: each account's requests are spread evenly over the whole run.
    const next = rotation(clients);
    const poll: RotatingSpec = { method: 'GET', path: (client) => `/v1/tasks/${client.taskId}` };
    const create: RotatingSpec = { method: 'POST', path: () => '/v1/tasks', body: CREATE_BODY };
    const one = [first.url];
    const two = [first.url, second.url];
    const load = (spec: RotatingSpec, bases: string[]) => (seconds: number) =>
      runRotating(spec, bases, next, options.connections, seconds);
    const scenarios: Scenario[] = [
      {
        name: 'baseline (node:http)',
        run: (seconds) =>
          runLoad({ name: 'baseline', url: `${baseline.url}/` }, options.connections, seconds),
      },
      { name: 'poll, 1 process', run: load(poll, one) },
      { name: 'poll, 2 processes', run: load(poll, two) },
      { name: 'create, 1 process', run: load(create, one) },
      { name: 'create, 2 processes', run: load(create, two) },
    ];
    const results = await measureScenariosWithCpu(
      scenarios,
      options,
      apis.map((api) => api.pid),
      cores,
      log,
    );
    const [base, pollOne, pollTwo, createOne, createTwo] = results.map((r) => r.measurement);
    if (!base || !pollOne || !pollTwo || !createOne || !createTwo) throw new Error('missing measurement');

    process.stdout.write(`${resultTable(results, base)}\n\n`);
    process.stdout.write(`CPU during the measured runs (cores busy on average):\n\n`);
    process.stdout.write(`${cpuTable(results, cores)}\n\n`);
    const pairs = [
      { label: 'poll', one: pollOne, two: pollTwo },
      { label: 'create', one: createOne, two: createTwo },
    ];
    process.stdout.write(`${scaleLines(pairs, base).join('\n')}\n`);
    const apiRequests = results.slice(1).reduce((sum, r) => {
      const m = r.measurement;
      return sum + Object.values(m.statusCodes).reduce((s, count) => s + count, 0);
    }, 0);
    process.stdout.write(
      `\nResponse body of baseline and poll: ${Buffer.byteLength(body)} bytes (a queued task). ` +
        `API requests under load: ${apiRequests}, about ${Math.ceil(apiRequests / accounts)} per account ` +
        `(limit 120 a minute). Total time ${((Date.now() - started) / 1000).toFixed(0)} s.\n`,
    );
    const failed = results.filter((r) => r.measurement.failures > 0).map((r) => r.measurement);
    for (const m of failed) log(`${m.name} had ${m.failures} failed requests (errors or non-2xx)`);
    return failed.length > 0 ? 1 : 0;
  } finally {
    await Promise.all([...children, ...apis].map((server) => server.stop()));
    await database.drop();
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

runBench(main, log);
