import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { buildApp } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { createContainer } from '../../src/container.ts';
import { announceAndAwaitStop, BENCH_ADMIN_TOKEN } from './messages.ts';

/**
 * The real app, built as `src/main.ts` builds it, on a fresh SQLite database in a temporary folder.
 * BENCH_WORKER=on|off chooses whether the in-process worker runs (as WORKER does in production);
 * RENDER_THREADS passes through (unset: the service's default).
 */
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gta-bench-'));
const config = loadConfig({
  DATA_DIR: dir,
  ADMIN_TOKEN: BENCH_ADMIN_TOKEN,
  LOG_LEVEL: 'silent',
  // A five-minute generation takes 0.3 s: tasks finish quickly and do not pile up.
  SIM_SPEED: process.env.BENCH_SIM_SPEED ?? '1000',
  WORKER: process.env.BENCH_WORKER === 'off' ? 'off' : 'on',
  RENDER_THREADS: process.env.RENDER_THREADS ?? '',
});
const container = await createContainer(config);
const app = await buildApp({
  ...container,
  // The production limits (120 requests a minute per account) would turn the bench into 429s.
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
