import { type KeyPrincipal, mayUseModel } from '../accounts/index.ts';
import type { Lang } from '../i18n/index.ts';
import { BoundedMap } from '../lib/index.ts';
import type { TaskView } from './task-view.ts';
import { isFinal } from './transitions.ts';

/** A final task as the API shows it, and that view as JSON text. */
export interface FinalTaskView {
  readonly view: TaskView;
  readonly json: string;
}

interface Entry extends FinalTaskView {
  accountId: string;
  /** Until then the view is current; at `files_expire_at` its files read as expired (Unix ms). */
  freshUntilMs: number;
}

/** Finished tasks whose views are kept in memory, per process. (Default: 10,000) */
const DEFAULT_CAPACITY = 10_000;

/**
 * Views of final tasks, kept per process and language so that reading or polling a finished task costs
 * no query and no serialisation. Correct because a final task never changes again (CONTRACT §3), except
 * that its files expire at a known moment: past `files_expire_at` the view is rebuilt once as expired.
 * Only final views of the task's own account are kept, and only that account reads them; `remember`
 * throws when a caller breaks that. Bounded, oldest out first.
 */
export class FinalTaskViews {
  readonly #entries: BoundedMap<string, Entry>;

  constructor(capacity: number = DEFAULT_CAPACITY) {
    this.#entries = new BoundedMap(capacity);
  }

  /** How many views are kept. */
  get size(): number {
    return this.#entries.size;
  }

  /**
   * The kept view of `taskId` for this key, or undefined: never kept, evicted, or not this key's to read
   * (another account's, or of a model a restricted key may not use), which the caller answers from the
   * database.
   */
  find(principal: KeyPrincipal, taskId: string, lang: Lang, nowMs: number): FinalTaskView | undefined {
    const key = keyOf(taskId, lang);
    const entry = this.#entries.get(key);
    if (!entry || entry.accountId !== principal.accountId) return undefined;
    if (!mayUseModel(principal, entry.view.model)) return undefined;
    if (nowMs < entry.freshUntilMs || !entry.view.result) return entry;
    const expired = { ...entry.view, result: { ...entry.view.result, files_expired: true } };
    return this.#keep(key, entry.accountId, expired);
  }

  /** Keeps the view of a final task of `accountId`, read in `lang`, and returns it with its JSON. */
  remember(accountId: string, lang: Lang, view: TaskView): FinalTaskView {
    mustBeFinal(view);
    const key = keyOf(view.id, lang);
    const kept = this.#entries.get(key);
    if (kept && kept.accountId !== accountId) {
      throw new Error(`task ${view.id} is kept for another account; a task belongs to one account`);
    }
    return this.#keep(key, accountId, view);
  }

  #keep(key: string, accountId: string, view: TaskView): Entry {
    const freshUntilMs =
      view.result && !view.result.files_expired
        ? Date.parse(view.result.files_expire_at)
        : Number.POSITIVE_INFINITY;
    const entry = { accountId, view, json: JSON.stringify(view), freshUntilMs };
    this.#entries.set(key, entry);
    return entry;
  }
}

function keyOf(taskId: string, lang: Lang): string {
  return `${lang}:${taskId}`;
}

/** Only a final task's view may be kept: a queued or running task still changes. */
function mustBeFinal(
  view: TaskView,
): asserts view is TaskView & { status: 'succeeded' | 'failed' | 'canceled' } {
  if (!isFinal(view.status)) {
    throw new Error(`task ${view.id} is ${view.status}; only final tasks' views are kept`);
  }
}
