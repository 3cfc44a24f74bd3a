/**
 * Creation forms of the libraries pages (and the singing voice's steps): file pickers upload through
 * `POST /v1/files` and fill in the link, the recorder records the microphone as WAV and does the same,
 * and sending builds the JSON body from each control's `data-type` and calls the form's `/v1` path, so
 * every rule, limit and error is the API's; a refusal shows the API's message, and again under the field
 * it names.
 */
import { ApiFailure, api } from './api.js';
import { giveBack, showProblems } from './form-feedback.js';
import { canRecord, WavRecorder } from './recorder.js';

interface Upload {
  url: string;
}

function fillIn(template: string, name: string): string {
  return template.replace('{name}', name);
}

function showError(form: HTMLFormElement, message: string | null): void {
  const box = form.querySelector<HTMLElement>('[data-form-error]');
  if (!box) return;
  box.textContent = message ?? '';
  box.hidden = message === null;
}

/** The field each form's last refusal marked. */
const marked = new WeakMap<HTMLFormElement, { box: HTMLElement; control: HTMLElement }>();

/**
 * The field an API refusal names (`body.<field>…: …`, the first problem the API found) is marked
 * `aria-invalid` and the refusal said again right under it; the marks of the last refusal go first.
 */
function markField(form: HTMLFormElement, message: string | null): void {
  const last = marked.get(form);
  if (last) showProblems(last.box, last.control, []);
  marked.delete(form);
  const name = message === null ? null : (/^body\.([A-Za-z_]\w*)/.exec(message)?.[1] ?? null);
  if (message === null || name === null) return;
  const control = form.querySelector<HTMLElement>(`[data-type][name="${CSS.escape(name)}"]`);
  const box = control?.closest<HTMLElement>('.field');
  if (!control || !box) return;
  showProblems(box, control, [message]);
  marked.set(form, { box, control });
}

function setStatus(form: HTMLFormElement, text: string): void {
  const status = form.querySelector<HTMLElement>('[data-form-status]');
  if (status) status.textContent = text;
}

function messageOf(error: unknown): string {
  return error instanceof ApiFailure || error instanceof Error ? error.message : String(error);
}

/**
 * A refused upload's message: about the file, in the form's words with the field as the form labels it
 * (the form's `data-refusals`, by code; the API names it `file`); anything else as the API says it.
 */
function uploadRefusal(form: HTMLFormElement, error: unknown, field: string): string {
  if (error instanceof ApiFailure) {
    let own: string | undefined;
    try {
      own = (JSON.parse(form.dataset.refusals ?? '{}') as Record<string, string>)[error.code];
    } catch {
      own = undefined;
    }
    if (own !== undefined) return own.replaceAll('{field}', field);
  }
  return messageOf(error);
}

/** Uploads one file and puts its link into the field (a line more for a list of links). */
async function uploadInto(
  form: HTMLFormElement,
  target: HTMLInputElement | HTMLTextAreaElement,
  file: File,
): Promise<void> {
  const status = form.querySelector<HTMLElement>(`[data-status-for="${target.id}"]`);
  if (status) status.textContent = fillIn(form.dataset.uploading ?? '{name}', file.name);
  const data = new FormData();
  data.append('file', file, file.name);
  const uploaded = await api<Upload>('POST', '/v1/files', data);
  if (target instanceof HTMLTextAreaElement) {
    const lines = target.value.split('\n').filter((line) => line.trim() !== '');
    target.value = [...lines, uploaded.url].join('\n');
  } else {
    target.value = uploaded.url;
  }
  target.dispatchEvent(new Event('input', { bubbles: true }));
  if (status) status.textContent = fillIn(form.dataset.uploaded ?? '{name}', file.name);
}

function targetOf(form: HTMLFormElement, id: string): HTMLInputElement | HTMLTextAreaElement | null {
  const target = form.querySelector(`#${CSS.escape(id)}`);
  return target instanceof HTMLInputElement || target instanceof HTMLTextAreaElement ? target : null;
}

function wirePickers(form: HTMLFormElement): void {
  for (const picker of form.querySelectorAll<HTMLInputElement>('input[type="file"][data-fills]')) {
    const target = targetOf(form, picker.dataset.fills ?? '');
    if (!target) continue;
    picker.addEventListener('change', async () => {
      showError(form, null);
      try {
        for (const file of picker.files ?? []) await uploadInto(form, target, file);
      } catch (error) {
        showError(form, uploadRefusal(form, error, picker.dataset.field ?? ''));
      } finally {
        picker.value = '';
      }
    });
  }
}

