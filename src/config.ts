import { isIP } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { MODELS } from './catalog/index.ts';
import type { Channel } from './generators/index.ts';
import { ChannelFileError, loadChannelFile, registeredProviders } from './generators/index.ts';

export const SECOND_MS = 1_000;
export const MINUTE_MS = 60 * SECOND_MS;
export const HOUR_MS = 60 * MINUTE_MS;
export const DAY_MS = 24 * HOUR_MS;

export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';

/** The service's settings, read once from the environment at start (CONTRACT §1). */
export interface Config {
  /** Listener port. (Default: 8080) */
  port: number;
  /** Listener address. (Default: `127.0.0.1`) */
  host: string;
  /** Base of absolute links (uploads, docs). (Default: `http://HOST:PORT`) */
  publicBaseUrl: string;
  /** Embedded database and files. (Default: `./data`) */
  dataDir: string;
  /** `sqlite:<file>` or `postgres://…`. (Default: SQLite file `service.db` in DATA_DIR) */
  databaseUrl: string;
  /** `file://<dir>` or `s3://bucket?…`. (Default: `file://DATA_DIR/files`) */
  storageUrl: string;
  /** Bearer token of the operator API; null turns the operator API off. */
  adminToken: string | null;
  /** Bearer token of `GET /metrics` (`METRICS_TOKEN`); null answers that route 404 (CONTRACT §15). */
  metricsToken: string | null;
  /**
   * Port where a worker started alone (`npm run worker`) serves its own `GET /metrics` (`METRICS_PORT`), on
   * HOST, with METRICS_TOKEN; null: it serves none. The API process serves metrics on its own port.
   */
  metricsPort: number | null;
  /** Time scale of the built-in simulator. (Default: 1) */
  simSpeed: number;
  /** How long result files are kept after a task finishes (milliseconds). (Default: 14 days) */
  resultRetentionMs: number;
  /** How long uploaded files are kept (milliseconds). (Default: 7 days) */
  uploadRetentionMs: number;
  /** Bytes of live uploads one account may keep; past it 413 storage_quota_exceeded. (Default: 1 GiB) */
  uploadQuotaBytes: number;
  logLevel: LogLevel;
  /** Run the worker inside the API process. (Default: true; `WORKER=off` turns it off) */
  embeddedWorker: boolean;
  /** Lease of a claimed job; a crashed worker's tasks are resumed after it (milliseconds). (Default: 30 s) */
  jobLeaseMs: number;
  /** Tasks one worker runs at once (`WORKER_CONCURRENCY`); null: the worker's default (128). */
  workerConcurrency: number | null;
  /**
   * Test-only: exact IP addresses URL downloads may reach although they are private or loopback
   * (`FETCH_ALLOW_ADDRESSES=127.0.0.1`). Empty in production: no private address is ever fetched.
   */
  fetchAllowAddresses: readonly string[];
  /**
   * The proxies in front of the API (`TRUST_PROXY`): addresses, CIDR ranges or `loopback`, `linklocal`,
   * `uniquelocal`. A request from one of them is taken to come from the address its X-Forwarded-For names,
   * for the limits per client address. Empty: the peer is the client.
   */
  trustProxy: readonly string[];
  /**
   * Worker threads that draw the simulator's files, so long encodes never stall the event loop; 0 draws
   * them on the worker's own thread. (Default: one per spare core, 1 to 4)
   */
  renderThreads: number;
  /** File where the simulator appends one line per run it starts (`SIM_CALL_LOG`), for audits and tests. */
  simCallLog: string | null;
  /**
   * Time for all URL downloads of one request together (milliseconds), well below the Idempotency-Key lock
   * of 60 s. (Default: 30 s; at most 45 s)
   */
  downloadTimeoutMs: number;
  /** Bytes the links of one request may make the server download, all together. (Default: 200 MiB) */
  downloadRequestMaxBytes: number;
  /** Bytes the requests of one account may make the server download per minute. (Default: 500 MiB) */
  downloadAccountBytesPerMinute: number;
  /**
   * Longest time to receive a whole request, headers and body (Node's `requestTimeout`); the hard cap
   * behind `bodyTimeoutMs`. It bounds a full 100 MB upload to about 170 KB/s (milliseconds). (Default: 10 min)
   */
  requestTimeoutMs: number;
  /**
   * A request body must bring at least 64 KB in every window of this length, or end, otherwise it is
   * answered 408 request_timeout and the connection closed: a stalled or trickling body never holds a
   * connection for long (milliseconds). (Default: 10 s)
   */
  bodyTimeoutMs: number;
  /**
   * Event streams and waiting calls (`?wait=`, `Prefer: wait`) one account may hold open at once, counted
   * per API process; one more is 429 rate_limited (CONTRACT §12). (Default: 20)
   */
  streamsPerAccount: number;
  /**
   * Request limits (CONTRACT §8), each `COUNT/DURATION`: requests per account (`RATE_LIMIT_ACCOUNT`,
   * 120/1m), failed key attempts per address (`RATE_LIMIT_WRONG_KEY`, 30/1m), helper calls per account
   * (`RATE_LIMIT_HELPERS`, 20/1h).
   */
  rateLimits: { account: RateLimit; wrongKey: RateLimit; helpers: RateLimit };
  /** Period of the comment line that keeps an event stream open through proxies (milliseconds). (Default: 15 s) */
  streamHeartbeatMs: number;
  /** The channel file (`GENERATORS_FILE`); null runs every model on the simulator. */
  generatorsFile: string | null;
  /** The channels of that file, checked, with their secrets read from the environment (CONTRACT §11). */
  channels: readonly Channel[];
  /**
   * Waits before each retry of a webhook delivery that failed (milliseconds, CONTRACT §12); once they are
   * used up the delivery is `failed`. (Default: `5s,5m,30m,2h,5h,10h,10h`)
   */
  webhookRetryScheduleMs: readonly number[];
  /** Webhook deliveries one process sends at once, so a slow receiver never holds up the others. (Default: 16) */
  webhookConcurrency: number;
  /** SMTP server of outgoing mail (`SMTP_URL`, `smtp://user:pass@host:port` or `smtps://…`); null writes
   * every mail into `DATA_DIR/outbox/` instead (CONTRACT §13). */
  smtpUrl: string | null;
  /** Sender of outgoing mail (`MAIL_FROM`). (Default: `no-reply@<PUBLIC_BASE_URL's host>`) */
  mailFrom: string;
  /** Kopecks credited to every account made by sign-up (`SIGNUP_CREDIT_MINOR`). (Default: 0) */
  signupCreditMinor: number;
  /** Lifetime of a dashboard session (`SESSION_TTL`, milliseconds). (Default: 30 days) */
  sessionTtlMs: number;
  /** Wallet top-ups (CONTRACT §14): `PAYMENTS`, the YooKassa shop, and the period of the pending top-ups' sweep. */
  payments: PaymentsConfig;
}

