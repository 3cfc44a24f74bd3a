import pino, { type Logger } from 'pino';
import { AdminService } from './accounts/admin-service.ts';
import { findModel, loadPriceTable, MODELS, type PriceTable } from './catalog/index.ts';
import { ModelService } from './catalog/model-service.ts';
import type { Config } from './config.ts';
import { createDb, type Db, migrateToLatest } from './db/index.ts';
import { type Generator, Simulator } from './generators/index.ts';
import type { Services } from './http/types.ts';
import { type Clock, systemClock } from './lib/clock.ts';
import { type BlobStore, createBlobStore } from './storage/index.ts';
import { IdempotencyStore } from './tasks/idempotency.ts';
import { TaskService } from './tasks/task-service.ts';
import { Sweeper } from './worker/sweeper.ts';
import { Worker, type WorkerOptions } from './worker/worker.ts';

/** Everything a process of the service runs on, wired once (STYLE: dependencies passed in). */
export interface Container {
  config: Readonly<Config>;
  db: Db;
  storage: BlobStore;
  clock: Clock;
  prices: PriceTable;
  generator: Generator;
  log: Logger;
  services: Services;
  worker: Worker;
  sweeper: Sweeper;
  close(): Promise<void>;
}

export interface ContainerOverrides {
  clock?: Clock;
  prices?: PriceTable;
  generator?: Generator;
  worker?: WorkerOptions;
}

export async function createContainer(
  config: Readonly<Config>,
  overrides: ContainerOverrides = {},
): Promise<Container> {
  const clock = overrides.clock ?? systemClock;
  const log = pino({ level: config.logLevel });
  const prices = overrides.prices ?? loadPriceTable(MODELS);
  const db = createDb(config.databaseUrl);
  await migrateToLatest(db.db);
  const storage = createBlobStore(config.storageUrl);
  const generator = overrides.generator ?? new Simulator({ clock, simSpeed: config.simSpeed });
  const models = new ModelService({ db, clock, models: MODELS });
  const admin = new AdminService({ db, clock, models });
  const idempotency = new IdempotencyStore({ db, clock });
  const worker = new Worker(
    {
      db,
      clock,
      storage,
      generator,
      findModel,
      resultRetentionMs: config.resultRetentionMs,
      timeScale: config.simSpeed,
      log,
    },
    { leaseMs: config.jobLeaseMs, ...overrides.worker },
  );
  const tasks = new TaskService({
    db,
    clock,
    models,
    prices,
    generator,
    idempotency,
    onTaskQueued: () => worker.wake(),
  });
  const sweeper = new Sweeper({ db, clock, storage, idempotency });
  return {
    config,
    db,
    storage,
    clock,
    prices,
    generator,
    log,
    services: { admin, models, tasks },
    worker,
    sweeper,
    async close() {
      sweeper.stop();
      await worker.stop();
      await db.close();
    },
  };
}
