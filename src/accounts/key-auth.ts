import { timingSafeEqual } from 'node:crypto';
import type { Db } from '../db/index.ts';
import { prepared } from '../db/index.ts';
import { BoundedMap, oncePerTurn, oncePerTurnAsync } from '../lib/index.ts';
import {
  hashKey,
  KEY_MAX_LENGTH,
  KEYS_CHANNEL,
  type KeyPrincipal,
  looksLikeKey,
  principalOfHash,
  revokedAmong,
} from './keys.ts';

/**
 * The UTF-8 bytes of the key a request presents, written here instead of into a new Buffer per request:
 * small Buffers come from Node's shared pool, whose 8 KB slabs outlive the young generation, and at
 * 50,000 polls a second they started an old-generation collection (10-28 ms of the event loop) every
 * 3.5 s (docs/performance.md). Used synchronously only; 4 bytes per UTF-16 unit at most.
 */
const presentedBytes = Buffer.allocUnsafeSlow(4 * KEY_MAX_LENGTH);

/** How long a cached key is trusted without any news (milliseconds). */
export interface KeyCacheOptions {
  /**
   * On PostgreSQL, where a revocation reaches other processes by NOTIFY: the bound on a revoked key's life
   * elsewhere while the LISTEN connection is down (it is dropped at once when it is up). (Default: 1 s)
   */
  notifiedTtlMs?: number;
  /** On SQLite, where every use compares the `keys` epoch: only bounds memory. (Default: 60 s) */
  epochTtlMs?: number;
  /** Keys kept at most; the oldest go first. (Default: 10,000) */
  maxEntries?: number;
  /**
   * On SQLite, while calls wait on keys (`whenRevoked`): how often the `keys` epoch is looked at for
   * revocations by other processes, which cannot notify this one. (Default: 250 ms)
   */
  revocationCheckMs?: number;
  /** Monotonic milliseconds (tests move it). */
  now?: () => number;
}

interface Entry {
  principal: KeyPrincipal;
  at: number;
}

/**
 * Authenticates API keys, keeping the rights of keys seen lately so a poll costs no key query (the
 * lookup was the largest single cost of polling: docs/performance.md). A revoked key is still refused at
 * once by every process: requests first read the `keys` epoch that each revocation moves, once per turn of
 * the event loop, and drop the cache when it moved. Every request handled in a turn arrived before the
 * turn began, so a key revoked before a request arrived is always refused.
 * - On SQLite the read is synchronous, on the shared file (`cached` answers at once).
 * - On PostgreSQL it is one query per turn, shared by the turn's requests (`authenticate` waits for it).
 *   The revoking transaction's NOTIFY (`Db.listen`) drops the cache too, sooner, and a lost LISTEN
 *   connection as well; entries live at most `notifiedTtlMs` in any case. (NOTIFY alone left a window: the
 *   client's next request could reach another process before the notification did.)
 * - In this process, the revoking transaction's notification drops the cache on commit.
 * Unknown and revoked keys are never cached: each such attempt is looked up and counted by the limiter.
 *
 * Calls that answer long after their request was authenticated (long-polls, event streams) watch their
 * key with `whenRevoked`, which hears of the same revocations and ends them at once.
 */
export class KeyAuthenticator {
  readonly #db: Db;
  readonly #entries: BoundedMap<string, Entry>;
  readonly #ttlMs: number;
  readonly #now: () => number;
  /** Moves on every invalidation; a lookup that started before one is not cached. */
  #generation = 0;
  /** The `keys` epoch the cached entries were read under. */
  #epoch: number | null = null;
  #unlisten: (() => Promise<void>) | null = null;
  /** The last key each connection presented, with its hash (`#hashOn`). */
  readonly #lastKeyOf = new WeakMap<object, { plain: Buffer; hash: string }>();
  /** The `keys` epoch, read once per turn of the event loop (`oncePerTurn`); null on PostgreSQL. */
  readonly #keysEpoch: () => number | null;
  /** On PostgreSQL, the `keys` epoch read by one query per turn (`oncePerTurnAsync`); null on SQLite. */
  readonly #keysEpochQuery: (() => Promise<number>) | null;
  /** The calls watching each key (`whenRevoked`): each aborts when the key is revoked. */
  readonly #watchers = new Map<string, Set<AbortController>>();
  readonly #revocationCheckMs: number;
  /** On SQLite, while keys are watched: the look at the `keys` epoch for other processes' revocations. */
  #revocationTimer: NodeJS.Timeout | null = null;
  /** The `keys` epoch the watched keys were last looked up at. */
  #watchedEpoch: number | null = null;

