/**
 * A running task's page follows the task live: it opens the task's event stream
 * (`GET /v1/tasks/{id}/events`, CONTRACT §12, opened with the session cookie) and updates the status
 * badge and the progress bar on each `task` event. On the final event (`done`) it reloads the page once,
 * so the server draws the players. When the stream fails it falls back to asking `GET /v1/tasks/{id}`
 * every 2 seconds. Once a form of the page is sent, it stops following, as the form's answer is the next page;
 * once the session has ended (signed out in another tab), it reloads, which leads to the sign-in page.
 */
import { api, sessionEnded } from './api.js';

interface TaskState {
  status: string;
  progress: number;
}

const POLL_MS = 2_000;
const FINAL = new Set(['succeeded', 'failed', 'canceled']);

const root = document.querySelector<HTMLElement>('[data-task-live]');
if (root) follow(root, root.dataset.taskLive ?? '');

function follow(section: HTMLElement, id: string): void {
  const words = JSON.parse(section.dataset.statusWords ?? '{}') as Record<string, string>;
  const badge = section.querySelector<HTMLElement>('[data-task-status]');
  const bar = section.querySelector<HTMLProgressElement>('[data-task-progress]');
  const percent = section.querySelector<HTMLElement>('[data-task-percent]');
  // The page says it follows the task only now that it does (a browser without scripts is told to reload).
  section.querySelector<HTMLElement>('[data-task-live-hint]')?.removeAttribute('hidden');
  let reloaded = false;
  // A form sent from the page (Cancel) navigates by itself: a reload of ours would race it and could lose
  // its answer, so following stops there.
  document.addEventListener('submit', () => {
    reloaded = true;
  });

  const show = (task: TaskState): void => {
    if (badge) {
      badge.textContent = words[task.status] ?? task.status;
      badge.className = `badge status-${task.status}`;
      badge.dataset.taskStatus = task.status;
    }
    if (bar) bar.value = task.progress;
    if (percent) percent.textContent = `${task.progress}%`;
    if (FINAL.has(task.status) && !reloaded) {
      reloaded = true;
      location.reload();
    }
  };

  const poll = async (): Promise<void> => {
    try {
      show(await api<TaskState>('GET', `/v1/tasks/${encodeURIComponent(id)}`));
    } catch (error) {
      if (sessionEnded(error)) {
        reloaded = true;
        location.reload();
        return;
      }
      // A lost connection or a busy server: the next poll tries again.
    }
    if (!reloaded) setTimeout(() => void poll(), POLL_MS);
  };

  if (typeof EventSource !== 'function') {
    void poll();
    return;
  }
  const stream = new EventSource(`/v1/tasks/${encodeURIComponent(id)}/events`);
  const onEvent = (event: MessageEvent<string>): void => show(JSON.parse(event.data) as TaskState);
  stream.addEventListener('task', onEvent);
  stream.addEventListener('done', (event) => {
    stream.close();
    onEvent(event);
  });
  stream.onerror = () => {
    stream.close();
    if (!reloaded) void poll();
  };
}
