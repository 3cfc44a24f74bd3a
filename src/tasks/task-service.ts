import type { KeyPrincipal } from '../accounts/index.ts';
import { mayUseModel } from '../accounts/index.ts';
import {
  type LibraryRef,
  type ModeInputs,
  type ModelSpec,
  type ModeSpec,
  type PriceTable,
  priceOf,
  type Violation,
  validateSettings,
} from '../catalog/index.ts';
import { type Db, insertRow, type TasksTable } from '../db/index.ts';
import { errors } from '../errors.ts';
import {
  assertWebhookUrl,
  DEFAULT_TASK_WEBHOOK_EVENTS,
  TASK_EVENT_TYPES,
  type WebhookUrlPolicy,
} from '../events/index.ts';
import { type Generator, GeneratorUnavailable, wakeRunPayload } from '../generators/index.ts';
import type { Lang } from '../i18n/index.ts';
import { balancesOf, CURRENCY, hold } from '../ledger/index.ts';
import { type Clock, uuidv7, wordSet } from '../lib/index.ts';
import type { ModelService } from '../models/index.ts';
import type { TaskTelemetry } from '../observability/index.ts';
import { takeActivePlace } from './active-tasks.ts';
import { mustBeAffordable } from './affordability.ts';
import type { FinalTaskViews } from './final-task-views.ts';
import type { CompleteClaim, IdempotencyStore } from './idempotency.ts';
import { type TaskListQuery, type TaskPage, TaskReader, type WatchedTask } from './task-reader.ts';
import { type TaskView, toTaskView } from './task-view.ts';
import { isFinal, jobIdOf, markCanceled, TASKS_CHANNEL } from './transitions.ts';

export interface TaskRequest {
  model: string;
  settings: unknown;
  /** The task's own webhook (CONTRACT §12): not part of the settings or the price. */
  webhook_url?: string | undefined;
  /** Event types sent to `webhook_url` (default: the final ones). */
  webhook_events?: readonly string[] | undefined;
}

interface Prepared {
  model: ModelSpec;
  mode: ModeSpec;
  settings: Record<string, unknown>;
  inputs: ModeInputs;
  amountMinor: number;
  /** The model's limit of unfinished tasks per account, read with its availability. */
  maxActive: number;
}

/** A violation's text led by its field, once: some texts name the field themselves already. */
function named(field: string, text: string): string {
  if (text.startsWith(`${field} `) || text.startsWith(`${field}:`)) return text;
  const bare = field.replace(/^settings\./, '');
  if (text.startsWith(`${bare}:`)) return `${field}${text.slice(bare.length)}`;
  return `${field}: ${text}`;
}

const both = (violations: readonly Violation[]): { en: string; ru: string } => ({
  en: violations.map((v) => named(v.field, v.en)).join('; '),
  ru: violations.map((v) => named(v.field, v.ru)).join('; '),
});

export interface TaskServiceDeps {
  db: Db;
  clock: Clock;
  models: ModelService;
  prices: PriceTable;
  generator: Generator;
  idempotency: IdempotencyStore;
  /** RESULT_RETENTION: a canceled task's folder is removed this long after the cancel (markCanceled). */
  resultRetentionMs: number;
  /**
   * Library items the settings name, refused before any hold with the library's code (CONTRACT §7);
   * returns their public data by id.
   */
  resolveReferences(
    accountId: string,
    refs: readonly LibraryRef[],
  ): Promise<Record<string, Record<string, unknown>>>;
  /**
   * Probes the files named by URL settings (CONTRACT §6), downloads counted against the principal's
   * account; artifact links name only tasks the principal may read.
   */
  resolveInputs(
    principal: Pick<KeyPrincipal, 'accountId' | 'models'>,
    mode: ModeSpec,
    settings: Readonly<Record<string, unknown>>,
  ): Promise<ModeInputs>;
  /** Told after a task is committed, so an in-process worker picks it up at once. */
  onTaskQueued?: () => void;
  /** Views of final tasks kept for reads and polls, per process. */
  finalViews: FinalTaskViews;
  /** Which addresses a task's `webhook_url` may name. */
  webhooks: WebhookUrlPolicy;
  /** Told of acceptances and cancels once committed: a log line and the task series (CONTRACT §15). */
  telemetry?: Pick<TaskTelemetry, 'transition'>;
}

/** Accepting, pricing and canceling tasks (reference "General", CONTRACT §3–§5); reads go to TaskReader. */
export class TaskService {
  readonly #deps: TaskServiceDeps;
  readonly #reader: TaskReader;

