import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { buildApp } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { createContainer } from '../../src/container.ts';
import { announceAndAwaitStop, BENCH_ADMIN_TOKEN } from './messages.ts';

/**
 * The real app, built as `src/main.ts` builds it, on the database of BENCH_SCALE_DATABASE_URL (filled by
 * `npm run bench:scale`). BENCH_WORKER=on|off chooses whether the in-process worker runs; SIM_SPEED
 * passes through (default 100: a five-minute generation takes 3 s), and so does RENDER_THREADS (unset: the
 * service's default).
 */
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gta-bench-scale-'));
const databaseUrl = process.env.BENCH_SCALE_DATABASE_URL;
if (!databaseUrl) throw new Error('BENCH_SCALE_DATABASE_URL is not set');
const config = loadConfig({
  DATA_DIR: dir,
  DATABASE_URL: databaseUrl,
  ADMIN_TOKEN: BENCH_ADMIN_TOKEN,
  LOG_LEVEL: 'silent',
  SIM_SPEED: process.env.SIM_SPEED ?? '100',
  WORKER: process.env.BENCH_WORKER === 'on' ? 'on' : 'off',
  RENDER_THREADS: process.env.RENDER_THREADS ?? '',
});
const container = await createContainer(config);
const app = await buildApp({
  ...container,
  // Lifted: at tens of thousands of requests a second, 1,000 accounts × 120 a minute would be 429s.
  limits: { accountRequests: 1e9, wrongKeyAttempts: 1e9, windowSeconds: 60 },
});
if (config.embeddedWorker) container.worker.start();
await app.listen({ port: 0, host: '127.0.0.1' });
const address = app.server.address();
if (address === null || typeof address === 'string') throw new Error('app is not listening on TCP');

announceAndAwaitStop(address.port, async () => {
  await app.close();
  await container.close();
  fs.rmSync(dir, { recursive: true, force: true });
});
