/**
 * In-memory adapters for channel tests (no HTTP): each run is the simulator's, behind a script that can
 * refuse a channel's creations (5xx, no credit), hold runs open for a while, and counts what reached the
 * "upstream" per channel: creations, runs in flight at once, cancels.
 */

import { MODELS } from '../src/catalog/index.ts';
import {
  type Adapter,
  type AdapterFactory,
  type Channel,
  ChannelOutOfCredit,
  PROVIDERS,
  type ProviderName,
} from '../src/generators/adapters/index.ts';
import { parseChannels } from '../src/generators/channels/index.ts';
import {
  type GenerationOutputs,
  type GenerationRequest,
  type GenerationStatus,
  GeneratorTransientError,
  type RunStart,
  Simulator,
} from '../src/generators/index.ts';
import { systemClock } from '../src/lib/clock.ts';
import type { TestApp } from './helpers.ts';

export type CreateFailure = 'transient' | 'credit';

interface Run {
  channel: string;
  inner: string;
  createdAt: number;
  live: boolean;
}

export class ScriptedUpstream {
  /** Every creation that reached a channel, in order. */
  readonly creates: { channel: string; key: string }[] = [];
  readonly cancels: string[] = [];
  /** Failures the next creations on a channel meet, in order. */
  readonly createFailures = new Map<string, CreateFailure[]>();
  /** Channels whose every creation fails with a 5xx. */
  readonly broken = new Set<string>();
  /** How long a run stays `running` before the simulator's own run is asked (milliseconds). */
  holdMs = 0;
  inFlight = 0;
  maxInFlight = 0;
  readonly #runs = new Map<string, Run>();
  readonly #byKey = new Map<string, string>();
  readonly #sim = new Simulator({ clock: systemClock, simSpeed: 1000 });

  /** An adapter factory to register under any provider. */
  readonly factory: AdapterFactory = (deps) => this.#adapter(deps.channel);

  createsOn(channel: string): number {
    return this.creates.filter((c) => c.channel === channel).length;
  }

  #end(run: Run): void {
    if (!run.live) return;
    run.live = false;
    this.inFlight -= 1;
  }

  #adapter(channel: Channel): Adapter {
    const sim = this.#sim;
    const runOf = (handle: string): Run => {
      const run = this.#runs.get(handle);
      if (!run) throw new Error(`unknown handle ${handle}`);
      return run;
    };
    return {
      ensureAvailable: (request) => sim.ensureAvailable(request),
      create: async (request: GenerationRequest, run: RunStart): Promise<string> => {
        this.creates.push({ channel: channel.name, key: run.key });
        const failure = this.broken.has(channel.name)
          ? 'transient'
          : this.createFailures.get(channel.name)?.shift();
        if (failure === 'transient')
          throw new GeneratorTransientError(`${channel.name}: upstream answered 503`);
        if (failure === 'credit') throw new ChannelOutOfCredit(`${channel.name}: account has no credit`);
        const inner = await sim.create(request, run);
        const handle = `${channel.name}-${this.#runs.size + 1}`;
        this.#runs.set(handle, { channel: channel.name, inner, createdAt: Date.now(), live: true });
        this.#byKey.set(`${channel.name}|${run.key}`, handle);
        this.inFlight += 1;
        this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
        return handle;
      },
      find: async (_request, run) => this.#byKey.get(`${channel.name}|${run.key}`) ?? null,
      status: async (handle): Promise<GenerationStatus> => {
        const run = runOf(handle);
        if (Date.now() - run.createdAt < this.holdMs)
          return { state: 'running', progress: 10, pollAfterMs: 20 };
        const status = await sim.status(run.inner);
        if (status.state === 'failed') this.#end(run);
        return status.state === 'succeeded'
          ? { state: 'succeeded', cost: { amount: 0.25, currency: 'USD' } }
          : status;
      },
      outputs: async (handle, request, dir, signal): Promise<GenerationOutputs> => {
        const run = runOf(handle);
        try {
          return await sim.outputs(run.inner, request, dir, signal);
        } finally {
          this.#end(run);
        }
      },
      cancel: async (handle) => {
        this.cancels.push(handle);
        const run = this.#runs.get(handle);
        if (run) this.#end(run);
      },
    };
  }
}

/** Checked channels from a channel file's entries; every provider is allowed (the test registers them). */
export function testChannels(entries: Record<string, unknown>[]): Channel[] {
  return parseChannels(
    { channels: entries },
    { models: MODELS.map((m) => m.key), providers: [...PROVIDERS], env: { TEST_KEY: 'k' } },
  );
}

/** The scripted upstream under every provider. */
export function scriptedAdapters(upstream: ScriptedUpstream): Partial<Record<ProviderName, AdapterFactory>> {
  return Object.fromEntries(PROVIDERS.map((p) => [p, upstream.factory]));
}

/** When the sweeper next owes the provider a cancel of the task's upstream run; null when none is owed. */
export async function upstreamCancelAt(t: TestApp, id: string): Promise<string | null> {
  const row = await t.container.db.db
    .selectFrom('tasks')
    .select('upstream_cancel_at')
    .where('id', '=', id)
    .executeTakeFirstOrThrow();
  return row.upstream_cancel_at;
}
