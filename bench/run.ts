import os from 'node:os';
import { type ServerChild, startServer } from './child.ts';
import { type HttpTarget, httpTable, targetLines } from './http-report.ts';
import { type HttpScenario, measureHttp } from './http-rounds.ts';
import { readOptions } from './options.ts';
import { runBench } from './report.ts';
import {
  CREATE_BODY,
  createAccount,
  createFinishedTask,
  createRunningTask,
  raiseActiveLimit,
} from './setup.ts';
import { ensureBenchTools, planCpus } from './tools.ts';

/**
 * `npm run bench`: the API's two hot paths, polling (`GET /v1/tasks/{id}` of a finished and of a running
 * task) and creation (`POST /v1/tasks`), loaded by wrk side by side with two landmarks measured in the same
 * interleaved rounds: a bare node:http server and bare Fastify sending the poll's exact bytes. Every server
 * runs pinned to one half of the CPUs, wrk to the other. Exits 1 when any request failed.
 */

const TARGETS: HttpTarget[] = [
  { scenario: 'poll finished', minShare: 0.5, maxP99Ms: 10 },
  { scenario: 'poll running', minShare: 0.5, maxP99Ms: 10 },
  { scenario: 'create', minShare: 0.1 },
];

const log = (line: string): void => {
  process.stderr.write(`bench: ${line}\n`);
};

async function main(): Promise<number> {
  ensureBenchTools();
  const options = readOptions(process.argv.slice(2), process.env);
  const cpus = planCpus();
  const shape = { connections: options.connections, cpus: cpus.generator, threads: cpus.generatorCpus };
  process.stdout.write(
    `Node ${process.version}, ${os.availableParallelism()} CPUs (${os.cpus()[0]?.model ?? 'unknown CPU'}); ` +
      `servers on CPU ${cpus.server ?? 'any'}, wrk on CPU ${cpus.generator ?? 'any'} (${cpus.generatorCpus} thread(s)); ` +
      `${options.connections} connections; per scenario ${options.warmupSeconds} s warm-up + ` +
      `${options.rounds} × ${options.durationSeconds / options.rounds} s\n\n`,
  );

  const servers: ServerChild[] = [];
  const start = async (name: string, env: Record<string, string>): Promise<ServerChild> => {
    const server = await startServer(name, {
      env,
      cpus: cpus.server,
      ...(options.profileDir === null ? {} : { profileDir: options.profileDir }),
    });
    servers.push(server);
    return server;
  };
  try {
    // Polling a finished task: the worker runs the task to the end, then idles.
    const finishedApp = await start('app', { BENCH_WORKER: 'on' });
    const finishedKey = await createAccount(finishedApp.url, 'Bench poll finished');
    const finished = await createFinishedTask(finishedApp.url, finishedKey);
    // Polling a running task: a slow simulator keeps it running (its progress moving) for the whole bench.
    const runningApp = await start('app', { BENCH_WORKER: 'on', BENCH_SIM_SPEED: '0.01' });
    const runningKey = await createAccount(runningApp.url, 'Bench poll running');
    const running = await createRunningTask(runningApp.url, runningKey);
    const baseline = await start('baseline', { BENCH_BASELINE_BODY: finished.body });
    const fastify = await start('fastify', { BENCH_BASELINE_BODY: finished.body });

    // Creation with the worker off, so the simulator's work does not share the server's CPU; each
    // connection's requests rotate over accounts of their own, far below the active-task cap.
    const createApp = await start('app', { BENCH_WORKER: 'off' });
    await raiseActiveLimit(createApp.url);
    const createKeys: string[] = [];
    for (let i = 0; i < options.connections; i++)
      createKeys.push(await createAccount(createApp.url, `Bench ${i}`));

    const scenarios: HttpScenario[] = [
      { name: 'node:http', serverPid: baseline.pid, spec: { url: `${baseline.url}/` } },
      { name: 'Fastify', serverPid: fastify.pid, spec: { url: `${fastify.url}/` } },
      {
        name: 'poll finished',
        serverPid: finishedApp.pid,
        spec: {
          url: `${finishedApp.url}/v1/tasks/${finished.id}`,
          headers: { authorization: `Bearer ${finishedKey}` },
        },
      },
      {
        name: 'poll running',
        serverPid: runningApp.pid,
        spec: {
          url: `${runningApp.url}/v1/tasks/${running}`,
          headers: { authorization: `Bearer ${runningKey}` },
        },
      },
      {
        name: 'create',
        serverPid: createApp.pid,
        spec: {
          url: `${createApp.url}/v1/tasks`,
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          rotate: createKeys.map((key) => ({ authorization: `Bearer ${key}` })),
          body: CREATE_BODY,
        },
      },
    ];
    const results = await measureHttp(scenarios, options, shape, log);
    const [base, frame] = results;
    if (!base) throw new Error('no node:http measurement');
    process.stdout.write(`${httpTable(results, base, frame)}\n\n`);
    process.stdout.write(`${targetLines(results, base, TARGETS).join('\n')}\n`);
    process.stdout.write(
      `\nResponse body of node:http, Fastify and poll finished: ${Buffer.byteLength(finished.body)} bytes.\n`,
    );
    const failed = results.filter((m) => m.failures > 0);
    for (const m of failed) log(`${m.name} had ${m.failures} failed requests (errors or non-2xx)`);
    return failed.length > 0 ? 1 : 0;
  } finally {
    await Promise.all(servers.map((server) => server.stop()));
  }
}

runBench(main, log);
