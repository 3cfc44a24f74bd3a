/**
 * The Generator port over the channels of GENERATORS_FILE (CONTRACT §11). Each channel has its own
 * adapter; a run's handle carries its channel (`ch:<channel>:<adapter handle>`), so status, outputs and
 * cancel reach the same channel after any restart. Models without a channel run on the default generator
 * (the simulator) with its handles unchanged. The worker asks the router where a run goes (`place`) in
 * the transaction that moves the task to running, and tells it how runs ended (`record`).
 */
import type { FastifyBaseLogger } from 'fastify';
import type { Db, Tx } from '../../db/index.ts';
import { errors } from '../../errors.ts';
import type { Clock } from '../../lib/index.ts';
import type {
  Adapter,
  AdapterDeps,
  AdapterFactory,
  Channel,
  ChannelOutOfCredit,
  ProviderName,
} from '../adapters/types.ts';
import {
  GenerationError,
  type GenerationOutputs,
  type GenerationRequest,
  type GenerationStatus,
  type Generator,
  GeneratorUnavailable,
  type RunStart,
  type UpstreamCost,
} from '../generator.ts';
import type { LibraryGenerator } from '../library.ts';
import { channelLibrary } from './channel-library.ts';
import { type ChannelOutcome, ChannelStates, type ChannelView } from './channel-states.ts';

const HANDLE_PREFIX = 'ch:';

/** Where a new run goes: the default generator, a channel (its slot taken), or nowhere yet. */
export type Placement = { kind: 'default' } | { kind: 'channel'; channel: string } | { kind: 'wait' };

/** What the worker needs from the channels besides the Generator port. */
export interface RunPlacement {
  /** In the transaction that moves the task to running: where its run goes (CONTRACT §11 choice). */
  /**
   * `channel`: the run must go there (the task names library records made at that channel); no free slot
   * there is `wait`, never another channel.
   */
  place(tx: Tx, task: { model: string; avoid: string | null; channel?: string | null }): Promise<Placement>;
  /**
   * False when `place` would answer `default` without a look at the database: the model has no channel
   * and the task names none. Such a run takes no slot, so its move to running needs no `place`.
   */
  needsPlace(task: { model: string; channel?: string | null }): boolean;
  /** The channel's run limit from upstream creation, or null for the default generator (milliseconds). */
  timeoutMs(channel: string | null): number | null;
  /** How a run on the channel ended. */
  record(channel: string, outcome: ChannelOutcome): Promise<void>;
}

/** A task's run as the operator sees it: where it ran and what the provider charged. */
export interface RunView {
  task_id: string;
  status: string;
  channel: string | null;
  /** The run's handle at its generator (`ch:<channel>:<upstream id>` on a channel). */
  upstream_ref: string | null;
  upstream_cost: UpstreamCost | null;
}

export interface ChannelRouterDeps {
  db: Db;
  clock: Clock;
  channels: readonly Channel[];
  /** Adapter factory per provider (the registry). */
  factories: Partial<Record<ProviderName, AdapterFactory>>;
  /** The real AdapterDeps of a channel: its HTTP client, downloads and callbacks. */
  adapterDeps(channel: Channel): AdapterDeps;
  /** Runs every model without a channel. */
  fallback: Generator;
  /** Source of randomness for the weighted choice. (Default: Math.random) */
  random?: () => number;
  /** Where a channel state that could not be written is told. (Default: nowhere) */
  log?: Pick<FastifyBaseLogger, 'warn'>;
}

export class ChannelRouter implements Generator, RunPlacement {
  readonly #db: Db;
  readonly #channels: readonly Channel[];
  readonly #fallback: Generator;
  readonly #states: ChannelStates;
  readonly #adapters = new Map<string, Adapter>();
  /** Each channel's library side, guarded so a "no credit" answer disables the channel (channel-library.ts). */
  readonly #libraries = new Map<string, LibraryGenerator>();
  readonly #log: Pick<FastifyBaseLogger, 'warn'> | null;

