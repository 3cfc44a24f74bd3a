/**
 * Personal libraries (reference "Element library" … "Other libraries", CONTRACT §7): list, create,
 * read and delete records of any declared library, and the singing voice's verify and retry steps.
 * Creation honours Idempotency-Key (CONTRACT §4) and asks the generator before anything is stored.
 */
import type { KeyPrincipal } from '../accounts/index.ts';
import { mayUseModel } from '../accounts/index.ts';
import type { Db, Tx } from '../db/index.ts';
import { isUniqueViolation } from '../db/index.ts';
import { type ApiError, errors } from '../errors.ts';
import { holdUploads, releaseUploads } from '../files/index.ts';
import { LIBRARY_WAIT_MS, type LibraryGenerator, LibraryRejected } from '../generators/index.ts';
import { ruDecimal } from '../i18n/index.ts';
import type { Clock } from '../lib/index.ts';
import { echoed, uuidv7 } from '../lib/index.ts';
import type { ModelService } from '../models/index.ts';
import type { CompleteClaim, DownloadAllowance, IdempotencyStore } from '../tasks/index.ts';
import { askGenerator, learned } from './ask-generator.ts';
import { limitsOf, MAX_RECORDS_PER_LIBRARY } from './limits.ts';
import { stepAsker } from './polled-steps.ts';
import { recordChanged } from './record-events.ts';
import {
  findRecord,
  fromRow,
  listRecords,
  type RecordQuery,
  type StepAsker,
  settled,
  toRow,
  transition,
  viewOf,
} from './records.ts';
import { libraryPath } from './registry.ts';
import type {
  CreateContext,
  InputResolver,
  LibraryDecl,
  PendingStep,
  PolledStep,
  ResolvedInput,
  StoredRecord,
} from './types.ts';
import { deleteUpstreamCopies, UPSTREAM_DELETE_RETRY_MS, upstreamCopyOf } from './upstream-deletes.ts';

export type RecordView = Record<string, unknown>;

/** Every link of the body's URL fields (`LibraryDecl.files`), in order, with its label (`field.i`). */
function linkedUrls(decl: LibraryDecl, body: unknown): Array<{ label: string; url: string }> {
  const fields = body as Record<string, unknown>;
  return Object.keys(decl.files).flatMap((field) => {
    const value = fields[field];
    const urls = Array.isArray(value) ? value : value === undefined ? [] : [value];
    return urls.flatMap((url, i) =>
      typeof url === 'string' ? [{ label: Array.isArray(value) ? `${field}.${i}` : field, url }] : [],
    );
  });
}

/**
 * A link of the body whose upload went while the generator made the record (the caller deleted it, or the
 * sweeper removed it after its expiry): the record would keep a link that answers 404, so it is refused as
 * a link gone before the request is (tasks/inputs.ts).
 */
function goneWhileMade(link: { label: string; url: string }): ApiError {
  const shown = echoed(link.url);
  return errors.invalidRequest({
    en: `body.${link.label}: the upload at ${shown} was deleted or has expired while the record was being made; upload the file again`,
    ru: `body.${link.label}: загрузка по адресу ${shown} удалена или её срок истёк, пока создавалась запись; загрузите файл заново`,
  });
}

export interface LibraryServiceDeps {
  db: Db;
  clock: Clock;
  generator: LibraryGenerator;
  idempotency: IdempotencyStore;
  /** Probe of linked files (length, format, size); throws ApiError for files that break a rule. */
  resolveInput: InputResolver;
  /** Budgets of requests' downloads; without it each download is bounded on its own only. */
  downloads?: Pick<DownloadAllowance, 'open'>;
  /** When given, creation on a switched-off model is 503 model_unavailable. */
  models?: Pick<ModelService, 'state'>;
  /**
   * The generator that keeps a model's new records: its provider's library side at a channel where one
   * serves the model (CONTRACT §11), with the channel's name, else `generator` (channel null). May throw
   * GeneratorUnavailable (503 sg_unavailable), as for a model only Cog serves.
   * (Default: `generator` for every model)
   */
  generatorFor?(model: string): Promise<PlacedGenerator>;
  /**
   * The library side of the channel that made a record; GeneratorUnavailable (503 sg_unavailable) when
   * that channel is disabled, open or gone: no other channel knows the record.
   */
  generatorAt?(channel: string): Promise<LibraryGenerator>;
}

