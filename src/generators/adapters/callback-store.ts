/**
 * Callback addresses of real providers (CONTRACT §11): `PUBLIC_BASE_URL/v1/callbacks/{channel}/{token}`,
 * `token` a secret per run. Only the token's SHA-256 is stored; a callback that names a channel not in the
 * channel file, a channel of a provider that posts no callbacks, an unknown hash or another channel's
 * token is refused. A callback only records its body for the run and wakes workers up: adapters read the
 * run (or, for Cog, take the stored `completed` body as the result).
 */
import { createHash } from 'node:crypto';
import type { Db, TaskStatus } from '../../db/index.ts';
import type { Clock } from '../../lib/index.ts';
import { BoundedMap, randomBase62, uuidv7 } from '../../lib/index.ts';
import { GeneratorTransientError } from '../generator.ts';
import type { AdapterDeps, Channel, ProviderName } from './types.ts';

type AdapterCallbacks = AdapterDeps['callbacks'];

/** Start of the notification payload that names the run a callback arrived for (`callback:<run key>`). */
const CALLBACK_PAYLOAD = 'callback:';

/**
 * The payload that wakes run `runKey` where it sleeps between two status reads: a callback's, or a cancel's
 * (the run then reads the task canceled and cancels its upstream task at once).
 */
export function wakeRunPayload(runKey: string): string {
  return `${CALLBACK_PAYLOAD}${runKey}`;
}

/** The run key a notification of `notifyChannel` names as called back, or null for other notifications. */
export function calledBackRunOf(payload: string): string | null {
  return payload.startsWith(CALLBACK_PAYLOAD) ? payload.slice(CALLBACK_PAYLOAD.length) || null : null;
}

/** Providers that post to their runs' callback addresses (PROVIDERS.md "Waking"); the others poll. */
export const CALLBACK_PROVIDERS = ['suno', 'kling', 'cog'] as const satisfies readonly ProviderName[];
export type CallbackProvider = (typeof CALLBACK_PROVIDERS)[number];

function isCallbackProvider(provider: ProviderName): provider is CallbackProvider {
  return (CALLBACK_PROVIDERS as readonly string[]).includes(provider);
}

/** Characters of a callback token (base62, about 190 bits). */
const TOKEN_CHARS = 32;
/** Runs whose address one channel remembers in memory; older ones get a fresh token when asked again. */
const REMEMBERED_RUNS = 10_000;
const FINAL_STATES: ReadonlySet<string> = new Set(['succeeded', 'failed', 'canceled']);

export interface CallbackStoreDeps {
  db: Db;
  clock: Clock;
  /** `PUBLIC_BASE_URL` without a trailing slash. */
  publicBaseUrl: string;
  /**
   * Notification channel that wakes workers in other processes (PostgreSQL); the payload names the run
   * (`calledBackRunOf`), so the process whose run waits for it wakes that run.
   */
  notifyChannel: string;
  /** Wakes the workers of this process. (Default: nothing) */
  onReceived?: (runKey: string) => void;
  /** The channels of the channel file; only theirs take callbacks. (Default: none) */
  channels?: readonly Pick<Channel, 'name' | 'provider'>[];
}

/** A callback address the service handed out, as a posted callback names it. */
export interface CallbackAddress {
  channel: string;
  /** The channel's provider, which decides how large a body it may post. */
  provider: CallbackProvider;
  runKey: string;
  taskId: string;
}

/** What a posted callback did: stored and woke the run, or arrived for a finished run. */
export type CallbackOutcome = 'stored' | 'finished';

/** The `callbacks` of one channel's AdapterDeps, plus the wait for its tokens to be stored. */
export interface ChannelCallbacks extends AdapterCallbacks {
  /**
   * Resolves once every token handed out so far is stored; throws `GeneratorTransientError` when one
   * could not be. The channel's HTTP client waits for it before each call, so a provider never holds a
   * callback URL the service would refuse.
   */
  settled(): Promise<void>;
}

export function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/** The task of a run key (`<task id>/<run number>`, or the whole key when it has no run number). */
function taskIdOf(runKey: string): string {
  const slash = runKey.lastIndexOf('/');
  return slash > 0 ? runKey.slice(0, slash) : runKey;
}

/** Tokens and bodies of run callbacks, in the database so any API process can take a callback. */
export class CallbackStore {
  readonly #deps: CallbackStoreDeps;
  /** Runs waiting in this process for their next callback. */
  readonly #waiters = new Map<string, Set<() => void>>();
  /** The channels that take callbacks, by name, with their provider. */
  readonly #providers = new Map<string, CallbackProvider>();

  constructor(deps: CallbackStoreDeps) {
    this.#deps = deps;
    for (const { name, provider } of deps.channels ?? []) {
      if (isCallbackProvider(provider)) this.#providers.set(name, provider);
    }
  }

  urlOf(channel: string, token: string): string {
    return `${this.#deps.publicBaseUrl}/v1/callbacks/${encodeURIComponent(channel)}/${token}`;
  }

