import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { buildApp } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { createContainer } from '../../src/container.ts';
import { FixedFileGenerator } from '../download/generator.ts';
import { announceAndAwaitStop, BENCH_ADMIN_TOKEN } from './messages.ts';

/**
 * The real app for `npm run bench:download`, built like bench/servers/app.ts (fresh SQLite database, local
 * file storage under a temporary DATA_DIR, in-process worker), except that every run's result is a copy of
 * BENCH_ARTIFACT_FILE: a task created through the API finishes with that file as its artifact.
 */
const source = process.env.BENCH_ARTIFACT_FILE;
if (!source) throw new Error('BENCH_ARTIFACT_FILE is not set');
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gta-bench-dl-'));
const config = loadConfig({
  DATA_DIR: dir,
  ADMIN_TOKEN: BENCH_ADMIN_TOKEN,
  LOG_LEVEL: 'silent',
  WORKER: 'on',
});
const container = await createContainer(config, { generator: new FixedFileGenerator(source) });
const app = await buildApp({
  ...container,
  // The production limits (120 requests a minute per account) would turn the bench into 429s.
  limits: { accountRequests: 1e9, wrongKeyAttempts: 1e9, windowSeconds: 60 },
});
container.worker.start();
await app.listen({ port: 0, host: '127.0.0.1' });
const address = app.server.address();
if (address === null || typeof address === 'string') throw new Error('app is not listening on TCP');

announceAndAwaitStop(address.port, async () => {
  await app.close();
  await container.close();
  fs.rmSync(dir, { recursive: true, force: true });
});
