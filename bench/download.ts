import { randomFillSync } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startServer } from './child.ts';
import { checkAnswers } from './download/checks.ts';
import { rssBytes, sampleRss, slowDownloads } from './download/memory.ts';
import { startNginx } from './download/nginx.ts';
import { rangeCases } from './download/ranges.ts';
import {
  type DownloadSummary,
  downloadTable,
  generatorBound,
  type RoundOutcome,
  ratioLine,
  summarizeRounds,
} from './download/report.ts';
import { readOptions } from './options.ts';
import { runBench } from './report.ts';
import { createAccount, createFinishedTask } from './setup.ts';
import { cpuSeconds, ensureBenchTools, planCpus } from './tools.ts';
import { runWrk } from './wrk.ts';

/**
 * `npm run bench:download`: a task's 50 MB result file (GET /v1/tasks/{id}/artifacts/0 of the real app:
 * SQLite, local file storage) against nginx serving the same bytes from disk with sendfile, both pinned to
 * the server's CPUs, wrk pinned to the others. Full downloads and rotated Range requests, 20 connections,
 * interleaved in rounds; then the app's memory under 200 parallel downloads (wrk at full speed, and slow
 * readers that make the server's writes back up). Exits 1 when a check or a request failed.
 * BENCH_FILE_MB, BENCH_MEMORY_CLIENTS, BENCH_SLOW_KBPS change the file size and the memory phase.
 */

const MB = 1024 * 1024;
/** The app should keep at least this share of nginx's throughput. */
const TARGET = 0.8;
/** RSS growth allowed under 200 parallel downloads. */
const MEMORY_TARGET_MB = 50;

const log = (line: string): void => {
  process.stderr.write(`bench:download: ${line}\n`);
};

function positiveInt(name: string, fallback: number): number {
  const text = process.env[name]?.trim();
  if (!text) return fallback;
  const value = Number(text);
  if (!Number.isInteger(value) || value <= 0) throw new Error(`${name} must be a positive integer`);
  return value;
}

interface Target {
  name: string;
  url: string;
  headers: Record<string, string>;
  rotate: Array<Record<string, string>>;
  pids(): number[];
}