/** `PAYMENTS=off` (default) answers top-ups 503; `test` pays on a page of the service; `yookassa` for real. */
export type PaymentsMode = 'off' | 'test' | 'yookassa';

export interface PaymentsConfig {
  mode: PaymentsMode;
  /** `YOOKASSA_SHOP_ID`, `YOOKASSA_SECRET_KEY` (both required with `PAYMENTS=yookassa`), `YOOKASSA_BASE_URL`. */
  yookassa: YookassaConfig | null;
  /** How often pending top-ups are read back from the provider (`TOPUP_SWEEP`, milliseconds). (Default: 30 s) */
  sweepIntervalMs: number;
}

export interface YookassaConfig {
  shopId: string;
  secretKey: string;
  /** YooKassa's API. (Default: `https://api.yookassa.ru/v3`) */
  baseUrl: string;
  /**
   * Act only on notifications whose sender (the client address, as TRUST_PROXY decides it) is in YooKassa's
   * published ranges (`YOOKASSA_CHECK_IP=on`, PROVIDERS.md §8); others are answered 200 and ignored.
   * Default is `false`.
   */
  checkSenderIp: boolean;
}

export class ConfigError extends Error {
  override name = 'ConfigError';
}

const DURATION_UNITS_MS: Record<string, number> = { s: SECOND_MS, m: MINUTE_MS, h: HOUR_MS, d: DAY_MS };