function wireRecorders(form: HTMLFormElement): void {
  for (const box of form.querySelectorAll<HTMLElement>('[data-recorder]')) {
    const target = targetOf(form, box.dataset.recorder ?? '');
    const start = box.querySelector<HTMLButtonElement>('[data-record-start]');
    const stop = box.querySelector<HTMLButtonElement>('[data-record-stop]');
    const status = box.querySelector<HTMLElement>('[data-record-status]');
    if (!target || !start || !stop || !status || !canRecord()) continue;
    box.hidden = false;
    let recorder: WavRecorder | null = null;
    start.addEventListener('click', async () => {
      showError(form, null);
      recorder = new WavRecorder();
      try {
        await recorder.start();
      } catch {
        recorder = null;
        status.textContent = status.dataset.noMicrophone ?? '';
        return;
      }
      start.hidden = true;
      stop.hidden = false;
      status.textContent = status.dataset.recording ?? '';
    });
    stop.addEventListener('click', async () => {
      if (!recorder) return;
      const blob = await recorder.stop();
      recorder = null;
      stop.hidden = true;
      start.hidden = false;
      status.textContent = '';
      try {
        await uploadInto(form, target, new File([blob], 'recording.wav', { type: 'audio/wav' }));
      } catch (error) {
        showError(form, uploadRefusal(form, error, box.dataset.field ?? ''));
      }
    });
  }
}

/** The JSON body of the form: each `data-type` control, empty optional ones left out. */
function bodyOf(form: HTMLFormElement): Record<string, unknown> | undefined {
  const body: Record<string, unknown> = {};
  const controls = form.querySelectorAll<HTMLInputElement | HTMLTextAreaElement | HTMLSelectElement>(
    '[data-type]',
  );
  if (controls.length === 0) return undefined;
  for (const control of controls) {
    const type = control.dataset.type;
    const value = control.value;
    if (type === 'boolean' && control instanceof HTMLInputElement) body[control.name] = control.checked;
    else if (type === 'links') {
      const links = value
        .split('\n')
        .map((line) => line.trim())
        .filter((line) => line !== '');
      if (links.length > 0) body[control.name] = links;
    } else if (value.trim() === '') continue;
    else if (type === 'number' || type === 'integer') body[control.name] = Number(value);
    else if (type === 'link') body[control.name] = value.trim();
    else body[control.name] = value;
  }
  return body;
}

for (const form of document.querySelectorAll<HTMLFormElement>('form[data-library-form]')) {
  wirePickers(form);
  wireRecorders(form);
  // Editing the field a refusal named takes the refusal away: it speaks of the value that is gone, and the
  // browser's own checks may keep the form from being sent again to replace it.
  // A record's creation goes with an Idempotency-Key, kept while the same form is sent again (an answer
  // lost on the way makes no second record) and replaced after any change, as the new-task form does.
  let idempotencyKey: string | null = null;
  form.addEventListener('input', (event) => {
    idempotencyKey = null;
    const last = marked.get(form);
    if (!last || !(event.target instanceof Node) || !last.box.contains(event.target)) return;
    markField(form, null);
    showError(form, null);
  });
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const button = form.querySelector<HTMLButtonElement>('button[type="submit"]');
    showError(form, null);
    markField(form, null);
    setStatus(form, form.dataset.creating ?? '');
    if (button) button.disabled = true;
    try {
      const headers: Record<string, string> = {};
      if (form.dataset.idempotent !== undefined)
        headers['idempotency-key'] = idempotencyKey ??= crypto.randomUUID();
      const record = await api<{ id: string }>(
        'POST',
        form.dataset.path ?? '',
        bodyOf(form),
        undefined,
        headers,
      );
      const next = (form.dataset.next ?? '/libraries').replace('{id}', encodeURIComponent(record.id));
      if (next === location.pathname) location.reload();
      else location.assign(next);
    } catch (error) {
      setStatus(form, '');
      showError(form, messageOf(error));
      markField(form, messageOf(error));
      giveBack(button);
    }
  });
}
