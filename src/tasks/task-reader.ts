/**
 * Reading tasks (reference "General", CONTRACT §3): one task as GET /v1/tasks/{id} answers it, as JSON text
 * for polls, with its revision for waiting calls and event streams, and pages of the account's tasks.
 * Another account's task, or one of a model a restricted key may not use, is 404 like a missing one.
 */
import type { KeyPrincipal } from '../accounts/index.ts';
import { mayUseModel } from '../accounts/index.ts';
import type { Db, TaskStatus, TasksTable } from '../db/index.ts';
import { errors } from '../errors.ts';
import type { Lang } from '../i18n/index.ts';
import type { Clock } from '../lib/index.ts';
import type { FinalTaskViews } from './final-task-views.ts';
import { LiveTaskViews } from './live-task-views.ts';
import { taskRowOf, viewFilesOf } from './task-rows.ts';
import { keptArtifacts, type TaskView, toTaskView } from './task-view.ts';
import { isFinal } from './transitions.ts';

export interface TaskReaderDeps {
  db: Db;
  clock: Clock;
  /** Views of final tasks kept for reads and polls, per process. */
  finalViews: FinalTaskViews;
}

/** The filters and page of GET /v1/tasks. */
export interface TaskListQuery {
  limit: number;
  status?: TaskStatus;
  model?: string;
  cursor?: string;
}

export interface TaskPage {
  tasks: TaskView[];
  next_cursor: string | null;
}

/** A task as a waiting call or an event stream sees it. */
export interface WatchedTask {
  view: TaskView;
  json: string;
  revision: number;
  final: boolean;
}

export class TaskReader {
  readonly #deps: TaskReaderDeps;
  readonly #liveViews = new LiveTaskViews();

  constructor(deps: TaskReaderDeps) {
    this.#deps = deps;
  }