  constructor(deps: ChannelRouterDeps) {
    this.#db = deps.db;
    this.#channels = deps.channels;
    this.#fallback = deps.fallback;
    this.#log = deps.log ?? null;
    this.#states = new ChannelStates({
      db: deps.db,
      clock: deps.clock,
      ...(deps.random ? { random: deps.random } : {}),
    });
    for (const channel of deps.channels) {
      const factory = deps.factories[channel.provider];
      // The channel file was checked against the registry; a gap here is a wiring bug.
      if (!factory) throw new Error(`no adapter for provider ${channel.provider} (channel ${channel.name})`);
      const adapter = factory(deps.adapterDeps(channel));
      this.#adapters.set(channel.name, adapter);
      if (adapter.library)
        this.#libraries.set(
          channel.name,
          channelLibrary(adapter.library, (error) => this.#outOfCredit(channel.name, error)),
        );
    }
  }

  /** Creates the state rows of new channels; call once before the worker starts. */
  async start(): Promise<void> {
    await this.#states.sync(this.#channels);
  }

  /** The channels that serve `model`, in file order. */
  channelsOf(model: string): Channel[] {
    return this.#channels.filter((c) => c.models.includes(model));
  }

  /**
   * The adapter of a channel, or undefined for an unknown name. Its `library` is the adapter's own: the
   * services reach library sides through `libraryOf`, `recordsAt` and `libraryAt`, which disable a channel
   * out of credit.
   */
  adapterOf(channel: string): Adapter | undefined {
    return this.#adapters.get(channel);
  }

  /**
   * The library side (helpers, records) of `model`'s channels: the first usable channel, by priority,
   * whose adapter has one. Null when no channel of the model has a library side (the simulator serves
   * it); GeneratorUnavailable when every such channel is disabled or open.
   */
  async libraryOf(model: string): Promise<LibraryGenerator | null> {
    return (await this.#firstLibrary(model))?.library ?? null;
  }

  /**
   * The side that keeps `model`'s library records (CONTRACT §11): its provider's where a channel has one;
   * null when the model has no channel or a simulator channel (the simulator keeps them);
   * GeneratorUnavailable when only channels without a library side serve it (a Cog-only model: 503).
   */
  async recordsOf(model: string): Promise<LibraryGenerator | null> {
    return (await this.recordsAt(model))?.library ?? null;
  }

  /**
   * Where a new record of `model` is made, as `recordsOf` decides, with the channel's name: the record
   * keeps it, for every later step of the record goes to the same channel (`libraryAt`).
   */
  async recordsAt(model: string): Promise<{ channel: string; library: LibraryGenerator } | null> {
    const first = await this.#firstLibrary(model);
    if (first !== null) return first;
    const channels = this.channelsOf(model);
    if (channels.length === 0 || channels.some((c) => c.provider === 'simulator')) return null;
    throw new GeneratorUnavailable(`no channel of ${model} keeps library records`);
  }

  /**
   * The library side of the channel that made a record: only there does its upstream id exist, so no
   * other channel stands in. GeneratorUnavailable when the channel is disabled, open or gone from the file.
   */
  async libraryAt(name: string): Promise<LibraryGenerator> {
    const channel = this.#channels.find((c) => c.name === name);
    const library = this.#libraries.get(name);
    if (!channel || !library) throw new GeneratorUnavailable(`channel ${name} is no longer configured`);
    if ((await this.#states.usable([channel])).length === 0) {
      throw new GeneratorUnavailable(`channel ${name} is disabled or open`);
    }
    return library;
  }

  async #firstLibrary(model: string): Promise<{ channel: string; library: LibraryGenerator } | null> {
    const withLibrary = this.channelsOf(model).filter((c) => this.#libraries.has(c.name));
    if (withLibrary.length === 0) return null;
    const usable = (await this.#states.usable(withLibrary)).sort((a, b) => a.priority - b.priority);
    const first = usable[0];
    if (!first) throw new GeneratorUnavailable(`every channel of ${model} is disabled or open`);
    return { channel: first.name, library: this.#libraries.get(first.name) as LibraryGenerator };
  }

  /**
   * A library or helper call heard "no credit" for the channel's own account: the channel is disabled as a
   * task run's out_of_credit disables it (CONTRACT §11). A failure to write that does not change the
   * caller's answer (503); the next call that hears it tries again.
   */
  async #outOfCredit(channel: string, error: ChannelOutOfCredit): Promise<void> {
    await this.#states
      .record(channel, { kind: 'out_of_credit', error: error.message })
      .catch((cause: unknown) => {
        this.#log?.warn({ err: cause, channel }, 'disabling a channel out of credit failed');
      });
  }

  async ensureAvailable(
    request: { model: string; settings: Readonly<Record<string, unknown>> },
    signal?: AbortSignal,
  ): Promise<void> {
    const channels = this.channelsOf(request.model);
    if (channels.length === 0) return this.#fallback.ensureAvailable(request, signal);
    const usable = (await this.#states.usable(channels)).sort((a, b) => a.priority - b.priority);
    let last = new GeneratorUnavailable(`every channel of ${request.model} is disabled or open`);
    // One usable channel that can take the request is enough. Only an adapter's own GeneratorUnavailable
    // counts against a channel here; any other failure of its check (a timeout, a 5xx) cannot tell, so
    // the task is accepted and the worker's retries deal with the channel.
    for (const channel of usable) {
      try {
        return await (this.#adapters.get(channel.name) as Adapter).ensureAvailable(request, signal);
      } catch (error) {
        if (!(error instanceof GeneratorUnavailable)) return;
        last = error;
      }
    }
    throw last;
  }

  async create(request: GenerationRequest, run: RunStart, signal: AbortSignal): Promise<string> {
    const channel = request.channel;
    if (!channel) return this.#fallback.create(request, run, signal);
    return encode(channel, await this.#adapter(channel).create(request, run, signal));
  }

  isCreateIdempotent(request: GenerationRequest): boolean {
    const channel = request.channel;
    if (!channel) return this.#fallback.isCreateIdempotent?.(request) ?? false;
    return this.#adapters.get(channel)?.isCreateIdempotent?.(request) ?? false;
  }

  async find(request: GenerationRequest, run: RunStart, signal: AbortSignal): Promise<string | null> {
    const channel = request.channel;
    if (!channel) return this.#fallback.find(request, run, signal);
    const inner = await this.#adapter(channel).find(request, run, signal);
    return inner === null ? null : encode(channel, inner);
  }

  status(handle: string, request: GenerationRequest, signal: AbortSignal): Promise<GenerationStatus> {
    const parts = decode(handle);
    if (!parts) return this.#fallback.status(handle, request, signal);
    return this.#adapter(parts.channel).status(parts.inner, request, signal);
  }

  outputs(
    handle: string,
    request: GenerationRequest,
    dir: string,
    signal: AbortSignal,
  ): Promise<GenerationOutputs> {
    const parts = decode(handle);
    if (!parts) return this.#fallback.outputs(handle, request, dir, signal);
    return this.#adapter(parts.channel).outputs(parts.inner, request, dir, signal);
  }

  async cancel(handle: string, signal: AbortSignal): Promise<void> {
    const parts = decode(handle);
    if (!parts) return this.#fallback.cancel(handle, signal);
    // A channel removed from the file since: nothing left to reach.
    await this.#adapters.get(parts.channel)?.cancel(parts.inner, signal);
  }

  async release(handle: string, signal: AbortSignal): Promise<void> {
    const parts = decode(handle);
    if (!parts) return this.#fallback.release?.(handle, signal);
    await this.#adapters.get(parts.channel)?.release?.(parts.inner, signal);
  }

  async place(
    tx: Tx,
    task: { model: string; avoid: string | null; channel?: string | null },
  ): Promise<Placement> {
    const channels = this.channelsOf(task.model);
    const pinned = task.channel ?? null;
    if (pinned !== null) {
      const only = channels.find((c) => c.name === pinned);
      // The records' upstream ids exist only in that channel's account: nowhere else can run the task.
      if (!only) {
        throw new GenerationError('input_unavailable', `channel ${pinned} of the library items is gone`);
      }
      const chosen = await this.#states.take(tx, [only], null);
      return chosen ? { kind: 'channel', channel: chosen.name } : { kind: 'wait' };
    }
    if (channels.length === 0) return { kind: 'default' };
    const chosen = await this.#states.take(tx, channels, task.avoid);
    return chosen ? { kind: 'channel', channel: chosen.name } : { kind: 'wait' };
  }

  needsPlace(task: { model: string; channel?: string | null }): boolean {
    return (task.channel ?? null) !== null || this.channelsOf(task.model).length > 0;
  }

  timeoutMs(channel: string | null): number | null {
    if (channel === null) return null;
    return this.#channels.find((c) => c.name === channel)?.timeoutMs ?? null;
  }

  record(channel: string, outcome: ChannelOutcome): Promise<void> {
    return this.#states.record(channel, outcome);
  }

  /** Every channel as the operator sees it (CONTRACT §11). */
  views(): Promise<ChannelView[]> {
    return this.#states.views(this.#channels);
  }

  /** Switches a channel on or off; 404 channel_not_found for a name not in the file. */
  async setEnabled(name: string, enabled: boolean): Promise<ChannelView> {
    const channel = this.#channels.find((c) => c.name === name);
    if (!channel) throw errors.channelNotFound(name);
    await this.#states.setEnabled(name, enabled);
    return (await this.#states.views([channel]))[0] as ChannelView;
  }

  /** The run of a task for the operator; 404 task_not_found for an unknown id. */
  async runOf(taskId: string): Promise<RunView> {
    const task = await this.#db.db
      .selectFrom('tasks')
      .select(['id', 'status', 'channel', 'provider_ref', 'upstream_cost'])
      .where('id', '=', taskId)
      .executeTakeFirst();
    if (!task) throw errors.taskNotFound(taskId);
    return {
      task_id: task.id,
      status: task.status,
      channel: task.channel,
      upstream_ref: task.provider_ref,
      upstream_cost: task.upstream_cost === null ? null : (JSON.parse(task.upstream_cost) as UpstreamCost),
    };
  }

  #adapter(channel: string): Adapter {
    const adapter = this.#adapters.get(channel);
    // The run's channel left the file: its run cannot be reached any more.
    if (!adapter)
      throw new GenerationError('generation_failed', `channel ${channel} is no longer configured`);
    return adapter;
  }
}

function encode(channel: string, inner: string): string {
  return `${HANDLE_PREFIX}${channel}:${inner}`;
}

/** The channel and adapter handle of a router handle; null for a handle of the default generator. */
function decode(handle: string): { channel: string; inner: string } | null {
  if (!handle.startsWith(HANDLE_PREFIX)) return null;
  const rest = handle.slice(HANDLE_PREFIX.length);
  const colon = rest.indexOf(':');
  if (colon <= 0) return null;
  return { channel: rest.slice(0, colon), inner: rest.slice(colon + 1) };
}
