import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { createDb } from '../src/db/index.ts';
import { type ServerChild, startServer } from './child.ts';
import { readOptions } from './options.ts';
import { benchPostgres } from './postgres-server.ts';
import { runBench } from './report.ts';
import { type Engine, prepareDatabase, type ScaleDatabase } from './scale/database.ts';
import { type FilledDatabase, planFill } from './scale/fill.ts';
import { measureRounds, type ScaleScenario } from './scale/measure.ts';
import { queryTable, timeCreationWrites, timeHotQueries } from './scale/queries.ts';
import { count, resultNotes, type SizePair, sizeTable } from './scale/report.ts';
import { CREATE_BODY } from './setup.ts';
import { ensureBenchTools, planCpus } from './tools.ts';

/**
 * `npm run bench:scale`: the real app on a database of 1,000 tasks and on one of 1,000,000 (SQLite and
 * PostgreSQL), side by side in the same interleaved rounds with bare node:http as the landmark: polling a
 * finished and a running task, walking an account's list with cursors, creating tasks; then the RSS of the
 * API process with its worker running, with the fill's unfinished tasks (10,000 at 1,000,000) and the
 * bench's creations still queued. wrk is the load generator, pinned to CPUs apart from the servers'. The
 * request limits are lifted (see docs/performance.md). Exits 1 when any request failed.
 */

const log = (line: string): void => {
  process.stderr.write(`bench:scale: ${line}\n`);
};

/** Clients rotated over by the poll scenarios (a task and its account's key each). */
const POLL_CLIENTS = 500;
/** Pages of the heavy account the list scenario rotates over, spread from the first to the last. */
const LIST_PAGES = 50;
const PAGE_LIMIT = 20;
/** The memory target with 10,000 unfinished tasks while the worker runs (issue 18). */
const RSS_TARGET_MB = 200;
/**
 * The worker's two regimes: runs as long as the simulated provider says (a run takes minutes, so the
 * worker holds its 32 runs and the rest wait), and runs sped up 100 times, so that runs finish all the
 * time and the simulator draws their files (a 3D model and its PNG preview) in the process.
 */
const MEMORY_PHASES = [
  { label: 'runs at their real length', simSpeed: '1' },
  { label: 'runs finishing every few seconds', simSpeed: '100' },
] as const;