/** A library generator and the channel it belongs to (null: the simulator's). */
export interface PlacedGenerator {
  generator: LibraryGenerator;
  channel: string | null;
}

export class LibraryService {
  readonly #deps: LibraryServiceDeps;

  constructor(deps: LibraryServiceDeps) {
    this.#deps = deps;
  }

  get deps(): Readonly<LibraryServiceDeps> {
    return this.#deps;
  }

  /** The generator of `decl`'s new records; its refusal to serve is 503 sg_unavailable. */
  async generatorOf(decl: LibraryDecl): Promise<PlacedGenerator> {
    const pick = this.#deps.generatorFor;
    return pick
      ? askGenerator(decl.failCode, () => pick(decl.model))
      : { generator: this.#deps.generator, channel: null };
  }

  /**
   * The generator of a record's later steps: the channel that made it, never another (503 sg_unavailable
   * while it is disabled or open); records without a channel go where new records of `decl` go.
   */
  async generatorOfRecord(decl: LibraryDecl, r: StoredRecord): Promise<LibraryGenerator> {
    const channel = r.private.channel;
    const at = this.#deps.generatorAt;
    if (typeof channel === 'string' && at) return askGenerator(decl.failCode, () => at(channel));
    return (await this.generatorOf(decl)).generator;
  }

  /** Settles due steps the generator ends, on read (polled-steps.ts); tasks naming records use it too. */
  readonly askSteps: StepAsker = (r, now, signal) =>
    stepAsker((record) => this.#stepGenerator(record))(r, now, signal);

  async #stepGenerator(r: StoredRecord): Promise<LibraryGenerator> {
    const channel = r.private.channel;
    if (typeof channel === 'string' && this.#deps.generatorAt) return this.#deps.generatorAt(channel);
    return (await this.#deps.generatorFor?.(r.model))?.generator ?? this.#deps.generator;
  }

  #query(principal: KeyPrincipal, decl: LibraryDecl): RecordQuery {
    if (!mayUseModel(principal, decl.model)) throw errors.modelNotAllowedForKey(decl.model);
    return { accountId: principal.accountId, model: decl.model, library: decl.segment };
  }

  /**
   * Settles records whose pending step is due though nobody reads them, so their `library.ready` and
   * `library.failed` webhooks go out without a reader (records otherwise settle lazily on read). Returns
   * how many changed. Safe in several processes at once: a transition is conditional on the old status.
   */
  async settleDue(batch = 100): Promise<number> {
    const now = this.#deps.clock.now();
    const rows = await this.#deps.db.db
      .selectFrom('library_records')
      .selectAll()
      .where('ready_at', '<=', now.toISOString())
      .where('deleted_at', 'is', null)
      .orderBy('ready_at')
      .limit(batch)
      .execute();
    let changed = 0;
    for (const row of rows) {
      const before = fromRow(row);
      const after = await this.askSteps(settled(before, now), now);
      if (await transition(this.#deps.db, before, after)) changed += 1;
    }
    return changed;
  }

  /** GET …/{library}: `{ <segment>: [...], ...extras, limits }`, newest first (CONTRACT §7). */
  async list(principal: KeyPrincipal, decl: LibraryDecl): Promise<Record<string, unknown>> {
    const records = await listRecords(
      this.#deps.db,
      this.#query(principal, decl),
      this.#deps.clock.now(),
      this.askSteps,
    );
    return {
      [decl.segment]: records.map((r) => viewOf(decl, r)),
      ...decl.listExtras,
      limits: limitsOf(decl),
    };
  }

  /** The caller's live record; another account's, deleted or unknown: 404 record_not_found. */
  async record(principal: KeyPrincipal, decl: LibraryDecl, id: string): Promise<StoredRecord> {
    const found = await findRecord(
      this.#deps.db,
      this.#query(principal, decl),
      id,
      this.#deps.clock.now(),
      this.askSteps,
    );
    if (!found) throw errors.recordNotFound(id);
    return found;
  }

  async get(principal: KeyPrincipal, decl: LibraryDecl, id: string): Promise<RecordView> {
    return viewOf(decl, await this.record(principal, decl, id));
  }

  /**
   * DELETE …/{library}/{id}: 204; tasks already made keep their results (reference). A copy the provider
   * keeps is deleted there by the sweeper (`deleteUpstreamCopies`), owed from this same UPDATE on, and the
   * uploads the record held are released with it (they expire by their own rule from then on). Of
   * several deletes at once only the one whose UPDATE marks the record answers 204; the others 404, as
   * they would after it.
   */
  async delete(principal: KeyPrincipal, decl: LibraryDecl, id: string): Promise<void> {
    const found = await this.record(principal, decl, id);
    const now = this.#deps.clock.now().toISOString();
    const { db, dialect } = this.#deps.db;
    const marked = await dialect.transaction(db, async (tx) => {
      const result = await tx
        .updateTable('library_records')
        .set({
          deleted_at: now,
          updated_at: now,
          upstream_delete_at: upstreamCopyOf(found.private) === null ? null : now,
        })
        .where('id', '=', found.id)
        .where('deleted_at', 'is', null)
        .executeTakeFirst();
      if (Number(result.numUpdatedRows) === 0) return false;
      await releaseUploads(tx, found.id);
      return true;
    });
    if (!marked) throw errors.recordNotFound(id);
  }

  /** Deletes the provider copies of deleted records that are due (upstream-deletes.ts); run by the sweeper. */
  deleteUpstreamCopies(onGiveUp?: (recordId: string, error: unknown) => void): Promise<number> {
    const { db, clock, generatorAt } = this.#deps;
    return deleteUpstreamCopies({
      db,
      clock,
      ...(generatorAt === undefined ? {} : { generatorAt }),
      ...(onGiveUp === undefined ? {} : { onGiveUp }),
    });
  }

  /** POST …/{library}: 201 with the record; the same Idempotency-Key and body replay it. */
  async create(
    principal: KeyPrincipal,
    decl: LibraryDecl,
    body: unknown,
    idempotencyKey: string | null,
  ): Promise<{ status: number; record: RecordView; replayed: boolean }> {
    const query = this.#query(principal, decl);
    return this.#deps.idempotency.run<{ status: number; record: RecordView; replayed: boolean }>(
      {
        accountId: principal.accountId,
        key: idempotencyKey,
        scope: `POST ${libraryPath(decl)}`,
        body,
        // A creation may wait for the generator up to its timeout: the key stays locked as long.
        lockMs: LIBRARY_WAIT_MS + 60_000,
      },
      {
        replay: async (recordId, status) => ({
          status,
          record: await this.#replayed(decl, query, recordId),
          replayed: true,
        }),
        create: async (complete) => ({
          status: 201,
          record: viewOf(decl, await this.#create(decl, query, body, complete)),
          replayed: false,
        }),
      },
    );
  }

  async #create(
    decl: LibraryDecl,
    query: RecordQuery,
    body: unknown,
    complete: CompleteClaim | null,
  ): Promise<StoredRecord> {
    const { db, clock } = this.#deps;
    if (this.#deps.models && !(await this.#deps.models.state(decl.model)).available) {
      throw errors.modelUnavailable(decl.model);
    }
    // A full library is refused before the generator is asked or any link downloaded.
    if ((await this.#liveCount(db.db, query)) >= MAX_RECORDS_PER_LIBRARY) {
      throw errors.tooManyRecords(MAX_RECORDS_PER_LIBRARY);
    }
    const { generator, channel } = await this.generatorOf(decl);
    await askGenerator(decl.failCode, () => generator.ensureAvailable(body));
    const ctx: CreateContext = {
      db,
      accountId: query.accountId,
      recordId: uuidv7(clock.now().getTime()),
      resolveInput: this.#deps.resolveInput,
      generator,
      signal: AbortSignal.timeout(LIBRARY_WAIT_MS),
      inputs: await this.#linkedFiles(decl, body, query.accountId),
    };
    const plan = await decl.prepare(body, ctx);
    const taken = (): ApiError => decl.taken?.(plan) ?? errors.internal();
    if (plan.uniqueKey !== undefined && (await this.#uniqueTaken(query, plan.uniqueKey))) throw taken();
    const sentAt = clock.now();
    const created = await askGenerator(decl.failCode, () =>
      generator
        .createRecord(
          {
            model: decl.model,
            library: decl.segment,
            recordId: ctx.recordId,
            fields: body as Record<string, unknown>,
            ...(decl.learns ? { learningMs: decl.learns.typicalMs } : {}),
            ...(plan.source ? { source: plan.source } : {}),
          },
          ctx.signal,
        )
        .catch(async (error: unknown) => {
          // Not a refusal: the provider may have made the record all the same.
          if (!(error instanceof LibraryRejected))
            await this.#forsakeUnanswered(decl, query, ctx.recordId, sentAt, { generator, channel });
          throw error;
        }),
    ).catch(async (error: unknown) => {
      // A concurrent creation of the same song version may have won at the provider, which then refused
      // this one (Suno keeps one persona per track): that is the reference's 409, not a 502 to retry.
      if (plan.uniqueKey !== undefined && (await this.#uniqueTaken(query, plan.uniqueKey))) throw taken();
      throw error;
    });
    const now = clock.now();
    let status = 'ready';
    let readyAt: string | null = null;
    let next: PendingStep | undefined;
    let poll: PolledStep | undefined;
    const upstreamId = created.upstreamId;
    if (decl.learns && created.polled) {
      // Only the generator can tell how learning ends: asked from `ready_at` on (polled-steps.ts).
      status = decl.learns.initial;
      readyAt = new Date(now.getTime() + created.polled.afterMs).toISOString();
      next = { status: decl.learns.succeeds };
      const asked = created.polled.upstreamId ?? upstreamId;
      if (asked === undefined) throw errors.internal(new Error('a polled creation without an upstream id'));
      poll = { step: 'create', upstreamId: asked, pollMs: created.polled.pollMs };
    } else if (decl.learns) {
      const settles = created.settles ?? { afterMs: 0, outcome: { ok: true } };
      status = decl.learns.initial;
      readyAt = new Date(now.getTime() + settles.afterMs).toISOString();
      next = settles.outcome.ok
        ? await learned(decl, decl.learns, ctx, plan)
        : { status: 'failed', error: settles.outcome.reason };
    }
    const record: StoredRecord = {
      id: ctx.recordId,
      accountId: query.accountId,
      model: decl.model,
      library: decl.segment,
      name: plan.name,
      status,
      data: { ...plan.data, ...created.data },
      private: {
        ...plan.private,
        ...(next ? { next } : {}),
        ...(poll ? { poll } : {}),
        ...(upstreamId === undefined ? {} : { upstream_id: upstreamId }),
        // Later steps and tasks naming the record go to this channel only (CONTRACT §11).
        ...(channel === null ? {} : { channel }),
      },
      uniqueKey: plan.uniqueKey ?? null,
      error: null,
      createdAt: now.toISOString(),
      updatedAt: now.toISOString(),
      readyAt,
      deletedAt: null,
    };
    try {
      await db.dialect.transaction(db.db, async (tx) => {
        // Again under the account lock: concurrent creations that each passed the first look cannot
        // together pass the bound (PostgreSQL row lock; SQLite has one writer).
        await db.dialect.lockAccount(tx, query.accountId);
        if ((await this.#liveCount(tx, query)) >= MAX_RECORDS_PER_LIBRARY) {
          throw errors.tooManyRecords(MAX_RECORDS_PER_LIBRARY);
        }
        await tx.insertInto('library_records').values(toRow(record)).execute();
        // The uploads the body links to live as long as the record (files/upload-holds.ts).
        const links = linkedUrls(decl, body);
        const gone = await holdUploads(tx, {
          recordId: record.id,
          accountId: query.accountId,
          urls: links.map((link) => link.url),
        });
        const first = links.find((link) => gone.includes(link.url));
        // Refused in the transaction, so nothing is saved, and the provider's copy is forsaken below.
        if (first !== undefined) throw goneWhileMade(first);
        await recordChanged(tx, null, record, now);
        await complete?.(tx, 201, record.id);
      });
    } catch (error) {
      await this.#forsake(record);
      if (isUniqueViolation(error) && plan.uniqueKey !== undefined) throw taken();
      throw error;
    }
    return record;
  }

  /**
   * A record the provider made that could not be saved here (a concurrent creation took its name or song
   * version, the library filled up meanwhile): stored as deleted and owing its provider deletion, so the
   * sweeper removes the provider's copy (upstream-deletes.ts) rather than leaving the caller's pictures or
   * voice there with no record to delete them by. Best effort: the caller gets the first refusal anyway.
   */
  async #forsake(record: StoredRecord): Promise<void> {
    if (upstreamCopyOf(record.private) === null) return;
    const now = this.#deps.clock.now().toISOString();
    await this.#deps.db.db
      .insertInto('library_records')
      .values({ ...toRow(record), deleted_at: now, updated_at: now, upstream_delete_at: now })
      .execute()
      .catch(() => {});
  }

  /**
   * A creation that failed without its outcome known (the provider's answer never came, our wait ran out):
   * the provider may still have made the record (the caller's pictures) with nothing here to delete it by.
   * A deleted stand-in is stored under the record id the creation was sent with, owing its provider
   * deletion, so the sweeper finds what the channel made of it by that id and deletes it there
   * (upstream-deletes.ts); first after one retry interval, so that a creation the provider was still
   * taking when we gave up shows by then. Its `created_at` is when the creation was sent (`sentAt`), which
   * tells the channel how far back to look. Only for channels whose generator can find a creation by our
   * id. Best effort: the caller gets the first failure anyway.
   */
  async #forsakeUnanswered(
    decl: LibraryDecl,
    query: RecordQuery,
    recordId: string,
    sentAt: Date,
    placed: PlacedGenerator,
  ): Promise<void> {
    if (placed.channel === null || !placed.generator.deleteUnanswered) return;
    const now = this.#deps.clock.now();
    const record: StoredRecord = {
      id: recordId,
      accountId: query.accountId,
      model: decl.model,
      library: decl.segment,
      name: null,
      status: 'failed',
      data: {},
      private: { channel: placed.channel, unanswered: true },
      uniqueKey: null,
      error: null,
      createdAt: sentAt.toISOString(),
      updatedAt: now.toISOString(),
      readyAt: null,
      deletedAt: now.toISOString(),
    };
    const due = new Date(now.getTime() + UPSTREAM_DELETE_RETRY_MS).toISOString();
    await this.#deps.db.db
      .insertInto('library_records')
      .values({ ...toRow(record), upstream_delete_at: due })
      .execute()
      .catch(() => {});
  }

  /**
   * Probes every link of the body's URL fields at once, through the same guard and per-field rules as
   * task settings (issue 10.16): a private or metadata address, a wrong type, size or length is refused
   * before anything is created. The first refusal stops the other downloads.
   */
  async #linkedFiles(
    decl: LibraryDecl,
    body: unknown,
    accountId: string,
  ): Promise<Record<string, ResolvedInput[]>> {
    const fields = body as Record<string, unknown>;
    if (Object.keys(decl.files).every((field) => fields[field] === undefined)) return {};
    const local = new AbortController();
    const budget = (await this.#deps.downloads?.open(accountId, 'request')) ?? {
      signal: local.signal,
      abort: (reason: unknown) => local.abort(reason),
      close: async () => {},
    };
    const probe = async (field: string, url: string, label: string): Promise<ResolvedInput> => {
      const accepted = decl.files[field]!;
      const file = await this.#deps.resolveInput(url, label, accepted, budget);
      const maxSeconds = accepted.maxSeconds;
      const seconds = file.durationSeconds;
      // A length that cannot be read cannot be shown to be within the bound (as for task settings).
      if (maxSeconds !== undefined && seconds === undefined) {
        throw errors.invalidRequest({
          en: `body.${label}: the length of the file cannot be read`,
          ru: `body.${label}: не удаётся определить длительность файла`,
        });
      }
      if (maxSeconds !== undefined && seconds !== undefined && seconds > maxSeconds) {
        throw errors.invalidRequest({
          en: `body.${label}: the file is ${seconds.toFixed(2)} s long; at most ${maxSeconds} s is allowed`,
          ru: `body.${label}: длительность файла ${ruDecimal(seconds.toFixed(2))} с; допустимо не больше ${ruDecimal(maxSeconds)} с`,
        });
      }
      return file;
    };
    try {
      const entries = await Promise.all(
        Object.keys(decl.files).map(async (field) => {
          const value = fields[field];
          const urls = Array.isArray(value) ? value : value === undefined ? [] : [value];
          const labels = urls.map((_, i) => (Array.isArray(value) ? `${field}.${i}` : field));
          const files = await Promise.all(urls.map((url, i) => probe(field, String(url), labels[i]!)));
          return [field, files] as const;
        }),
      );
      return Object.fromEntries(entries);
    } catch (error) {
      budget.abort(error);
      throw error;
    } finally {
      await budget.close();
    }
  }

  /** How many live records the caller keeps in the library of `query`. */
  async #liveCount(db: Db['db'] | Tx, query: RecordQuery): Promise<number> {
    const row = await db
      .selectFrom('library_records')
      .select((eb) => eb.fn.countAll().as('n'))
      .where('account_id', '=', query.accountId)
      .where('model', '=', query.model)
      .where('library', '=', query.library)
      .where('deleted_at', 'is', null)
      .executeTakeFirst();
    return Number(row?.n ?? 0);
  }

  async #uniqueTaken(query: RecordQuery, uniqueKey: string): Promise<boolean> {
    const row = await this.#deps.db.db
      .selectFrom('library_records')
      .select('id')
      .where('account_id', '=', query.accountId)
      .where('model', '=', query.model)
      .where('library', '=', query.library)
      .where('unique_key', '=', uniqueKey)
      .where('deleted_at', 'is', null)
      .executeTakeFirst();
    return row !== undefined;
  }

  /** The record a replayed creation made, as it is now (deleted since: as it was when deleted). */
  async #replayed(decl: LibraryDecl, query: RecordQuery, id: string): Promise<RecordView> {
    const live = await findRecord(this.#deps.db, query, id, this.#deps.clock.now(), this.askSteps);
    if (live) return viewOf(decl, live);
    const row = await this.#deps.db.db
      .selectFrom('library_records')
      .selectAll()
      .where('id', '=', id)
      .where('account_id', '=', query.accountId)
      .executeTakeFirst();
    if (!row) throw errors.recordNotFound(id);
    return viewOf(decl, fromRow(row));
  }
}