/** Parses `30s`, `10m`, `2h`, `7d` (CONTRACT §1) into milliseconds; null when malformed. */
export function parseDuration(text: string): number | null {
  const match = /^(\d+)([smhd])$/.exec(text.trim());
  if (!match) return null;
  const amount = Number(match[1]);
  const unit = DURATION_UNITS_MS[match[2] as string] as number;
  return amount > 0 ? amount * unit : null;
}

/** Longest wait of one step of WEBHOOK_RETRY_SCHEDULE: a delivery is given up within days, not months. */
const MAX_RETRY_STEP_MS = 7 * DAY_MS;

/**
 * Parses WEBHOOK_RETRY_SCHEDULE: comma-separated waits such as `5s,5m,30m,2h` (milliseconds as `100ms` too,
 * for tests), 1 to 20 steps of 100 ms to 7 days each. Null when malformed.
 */
export function parseRetrySchedule(text: string): number[] | null {
  const steps = text.split(',').map((step) => step.trim());
  if (steps.length === 0 || steps.length > 20) return null;
  const waits: number[] = [];
  for (const step of steps) {
    const ms = /^\d+ms$/.test(step) ? Number(step.slice(0, -2)) : parseDuration(step);
    if (ms === null || ms < 100 || ms > MAX_RETRY_STEP_MS) return null;
    waits.push(ms);
  }
  return waits;
}

const SIZE_UNITS: Record<string, number> = { '': 1, KB: 1024, MB: 1024 ** 2, GB: 1024 ** 3, TB: 1024 ** 4 };

/** Parses `500MB`, `1GB`, `64KB` or plain bytes (binary units, as the 100 MB upload cap) into bytes; null when malformed. */
export function parseSize(text: string): number | null {
  const match = /^(\d+)\s*(KB|MB|GB|TB)?$/i.exec(text.trim());
  if (!match) return null;
  const bytes = Number(match[1]) * (SIZE_UNITS[(match[2] ?? '').toUpperCase()] as number);
  return bytes > 0 && Number.isSafeInteger(bytes) ? bytes : null;
}

/** Slowest SIM_SPEED: a thousand times slower than the providers. */
const MIN_SIM_SPEED = 0.001;

