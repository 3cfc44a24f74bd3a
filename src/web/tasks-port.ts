/**
 * The part of the task service the tasks pages use (STYLE: declare only the part you use). The tasks
 * module's `TaskService` fits it; its principal is the session's (`sessionPrincipal`), so the pages see
 * exactly the account's tasks, with the same rules as `/v1`.
 */
import type { KeyPrincipal } from '../accounts/index.ts';
import type { TaskStatus } from '../db/index.ts';
import type { Lang } from '../i18n/index.ts';
import type { TaskView } from '../tasks/index.ts';

/** A task as the pages show it (the API's "Task"). */
export type WebTask = TaskView;

/** The statuses a task goes through, in the order the list's filter offers them. */
export const TASK_STATUSES: readonly TaskStatus[] = ['queued', 'running', 'succeeded', 'failed', 'canceled'];

/** Tasks of an account; failures are `ApiError`s (another account's task is 404 `task_not_found`). */
export interface TasksPort {
  list(
    principal: KeyPrincipal,
    query: { limit: number; status?: TaskStatus; model?: string; cursor?: string },
    lang: Lang,
  ): Promise<{ tasks: WebTask[]; next_cursor: string | null }>;
  get(principal: KeyPrincipal, taskId: string, lang: Lang): Promise<WebTask>;
  cancel(principal: KeyPrincipal, taskId: string, lang: Lang): Promise<WebTask>;
}

/** A file of a finished task, with its download path. */
export type WebArtifact = NonNullable<WebTask['result']>['artifacts'][number];
