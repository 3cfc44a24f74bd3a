import type { Writable } from 'node:stream';
import type { Logger } from 'pino';
import { AdminService, KeyAuthenticator } from './accounts/index.ts';
import { findModel, loadPriceTable, MODELS, type PriceTable } from './catalog/index.ts';
import { type Config, ConfigError } from './config.ts';
import { createDb, type Db, migrateToLatest } from './db/index.ts';
import { WebhookSender, type WebhookSenderOptions, WebhookService } from './events/index.ts';
import { UploadService } from './files/index.ts';
import type {
  AdapterDeps,
  AdapterFactory,
  AdapterRuntime,
  Channel,
  ProviderName,
} from './generators/index.ts';
import {
  adapterFactories,
  CallbackStore,
  ChannelRouter,
  createAdapterDeps,
  type Generator,
  isProviderName,
  LibrarySimulator,
  RenderPool,
  Simulator,
} from './generators/index.ts';
import type { Services } from './http/index.ts';
import { type Clock, DbClock } from './lib/index.ts';
import { HelperService, type InputResolver, LibraryService, resolveReferences } from './libraries/index.ts';
import { createMailer } from './mail/index.ts';
import { ModelService } from './models/index.ts';
import {
  createLogger,
  currentRequestId,
  Metrics,
  registerStateGauges,
  secretsOfUrl,
  TaskTelemetry,
} from './observability/index.ts';
import {
  isTopupPayment,
  type PaymentProvider,
  TestProvider,
  TopupService,
  TopupSweep,
  YookassaProvider,
} from './payments/index.ts';
import { LoginLimiter, PeopleService } from './people/index.ts';
import { type BlobStore, createBlobStore } from './storage/index.ts';
import {
  artifactOfTaskInput,
  artifactUpstream,
  DownloadAllowance,
  FinalTaskViews,
  IdempotencyStore,
  probeUrl,
  resolveInputs,
  TASKS_CHANNEL,
  TaskService,
  TaskWatch,
} from './tasks/index.ts';
import { cancelUpstreamRuns, Sweeper, Worker, type WorkerOptions } from './worker/index.ts';

/** Everything a process of the service runs on, wired once (STYLE: dependencies passed in). */
export interface Container {
  config: Readonly<Config>;
  db: Db;
  storage: BlobStore;
  clock: Clock;
  prices: PriceTable;
  generator: Generator;
  log: Logger;
  /** This process's metrics (CONTRACT §15). */
  metrics: Metrics;
  services: Services;
  worker: Worker;
  /** Sends webhook deliveries; started with the worker (`main.ts`, `worker-main.ts`), in a loop of its own. */
  webhookSender: WebhookSender;
  sweeper: Sweeper;
  /** Reads pending top-ups back from their provider; started with the sweeper (CONTRACT §14). */
  topupSweep: TopupSweep;
  close(): Promise<void>;
}

export interface ContainerOverrides {
  /** Replaces the database's clock (DbClock) everywhere; tests pass a ManualClock. */
  clock?: Clock;
  prices?: PriceTable;
  generator?: Generator;
  /** Channels instead of GENERATORS_FILE's (tests with in-memory adapters). */
  channels?: readonly Channel[];
  /** Adapter factories added to (or replacing) the registry's, by provider (tests). */
  adapters?: Partial<Record<ProviderName, AdapterFactory>>;
  /** The AdapterDeps of a channel. (Default: the process's own, see `createContainer`) */
  adapterDeps?: (channel: Channel) => AdapterDeps;
  /** Smaller limits of the process's own AdapterDeps (tests: outputs over 1 MiB, calls that hang). */
  adapterLimits?: Pick<AdapterRuntime, 'maxOutputBytes' | 'callTimeoutMs'>;
  worker?: WorkerOptions;
  /** Options of the webhook sender (tests: a DNS lookup override, a short lease). */
  webhookSender?: WebhookSenderOptions;
  /** Probe of the files library bodies link (tests give fake files). (Default: download and probe) */
  resolveLibraryInput?: InputResolver;
  /** Where log lines go. (Default: standard output) */
  logDestination?: Writable;
}

/** How often watched tasks' revisions are compared on SQLite, where other processes cannot notify (ms). */
const WATCH_CHECK_SQLITE_MS = 1_000;
/** The same on PostgreSQL, behind LISTEN: only for what a lost connection missed (ms). */
const WATCH_CHECK_POSTGRES_MS = 10_000;