const LOG_LEVELS: readonly LogLevel[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

/**
 * A bearer token of the operator or of the scrapes: at least 16 characters, all of them printable ASCII
 * without spaces, since `Authorization: Bearer <token>` carries one such word (a space ends it, and a
 * header's other bytes are not read back as the same characters), so any other token could never match.
 */
function bearerToken(env: NodeJS.ProcessEnv, name: string): string | null {
  const token = env[name]?.trim() || null;
  if (token !== null && token.length < 16)
    throw new ConfigError(`${name} must be at least 16 characters long`);
  if (token !== null && !/^[\x21-\x7e]+$/.test(token))
    throw new ConfigError(`${name} must be printable ASCII without spaces (a Bearer token in a header)`);
  return token;
}

/**
 * Reads and checks the environment. A bad value throws a ConfigError naming the variable, so the
 * process exits at start rather than misbehaving later.
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Readonly<Config> {
  const port = intVar(env, 'PORT', 8080, 0, 65_535);
  const host = env.HOST?.trim() || '127.0.0.1';
  if (!isIP(host) && !/^[A-Za-z0-9]([\w.-]{0,251}[A-Za-z0-9])?$/.test(host))
    throw new ConfigError(`HOST must be an IP address or a host name, got "${host}"`);
  const dataDir = path.resolve(env.DATA_DIR?.trim() || './data');
  const publicBaseUrl = urlVar(
    env,
    'PUBLIC_BASE_URL',
    `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
  );
  // The service answers at the root of its origin: its pages call /v1/… and its own links are recognised
  // by /files/… and /v1/tasks/… paths. Behind a path prefix they would point past it and be read as
  // outside addresses, so a prefix is refused here rather than half working.
  if (new URL(publicBaseUrl).pathname.replace(/\/+$/, '') !== '') {
    throw new ConfigError(
      `PUBLIC_BASE_URL must be an origin without a path (the service is served at its root), got "${publicBaseUrl}"`,
    );
  }
  const databaseUrl = env.DATABASE_URL?.trim() || `sqlite:${path.join(dataDir, 'service.db')}`;
  if (!/^(sqlite:|postgres(ql)?:\/\/)/.test(databaseUrl)) {
    throw new ConfigError('DATABASE_URL must start with postgres:// or sqlite:');
  }
  // `sqlite:` alone would be a temporary database, lost at every restart.
  if (/^sqlite:\s*$/.test(databaseUrl))
    throw new ConfigError('DATABASE_URL sqlite: needs a file, e.g. sqlite:./data/service.db');
  if (databaseUrl.startsWith('postgres')) {
    try {
      new URL(databaseUrl);
    } catch {
      throw new ConfigError('DATABASE_URL is not a valid postgres:// URL');
    }
  }
  const storageUrl = env.STORAGE_URL?.trim() || `file://${path.join(dataDir, 'files')}`;
  if (!/^(file|s3):\/\//.test(storageUrl))
    throw new ConfigError('STORAGE_URL must start with file:// or s3://');
  // file:// alone would be the file system's root; file://dir is a host name, not a folder.
  if (storageUrl.startsWith('file:') && !/^file:\/\/\/[^/]/.test(storageUrl))
    throw new ConfigError('STORAGE_URL file:// needs an absolute folder, e.g. file:///srv/gta/files');
  const adminToken = bearerToken(env, 'ADMIN_TOKEN');
  const metricsToken = bearerToken(env, 'METRICS_TOKEN');
  const simSpeedText = env.SIM_SPEED?.trim() || '1';
  const simSpeed = Number(simSpeedText);
  // A thousandth already makes a song take five days. Far below, the scaled times outgrow a date (a
  // library step answered 500) and then Infinity, which a run's handle stores as null: the run ended at once.
  if (!Number.isFinite(simSpeed) || simSpeed < MIN_SIM_SPEED)
    throw new ConfigError(`SIM_SPEED must be a number of at least ${MIN_SIM_SPEED}`);
  const logLevel = (env.LOG_LEVEL?.trim() || 'info') as LogLevel;
  if (!LOG_LEVELS.includes(logLevel))
    throw new ConfigError(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}`);
  const worker = env.WORKER?.trim() || 'on';
  if (worker !== 'on' && worker !== 'off') throw new ConfigError('WORKER must be on or off');
  const generatorsFile = env.GENERATORS_FILE?.trim() || null;
  return Object.freeze({
    generatorsFile,
    channels: generatorsFile === null ? [] : channelsOf(generatorsFile, env),
    port,
    host,
    publicBaseUrl: publicBaseUrl.replace(/\/+$/, ''),
    dataDir,
    databaseUrl,
    storageUrl,
    adminToken,
    metricsToken,
    metricsPort: metricsPortVar(env, metricsToken),
    simSpeed,
    resultRetentionMs: durationVar(env, 'RESULT_RETENTION', '14d', KEEP_MAX_MS),
    uploadRetentionMs: durationVar(env, 'UPLOAD_RETENTION', '7d', KEEP_MAX_MS),
    uploadQuotaBytes: sizeVar(env, 'UPLOAD_QUOTA', '1GB'),
    logLevel,
    embeddedWorker: worker === 'on',
    jobLeaseMs: durationVar(env, 'JOB_LEASE', '30s'),
    workerConcurrency: env.WORKER_CONCURRENCY?.trim() ? intVar(env, 'WORKER_CONCURRENCY', 0, 1, 4096) : null,
    simCallLog: env.SIM_CALL_LOG?.trim() || null,
    downloadTimeoutMs: downloadTimeout(env),
    downloadRequestMaxBytes: intVar(env, 'DOWNLOAD_REQUEST_MB', 200, 1, 2000) * MIB,
    downloadAccountBytesPerMinute: intVar(env, 'DOWNLOAD_ACCOUNT_MB', 500, 1, 2000) * MIB,
    requestTimeoutMs: durationVar(env, 'REQUEST_TIMEOUT', '10m'),
    bodyTimeoutMs: durationVar(env, 'BODY_TIMEOUT', '10s'),
    streamsPerAccount: intVar(env, 'STREAMS_PER_ACCOUNT', 20, 1, 10_000),
    rateLimits: {
      account: rateLimitVar(env, 'RATE_LIMIT_ACCOUNT', '120/1m'),
      wrongKey: rateLimitVar(env, 'RATE_LIMIT_WRONG_KEY', '30/1m'),
      helpers: rateLimitVar(env, 'RATE_LIMIT_HELPERS', '20/1h'),
    },
    streamHeartbeatMs: streamHeartbeat(env),
    renderThreads: intVar(
      env,
      'RENDER_THREADS',
      Math.max(1, Math.min(4, os.availableParallelism() - 1)),
      0,
      64,
    ),
    webhookRetryScheduleMs: retrySchedule(env),
    webhookConcurrency: intVar(env, 'WEBHOOK_CONCURRENCY', 16, 1, 256),
    ...mailVars(env, publicBaseUrl),
    signupCreditMinor: intVar(env, 'SIGNUP_CREDIT_MINOR', 0, 0, 1_000_000_000),
    sessionTtlMs: durationVar(env, 'SESSION_TTL', '30d', KEEP_MAX_MS),
    payments: paymentsVars(env),
    fetchAllowAddresses: fetchAllowVar(env),
    trustProxy: trustProxyVar(env),
  } satisfies Config);
}

const MIB = 1024 * 1024;

function channelsOf(file: string, env: NodeJS.ProcessEnv): readonly Channel[] {
  try {
    return Object.freeze(
      loadChannelFile(file, { models: MODELS.map((m) => m.key), providers: registeredProviders(), env }),
    );
  } catch (error) {
    if (error instanceof ChannelFileError)
      throw new ConfigError(
        error.message.startsWith('GENERATORS_FILE') ? error.message : `GENERATORS_FILE: ${error.message}`,
      );
    throw error;
  }
}
/** Longest DOWNLOAD_TIMEOUT: acceptance must end well before its Idempotency-Key lock (60 s) runs out. */
const MAX_DOWNLOAD_TIMEOUT_MS = 45 * SECOND_MS;

function downloadTimeout(env: NodeJS.ProcessEnv): number {
  const ms = durationVar(env, 'DOWNLOAD_TIMEOUT', '30s');
  if (ms > MAX_DOWNLOAD_TIMEOUT_MS) throw new ConfigError('DOWNLOAD_TIMEOUT must be at most 45s');
  return ms;
}

function retrySchedule(env: NodeJS.ProcessEnv): readonly number[] {
  const text = env.WEBHOOK_RETRY_SCHEDULE?.trim() || '5s,5m,30m,2h,5h,10h,10h';
  const waits = parseRetrySchedule(text);
  if (waits === null)
    throw new ConfigError(
      `WEBHOOK_RETRY_SCHEDULE must be 1 to 20 waits like 5s,5m,2h (each at most 7d), got "${text}"`,
    );
  return Object.freeze(waits);
}

/** Longest heartbeat period: proxies commonly drop a connection silent for 60 s. */
const MAX_STREAM_HEARTBEAT_MS = 60 * SECOND_MS;

function streamHeartbeat(env: NodeJS.ProcessEnv): number {
  const ms = durationVar(env, 'STREAM_HEARTBEAT', '15s');
  if (ms > MAX_STREAM_HEARTBEAT_MS) throw new ConfigError('STREAM_HEARTBEAT must be at most 60s');
  return ms;
}

function intVar(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number): number {
  const text = env[name]?.trim();
  if (!text) return fallback;
  // Decimal digits only: Number() would also read `0x50` as 80 and `1e3` as 1000.
  const value = /^-?\d+$/.test(text) ? Number(text) : Number.NaN;
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new ConfigError(`${name} must be an integer from ${min} to ${max}, got "${text}"`);
  }
  return value;
}

