/**
 * The uploads page's form: each chosen file goes to `POST /v1/files` (multipart, the session cookie and
 * the CSRF token) one after another, with its progress; the API's refusal (too large, wrong type, quota)
 * is shown as the API words it, except that a refusal about the `file` field names it as the form's label
 * (the page's `data-refusals`, by the error's code). When any file is in, the page shows the new list; the
 * refusals of the others travel over the reload in sessionStorage and are shown again.
 */
import { csrfToken, sessionRefusal } from './api.js';
import { giveBack } from './form-feedback.js';

interface ErrorBody {
  error?: { code?: string; message?: string };
}

/** The page's words for refusals about the `file` field, by the error's code. */
function refusals(form: HTMLFormElement): Record<string, string> {
  try {
    return JSON.parse(form.dataset.refusals ?? '{}') as Record<string, string>;
  } catch {
    return {};
  }
}

function send(file: File, progress: (percent: number) => void, words: Record<string, string>): Promise<void> {
  return new Promise((resolve, reject) => {
    const request = new XMLHttpRequest();
    request.open('POST', '/v1/files');
    request.setRequestHeader('accept', 'application/json');
    request.setRequestHeader('accept-language', document.documentElement.lang || 'en');
    request.setRequestHeader('x-csrf-token', csrfToken());
    request.upload.addEventListener('progress', (event) => {
      if (event.lengthComputable) progress(Math.round((event.loaded / event.total) * 100));
    });
    request.addEventListener('load', () => {
      if (request.status >= 200 && request.status < 300) return resolve();
      let message = `${request.status} ${request.statusText}`;
      try {
        const error = (JSON.parse(request.responseText) as ErrorBody).error;
        const code = error?.code ?? '';
        const own = Object.hasOwn(words, code) ? words[code] : undefined;
        message = own ?? sessionRefusal(code) ?? error?.message ?? message;
      } catch {
        // Not JSON: the status line says enough.
      }
      reject(new Error(message));
    });
    request.addEventListener('error', () => reject(new Error(request.statusText || 'network error')));
    const data = new FormData();
    data.append('file', file, file.name);
    request.send(data);
  });
}

/** Where the refusals of a batch that also uploaded files wait for the reloaded page. */
const KEPT_REFUSALS = 'uploads-refusals';

const form = document.querySelector<HTMLFormElement>('form[data-upload-form]');
if (form) {
  const input = form.querySelector<HTMLInputElement>('input[type="file"]');
  const list = form.querySelector<HTMLElement>('[data-form-status]');
  const errorBox = form.querySelector<HTMLElement>('[data-form-error]');
  const button = form.querySelector<HTMLButtonElement>('button[type="submit"]');
  const kept = sessionStorage.getItem(KEPT_REFUSALS);
  if (kept && errorBox) {
    sessionStorage.removeItem(KEPT_REFUSALS);
    errorBox.textContent = kept;
    errorBox.hidden = false;
  }
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    if (!input || !list || !errorBox) return;
    errorBox.hidden = true;
    list.replaceChildren();
    if (button) button.disabled = true;
    const failures: string[] = [];
    let uploaded = 0;
    for (const file of input.files ?? []) {
      const line = document.createElement('li');
      list.append(line);
      const say = (template: string, percent: number) => {
        line.textContent = template.replace('{name}', file.name).replace('{percent}', String(percent));
      };
      say(form.dataset.progress ?? '{name}', 0);
      try {
        await send(file, (percent) => say(form.dataset.progress ?? '{name}', percent), refusals(form));
        say(form.dataset.done ?? '{name}', 100);
        uploaded += 1;
      } catch (error) {
        failures.push(`${file.name}: ${error instanceof Error ? error.message : String(error)}`);
        line.remove();
      }
    }
    if (uploaded > 0 || failures.length === 0) {
      // The new files belong in the list (and in the bytes used) even when others were refused.
      if (failures.length > 0) sessionStorage.setItem(KEPT_REFUSALS, failures.join(' '));
      location.reload();
      return;
    }
    errorBox.textContent = failures.join(' ');
    errorBox.hidden = false;
    giveBack(button);
  });
}