export async function createContainer(
  config: Readonly<Config>,
  overrides: ContainerOverrides = {},
): Promise<Container> {
  const channels = overrides.channels ?? config.channels;
  const log = createLogger({
    level: config.logLevel,
    destination: overrides.logDestination,
    // Never written, whatever carries them (CONTRACT §15).
    secrets: [
      config.adminToken,
      config.metricsToken,
      ...secretsOfUrl(config.databaseUrl),
      ...secretsOfUrl(config.storageUrl),
      ...(config.smtpUrl === null ? [] : secretsOfUrl(config.smtpUrl)),
      config.payments.yookassa?.secretKey ?? null,
      ...channels.flatMap((c) => Object.values(c.secrets)),
    ],
  });
  // Process metrics only where they are served: a process without METRICS_TOKEN has no one to read them.
  const metrics = new Metrics({ processMetrics: config.metricsToken !== null });
  const telemetry = new TaskTelemetry({ log, metrics });
  const prices = overrides.prices ?? loadPriceTable(MODELS);
  const db = await openDatabase(config);
  // Leases, idempotency locks, deadlines and timestamps follow the database's clock, which every process
  // shares, not this host's.
  const dbClock = overrides.clock
    ? null
    : new DbClock({
        measure: () => db.dialect.currentTime(db.db),
        onError: (error) =>
          log.warn({ err: error }, 'reading the database clock failed; keeping the last offset'),
      });
  await dbClock?.start();
  if (dbClock && Math.abs(dbClock.offsetMs) > 1_000)
    log.warn(
      { offsetMs: dbClock.offsetMs },
      "this host's clock is off the database's; following the database",
    );
  const clock: Clock = overrides.clock ?? (dbClock as DbClock);
  const storage = await createBlobStore(config.storageUrl);
  // Threads start on the first render, so a container that never renders (the CLI) never starts one.
  const renderer = new RenderPool(config.renderThreads);
  const simulator = new Simulator({ clock, simSpeed: config.simSpeed, callLog: config.simCallLog, renderer });
  const uploads = new UploadService({
    db,
    clock,
    storage,
    publicBaseUrl: config.publicBaseUrl,
    retentionMs: config.uploadRetentionMs,
    quotaBytes: config.uploadQuotaBytes,
  });
  // Provider callbacks wake this process's worker at once and, on PostgreSQL, every other one (CONTRACT §11).
  const callbacks = new CallbackStore({
    db,
    clock,
    publicBaseUrl: config.publicBaseUrl,
    notifyChannel: TASKS_CHANNEL,
    channels,
    onReceived: (runKey) => {
      worker.wake();
      worker.wakeRun(runKey);
    },
  });
  // Each channel's adapter gets its upstream HTTP client, guarded output downloads (CONTRACT §6 address
  // rules), our uploads as the provider sees them, and its callback addresses.
  const adapterDeps =
    overrides.adapterDeps ??
    ((channel: Channel) =>
      createAdapterDeps(channel, {
        clock,
        storage,
        uploads,
        callbacks,
        publicBaseUrl: config.publicBaseUrl,
        fetchAllowAddresses: config.fetchAllowAddresses,
        ...overrides.adapterLimits,
        // An artifact link of our own run names its file upstream (Suno's replace-section, PROVIDERS.md §2).
        artifactUpstream: async (taskId, index) => {
          const found = await artifactUpstream(db.db, taskId, index);
          return found !== null && isProviderName(found.provider)
            ? { provider: found.provider, ids: found.ids }
            : null;
        },
        // A caller's result file as a run's input: read from storage, or lent to a provider that fetches
        // URLs by a direct link of its own; only for a task of the same account.
        artifactInput: (forTaskId, url) => artifactOfTaskInput(db, forTaskId, url, clock.now()),
      }));
  // Models with channels run on them (CONTRACT §11); every other model on the simulator as before.
  const router = new ChannelRouter({
    db,
    clock,
    channels,
    factories: { ...adapterFactories(simulator), ...overrides.adapters },
    adapterDeps,
    fallback: overrides.generator ?? simulator,
    log,
  });
  await router.start();
  const generator: Generator = router;
  const models = new ModelService({ db, clock, models: MODELS });
  // Keys seen lately, so a poll costs no key query; revocations reach it from every process.
  const keys = new KeyAuthenticator(db);
  await keys.start();
  const admin = new AdminService({
    db,
    clock,
    models,
    onKeyRevoked: () => keys.forget(),
    isPaymentReference: isTopupPayment,
  });
  const idempotency = new IdempotencyStore({ db, clock });
  const worker = new Worker(
    {
      db,
      clock,
      storage,
      generator,
      placement: router,
      findModel,
      resultRetentionMs: config.resultRetentionMs,
      timeScale: config.simSpeed,
      log,
      telemetry,
    },
    {
      leaseMs: config.jobLeaseMs,
      ...(config.workerConcurrency === null ? {} : { concurrency: config.workerConcurrency }),
      ...overrides.worker,
    },
  );
  // Links in settings and library bodies: one time and byte budget per request, an allowance per account
  // and minute (issues 10.1, 10.17), shared by every API process on PostgreSQL.
  const downloads = new DownloadAllowance(
    {
      timeoutMs: config.downloadTimeoutMs,
      requestMaxBytes: config.downloadRequestMaxBytes,
      accountBytesPerMinute: config.downloadAccountBytesPerMinute,
    },
    db.pgPool,
  );
  // Artifact links of the caller's own tasks are read from storage, not fetched (artifact-inputs.ts).
  const fetching = {
    uploads,
    allowAddresses: config.fetchAllowAddresses,
    downloads,
    artifacts: { db, storage, clock },
  };
  const tasks = new TaskService({
    db,
    clock,
    models,
    prices,
    generator,
    idempotency,
    resultRetentionMs: config.resultRetentionMs,
    // Records a provider is still settling (a voice being verified at Suno) are asked about first.
    resolveReferences: (accountId, refs) =>
      resolveReferences(db, accountId, refs, clock.now(), (r, now) => libraries.askSteps(r, now)),
    resolveInputs: (principal, mode, settings) =>
      resolveInputs(mode, settings, fetching, principal.accountId, principal.models),
    onTaskQueued: () => worker.wake(),
    finalViews: new FinalTaskViews(),
    webhooks: { allowAddresses: config.fetchAllowAddresses },
    telemetry,
  });
  registerStateGauges(metrics, {
    db,
    clock,
    models: MODELS.map((m) => m.key),
    channels: () => router.views(),
  });
  // Libraries and helpers (CONTRACT §7): the simulator's library side, built beside the task Simulator.
  const libraryGenerator = new LibrarySimulator({ simSpeed: config.simSpeed });
  // Library creations probe their linked files like tasks do: own uploads from storage, others downloaded
  // safely, with the field's accepted formats and size (CONTRACT §6), refused as a request-body error.
  const resolveLibraryInput: InputResolver = (url, field, accepted, budget) =>
    probeUrl(
      url,
      {
        label: `body.${field}`,
        maxBytes: accepted.maxBytes,
        formats: accepted.formats,
        invalid: 'request',
        ...(budget ? { budget } : {}),
      },
      fetching,
    );
  const libraries = new LibraryService({
    db,
    clock,
    generator: libraryGenerator,
    idempotency,
    resolveInput: overrides.resolveLibraryInput ?? resolveLibraryInput,
    downloads,
    models,
    // Records of a model with a real channel are kept at its provider (CONTRACT §11).
    generatorFor: async (model) => {
      const at = await router.recordsAt(model);
      return at
        ? { generator: at.library, channel: at.channel }
        : { generator: libraryGenerator, channel: null };
    },
    // A record's later steps go to the channel that made it, never another.
    generatorAt: (channel) => router.libraryAt(channel),
  });
  // Helpers of a model with a channel whose provider has a library side (Suno's lyrics and style boost)
  // run there; the rest on the simulator.
  const helpers = new HelperService({
    db,
    clock,
    limit: config.rateLimits.helpers,
    generatorFor: async (model) => (await router.libraryOf(model)) ?? libraryGenerator,
    models,
  });
  // Webhooks (CONTRACT §12): endpoints and the log in the API; the sender beside the worker, never in it.
  const webhooks = new WebhookService({
    db,
    clock,
    urls: { allowAddresses: config.fetchAllowAddresses },
    idempotency,
  });
  const webhookSender = new WebhookSender(
    {
      db,
      clock,
      log,
      retryScheduleMs: config.webhookRetryScheduleMs,
      defaultSecret: (accountId) => webhooks.defaultSecret(accountId),
      allowAddresses: config.fetchAllowAddresses,
    },
    { concurrency: config.webhookConcurrency, ...overrides.webhookSender },
  );
  // Long-polls and event streams (CONTRACT §12): SQLite cannot notify other processes, so its check runs
  // every second; on PostgreSQL LISTEN wakes them and the check is only a safety net.
  const watch = new TaskWatch(db, {
    checkIntervalMs: db.dialect.name === 'sqlite' ? WATCH_CHECK_SQLITE_MS : WATCH_CHECK_POSTGRES_MS,
    perAccount: config.streamsPerAccount,
    onError: (error) => log.warn({ err: error }, 'checking watched tasks failed; trying again'),
  });
  // People's accounts (CONTRACT §13): mail through SMTP_URL or into DATA_DIR/outbox; login limits shared
  // by every API process on PostgreSQL.
  const mailer = createMailer({
    smtpUrl: config.smtpUrl,
    from: config.mailFrom,
    dataDir: config.dataDir,
    log,
  });
  const people = new PeopleService({
    db,
    clock,
    mailer,
    models,
    limiter: new LoginLimiter(undefined, db.pgPool),
    publicBaseUrl: config.publicBaseUrl,
    signupCreditMinor: config.signupCreditMinor,
    sessionTtlMs: config.sessionTtlMs,
    log,
    onKeyRevoked: () => keys.forget(),
  });
  // Wallet top-ups (CONTRACT §14): YooKassa, the test mode's own page, or off.
  const payments = config.payments;
  const provider: PaymentProvider | null =
    payments.mode === 'yookassa' && payments.yookassa
      ? new YookassaProvider(payments.yookassa)
      : payments.mode === 'test'
        ? new TestProvider({ db, clock, publicBaseUrl: config.publicBaseUrl })
        : null;
  const topups = new TopupService({
    db,
    clock,
    idempotency,
    provider,
    publicBaseUrl: config.publicBaseUrl,
    log,
  });
  const topupSweep = new TopupSweep(topups, (error) => log.warn({ err: error }, 'the top-up sweep failed'));
  const sweeper = new Sweeper({
    db,
    clock,
    storage,
    idempotency,
    uploads,
    callbacks,
    log,
    sweepPeople: () => people.sweepExpired(),
    // Records that learn or wait reach ready/failed without a reader, so their webhooks go out.
    settleRecords: () => libraries.settleDue(),
    // The provider copies of deleted records are deleted there.
    deleteUpstreamCopies: () =>
      libraries.deleteUpstreamCopies((recordId, err) =>
        log.warn({ err, recordId }, 'gave up deleting a deleted library record at its provider'),
      ),
    // The upstream runs of canceled tasks that no worker drives are canceled there.
    cancelUpstreamRuns: () =>
      cancelUpstreamRuns({
        db,
        clock,
        generator,
        onGiveUp: (taskId, err) =>
          log.warn({ err, taskId }, 'gave up canceling a canceled task at its provider'),
      }),
  });
  return {
    config,
    db,
    storage,
    clock,
    prices,
    generator,
    log,
    metrics,
    services: {
      admin,
      keys,
      models,
      tasks,
      uploads,
      libraries,
      helpers,
      channels: router,
      callbacks,
      webhooks,
      watch,
      people,
      topups,
    },
    worker,
    webhookSender,
    sweeper,
    topupSweep,
    async close() {
      await watch.close();
      await keys.close();
      sweeper.stop();
      topupSweep.stop();
      await worker.stop();
      await webhookSender.stop();
      dbClock?.stop();
      await renderer.close();
      // Mails still going out after their answers (each bounded by the SMTP timeouts) are not cut off.
      await people.mailsSent();
      mailer.close();
      await db.close();
    },
  };
}

