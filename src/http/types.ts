import type { FastifyBaseLogger } from 'fastify';
import type { AdminService, KeyAuthenticator, KeyPrincipal } from '../accounts/index.ts';
import type { Config } from '../config.ts';
import type { Db } from '../db/index.ts';
import type { WebhookService } from '../events/index.ts';
import type { UploadService } from '../files/index.ts';
import type { CallbackStore, ChannelRouter } from '../generators/index.ts';
import type { Lang } from '../i18n/index.ts';
import type { Clock } from '../lib/index.ts';
import type { HelperService, LibraryService } from '../libraries/index.ts';
import type { ModelService } from '../models/index.ts';
import type { Metrics } from '../observability/index.ts';
import type { TopupService } from '../payments/index.ts';
import type { PeopleService } from '../people/index.ts';
import type { BlobStore } from '../storage/index.ts';
import type { TaskService, TaskWatch } from '../tasks/index.ts';
import type { PeoplePort } from '../web/index.ts';

/** Request limits of the reference ("Limits", CONTRACT §8: RATE_LIMIT_ACCOUNT, RATE_LIMIT_WRONG_KEY). */
export interface RequestLimits {
  /** Requests per window per account, shared by its keys. (Default: 120) */
  accountRequests: number;
  /** Failed key attempts per window per client address. (Default: 30) */
  wrongKeyAttempts: number;
  /** Window length of the account's requests (seconds). (Default: 60) */
  windowSeconds: number;
  /** Window length of the failed key attempts (seconds). (Default: `windowSeconds`) */
  wrongKeyWindowSeconds?: number;
}

/** The request limits a configuration sets. */
export function requestLimitsOf(limits: Config['rateLimits']): RequestLimits {
  return {
    accountRequests: limits.account.count,
    windowSeconds: Math.round(limits.account.windowMs / 1000),
    wrongKeyAttempts: limits.wrongKey.count,
    wrongKeyWindowSeconds: Math.round(limits.wrongKey.windowMs / 1000),
  };
}

export interface Services {
  admin: AdminService;
  /** API keys, with the cache that spares polls a key query (invalidated on revocation everywhere). */
  keys: KeyAuthenticator;
  models: ModelService;
  tasks: TaskService;
  uploads: UploadService;
  libraries: LibraryService;
  helpers: HelperService;
  /** Channels of real generators: the operator's view and switch (CONTRACT §11). */
  channels: ChannelRouter;
  /** Provider callbacks of real generators (CONTRACT §11). */
  callbacks: CallbackStore;
  /** Webhook endpoints, the default secret and the delivery log (CONTRACT §12). */
  webhooks: WebhookService;
  /** Waiting calls and event streams on tasks (CONTRACT §12). */
  watch: TaskWatch;
  /** People's accounts, sessions and their keys (CONTRACT §13). */
  people: PeopleService;
  /** Wallet top-ups (CONTRACT §14). */
  topups: TopupService;
}

/** Everything the HTTP app needs, passed in (never read from config at import time). */
export interface AppDeps {
  config: Readonly<Config>;
  db: Db;
  storage: BlobStore;
  clock: Clock;
  services: Services;
  limits?: RequestLimits;
  /** The process's logger: every request's line and the app's errors go there (CONTRACT §15). */
  log: FastifyBaseLogger;
  /** The process's metrics, served at GET /metrics when METRICS_TOKEN is set. */
  metrics: Metrics;
  /** Replaces `services.people` for the dashboard's pages (tests pass an in-memory one). */
  people?: PeoplePort;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The key's rights on authenticated routes; null elsewhere. */
    principal: KeyPrincipal | null;
    /** Language of messages (CONTRACT §8). */
    lang: Lang;
  }
}