  constructor(deps: TaskServiceDeps) {
    this.#deps = deps;
    this.#reader = new TaskReader(deps);
  }

  /**
   * Everything decided before money: model, key rights, availability, settings, inputs, price. With
   * `forCreation`, what the hold would refuse anyway is refused before any linked file is downloaded.
   */
  async #prepare(principal: KeyPrincipal, request: TaskRequest, forCreation = false): Promise<Prepared> {
    const model = mustBeUsableModel(this.#deps.models, principal, request.model);
    const state = await this.#deps.models.state(model.key);
    if (!state.available) throw errors.modelUnavailable(model.key);
    const checked = validateSettings(model, request.settings);
    if (!checked.ok) {
      throw checked.code === 'unknown_setting'
        ? errors.unknownSetting(both(checked.violations))
        : errors.invalidSettings(both(checked.violations));
    }
    const refs = checked.mode.references?.(checked.settings) ?? [];
    const records = refs.length > 0 ? await this.#deps.resolveReferences(principal.accountId, refs) : {};
    if (forCreation && hasLinks(checked.mode, checked.settings)) {
      // Input files only add to a price: without them it is the cheapest these settings can cost.
      const floorMinor = priceOf(
        model,
        checked.mode,
        checked.settings,
        { files: [], records },
        this.#deps.prices,
      );
      await mustBeAffordable(this.#deps.db.db, principal, {
        model: model.key,
        floorMinor,
        maxActive: state.maxActive,
        now: this.#deps.clock.now(),
      });
    }
    const inputs: ModeInputs = {
      ...(await this.#deps.resolveInputs(principal, checked.mode, checked.settings)),
      records,
    };
    const inputViolations = checked.mode.checkInputs?.(checked.settings, inputs) ?? [];
    if (inputViolations.length > 0) {
      throw errors.invalidSettings(
        both(inputViolations.map((v) => ({ ...v, field: `settings.${v.field}` }))),
      );
    }
    const amountMinor = priceOf(model, checked.mode, checked.settings, inputs, this.#deps.prices);
    return {
      model,
      mode: checked.mode,
      settings: checked.settings,
      inputs,
      amountMinor,
      maxActive: state.maxActive,
    };
  }

  /**
   * POST /v1/price: the amount a task would hold, without holding anything. The body is the creation's
   * (reference), so what a creation refuses in it is refused here too, the webhook fields included.
   */
  async price(
    principal: KeyPrincipal,
    request: TaskRequest,
  ): Promise<{ amount_minor: number; currency: string; available_minor: number }> {
    mustBeUsableModel(this.#deps.models, principal, request.model);
    await this.#webhookOf(request);
    const prepared = await this.#prepare(principal, request);
    const balances = await balancesOf(this.#deps.db.db, principal.accountId);
    return {
      amount_minor: prepared.amountMinor,
      currency: CURRENCY,
      available_minor: balances?.availableMinor ?? 0,
    };
  }

  /**
   * POST /v1/tasks. The limit checks, the hold, the task row and its job are one transaction, so
   * concurrent creations can never overspend, exceed a daily limit or the active-task limit.
   */
  async create(
    principal: KeyPrincipal,
    request: TaskRequest,
    idempotencyKey: string | null,
    lang: Lang,
    /**
     * Seconds the answer will wait for the task (`Prefer: wait=N`), 0 for none. Under an Idempotency-Key
     * the code of such an answer is known only after the wait: the caller records it with
     * `answeredAfterWait`, and a replay meanwhile is 409 request_in_progress.
     */
    waitSeconds = 0,
  ): Promise<{ status: number; task: TaskView; replayed: boolean }> {
    // Before the key is looked at: a replay must never show a restricted key a task of another model.
    mustBeUsableModel(this.#deps.models, principal, request.model);
    return this.#deps.idempotency.run<{ status: number; task: TaskView; replayed: boolean }>(
      {
        accountId: principal.accountId,
        key: idempotencyKey,
        scope: 'POST /v1/tasks',
        body: {
          model: request.model,
          settings: request.settings,
          // Only when given, so the hashes of requests without a webhook stay what they were.
          ...(request.webhook_url === undefined ? {} : { webhook_url: request.webhook_url }),
          // A set: the order of the events and their repeats change nothing (the task keeps each once).
          ...(request.webhook_events === undefined
            ? {}
            : { webhook_events: wordSet(request.webhook_events) }),
        },
      },
      {
        replay: async (taskId, status) => ({
          status,
          task: await this.get(principal, taskId, lang),
          replayed: true,
        }),
        create: async (complete) => {
          const webhook = await this.#webhookOf(request);
          const prepared = await this.#prepare(principal, request, true);
          try {
            await this.#deps.generator.ensureAvailable({
              model: prepared.model.key,
              settings: prepared.settings,
            });
          } catch (error) {
            if (error instanceof GeneratorUnavailable) throw errors.sgUnavailable();
            throw error;
          }
          const row = await this.#insert(principal, prepared, webhook, complete, waitSeconds);
          this.#deps.telemetry?.transition({
            taskId: row.id,
            accountId: row.account_id,
            model: row.model,
            status: 'queued',
          });
          this.#deps.onTaskQueued?.();
          // The task as it was accepted: a worker may already be running it, but the answer to the
          // creation is the accepted (queued) task, never a later read.
          return { status: 202, task: toTaskView(row, [], lang, this.#deps.clock.now()), replayed: false };
        },
      },
    );
  }

  /**
   * A creation under `idempotencyKey` that waited (`create`'s `waitSeconds`) was answered with `status`: its
   * replays answer with the same code from now on (CONTRACT §4).
   */
  answeredAfterWait(
    principal: KeyPrincipal,
    idempotencyKey: string,
    taskId: string,
    status: number,
  ): Promise<void> {
    return this.#deps.idempotency.answered(principal.accountId, idempotencyKey, taskId, status);
  }

  /** The task's own webhook, checked before anything else is (CONTRACT §12); null without one. */
  async #webhookOf(request: TaskRequest): Promise<{ url: string; events: readonly string[] } | null> {
    if (request.webhook_url === undefined) {
      if (request.webhook_events !== undefined)
        throw errors.invalidRequest({
          en: 'webhook_events: needs webhook_url.',
          ru: 'webhook_events: нужен webhook_url.',
        });
      return null;
    }
    await assertWebhookUrl(request.webhook_url, 'webhook_url', this.#deps.webhooks);
    const events = request.webhook_events ?? DEFAULT_TASK_WEBHOOK_EVENTS;
    // In the catalog's order, each once, so equal requests store equal rows. The URL as its parser reads
    // it (as an endpoint's): spaces around the address are no part of it, nor of the delivery log's url.
    return {
      url: request.webhook_url.trim(),
      events: TASK_EVENT_TYPES.filter((type) => events.includes(type)),
    };
  }

  async #insert(
    principal: KeyPrincipal,
    prepared: Prepared,
    webhook: { url: string; events: readonly string[] } | null,
    completeClaim: CompleteClaim | null,
    waitSeconds: number,
  ): Promise<TasksTable> {
    const { db, dialect } = this.#deps.db;
    const now = this.#deps.clock.now();
    const taskId = uuidv7(now.getTime());
    const row: TasksTable = {
      id: taskId,
      account_id: principal.accountId,
      key_id: principal.keyId,
      model: prepared.model.key,
      mode: prepared.mode.name,
      status: 'queued',
      settings: JSON.stringify(prepared.settings),
      inputs: JSON.stringify(prepared.inputs),
      price_minor: prepared.amountMinor,
      currency: CURRENCY,
      progress: 0,
      caption: null,
      texts: null,
      artifact_views: null,
      error_code: null,
      error_message: null,
      created_at: now.toISOString(),
      started_at: null,
      finished_at: null,
      files_expire_at: null,
      files_expired: 0,
      provider_ref: null,
      run_key: null,
      upstream_cancel_at: null,
      channel: null,
      avoid_channel: null,
      upstream_cost: null,
      revision: 0,
      webhook_url: webhook?.url ?? null,
      webhook_events: webhook === null ? null : JSON.stringify(webhook.events),
    };
    // Concurrent creations share one commit on SQLite (dialect.groupCommit), each in its own savepoint.
    await dialect.groupCommit(db, async (tx) => {
      // The writes that decide nothing come first and the account's lock last, so concurrent creations of
      // one account wait for each other only over the money and limit decisions (PostgreSQL; SQLite's
      // transactions run one at a time anyway).
      await insertRow(tx, 'tasks', row);
      await insertRow(tx, 'jobs', {
        id: jobIdOf(taskId),
        task_id: taskId,
        run_at: now.toISOString(),
        locked_by: null,
        locked_until: null,
        attempts: 0,
      });
      if (waitSeconds > 0) {
        // Answered after the wait, and recorded then; a little past it, a replay takes the creation's 202.
        await completeClaim?.(tx, null, taskId, new Date(now.getTime() + (waitSeconds + 10) * 1000));
      } else {
        await completeClaim?.(tx, 202, taskId);
      }
      await dialect.notify(tx, TASKS_CHANNEL);
      await dialect.lockAccount(tx, principal.accountId);
      await takeActivePlace(tx, principal.accountId, prepared.model.key, prepared.maxActive);
      await hold(tx, {
        accountId: principal.accountId,
        keyId: principal.keyId,
        taskId,
        amountMinor: prepared.amountMinor,
        // Timed once the lock is taken, not when the request began: a creation that waited for it behind a
        // credit or a release it then spends would otherwise come before that money in the ledger.
        at: this.#deps.clock.now(),
        keyLimitMinor: principal.dailyLimitMinor,
      });
    });
    return row;
  }