/** Why a SQLite file cannot be the service's database: the folder or the file, not the service. */
const SQLITE_OPEN_FAILURES = new Set([
  'SQLITE_CANTOPEN',
  'SQLITE_NOTADB',
  'SQLITE_READONLY',
  'SQLITE_CORRUPT',
  'EACCES',
  'EEXIST',
  'ENOTDIR',
  'EROFS',
]);

/**
 * The database, migrated. A SQLite file that cannot be opened or written (a read-only DATA_DIR, a file
 * where the folder should be, a file that is not a database) stops the start with a message naming it,
 * as a bad setting does, not a stack trace.
 */
async function openDatabase(config: Config): Promise<Db> {
  let db: Db | null = null;
  try {
    // A request's transactions give up on a row lock after a few seconds (answered as retryable) rather
    // than wait behind a stuck worker until the statement timeout; the worker's and sweepers' wait as before.
    db = createDb(config.databaseUrl, { inRequest: () => currentRequestId() !== undefined });
    await migrateToLatest(db);
    return db;
  } catch (error) {
    await db?.close().catch(() => {});
    const code = (error as { code?: unknown }).code;
    const sqlite = config.databaseUrl.startsWith('sqlite:');
    if (!sqlite || typeof code !== 'string' || !SQLITE_OPEN_FAILURES.has(code)) throw error;
    const file = config.databaseUrl.slice('sqlite:'.length);
    const message = (error as Error).message;
    throw new ConfigError(
      `the SQLite database ${file} cannot be used (${message.startsWith(code) ? message : `${code}: ${message}`}); ` +
        `DATA_DIR (${config.dataDir}) must be a writable folder of the service's own`,
    );
  }
}