  constructor(db: Db, options: KeyCacheOptions = {}) {
    this.#db = db;
    const sqlite = db.readEpoch('keys') !== null;
    this.#ttlMs = sqlite ? (options.epochTtlMs ?? 60_000) : (options.notifiedTtlMs ?? 1_000);
    this.#entries = new BoundedMap(options.maxEntries ?? 10_000);
    this.#now = options.now ?? (() => performance.now());
    this.#revocationCheckMs = options.revocationCheckMs ?? 250;
    this.#keysEpoch = sqlite ? oncePerTurn(() => db.readEpoch('keys'), { now: this.#now }) : () => null;
    this.#keysEpochQuery = sqlite
      ? null
      : oncePerTurnAsync(async () => Number((await keysEpoch(db.db, {})).rows[0]?.value ?? 0), {
          now: this.#now,
        });
  }

  /** Starts listening for revocations; until then nothing is cached. */
  async start(): Promise<void> {
    if (this.#unlisten) return;
    this.#unlisten = await this.#db.listen(KEYS_CHANNEL, (keyId) => {
      this.forget();
      // The payload names the revoked key (`revokeKey`). Null after a lost LISTEN connection was made
      // again: what was notified meanwhile is lost, so every watched key is looked up.
      if (keyId) this.#revoked(keyId);
      else this.#lookUpWatched([...this.#watchers.keys()]);
    });
  }

  /** Stops listening and forgets every key. */
  async close(): Promise<void> {
    const unlisten = this.#unlisten;
    this.#unlisten = null;
    this.forget();
    this.#watchers.clear();
    this.#stopRevocationChecks();
    if (unlisten) await unlisten();
  }

  /** Drops every cached key (a revocation is rare; its payload is not needed to be exact). */
  forget(): void {
    this.#generation += 1;
    this.#entries.clear();
  }

  /**
   * A signal that aborts when the key is revoked, by this process or another, for a call that answers
   * long after its request was authenticated (a long-poll, an event stream): it ends at once and gives its
   * waiting place back, instead of holding it until its wait or its next heartbeat ends. Heard from the
   * revoking transaction's notification (this process; every process on PostgreSQL) and, on SQLite, from
   * the `keys` epoch, looked at every `revocationCheckMs` while any key is watched. `close` stops watching:
   * call it when the call ends.
   */
  whenRevoked(keyId: string): { signal: AbortSignal; close: () => void } {
    const controller = new AbortController();
    let watchers = this.#watchers.get(keyId);
    if (!watchers) {
      watchers = new Set();
      this.#watchers.set(keyId, watchers);
    }
    watchers.add(controller);
    this.#startRevocationChecks();
    // A revocation between the request's authentication and now was announced before this watcher was.
    this.#lookUpWatched([keyId]);
    return {
      signal: controller.signal,
      close: () => {
        const set = this.#watchers.get(keyId);
        if (!set?.delete(controller)) return;
        if (set.size === 0) this.#watchers.delete(keyId);
        if (this.#watchers.size === 0) this.#stopRevocationChecks();
      },
    };
  }

  #revoked(keyId: string): void {
    const watchers = this.#watchers.get(keyId);
    if (watchers) for (const controller of watchers) controller.abort();
  }

  /** Aborts the watchers of those of `keyIds` that are revoked. */
  #lookUpWatched(keyIds: string[]): void {
    if (keyIds.length === 0) return;
    revokedAmong(this.#db.db, keyIds).then(
      (revoked) => {
        for (const keyId of revoked) this.#revoked(keyId);
      },
      // A failed lookup ends nothing: the calls still ask for their key at their next heartbeat or at the
      // end of their wait, and the next notification or move of the epoch looks again.
      () => {},
    );
  }

  /** On SQLite, where other processes cannot notify this one: looks at the `keys` epoch while keys are watched. */
  #startRevocationChecks(): void {
    if (this.#revocationTimer !== null || this.#keysEpochQuery !== null) return;
    this.#watchedEpoch = this.#db.readEpoch('keys');
    this.#revocationTimer = setInterval(() => {
      let epoch: number | null;
      try {
        epoch = this.#db.readEpoch('keys');
      } catch {
        return;
      }
      if (epoch === this.#watchedEpoch) return;
      this.#watchedEpoch = epoch;
      this.#lookUpWatched([...this.#watchers.keys()]);
    }, this.#revocationCheckMs);
    this.#revocationTimer.unref();
  }

  #stopRevocationChecks(): void {
    if (this.#revocationTimer !== null) clearInterval(this.#revocationTimer);
    this.#revocationTimer = null;
  }

  /**
   * Drops the cache when the `keys` epoch moved. Read once per turn of the event loop: every request
   * handled in a turn arrived before the turn began, so a revocation committed before a request arrived
   * is always seen, and under load one read serves the many requests of a turn.
   */
  #checkEpoch(): void {
    const epoch = this.#keysEpoch();
    if (epoch !== null) this.#observeEpoch(epoch);
  }

  #observeEpoch(epoch: number): void {
    if (epoch !== this.#epoch) {
      this.forget();
      this.#epoch = epoch;
    }
  }

  /**
   * The rights of a presented key when they are cached and fresh, without waiting for anything; undefined
   * when `authenticate` has to look the key up (or refuse it), and always on PostgreSQL, where the epoch
   * takes a query. The hot path of every poll.
   */
  cached(plain: string, connection?: object): KeyPrincipal | undefined {
    if (this.#keysEpochQuery !== null || !looksLikeKey(plain)) return undefined;
    return this.#fresh(this.#hashOn(plain, connection), this.#now());
  }

  /**
   * The key's hash, computed once per connection for the key it keeps sending: a client on a keep-alive
   * connection sends the same key with every request, and its hash was 3 % of a poll's CPU. The plain key
   * stays referenced no longer than the connection that carries it in every request anyway.
   */
  #hashOn(plain: string, connection: object | undefined): string {
    if (connection === undefined) return hashKey(plain);
    const presented = presentedBytes.subarray(0, presentedBytes.write(plain));
    const last = this.#lastKeyOf.get(connection);
    // In constant time: behind a proxy that reuses its connections to us, the key kept for a connection
    // may be another caller's, and `===` would stop at the first character that differs.
    if (
      last !== undefined &&
      last.plain.length === presented.length &&
      timingSafeEqual(last.plain, presented)
    )
      return last.hash;
    const keyHash = hashKey(plain);
    if (last !== undefined && last.plain.length === presented.length) {
      // Another key of the same length on this connection (a proxy's callers take turns): kept in place.
      presented.copy(last.plain);
      last.hash = keyHash;
    } else this.#lastKeyOf.set(connection, { plain: Buffer.from(presented), hash: keyHash });
    return keyHash;
  }

  #fresh(keyHash: string, now: number): KeyPrincipal | undefined {
    this.#checkEpoch();
    const entry = this.#entries.get(keyHash);
    if (entry && now - entry.at < this.#ttlMs) return entry.principal;
    if (entry) this.#entries.delete(keyHash);
    return undefined;
  }

  /** The rights of a presented key, or null when it is unknown or revoked. */
  async authenticate(plain: string): Promise<KeyPrincipal | null> {
    if (!looksLikeKey(plain)) return null;
    const keyHash = hashKey(plain);
    if (this.#keysEpochQuery !== null) this.#observeEpoch(await this.#keysEpochQuery());
    const now = this.#now();
    const fresh = this.#fresh(keyHash, now);
    if (fresh) return fresh;
    const generation = this.#generation;
    const principal = await principalOfHash(this.#db.db, keyHash);
    // Cached only when no revocation was heard meanwhile and the cache is listening at all.
    if (principal && generation === this.#generation && this.#unlisten) {
      this.#entries.set(keyHash, { principal, at: now });
    }
    return principal;
  }
}

/** The `keys` epoch, which every revocation moves (`revokeKey`). */
const keysEpoch = prepared<Record<string, never>, { value: number }>((db) =>
  db.selectFrom('epochs').select('value').where('name', '=', 'keys'),
);
