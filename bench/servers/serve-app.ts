import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { buildApp } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { type Container, type ContainerOverrides, createContainer } from '../../src/container.ts';
import { collectStartupGarbage } from '../../src/lib/index.ts';
import { announceAndAwaitStop, BENCH_ADMIN_TOKEN } from './messages.ts';

/**
 * The real app of a bench child, built as `src/main.ts` builds it: a temporary DATA_DIR (removed when the
 * parent stops the child), the bench's operator token, silent logs and `env` for the rest of the
 * configuration. The request limits are lifted: the production ones (120 requests a minute per account)
 * would turn every bench into 429s. Listens on a free loopback port and tells the parent; the worker is
 * started when `startWorker` says so (and the configuration embeds one).
 */
export async function serveBenchApp(options: {
  /** Folder name prefix, to tell the benches' temporary folders apart. */
  name: string;
  env: Record<string, string>;
  overrides?: ContainerOverrides;
  startWorker: boolean;
}): Promise<Container> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `gta-bench-${options.name}-`));
  const config = loadConfig({
    DATA_DIR: dir,
    ADMIN_TOKEN: BENCH_ADMIN_TOKEN,
    LOG_LEVEL: 'silent',
    ...options.env,
  });
  const container = await createContainer(config, options.overrides);
  const app = await buildApp({
    ...container,
    limits: { accountRequests: 1e9, wrongKeyAttempts: 1e9, windowSeconds: 60 },
  });
  if (options.startWorker && config.embeddedWorker) container.worker.start();
  await app.ready();
  collectStartupGarbage();
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address();
  if (address === null || typeof address === 'string') throw new Error('app is not listening on TCP');
  announceAndAwaitStop(address.port, async () => {
    await app.close();
    await container.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });
  return container;
}
