import { AdminService } from './accounts/admin-service.ts';
import { loadPriceTable, MODELS, type PriceTable } from './catalog/index.ts';
import { ModelService } from './catalog/model-service.ts';
import type { Config } from './config.ts';
import { createDb, type Db, migrateToLatest } from './db/index.ts';
import type { Services } from './http/types.ts';
import { type Clock, systemClock } from './lib/clock.ts';
import { type BlobStore, createBlobStore } from './storage/index.ts';

/** Everything a process of the service runs on, wired once (STYLE: dependencies passed in). */
export interface Container {
  config: Readonly<Config>;
  db: Db;
  storage: BlobStore;
  clock: Clock;
  prices: PriceTable;
  services: Services;
  close(): Promise<void>;
}

export async function createContainer(
  config: Readonly<Config>,
  overrides: { clock?: Clock; prices?: PriceTable } = {},
): Promise<Container> {
  const clock = overrides.clock ?? systemClock;
  const prices = overrides.prices ?? loadPriceTable(MODELS);
  const db = createDb(config.databaseUrl);
  await migrateToLatest(db.db);
  const storage = createBlobStore(config.storageUrl);
  const models = new ModelService({ db, clock, models: MODELS });
  const admin = new AdminService({ db, clock, models });
  return {
    config,
    db,
    storage,
    clock,
    prices,
    services: { admin, models },
    close: () => db.close(),
  };
}
