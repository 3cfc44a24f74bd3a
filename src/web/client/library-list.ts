/**
 * Lists of the libraries and uploads pages: deleting after a confirmation in the row (the `/v1`
 * DELETE; the uploads page's bytes used and the libraries page's counts follow), and, on the libraries
 * page, the live state of records that learn or wait: the rows with `data-poll` are followed by reading
 * their kind's list every 2 s while their state is one of those, updating their badges and errors.
 */
import { ApiFailure, api, sessionEnded } from './api.js';

const list = document.querySelector<HTMLElement>('[data-library-list]');
const errorBox = document.querySelector<HTMLElement>('[data-list-error]');
const states: Record<string, string> = JSON.parse(list?.dataset.states ?? '{}');

function showError(message: string | null): void {
  if (!errorBox) return;
  errorBox.textContent = message ?? '';
  errorBox.hidden = message === null;
}

/**
 * What a delete changes besides its row, read again after it: the uploads page's bytes used and the
 * libraries page's count of each kind. The page itself says them, in its own words, units and plurals,
 * so the lines are taken from a fresh copy of the page. Left as they were when that fails.
 */
async function refreshCounts(): Promise<void> {
  const shown = [...document.querySelectorAll<HTMLElement>('[data-usage], [data-count]')];
  if (shown.length === 0) return;
  try {
    const res = await fetch(location.pathname, { headers: { accept: 'text/html' } });
    if (!res.ok) return;
    const page = new DOMParser().parseFromString(await res.text(), 'text/html');
    for (const line of shown) {
      const selector =
        line.dataset.count === undefined
          ? '[data-usage]'
          : `[data-count="${CSS.escape(line.dataset.count)}"]`;
      const fresh = page.querySelector(selector)?.textContent;
      if (fresh) line.textContent = fresh;
    }
  } catch {
    // A lost connection: the next reload says it.
  }
}

function confirmDelete(button: HTMLButtonElement): void {
  const cell = button.parentElement;
  if (!cell || !list) return;
  const box = document.createElement('div');
  box.className = 'confirm';
  box.setAttribute('role', 'alert');
  const text = document.createElement('span');
  text.textContent = button.dataset.confirm ?? '';
  const yes = document.createElement('button');
  yes.type = 'button';
  yes.className = 'danger';
  yes.textContent = list.dataset.yes ?? 'Yes';
  const no = document.createElement('button');
  no.type = 'button';
  no.className = 'secondary';
  no.textContent = list.dataset.cancel ?? 'Cancel';
  box.append(text, ' ', yes, ' ', no);
  button.hidden = true;
  cell.append(box);
  // The hidden button loses the focus: a keyboard user lands on the question's answer instead of the page.
  yes.focus();
  const back = () => {
    box.remove();
    button.hidden = false;
    button.focus();
  };
  no.addEventListener('click', back);
  yes.addEventListener('click', async () => {
    yes.disabled = true;
    try {
      // Gone already (deleted in another tab or by a key): what the person asked for, so the row goes too.
      await api('DELETE', button.dataset.delete ?? '').catch((error: unknown) => {
        if (!(error instanceof ApiFailure && error.status === 404)) throw error;
      });
      const row = button.closest('tr');
      const table = row?.closest<HTMLTableElement>('table[data-empty]');
      const near = row?.nextElementSibling ?? row?.previousElementSibling;
      row?.remove();
      // The last row gone: the list says it is empty, as the page does for a kind with nothing yet.
      if (table && table.tBodies[0]?.rows.length === 0) {
        const empty = document.createElement('p');
        empty.className = 'hint';
        empty.textContent = table.dataset.empty ?? '';
        table.replaceWith(empty);
      }
      showError(null);
      void refreshCounts();
      // The focus goes on from a neighbouring row's Delete, or from the content when the list is empty.
      (
        near?.querySelector<HTMLElement>('button[data-delete]') ?? document.getElementById('content')
      )?.focus();
    } catch (error) {
      showError(error instanceof Error ? error.message : String(error));
      back();
    }
  });
}

for (const button of document.querySelectorAll<HTMLButtonElement>('button[data-delete]')) {
  button.addEventListener('click', () => confirmDelete(button));
}

interface RecordState {
  id?: string;
  status?: string;
  error?: string;
}

/** Shows a record's state in its row; false once the state is final (the row is no longer followed). */
function show(row: HTMLElement, record: RecordState): boolean {
  const passing = (row.dataset.poll ?? '').split(' ');
  const badge = row.querySelector<HTMLElement>('[data-state]');
  const error = row.querySelector<HTMLElement>('[data-record-error]');
  const status = record.status ?? '';
  if (badge && status !== badge.dataset.state) {
    badge.dataset.state = status;
    badge.className = `badge state-${status}`;
    badge.textContent = states[status] ?? status;
  }
  if (error && record.error) error.textContent = record.error;
  if (passing.includes(status)) return true;
  delete row.dataset.poll;
  return false;
}

/**
 * Follows the rows of one kind with a single read of the kind's list every 2 s, however many of its
 * records are learning: the page's reads count against the account's request budget, which its API keys
 * share (reference "Limits"), so one read per record would let a page take it all. A record gone from the
 * list (deleted meanwhile) is no longer followed.
 */
function watch(listPath: string, rows: HTMLElement[]): void {
  const field = listPath.slice(listPath.lastIndexOf('/') + 1);
  let followed = rows;
  const tick = async () => {
    followed = followed.filter((row) => row.isConnected);
    if (followed.length === 0) return;
    try {
      const list = await api<Record<string, RecordState[] | undefined>>('GET', listPath);
      const byId = new Map((list[field] ?? []).map((record) => [record.id, record]));
      followed = followed.filter((row) => {
        const record = byId.get((row.dataset.record ?? '').slice(listPath.length + 1));
        if (record) return show(row, record);
        delete row.dataset.poll;
        return false;
      });
    } catch (error) {
      // Signed out meanwhile: the reload goes to the sign-in page, which leads back here.
      if (sessionEnded(error)) return location.reload();
      // A lost connection: try again at the next tick.
    }
    if (followed.length > 0) setTimeout(tick, 2000);
  };
  setTimeout(tick, 2000);
}

/** The followed rows by the list they are read from (`/v1/models/{key}/{library}`). */
const byList = new Map<string, HTMLElement[]>();
for (const row of document.querySelectorAll<HTMLElement>('[data-record][data-poll]')) {
  const path = row.dataset.record ?? '';
  const listPath = path.slice(0, path.lastIndexOf('/'));
  byList.set(listPath, [...(byList.get(listPath) ?? []), row]);
}
for (const [listPath, rows] of byList) watch(listPath, rows);