function listOf(env: NodeJS.ProcessEnv, name: string, fallback: string): string[] {
  return (env[name]?.trim() || fallback)
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

/** Resident memory of a process (VmRSS), MB; null once it is gone. */
function rssMb(pid: number): number | null {
  try {
    const match = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match?.[1] ? Number(match[1]) / 1024 : null;
  } catch {
    return null;
  }
}

/** Samples the peak RSS of `pids` every 250 ms until stopped. */
function rssSampler(pids: readonly number[]): { stop(): number[] } {
  const peaks = pids.map(() => 0);
  const timer = setInterval(() => {
    pids.forEach((pid, i) => {
      peaks[i] = Math.max(peaks[i] ?? 0, rssMb(pid) ?? 0);
    });
  }, 250);
  return {
    stop() {
      clearInterval(timer);
      return peaks;
    },
  };
}

/** GET /v1/tasks?limit=20 pages of the heavy account: the first, and others at even depths down to its end. */
function listPaths(taskIds: readonly string[]): string[] {
  const paths = [`/v1/tasks?limit=${PAGE_LIMIT}`];
  const last = Math.max(1, taskIds.length - PAGE_LIMIT);
  for (let k = 1; k < LIST_PAGES; k++) {
    const position = Math.max(1, Math.floor((k * last) / (LIST_PAGES - 1)));
    const before = taskIds[position - 1];
    // The cursor the page before would have given: the id of its last task, base64url (task-service.ts).
    if (before)
      paths.push(`/v1/tasks?limit=${PAGE_LIMIT}&cursor=${Buffer.from(before).toString('base64url')}`);
  }
  return paths;
}

/**
 * The scenarios of one database. `pollClients` is how many tasks each poll scenario rotates over: the same
 * at both sizes, so the two differ in the table's size only, not in how many rows and keys the polls touch
 * (the small database has 5 running tasks; its polls rotated over 5 tasks while the large one's rotated over
 * 500, which measured the polls' working set more than the table).
 */
function scenariosOf(
  label: string,
  base: string,
  filled: FilledDatabase,
  pollClients: { finished: number; running: number },
): Record<string, ScaleScenario> {
  const auth = (key: string): Record<string, string> => ({ authorization: `Bearer ${key}` });
  const finished = filled.finished.slice(0, pollClients.finished);
  const running = filled.running.slice(0, pollClients.running);
  return {
    pollFinished: {
      name: `poll finished @${label}`,
      spec: {
        url: `${base}/`,
        paths: finished.map((c) => `/v1/tasks/${c.taskId}`),
        rotate: finished.map((c) => auth(c.key)),
      },
    },
    pollRunning: {
      name: `poll running @${label}`,
      spec: {
        url: `${base}/`,
        paths: running.map((c) => `/v1/tasks/${c.taskId}`),
        rotate: running.map((c) => auth(c.key)),
      },
    },
    list: {
      name: `list pages @${label}`,
      spec: { url: `${base}/`, headers: auth(filled.heavy.key), paths: listPaths(filled.heavy.taskIds) },
    },
    create: {
      name: `create @${label}`,
      spec: {
        url: `${base}/v1/tasks`,
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        rotate: filled.keys.map(auth),
        body: CREATE_BODY,
      },
    },
  };
}

/** Unfinished tasks in the database of `url`. */
async function activeCount(url: string): Promise<number> {
  const db = createDb(url);
  try {
    const row = await db.db
      .selectFrom('tasks')
      .select((eb) => eb.fn.countAll<number | string>().as('n'))
      .where('status', 'in', ['queued', 'running'])
      .executeTakeFirst();
    return Number(row?.n ?? 0);
  } finally {
    await db.close();
  }
}

async function main(): Promise<number> {
  const argv = process.argv.slice(2);
  const quick = argv.includes('--quick') || process.env.BENCH_QUICK === '1';
  const options = readOptions(argv, process.env);
  const sizes = listOf(process.env, 'BENCH_SCALE_SIZES', quick ? '1000,20000' : '1000,1000000').map(Number);
  const engines = listOf(process.env, 'BENCH_SCALE_ENGINES', 'sqlite,pg') as Engine[];
  const memorySeconds = quick ? 10 : 30;
  const [small, large] = sizes;
  if (sizes.length !== 2 || !small || !large || !(small < large))
    throw new Error('BENCH_SCALE_SIZES: two sizes, small,large');
  if (engines.some((e) => e !== 'sqlite' && e !== 'pg'))
    throw new Error('BENCH_SCALE_ENGINES: sqlite and/or pg');

  ensureBenchTools();
  const cpus = planCpus();
  process.stdout.write(
    `Node ${process.version}, ${os.availableParallelism()} CPUs (${os.cpus()[0]?.model ?? 'unknown CPU'}); ` +
      `servers on CPU ${cpus.server ?? 'any'}, wrk (${cpus.generatorCpus} thread(s)) on CPU ${cpus.generator ?? 'any'}; ` +
      `${options.connections} connections; per scenario ${options.warmupSeconds} s warm-up + ` +
      `${options.rounds} × ${options.durationSeconds / options.rounds} s; request limits lifted\n`,
  );
  const generator = { cpus: cpus.generator, threads: cpus.generatorCpus };
  const pgServer = engines.includes('pg') ? benchPostgres(process.env) : null;
  const pgUrl = pgServer?.url ?? null;
  const cacheDir = process.env.BENCH_SCALE_CACHE?.trim() || null;
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'gta-bench-scale-'));
  const databases: ScaleDatabase[] = [];
  const servers: ServerChild[] = [];
  const started = Date.now();
  let failed = false;
  const start = async (name: string, env: Record<string, string>): Promise<ServerChild> => {
    const server = await startServer(name, {
      env,
      cpus: cpus.server,
      ...(options.profileDir === null ? {} : { profileDir: options.profileDir }),
    });
    servers.push(server);
    return server;
  };
  const stop = async (server: ServerChild): Promise<void> => {
    await server.stop();
    servers.splice(servers.indexOf(server), 1);
  };
  try {
    for (const engine of engines) {
      const title = engine === 'sqlite' ? 'SQLite' : 'PostgreSQL';
      process.stdout.write(`\n### ${title}\n\n`);
      const filled: FilledDatabase[] = [];
      const apis: ServerChild[] = [];
      const urls: string[] = [];
      for (const size of [small, large]) {
        log(`${title}: preparing ${count(size)} tasks`);
        const prepared = await prepareDatabase(engine, planFill(size), tmp, pgUrl, cacheDir);
        const { database, filled: rows } = prepared;
        databases.push(database);
        const total = Object.values(rows.rows).reduce((sum, n) => sum + n, 0);
        process.stdout.write(
          `${count(size)} tasks (${count(total)} rows: ${Object.entries(rows.rows)
            .map(([table, n]) => `${table} ${count(n)}`)
            .join(', ')}): filled in ${prepared.fillSeconds.toFixed(1)} s${
            prepared.cloneSeconds === null
              ? ''
              : ` (earlier run), cloned from BENCH_SCALE_CACHE in ${prepared.cloneSeconds.toFixed(1)} s`
          }\n`,
        );
        filled.push(rows);
        urls.push(database.url);
        apis.push(await start('scale-app', { BENCH_SCALE_DATABASE_URL: database.url, BENCH_WORKER: 'off' }));
      }
      const [smallApi, largeApi] = apis;
      const [smallRows, largeRows] = filled;
      if (!smallApi || !largeApi || !smallRows || !largeRows) throw new Error('missing server');
      const timings = [
        [...(await timeHotQueries(urls[0] ?? '', smallRows)), await timeCreationWrites(urls[0] ?? '')],
        [...(await timeHotQueries(urls[1] ?? '', largeRows)), await timeCreationWrites(urls[1] ?? '')],
      ] as const;
      process.stdout.write(`\n${queryTable(timings[0], timings[1], [count(small), count(large)])}\n`);
      const first = smallRows.finished[0];
      if (!first) throw new Error('no finished task');
      const body = await (
        await fetch(`${smallApi.url}/v1/tasks/${first.taskId}`, {
          headers: { authorization: `Bearer ${first.key}` },
        })
      ).text();
      const baseline = await start('baseline', { BENCH_BASELINE_BODY: body });
      const pollClients = {
        finished: Math.min(POLL_CLIENTS, smallRows.finished.length, largeRows.finished.length),
        running: Math.min(POLL_CLIENTS, smallRows.running.length, largeRows.running.length),
      };
      const s = scenariosOf(count(small), smallApi.url, smallRows, pollClients);
      const l = scenariosOf(count(large), largeApi.url, largeRows, pollClients);
      const landmark: ScaleScenario = { name: 'node:http', spec: { url: `${baseline.url}/` } };

      const rss = rssSampler([smallApi.pid, largeApi.pid]);
      // Reads first, creation last: creations add tasks to both databases alike.
      const reads = await measureRounds(
        [landmark, s.pollFinished, l.pollFinished, s.pollRunning, l.pollRunning, s.list, l.list].flatMap(
          (x) => (x ? [x] : []),
        ),
        options,
        generator,
        log,
      );
      const creates = await measureRounds(
        [landmark, s.create, l.create].flatMap((x) => (x ? [x] : [])),
        options,
        generator,
        log,
      );
      const [peakSmall, peakLarge] = rss.stop();
      const [base, pfS, pfL, prS, prL, lsS, lsL] = reads;
      const [base2, crS, crL] = creates;
      if (!base || !pfS || !pfL || !prS || !prL || !lsS || !lsL || !base2 || !crS || !crL)
        throw new Error('missing measurement');
      const pairs: SizePair[] = [
        { label: 'poll a finished task', small: pfS, large: pfL },
        { label: 'poll a running task', small: prS, large: prL },
        { label: `list, ${PAGE_LIMIT} a page, ${LIST_PAGES} pages deep`, small: lsS, large: lsL },
      ];
      process.stdout.write(`\n${sizeTable(pairs, base, { small, large })}\n\n`);
      process.stdout.write(
        `${sizeTable([{ label: 'create', small: crS, large: crL }], base2, { small, large })}\n\n`,
      );
      process.stdout.write(
        `Heavy account listed: ${count(smallRows.heavy.taskIds.length)} and ${count(largeRows.heavy.taskIds.length)} tasks. ` +
          `Peak RSS of the API processes under load: ${peakSmall?.toFixed(0)} MB and ${peakLarge?.toFixed(0)} MB.\n`,
      );
      const notes = resultNotes([...reads, ...creates]);
      for (const note of notes) process.stdout.write(`- ${note}\n`);
      if ([...reads, ...creates].some((r) => r.failures > 0)) failed = true;

      // Memory: the large database's API process with its worker running through the unfinished tasks.
      await stop(baseline);
      await stop(smallApi);
      await stop(largeApi);
      const largeUrl = urls[1] ?? '';
      for (const phase of MEMORY_PHASES) {
        const activeBefore = await activeCount(largeUrl);
        const worker = await start('scale-app', {
          BENCH_SCALE_DATABASE_URL: largeUrl,
          BENCH_WORKER: 'on',
          SIM_SPEED: phase.simSpeed,
        });
        const sampler = rssSampler([worker.pid]);
        const startRss = rssMb(worker.pid) ?? 0;
        await sleep(memorySeconds * 1000);
        const [peak] = sampler.stop();
        const endRss = rssMb(worker.pid) ?? 0;
        await stop(worker);
        const activeAfter = await activeCount(largeUrl);
        const peakMb = peak ?? 0;
        process.stdout.write(
          `\nMemory, API process with its worker on, ${phase.label} (SIM_SPEED=${phase.simSpeed}): ` +
            `${count(large)} tasks, ${count(activeBefore)} unfinished at start, ${count(activeAfter)} after ` +
            `${memorySeconds} s; RSS ${startRss.toFixed(0)} MB at start, ${endRss.toFixed(0)} MB at the end, ` +
            `peak ${peakMb.toFixed(0)} MB (target ≤ ${RSS_TARGET_MB} MB: ${peakMb <= RSS_TARGET_MB ? 'met' : 'NOT met'})\n`,
        );
      }
      for (const database of databases.splice(0)) await database.drop();
    }
    process.stdout.write(`\nTotal time ${((Date.now() - started) / 1000).toFixed(0)} s.\n`);
    return failed ? 1 : 0;
  } finally {
    await Promise.all(servers.map((server) => server.stop()));
    for (const database of databases) await database.drop();
    fs.rmSync(tmp, { recursive: true, force: true });
    pgServer?.stop();
  }
}

runBench(main, log);
