import type { TasksTable } from '../db/index.ts';
import { LANGS, type Lang } from '../i18n/index.ts';
import { BoundedMap } from '../lib/index.ts';
import { toTaskView } from './task-view.ts';
import { isFinal } from './transitions.ts';

/** Unfinished tasks whose last JSON is kept, per process. (Default: 10,000) */
const DEFAULT_CAPACITY = 10_000;

interface Entry {
  revision: number;
  json: string;
}

/**
 * The JSON of queued and running tasks' views as last built, by task, language and `revision`: a poll
 * that finds the task at the revision it was built for sends the kept text instead of building the view
 * and serialising it again. Correct because every change a view of an unfinished task shows (status,
 * progress, start, requeue) counts `revision` up in the same statement (transitions.ts), and the view of
 * an unfinished task depends on nothing but its row (no clock, no files). The row itself is always read,
 * so this process's and every other process's changes are seen. Bounded, oldest out first.
 */
export class LiveTaskViews {
  readonly #entries: BoundedMap<string, Entry>;

  constructor(capacity: number = DEFAULT_CAPACITY) {
    this.#entries = new BoundedMap(capacity);
  }

  /** How many views are kept. */
  get size(): number {
    return this.#entries.size;
  }

  /** The JSON of this unfinished task's row as the API shows it in `lang`. */
  json(row: TasksTable, lang: Lang, now: Date): string {
    if (isFinal(row.status)) {
      throw new Error(`task ${row.id} is ${row.status}; only unfinished tasks' JSON is kept here`);
    }
    const key = `${lang}:${row.id}`;
    const revision = Number(row.revision);
    const kept = this.#entries.get(key);
    if (kept !== undefined && kept.revision === revision) return kept.json;
    const json = JSON.stringify(toTaskView(row, [], lang, now));
    this.#entries.set(key, { revision, json });
    return json;
  }

  /** Drops a task's kept JSON in every language, once it is final (its view is kept elsewhere then). */
  forget(taskId: string): void {
    for (const lang of LANGS) this.#entries.delete(`${lang}:${taskId}`);
  }
}
