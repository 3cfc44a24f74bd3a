import type { KeyPrincipal } from '../accounts/index.ts';
import type { AdminService } from '../accounts/admin-service.ts';
import type { ModelService } from '../models/index.ts';
import type { UploadService } from '../files/index.ts';
import type { CallbackStore } from '../generators/adapters/index.ts';
import type { HelperService, LibraryService } from '../libraries/index.ts';
import type { TaskService } from '../tasks/task-service.ts';
import type { Config } from '../config.ts';
import type { Db } from '../db/index.ts';
import type { Lang } from '../i18n/index.ts';
import type { Clock } from '../lib/clock.ts';
import type { BlobStore } from '../storage/index.ts';

/** Request limits of the reference ("Limits"); tests shrink the window. */
export interface RequestLimits {
  /** Requests per window per account, shared by its keys. (Default: 120) */
  accountRequests: number;
  /** Failed key attempts per window per client address. (Default: 30) */
  wrongKeyAttempts: number;
  /** Window length (seconds). (Default: 60) */
  windowSeconds: number;
}

export const DEFAULT_LIMITS: RequestLimits = {
  accountRequests: 120,
  wrongKeyAttempts: 30,
  windowSeconds: 60,
};

export interface Services {
  admin: AdminService;
  models: ModelService;
  tasks: TaskService;
  uploads: UploadService;
  libraries: LibraryService;
  helpers: HelperService;
  /** Provider callbacks of real generators (CONTRACT §11). */
  callbacks: CallbackStore;
}

/** Everything the HTTP app needs, passed in (never read from config at import time). */
export interface AppDeps {
  config: Readonly<Config>;
  db: Db;
  storage: BlobStore;
  clock: Clock;
  services: Services;
  limits?: RequestLimits;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The key's rights on authenticated routes; null elsewhere. */
    principal: KeyPrincipal | null;
    /** Language of messages (CONTRACT §8). */
    lang: Lang;
  }
}