function urlVar(env: NodeJS.ProcessEnv, name: string, fallback: string): string {
  const text = env[name]?.trim();
  if (!text) return fallback;
  try {
    const url = new URL(text);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error('scheme');
    // Links are built by appending paths: a query, a fragment or credentials would end up in each.
    if (url.search !== '' || url.hash !== '' || url.username !== '' || url.password !== '')
      throw new Error('parts');
    return text;
  } catch {
    throw new ConfigError(
      `${name} must be an absolute http(s) URL without credentials, query or fragment, got "${text}"`,
    );
  }
}

/** A limit of `count` events per sliding or fixed window of `windowMs`. */
export interface RateLimit {
  count: number;
  windowMs: number;
}

/** Parses `COUNT/DURATION` (`120/1m`, `20/1h`): 1 to 1,000,000 per 1 second to 1 day; null when malformed. */
export function parseRateLimit(text: string): RateLimit | null {
  const match = /^(\d{1,7})\/(\S+)$/.exec(text.trim());
  if (!match) return null;
  const count = Number(match[1]);
  const windowMs = parseDuration(match[2] as string);
  if (count < 1 || count > 1_000_000 || windowMs === null || windowMs > DAY_MS) return null;
  return { count, windowMs };
}

function rateLimitVar(env: NodeJS.ProcessEnv, name: string, fallback: string): RateLimit {
  const text = env[name]?.trim() || fallback;
  const limit = parseRateLimit(text);
  if (limit === null)
    throw new ConfigError(
      `${name} must be COUNT/DURATION, 1 to 1000000 per 1s to 1d (e.g. ${fallback}), got "${text}"`,
    );
  return limit;
}