  /** GET /v1/tasks/{id}; another account's task is 404 like a missing one. */
  async get(principal: KeyPrincipal, taskId: string, lang: Lang): Promise<TaskView> {
    return (await this.#read(principal, taskId, lang)).view;
  }

  /**
   * GET /v1/tasks/{id} as JSON text: a finished task's text is kept, so polling it costs no query and no
   * serialisation; an unfinished task's row is read and its text kept for as long as its `revision` stays.
   * `final` tells the route whether to ask for another poll.
   */
  async poll(principal: KeyPrincipal, taskId: string, lang: Lang): Promise<{ json: string; final: boolean }> {
    const now = this.#deps.clock.now();
    const kept = this.#deps.finalViews.find(principal, taskId, lang, now.getTime());
    if (kept) return { json: kept.json, final: true };
    // Read at once where the database allows it: the hot path of a client polling a running task.
    const read = taskRowOf(this.#deps.db, principal.accountId, taskId);
    const row = this.#own(principal, taskId, read instanceof Promise ? await read : read);
    if (!isFinal(row.status)) return { json: this.#liveViews.json(row, lang, now), final: false };
    const { view, json } = await this.#viewOf(row, lang, now);
    return { json: json ?? JSON.stringify(view), final: true };
  }

  /**
   * The task as GET /v1/tasks/{id} answers it, with its `revision`, for waiting calls and event streams
   * (CONTRACT §12). Always one query, since the kept views of final tasks carry no revision; a final
   * task's JSON is still the kept text, so a stream's data is byte for byte what a GET answers.
   */
  async watchState(principal: KeyPrincipal, taskId: string, lang: Lang): Promise<WatchedTask> {
    const now = this.#deps.clock.now();
    const row = await this.#ownRow(principal, taskId);
    const final = isFinal(row.status);
    const kept = final ? this.#deps.finalViews.find(principal, taskId, lang, now.getTime()) : undefined;
    const { view, json } = kept ?? (await this.#viewOf(row, lang, now));
    return { view, json: json ?? JSON.stringify(view), revision: Number(row.revision), final };
  }

  /**
   * The task's view, read by `get` and `poll` alike: a final task's from the kept views (kept now when it
   * was not), with its JSON; an unfinished task's as it is now, without.
   */
  async #read(
    principal: KeyPrincipal,
    taskId: string,
    lang: Lang,
  ): Promise<{ view: TaskView; json: string | null }> {
    const now = this.#deps.clock.now();
    const kept = this.#deps.finalViews.find(principal, taskId, lang, now.getTime());
    if (kept) return kept;
    return this.#viewOf(await this.#ownRow(principal, taskId), lang, now);
  }

  /** The caller's task row; another account's, or a model a restricted key may not use, is 404. */
  async #ownRow(principal: KeyPrincipal, taskId: string): Promise<TasksTable> {
    return this.#own(principal, taskId, await taskRowOf(this.#deps.db, principal.accountId, taskId));
  }

  #own(principal: KeyPrincipal, taskId: string, row: TasksTable | undefined): TasksTable {
    if (!row || !mayUseModel(principal, row.model)) throw errors.taskNotFound(taskId);
    return row;
  }

  /** A row's view; a final one is kept (with its JSON) for later reads. */
  async #viewOf(row: TasksTable, lang: Lang, now: Date): Promise<{ view: TaskView; json: string | null }> {
    const view = toTaskView(row, await viewFilesOf(this.#deps.db.db, row), lang, now);
    if (!isFinal(row.status)) return { view, json: null };
    this.#liveViews.forget(row.id);
    return this.#deps.finalViews.remember(row.account_id, lang, view);
  }

  /** GET /v1/tasks: newest first, keyset pagination on the time-ordered id. */
  async list(principal: KeyPrincipal, query: TaskListQuery, lang: Lang): Promise<TaskPage> {
    const db = this.#deps.db.db;
    // A restricted key lists only its models' tasks (issue 10.19).
    if (principal.models?.length === 0) return { tasks: [], next_cursor: null };
    let q = db.selectFrom('tasks').selectAll().where('account_id', '=', principal.accountId);
    if (principal.models !== null) q = q.where('model', 'in', principal.models);
    if (query.status) q = q.where('status', '=', query.status);
    if (query.model) q = q.where('model', '=', query.model);
    if (query.cursor) {
      const before = decodeCursor(query.cursor);
      q = q.where('id', '<', before);
      // The same bound as a row comparison steers PostgreSQL's planner to the account's index: for an
      // account with a large share of the table it walked the primary key backwards past other accounts'
      // rows instead (it takes a row comparison as selective), so a page cost more the larger the table
      // grew (docs/performance.md). SQLite ranges over that index from `id <` alone.
      if (this.#deps.db.dialect.name === 'postgres') {
        q = q.where((eb) => eb(eb.refTuple('account_id', 'id'), '<', eb.tuple(principal.accountId, before)));
      }
    }
    const rows = await q
      .orderBy('id', 'desc')
      .limit(query.limit + 1)
      .execute();
    const page = rows.slice(0, query.limit);
    // Each succeeded task's files as its row keeps them; only rows older than that copy read theirs.
    const kept = new Map(page.map((r) => [r.id, r.status === 'succeeded' ? keptArtifacts(r) : []]));
    const unkept = page.filter((r) => kept.get(r.id) === null).map((r) => r.id);
    const read =
      unkept.length > 0
        ? await db.selectFrom('artifacts').selectAll().where('task_id', 'in', unkept).execute()
        : [];
    const now = this.#deps.clock.now();
    const last = page.at(-1);
    return {
      tasks: page.map((r) =>
        toTaskView(r, kept.get(r.id) ?? read.filter((a) => a.task_id === r.id), lang, now),
      ),
      next_cursor: rows.length > query.limit && last ? encodeCursor(last.id) : null,
    };
  }
}

function encodeCursor(id: string): string {
  return Buffer.from(id, 'utf8').toString('base64url');
}

function decodeCursor(cursor: string): string {
  const id = Buffer.from(cursor, 'base64url').toString('utf8');
  if (!/^[0-9a-f-]{36}$/.test(id)) {
    throw errors.invalidRequest({
      en: 'cursor is not one this API gave out',
      ru: 'cursor не выдан этим API',
    });
  }
  return id;
}