  /**
   * The address a posted callback names, or null when the service handed out no such address: a channel
   * not in the file or of a provider that posts no callbacks (decided without the database), a token of
   * the wrong shape, an unknown token or another channel's. Reads nothing but the channel and the token,
   * so the caller can refuse a callback before reading its body.
   */
  async addressOf(channel: string, token: string): Promise<CallbackAddress | null> {
    const provider = this.#providers.get(channel);
    if (provider === undefined || !/^[A-Za-z0-9]{1,64}$/.test(token)) return null;
    const row = await this.#deps.db.db
      .selectFrom('callback_tokens')
      .select(['run_key', 'task_id', 'channel'])
      .where('token_hash', '=', hashToken(token))
      .executeTakeFirst();
    if (!row || row.channel !== channel) return null;
    return { channel, provider, runKey: row.run_key, taskId: row.task_id };
  }

  /**
   * Records a posted body for its run and wakes workers. A run whose task is final (or gone) takes no
   * more callbacks: the body is dropped and the caller answered as if it were taken.
   */
  async record(address: CallbackAddress, body: unknown): Promise<CallbackOutcome> {
    const { db, dialect } = this.#deps.db;
    const outcome = await dialect.transaction(db, async (tx) => {
      const task = await tx
        .selectFrom('tasks')
        .select('status')
        .where('id', '=', address.taskId)
        .executeTakeFirst();
      if (!task || FINAL_STATES.has(task.status)) return 'finished' as const;
      await tx
        .insertInto('callback_bodies')
        .values({
          id: uuidv7(this.#deps.clock.now().getTime()),
          run_key: address.runKey,
          channel: address.channel,
          body: JSON.stringify(body ?? null),
          received_at: this.#deps.clock.now().toISOString(),
        })
        .execute();
      await dialect.notify(tx, this.#deps.notifyChannel, wakeRunPayload(address.runKey));
      return 'stored' as const;
    });
    if (outcome === 'stored') {
      this.#deps.onReceived?.(address.runKey);
      for (const wake of this.#waiters.get(address.runKey) ?? []) wake();
    }
    return outcome;
  }

  /**
   * Resolves when this process stores the run's next callback, or when `signal` aborts (never rejects).
   * Workers wake their runs through `onReceived` and the notification instead (src/worker/run-wakes.ts),
   * which also covers callbacks taken by another process.
   */
  nextCallback(runKey: string, signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      if (signal.aborted) return resolve();
      const waiters = this.#waiters.get(runKey) ?? new Set<() => void>();
      this.#waiters.set(runKey, waiters);
      const done = (): void => {
        waiters.delete(done);
        if (waiters.size === 0 && this.#waiters.get(runKey) === waiters) this.#waiters.delete(runKey);
        signal.removeEventListener('abort', done);
        resolve();
      };
      waiters.add(done);
      signal.addEventListener('abort', done, { once: true });
    });
  }

  /** Bodies posted for the run, oldest first. */
  async received(runKey: string): Promise<unknown[]> {
    const rows = await this.#deps.db.db
      .selectFrom('callback_bodies')
      .select('body')
      .where('run_key', '=', runKey)
      .orderBy('id')
      .execute();
    return rows.map((row) => JSON.parse(row.body) as unknown);
  }

  /**
   * Drops the tokens and bodies of runs whose task ended before `before`: a late callback of such a run
   * is then unknown (404) instead of ignored, which providers treat the same way. Returns how many tokens.
   */
  async sweep(before: Date, batch = 500): Promise<number> {
    const { db } = this.#deps.db;
    const done = await db
      .selectFrom('callback_tokens')
      .innerJoin('tasks', 'tasks.id', 'callback_tokens.task_id')
      .select(['callback_tokens.token_hash', 'callback_tokens.run_key'])
      .where('tasks.status', 'in', [...FINAL_STATES] as TaskStatus[])
      .where('tasks.finished_at', '<', before.toISOString())
      .limit(batch)
      .execute();
    if (done.length === 0) return 0;
    await db
      .deleteFrom('callback_bodies')
      .where('run_key', 'in', [...new Set(done.map((row) => row.run_key))])
      .execute();
    await db
      .deleteFrom('callback_tokens')
      .where(
        'token_hash',
        'in',
        done.map((row) => row.token_hash),
      )
      .execute();
    return done.length;
  }

  /**
   * The `callbacks` of a channel's AdapterDeps. `urlFor` must answer at once (the adapter builds its
   * request body with it), so the token is drawn here and stored in the background; `settled` lets the
   * HTTP client hold every provider call until the store is done.
   */
  forChannel(channel: string): ChannelCallbacks {
    const urls = new BoundedMap<string, string>(REMEMBERED_RUNS);
    const pending = new Set<Promise<void>>();
    let failure: unknown = null;
    return {
      urlFor: (runKey) => {
        const known = urls.get(runKey);
        if (known !== undefined) return known;
        const token = randomBase62(TOKEN_CHARS);
        const url = this.urlOf(channel, token);
        const stored = this.#deps.db.db
          .insertInto('callback_tokens')
          .values({
            token_hash: hashToken(token),
            channel,
            run_key: runKey,
            task_id: taskIdOf(runKey),
            created_at: this.#deps.clock.now().toISOString(),
          })
          .execute()
          .then(
            () => {},
            (error: unknown) => {
              urls.delete(runKey);
              failure = error;
            },
          );
        const tracked = stored.finally(() => pending.delete(tracked));
        pending.add(tracked);
        urls.set(runKey, url);
        return url;
      },
      received: (runKey) => this.received(runKey),
      settled: async () => {
        await Promise.all(pending);
        if (failure !== null) {
          const cause = failure;
          failure = null;
          throw new GeneratorTransientError('cannot store the callback token', { cause });
        }
      },
    };
  }
}