/**
 * Longest duration a variable may give by default: Node's timers hold at most 2^31 - 1 ms (about 24.8
 * days), and a longer one fires after 1 ms instead.
 */
const TIMER_MAX_MS = 2 ** 31 - 1;
/** Longest retention or session lifetime: ten years. */
const KEEP_MAX_MS = 3650 * DAY_MS;

const PROXY_PRESETS = new Set(['loopback', 'linklocal', 'uniquelocal']);

function trustProxyVar(env: NodeJS.ProcessEnv): readonly string[] {
  const entries = (env.TRUST_PROXY ?? '')
    .split(',')
    .map((a) => a.trim())
    .filter(Boolean);
  for (const entry of entries) {
    const [address = '', prefix] = entry.split('/');
    const family = isIP(address);
    const prefixOk =
      prefix === undefined || (/^\d{1,3}$/.test(prefix) && Number(prefix) <= (family === 6 ? 128 : 32));
    if (!PROXY_PRESETS.has(entry) && (family === 0 || !prefixOk))
      throw new ConfigError(
        `TRUST_PROXY must list addresses, CIDR ranges, loopback, linklocal or uniquelocal, got "${entry}"`,
      );
  }
  return Object.freeze(entries);
}

/** FETCH_ALLOW_ADDRESSES: exact IP addresses, compared as written with the addresses a name resolves to. */
function fetchAllowVar(env: NodeJS.ProcessEnv): readonly string[] {
  const entries = (env.FETCH_ALLOW_ADDRESSES ?? '')
    .split(',')
    .map((a) => a.trim())
    .filter(Boolean);
  const bad = entries.find((entry) => isIP(entry) === 0);
  if (bad !== undefined)
    throw new ConfigError(`FETCH_ALLOW_ADDRESSES must list exact IP addresses, got "${bad}"`);
  return Object.freeze(entries);
}

function metricsPortVar(env: NodeJS.ProcessEnv, metricsToken: string | null): number | null {
  if (!env.METRICS_PORT?.trim()) return null;
  const port = intVar(env, 'METRICS_PORT', 0, 1, 65_535);
  if (metricsToken === null) throw new ConfigError('METRICS_PORT needs METRICS_TOKEN');
  return port;
}