  /** GET /v1/tasks/{id}; another account's task is 404 like a missing one. */
  get(principal: KeyPrincipal, taskId: string, lang: Lang): Promise<TaskView> {
    return this.#reader.get(principal, taskId, lang);
  }

  /** GET /v1/tasks/{id} as JSON text (TaskReader.poll). */
  poll(principal: KeyPrincipal, taskId: string, lang: Lang): Promise<{ json: string; final: boolean }> {
    return this.#reader.poll(principal, taskId, lang);
  }

  /** The task with its `revision`, for waiting calls and event streams (TaskReader.watchState). */
  watchState(principal: KeyPrincipal, taskId: string, lang: Lang): Promise<WatchedTask> {
    return this.#reader.watchState(principal, taskId, lang);
  }

  /** GET /v1/tasks (TaskReader.list). */
  async list(principal: KeyPrincipal, query: TaskListQuery, lang: Lang): Promise<TaskPage> {
    // An unknown model key is 404 model_not_found (reference), not an empty page that hides a typo. A
    // model the key may not use lists nothing, as its tasks are not the key's to see.
    if (query.model !== undefined && !this.#deps.models.find(query.model))
      throw errors.modelNotFound(query.model);
    return this.#reader.list(principal, query, lang);
  }

  /** POST /v1/tasks/{id}/cancel: queued or running → canceled with its hold released; final → 409. */
  async cancel(principal: KeyPrincipal, taskId: string, lang: Lang): Promise<TaskView> {
    const { db, dialect } = this.#deps.db;
    const model = await dialect.transaction(db, async (tx) => {
      const row = await tx
        .selectFrom('tasks')
        .select(['status', 'model', 'run_key'])
        .where('id', '=', taskId)
        .where('account_id', '=', principal.accountId)
        .executeTakeFirst();
      if (!row || !mayUseModel(principal, row.model)) throw errors.taskNotFound(taskId);
      if (isFinal(row.status)) throw errors.taskNotCancelable(row.status);
      // The read above takes no lock on PostgreSQL: a completion may commit between it and the update,
      // whose condition then matches nothing. That is a final task too (CONTRACT §3: 409).
      const at = this.#deps.clock.now();
      if (!(await markCanceled(tx, taskId, at, this.#deps.resultRetentionMs))) {
        const now = await tx
          .selectFrom('tasks')
          .select(['status'])
          .where('id', '=', taskId)
          .executeTakeFirst();
        throw errors.taskNotCancelable(now?.status ?? row.status);
      }
      // The run, if it sleeps between two status reads in some worker, reads its task now and cancels
      // the upstream task at once, not at its next read (a queued Seedance task is deleted only while queued).
      if (row.run_key !== null) await dialect.notify(tx, TASKS_CHANNEL, wakeRunPayload(row.run_key));
      return row.model;
    });
    this.#deps.telemetry?.transition({ taskId, accountId: principal.accountId, model, status: 'canceled' });
    return this.get(principal, taskId, lang);
  }
}

/** True when the settings name a file in a field the mode probes (a download may be needed). */
function hasLinks(mode: ModeSpec, settings: Readonly<Record<string, unknown>>): boolean {
  return Object.keys(mode.inputRules ?? {}).some((field) => {
    const value = settings[field];
    return typeof value === 'string' || (Array.isArray(value) && value.length > 0);
  });
}

/** The model named by a request, when it exists and the key may use it: 404, then 403 (decisions.md). */
function mustBeUsableModel(models: ModelService, principal: KeyPrincipal, key: string): ModelSpec {
  const model = models.find(key);
  if (!model) throw errors.modelNotFound(key);
  if (!mayUseModel(principal, model.key)) throw errors.modelNotAllowedForKey(model.key);
  return model;
}
