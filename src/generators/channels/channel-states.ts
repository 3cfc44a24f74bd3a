/**
 * The shared state of every channel (CONTRACT §11), in the database so all workers and API processes see
 * one circuit, one switch and one slot count per channel. A slot is a running task on the channel: it is
 * taken in the transaction that moves the task to running, under a lock on the channel's state rows
 * (PostgreSQL `for update`; SQLite's BEGIN IMMEDIATE already serialises writers), so `max_concurrency`
 * holds across processes without a separate counter that a crash could leave wrong.
 */
import type { CircuitState, Db, Tx } from '../../db/index.ts';
import type { Clock } from '../../lib/index.ts';
import { scrubSecrets } from '../../observability/index.ts';
import type { Channel } from '../adapters/types.ts';

/** Transient failures in a row that open a channel's circuit. */
export const CIRCUIT_FAILURES = 5;
/** How long an open circuit refuses runs before one trial run (milliseconds). */
export const CIRCUIT_OPEN_MS = 30_000;
/** Longest `last_error` kept. */
const MAX_ERROR_CHARS = 500;

/** How a run on a channel ended, as far as the channel's health is concerned. */
export type ChannelOutcome =
  | { kind: 'succeeded' }
  /** The provider answered with a final refusal or failure: the channel works. */
  | { kind: 'refused'; error: string }
  | { kind: 'transient'; error: string }
  | { kind: 'out_of_credit'; error: string };

/** One channel as the operator sees it (`GET /admin/v1/channels`). */
export interface ChannelView {
  name: string;
  provider: string;
  models: string[];
  enabled: boolean;
  state: CircuitState;
  in_flight: number;
  max_concurrency: number;
  succeeded: number;
  failed: number;
  last_error: string | null;
}

interface StateRow {
  name: string;
  enabled: number;
  circuit: CircuitState;
  consecutive_failures: number;
  opened_at: string | null;
}

export class ChannelStates {
  readonly #db: Db;
  readonly #clock: Clock;
  readonly #random: () => number;

  constructor(deps: { db: Db; clock: Clock; random?: () => number }) {
    this.#db = deps.db;
    this.#clock = deps.clock;
    this.#random = deps.random ?? Math.random;
  }

  /** Adds a state row for every channel that has none yet; existing rows keep their state. */
  async sync(channels: readonly Channel[]): Promise<void> {
    if (channels.length === 0) return;
    const at = this.#clock.now().toISOString();
    await this.#db.db
      .insertInto('channel_states')
      .values(
        channels.map((c) => ({
          name: c.name,
          enabled: 1,
          circuit: 'closed' as const,
          consecutive_failures: 0,
          succeeded: 0,
          failed: 0,
          updated_at: at,
        })),
      )
      .onConflict((oc) => oc.column('name').doNothing())
      .execute();
  }