function durationVar(
  env: NodeJS.ProcessEnv,
  name: string,
  fallback: string,
  maxMs: number = TIMER_MAX_MS,
): number {
  const text = env[name]?.trim() || fallback;
  const ms = parseDuration(text);
  if (ms === null) throw new ConfigError(`${name} must look like 30s, 10m, 2h or 7d, got "${text}"`);
  if (ms > maxMs)
    throw new ConfigError(`${name} must be at most ${Math.floor(maxMs / DAY_MS)}d, got "${text}"`);
  return ms;
}

function sizeVar(env: NodeJS.ProcessEnv, name: string, fallback: string): number {
  const text = env[name]?.trim() || fallback;
  const bytes = parseSize(text);
  if (bytes === null)
    throw new ConfigError(`${name} must look like 500MB, 1GB or a number of bytes, got "${text}"`);
  return bytes;
}

/** A sane single address: no spaces or angle brackets, one `@`, a dotted or local domain. */
const MAIL_ADDRESS = /^[^\s@<>]+@[^\s@<>]+$/;

function mailVars(env: NodeJS.ProcessEnv, publicBaseUrl: string): Pick<Config, 'smtpUrl' | 'mailFrom'> {
  const smtpUrl = env.SMTP_URL?.trim() || null;
  if (smtpUrl !== null) {
    let protocol = '';
    let hostname = '';
    try {
      ({ protocol, hostname } = new URL(smtpUrl));
    } catch {}
    if ((protocol !== 'smtp:' && protocol !== 'smtps:') || hostname === '')
      throw new ConfigError('SMTP_URL must look like smtp://user:pass@host:port or smtps://…');
  }
  const mailFrom = env.MAIL_FROM?.trim() || `no-reply@${new URL(publicBaseUrl).hostname}`;
  const address = /<([^>]*)>\s*$/.exec(mailFrom)?.[1] ?? mailFrom;
  if (!MAIL_ADDRESS.test(address))
    throw new ConfigError(`MAIL_FROM must be an e-mail address, got "${mailFrom}"`);
  return { smtpUrl, mailFrom };
}

/** YooKassa's public API (PROVIDERS.md §8). */
export const YOOKASSA_DEFAULT_URL = 'https://api.yookassa.ru/v3';

function paymentsVars(env: NodeJS.ProcessEnv): PaymentsConfig {
  const mode = env.PAYMENTS?.trim() || 'off';
  if (mode !== 'off' && mode !== 'test' && mode !== 'yookassa')
    throw new ConfigError(`PAYMENTS must be off, test or yookassa, got "${mode}"`);
  const sweepIntervalMs = durationVar(env, 'TOPUP_SWEEP', '30s');
  if (sweepIntervalMs < SECOND_MS) throw new ConfigError('TOPUP_SWEEP must be at least 1s');
  // Checked whatever PAYMENTS is, so a typo fails now rather than when YooKassa is switched on.
  const checkIp = env.YOOKASSA_CHECK_IP?.trim() || 'off';
  if (checkIp !== 'on' && checkIp !== 'off')
    throw new ConfigError(`YOOKASSA_CHECK_IP must be on or off, got "${checkIp}"`);
  if (mode !== 'yookassa') return Object.freeze({ mode, yookassa: null, sweepIntervalMs });
  const shopId = env.YOOKASSA_SHOP_ID?.trim() ?? '';
  const secretKey = env.YOOKASSA_SECRET_KEY?.trim() ?? '';
  if (shopId === '' || secretKey === '')
    throw new ConfigError('PAYMENTS=yookassa needs YOOKASSA_SHOP_ID and YOOKASSA_SECRET_KEY');
  const baseUrl = urlVar(env, 'YOOKASSA_BASE_URL', YOOKASSA_DEFAULT_URL).replace(/\/+$/, '');
  const yookassa = { shopId, secretKey, baseUrl, checkSenderIp: checkIp === 'on' };
  return Object.freeze({ mode, yookassa: Object.freeze(yookassa), sweepIntervalMs });
}
