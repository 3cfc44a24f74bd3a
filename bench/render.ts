import os from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { type ServerChild, startServer } from './child.ts';
import { httpTable } from './http-report.ts';
import { type HttpMeasurement, type HttpScenario, measureHttp } from './http-rounds.ts';
import { readOptions } from './options.ts';
import { runBench } from './report.ts';
import { call, createAccount, createFinishedTask } from './setup.ts';
import { ensureBenchTools, planCpus } from './tools.ts';

/**
 * `npm run bench:render`: how much the simulator's file rendering disturbs the API of the same process
 * (the embedded worker). Two real apps poll a finished task while their workers render songs without
 * pause (two 120 s MP3s per task, about 12 s of encoding): one draws files on its event loop
 * (`RENDER_THREADS=0`), the other in a render thread (`RENDER_THREADS=1`). A bare node:http server sending
 * the same body is the baseline of the same run; a third app that renders nothing shows the ceiling.
 * wrk runs on its own CPU; the apps are not pinned, so a render thread can use the other one.
 */

const SONG = JSON.stringify({
  model: 'music',
  settings: { mode: 'generate', songDescription: 'a slow ballad about a lighthouse keeper' },
});
/** Unfinished songs kept per app, so that its renderer never idles during the measurement. */
const BACKLOG = 2;

const log = (line: string): void => {
  process.stderr.write(`bench: ${line}\n`);
};

/** Keeps `BACKLOG` songs unfinished on an app until `signal` aborts; returns how many finished. */
async function feedSongs(base: string, key: string, signal: AbortSignal): Promise<number> {
  const open = new Set<string>();
  let finished = 0;
  while (!signal.aborted) {
    for (const id of [...open]) {
      const task = (await call(base, key, 'GET', `/v1/tasks/${id}`, 200)) as { status: string };
      if (task.status === 'failed' || task.status === 'canceled')
        throw new Error(`song ${id} ${task.status}`);
      if (task.status === 'succeeded') {
        open.delete(id);
        finished++;
      }
    }
    while (open.size < BACKLOG)
      open.add(((await call(base, key, 'POST', '/v1/tasks', 202, SONG)) as { id: string }).id);
    await sleep(500);
  }
  return finished;
}

async function main(): Promise<number> {
  ensureBenchTools();
  const options = readOptions(process.argv.slice(2), process.env);
  const cpus = planCpus();
  const shape = { connections: options.connections, cpus: cpus.generator, threads: cpus.generatorCpus };
  process.stdout.write(
    `Node ${process.version}, ${os.availableParallelism()} cores; ${options.connections} connections; ` +
      `per scenario ${options.warmupSeconds} s warm-up + ${options.rounds} × ${options.durationSeconds / options.rounds} s\n\n`,
  );
  const servers: ServerChild[] = [];
  const start = async (name: string, env: Record<string, string>): Promise<ServerChild> => {
    const server = await startServer(name, { env });
    servers.push(server);
    return server;
  };
  const stopFeeding = new AbortController();
  const feeders: Promise<number>[] = [];
  try {
    const apps = [
      { name: 'poll, no renders', env: { RENDER_THREADS: '1' }, songs: false },
      { name: 'poll, rendering on the event loop', env: { RENDER_THREADS: '0' }, songs: true },
      { name: 'poll, rendering in a thread', env: { RENDER_THREADS: '1' }, songs: true },
    ];
    const specs: HttpScenario[] = [];
    let body = '';
    for (const app of apps) {
      const server = await start('app', { BENCH_WORKER: 'on', ...app.env });
      const base = server.url;
      const key = await createAccount(base, app.name);
      const task = await createFinishedTask(base, key);
      body = task.body;
      specs.push({
        name: app.name,
        serverPid: server.pid,
        spec: { url: `${base}/v1/tasks/${task.id}`, headers: { authorization: `Bearer ${key}` } },
      });
      if (app.songs)
        feeders.push(feedSongs(base, await createAccount(base, `${app.name} songs`), stopFeeding.signal));
    }
    const baseline = await start('baseline', { BENCH_BASELINE_BODY: body });
    specs.unshift({ name: 'node:http', serverPid: baseline.pid, spec: { url: `${baseline.url}/` } });
    // The first songs are under way before anything is measured.
    await sleep(2_000);
    const results: HttpMeasurement[] = await measureHttp(specs, options, shape, log);
    stopFeeding.abort();
    const songs = await Promise.all(feeders);
    const base = results[0];
    if (!base) throw new Error('no baseline measurement');
    process.stdout.write(`${httpTable(results, base, undefined)}\n\n`);
    const idle = results[1];
    for (const m of results.slice(2)) {
      process.stdout.write(
        `- ${m.name}: ${(m.rate / base.rate).toFixed(3)} of node:http, ${idle ? (m.rate / idle.rate).toFixed(3) : '?'} of the idle app; p99 ${m.p99.toFixed(1)} ms\n`,
      );
    }
    process.stdout.write(`\nSongs finished while measuring: event loop ${songs[0]}, thread ${songs[1]}.\n`);
    const failed = results.filter((m) => m.failures > 0);
    for (const m of failed) log(`${m.name} had ${m.failures} failed requests (errors or non-2xx)`);
    return failed.length > 0 ? 1 : 0;
  } finally {
    stopFeeding.abort();
    await Promise.allSettled(feeders);
    await Promise.all(servers.map((server) => server.stop()));
  }
}

runBench(main, log);
