/**
 * What a visible change of a task tells the world, in the transaction that makes the change: watchers
 * (long-polls, event streams) in every process are woken when it commits, and the webhooks subscribed to
 * the event get a delivery whose body is the task as GET /v1/tasks/{id} answers it at this moment.
 */
import { notifyOnCommit, type TasksTable, type Tx } from '../db/index.ts';
import { emitEvent, type TaskEventType } from '../events/index.ts';
import { viewFilesOf } from './task-rows.ts';
import { toTaskView } from './task-view.ts';

/** Notification channel of task changes; the payload is the task id. */
export const TASK_CHANGED_CHANNEL = 'gta_task_changed';

/** Webhook bodies carry error messages in English: a receiver has no Accept-Language. */
const WEBHOOK_LANG = 'en';

/** What an event needs of its task to find who wants it; the rest of the row only for a webhook's body. */
type TaskRouting = Pick<TasksTable, 'account_id' | 'webhook_url' | 'webhook_events'>;

/** Whether `row` is the task's whole row (`settings` is never null in one) or its routing alone. */
function isWholeTask(row: TaskRouting | TasksTable): row is TasksTable {
  return 'settings' in row;
}

/**
 * Records that the task changed (its `revision` already counted by the caller's update) and queues the
 * webhooks of the event, if it is one (a task queued again for another run is a change but no event).
 */
export async function taskChanged(
  tx: Tx,
  taskId: string,
  event?: { type: TaskEventType; at: Date },
  /**
   * The task as the change left it (an UPDATE … RETURNING of this transaction), saving a read; with the
   * endpoints' epoch when the statement returned it (`ENDPOINTS_EPOCH_COLUMN`), saving another. When it is
   * the routing alone, the whole row is read only for a webhook's body.
   */
  changed?: (TasksTable | TaskRouting) & { endpoints_epoch?: number | string | null },
): Promise<void> {
  await notifyOnCommit(tx, TASK_CHANGED_CHANNEL, taskId);
  if (event === undefined) return;
  const { type, at } = event;
  const read = () => tx.selectFrom('tasks').selectAll().where('id', '=', taskId).executeTakeFirstOrThrow();
  const row = changed ?? (await read());
  await emitEvent(tx, {
    accountId: row.account_id,
    type,
    taskId,
    own:
      row.webhook_url === null
        ? null
        : { url: row.webhook_url, events: JSON.parse(row.webhook_events ?? '[]') as string[] },
    at,
    data: async () => {
      const task = isWholeTask(row) ? row : await read();
      return toTaskView(task, await viewFilesOf(tx, task), WEBHOOK_LANG, at);
    },
    endpointsEpoch: changed?.endpoints_epoch,
  });
}