async function main(): Promise<number> {
  ensureBenchTools();
  const argv = process.argv.slice(2);
  const options = readOptions(argv, process.env);
  const quick = argv.includes('--quick') || process.env.BENCH_QUICK === '1';
  const connections = process.env.BENCH_CONNECTIONS ? options.connections : 20;
  const fileBytes = positiveInt('BENCH_FILE_MB', 50) * MB;
  const memoryClients = positiveInt('BENCH_MEMORY_CLIENTS', 200);
  const slowBytesPerSecond = positiveInt('BENCH_SLOW_KBPS', 1024) * 1024;
  const memorySeconds = quick ? 3 : 10;
  const plan = planCpus();
  const cpu = os.cpus()[0]?.model ?? 'unknown CPU';
  process.stdout.write(
    `Node ${process.version}, ${os.availableParallelism()} cores (${cpu}); server CPUs ${plan.server ?? 'any'}, ` +
      `wrk CPUs ${plan.generator ?? 'any'}; ${connections} connections; ${fileBytes / MB} MiB file; ` +
      `per scenario ${options.warmupSeconds} s warm-up + ${options.rounds} × ${options.durationSeconds / options.rounds} s\n\n`,
  );

  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gta-bench-download-'));
  const stops: Array<() => Promise<void>> = [];
  try {
    // The same random bytes (not compressible, not a sparse file) for both servers. nginx's worker runs as
    // an unprivileged user, so its folders must be readable by others.
    fs.chmodSync(dir, 0o755);
    const root = path.join(dir, 'www');
    fs.mkdirSync(root, { mode: 0o755 });
    const file = Buffer.allocUnsafe(fileBytes);
    randomFillSync(file);
    const filePath = path.join(root, 'model.glb');
    fs.writeFileSync(filePath, file, { mode: 0o644 });
    const nginxDir = path.join(dir, 'nginx');
    fs.mkdirSync(nginxDir);

    const nginx = await startNginx({ dir: nginxDir, root, cpus: plan.server });
    stops.push(() => nginx.stop());
    const app = await startServer('download-app', {
      env: { BENCH_ARTIFACT_FILE: filePath },
      cpus: plan.server,
      ...(options.profileDir === null ? {} : { profileDir: options.profileDir }),
    });
    stops.push(() => app.stop());
    const startRss = rssBytes(app.pid) ?? 0;

    // A task finished through the API and the worker; its one artifact is the file.
    const key = await createAccount(app.url, 'Bench download');
    const task = await createFinishedTask(app.url, key, 120_000);
    const auth = { authorization: `Bearer ${key}` };
    const appUrl = `${app.url}/v1/tasks/${task.id}/artifacts/0`;
    const nginxUrl = `${nginx.url}/model.glb`;
    const ranges = rangeCases(fileBytes);
    await checkAnswers('app', appUrl, auth, file, ranges);
    await checkAnswers('nginx', nginxUrl, {}, file, ranges);
    log('checked: 200 with the same bytes, 206 with the right Content-Range and bytes, 416 past the end');

    const rotate = ranges.map((r) => ({ range: r.header }));
    const appPids = () => [app.pid];
    const targets: Target[] = [
      { name: `app, full ${fileBytes / MB} MB`, url: appUrl, headers: auth, rotate: [], pids: appPids },
      { name: `nginx, full ${fileBytes / MB} MB`, url: nginxUrl, headers: {}, rotate: [], pids: nginx.pids },
      { name: 'app, Range', url: appUrl, headers: auth, rotate, pids: appPids },
      { name: 'nginx, Range', url: nginxUrl, headers: {}, rotate, pids: nginx.pids },
    ];
    const runOnce = async (target: Target, seconds: number, clients = connections): Promise<RoundOutcome> => {
      const pids = target.pids();
      const cpuOf = (): number => pids.reduce((sum, pid) => sum + (cpuSeconds(pid) ?? 0), 0);
      const before = cpuOf();
      const started = process.hrtime.bigint();
      const wrk = await runWrk({
        url: target.url,
        headers: target.headers,
        rotate: target.rotate,
        connections: clients,
        seconds,
        threads: plan.generatorCpus,
        cpus: plan.generator,
        timeoutSeconds: 60,
      });
      const elapsed = Number(process.hrtime.bigint() - started) / 1e9;
      return { wrk, serverCores: elapsed > 0 ? (cpuOf() - before) / elapsed : 0 };
    };

    for (const target of targets) {
      log(`warm-up ${target.name}`);
      await runOnce(target, options.warmupSeconds);
    }
    const rounds: RoundOutcome[][] = targets.map(() => []);
    const seconds = options.durationSeconds / options.rounds;
    for (let round = 0; round < options.rounds; round++) {
      for (let step = 0; step < targets.length; step++) {
        const index = (step + round) % targets.length;
        const target = targets[index];
        if (!target) continue;
        log(`round ${round + 1}/${options.rounds} ${target.name}`);
        rounds[index]?.push(await runOnce(target, seconds));
      }
    }
    const summaries: DownloadSummary[] = targets.map((t, i) => summarizeRounds(t.name, rounds[i] ?? []));
    const [appFull, nginxFull, appRange, nginxRange] = summaries;
    if (!appFull || !nginxFull || !appRange || !nginxRange) throw new Error('missing figures');
    process.stdout.write(`${downloadTable(summaries)}\n\n`);
    process.stdout.write(`${ratioLine(`full ${fileBytes / MB} MB`, appFull, nginxFull, TARGET)}\n`);
    process.stdout.write(`${ratioLine('Range', appRange, nginxRange, TARGET)}\n`);
    for (const s of summaries.filter(generatorBound)) {
      process.stdout.write(
        `- ${s.name}: wrk used its whole CPU, so the generator, not the server, was the limit\n`,
      );
    }

    // Memory: the app's RSS before and at its peak under `memoryClients` parallel full downloads. Slow
    // readers first (the harder case: the server's writes back up), then wrk at full speed.
    const growthLine = (label: string, before: number, peak: number, detail: string): string => {
      const growth = (peak - before) / MB;
      const verdict = growth < MEMORY_TARGET_MB ? 'met' : 'NOT met';
      return `- ${label}: RSS ${(before / MB).toFixed(1)} MiB before, ${(peak / MB).toFixed(1)} MiB at peak, growth ${growth.toFixed(1)} MiB (target < ${MEMORY_TARGET_MB}: ${verdict}); ${detail}\n`;
    };
    const beforeSlow = rssBytes(app.pid) ?? 0;
    log(`memory: ${memoryClients} slow readers at ${slowBytesPerSecond / 1024} KiB/s each`);
    let sampler = sampleRss(app.pid);
    const slow = await slowDownloads({
      url: appUrl,
      headers: auth,
      clients: memoryClients,
      bytesPerSecond: slowBytesPerSecond,
      seconds: memorySeconds,
    });
    const slowPeak = sampler.stop().peak;
    const beforeFast = rssBytes(app.pid) ?? 0;
    log(`memory: wrk, ${memoryClients} connections`);
    sampler = sampleRss(app.pid);
    const fast = await runOnce(targets[0] as Target, memorySeconds, memoryClients);
    const fastPeak = sampler.stop().peak;
    process.stdout.write(
      `\nMemory of the app process (VmRSS from /proc, sampled every 100 ms; ${(startRss / MB).toFixed(1)} MiB before any download):\n`,
    );
    process.stdout.write(
      growthLine(
        `${memoryClients} parallel full downloads, slow readers at ${slowBytesPerSecond / 1024} KiB/s`,
        beforeSlow,
        slowPeak,
        `${(slow.bytes / memorySeconds / 1e6).toFixed(0)} MB/s in all, ${slow.completed} completed, ${slow.errors} errors`,
      ),
    );
    process.stdout.write(
      growthLine(
        `${memoryClients} parallel full downloads, wrk at full speed`,
        beforeFast,
        fastPeak,
        `${(fast.wrk.bytesPerSecond / 1e6).toFixed(0)} MB/s, ${fast.wrk.failures} failures`,
      ),
    );

    const failed = summaries.filter((s) => s.failures > 0);
    for (const s of failed) log(`${s.name} had ${s.failures} failed requests (errors or non-2xx)`);
    return failed.length > 0 || fast.wrk.failures > 0 || slow.errors > 0 ? 1 : 0;
  } finally {
    for (const stop of stops.reverse()) await stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

runBench(main, log);