  /**
   * Inside the caller's transaction: the channel for a new run among `candidates`, its slot taken by the
   * caller's move to running; null when none is enabled, closed (or due for its trial) and has a free slot.
   * Lowest priority first, another channel than `avoid` where there is one, random by weight among equals.
   */
  async take(tx: Tx, candidates: readonly Channel[], avoid: string | null): Promise<Channel | null> {
    if (candidates.length === 0) return null;
    const names = candidates.map((c) => c.name).sort();
    let rows = tx
      .selectFrom('channel_states')
      .select(['name', 'enabled', 'circuit', 'consecutive_failures', 'opened_at'])
      .where('name', 'in', names)
      .orderBy('name');
    // PostgreSQL: lock the rows so two workers never count the same free slot; SQLite's BEGIN IMMEDIATE
    // already made this transaction the only writer (and has no row locks).
    if (this.#db.dialect.supportsSkipLocked) rows = rows.forUpdate();
    const states = new Map((await rows.execute()).map((r) => [r.name, r]));
    const inFlight = await this.#inFlight(tx, names);
    const now = this.#clock.now().getTime();
    const open = candidates.filter((c) => {
      const state = states.get(c.name);
      const running = inFlight.get(c.name) ?? 0;
      return state !== undefined && running < c.maxConcurrency && isTakeable(state, running, now);
    });
    const elsewhere = open.filter((c) => c.name !== avoid);
    const chosen = pickByPriorityAndWeight(elsewhere.length > 0 ? elsewhere : open, this.#random);
    if (chosen === null) return null;
    if (states.get(chosen.name)?.circuit === 'open') {
      // This run is the trial: until it ends, no other run starts on the channel.
      await tx
        .updateTable('channel_states')
        .set({ circuit: 'half_open', updated_at: new Date(now).toISOString() })
        .where('name', '=', chosen.name)
        .execute();
    }
    return chosen;
  }

  /** Channels that may take a run soon: enabled and not open (or due for the trial). For acceptance. */
  async usable(channels: readonly Channel[]): Promise<Channel[]> {
    if (channels.length === 0) return [];
    const rows = await this.#db.db
      .selectFrom('channel_states')
      .select(['name', 'enabled', 'circuit', 'consecutive_failures', 'opened_at'])
      .where(
        'name',
        'in',
        channels.map((c) => c.name),
      )
      .execute();
    const states = new Map(rows.map((r) => [r.name, r]));
    const now = this.#clock.now().getTime();
    return channels.filter((c) => {
      const s = states.get(c.name);
      return s !== undefined && s.enabled === 1 && !(s.circuit === 'open' && !trialDue(s, now));
    });
  }

  /** Records how a run on `name` ended: counters, the circuit, and the switch for a channel out of credit. */
  async record(name: string, outcome: ChannelOutcome): Promise<void> {
    const db = this.#db;
    const at = this.#clock.now().toISOString();
    await db.dialect.transaction(db.db, async (tx) => {
      let query = tx
        .selectFrom('channel_states')
        .select(['name', 'enabled', 'circuit', 'consecutive_failures', 'opened_at'])
        .where('name', '=', name);
      if (db.dialect.supportsSkipLocked) query = query.forUpdate();
      const state = await query.executeTakeFirst();
      if (!state) return;
      // A provider's error may quote the request it got, our key with it: kept and shown without it.
      const error =
        outcome.kind === 'succeeded' ? null : scrubSecrets(outcome.error).slice(0, MAX_ERROR_CHARS);
      const update = tx.updateTable('channel_states').where('name', '=', name);
      switch (outcome.kind) {
        case 'succeeded':
        case 'refused': {
          // A final answer, even a refusal, shows the channel works: the circuit closes.
          const counter = outcome.kind === 'succeeded' ? 'succeeded' : 'failed';
          await update
            .set((eb) => ({
              [counter]: eb(counter, '+', 1),
              consecutive_failures: 0,
              circuit: 'closed' as const,
              opened_at: null,
              ...(error === null ? {} : { last_error: error }),
              updated_at: at,
            }))
            .execute();
          return;
        }
        case 'transient': {
          const failures = state.consecutive_failures + 1;
          const opens = state.circuit === 'half_open' || failures >= CIRCUIT_FAILURES;
          await update
            .set((eb) => ({
              failed: eb('failed', '+', 1),
              consecutive_failures: failures,
              last_error: error,
              updated_at: at,
              ...(opens ? { circuit: 'open' as const, opened_at: at } : {}),
            }))
            .execute();
          return;
        }
        case 'out_of_credit':
          await update
            .set((eb) => ({ failed: eb('failed', '+', 1), enabled: 0, last_error: error, updated_at: at }))
            .execute();
          return;
      }
    });
  }

  /** Switches a channel on or off; a channel switched on starts with a closed circuit. */
  async setEnabled(name: string, enabled: boolean): Promise<void> {
    await this.#db.db
      .updateTable('channel_states')
      .set({
        enabled: enabled ? 1 : 0,
        updated_at: this.#clock.now().toISOString(),
        ...(enabled ? { circuit: 'closed' as const, consecutive_failures: 0, opened_at: null } : {}),
      })
      .where('name', '=', name)
      .execute();
  }

  /** The operator's view of `channels`, in their file order. */
  async views(channels: readonly Channel[]): Promise<ChannelView[]> {
    if (channels.length === 0) return [];
    const names = channels.map((c) => c.name);
    const rows = await this.#db.db
      .selectFrom('channel_states')
      .selectAll()
      .where('name', 'in', names)
      .execute();
    const states = new Map(rows.map((r) => [r.name, r]));
    const inFlight = await this.#inFlight(this.#db.db, names);
    return channels.map((c) => {
      const s = states.get(c.name);
      return {
        name: c.name,
        provider: c.provider,
        models: [...c.models],
        enabled: (s?.enabled ?? 1) === 1,
        state: s?.circuit ?? 'closed',
        in_flight: inFlight.get(c.name) ?? 0,
        max_concurrency: c.maxConcurrency,
        succeeded: s?.succeeded ?? 0,
        failed: s?.failed ?? 0,
        last_error: s?.last_error ?? null,
      };
    });
  }

  get db(): Db {
    return this.#db;
  }

  async #inFlight(tx: Tx, names: readonly string[]): Promise<Map<string, number>> {
    const rows = await tx
      .selectFrom('tasks')
      .select((eb) => ['channel', eb.fn.countAll<number | string>().as('n')])
      .where('status', '=', 'running')
      // The condition of the partial index (migration 0019), named so every engine takes it.
      .where('channel', 'is not', null)
      .where('channel', 'in', [...names])
      .groupBy('channel')
      .execute();
    return new Map(rows.map((r) => [r.channel as string, Number(r.n)]));
  }
}

function trialDue(state: StateRow, nowMs: number): boolean {
  return state.opened_at !== null && nowMs - new Date(state.opened_at).getTime() >= CIRCUIT_OPEN_MS;
}

/** Enabled, and closed, or open past its wait, or half open with its trial gone (canceled, crashed). */
function isTakeable(state: StateRow, running: number, nowMs: number): boolean {
  if (state.enabled !== 1) return false;
  if (state.circuit === 'closed') return true;
  if (state.circuit === 'open') return trialDue(state, nowMs);
  return running === 0;
}

/** The lowest priority among `channels`, then random by weight. */
export function pickByPriorityAndWeight(channels: readonly Channel[], random: () => number): Channel | null {
  if (channels.length === 0) return null;
  const best = Math.min(...channels.map((c) => c.priority));
  const tied = channels.filter((c) => c.priority === best);
  const total = tied.reduce((sum, c) => sum + c.weight, 0);
  let point = random() * total;
  for (const c of tied) {
    point -= c.weight;
    if (point < 0) return c;
  }
  return tied[tied.length - 1] ?? null;
}
