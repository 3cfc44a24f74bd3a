/**
 * The new-task page's island: the model and mode choosers, the settings form built from the mode's JSON
 * Schema (schema-form.ts), the live price (POST /v1/price, 300 ms after the last change, the previous call
 * aborted) and `Create task` (POST /v1/tasks with an Idempotency-Key kept while the same settings are
 * retried, the button disabled while sending), then the task's page.
 */
import { ApiFailure, api } from './api.js';
import { giveBack, showProblems } from './form-feedback.js';
import { type Control, objectControl, type Schema } from './schema-form.js';

interface Mode {
  name: string;
  settings_schema: Schema;
}
interface Model {
  key: string;
  name: string;
  available: boolean;
  mode_field: string | null;
  modes: Mode[];
}

const DEBOUNCE_MS = 300;

const form = document.querySelector<HTMLFormElement>('form#new-task');
if (form) start(form);

function start(form: HTMLFormElement): void {
  const models = JSON.parse(form.dataset.models ?? '[]') as Model[];
  // The modes' names in the page's language (the page draws the first chooser with them too).
  const modeLabels = JSON.parse(form.dataset.modeLabels ?? '{}') as Record<string, string>;
  const words = JSON.parse(form.dataset.words ?? '{}') as Record<string, string>;
  const locale = form.dataset.locale ?? 'en-US';
  const currency = form.dataset.currency ?? 'RUB';
  const modelSelect = form.querySelector<HTMLSelectElement>('#new-model')!;
  const modeSelect = form.querySelector<HTMLSelectElement>('#new-mode')!;
  const modeField = form.querySelector<HTMLElement>('#new-mode-field')!;
  const settingsBox = form.querySelector<HTMLElement>('#new-settings')!;
  const price = form.querySelector<HTMLOutputElement>('#new-price')!;
  const errorBox = form.querySelector<HTMLElement>('#new-error')!;
  const button = form.querySelector<HTMLButtonElement>('#new-create')!;
  const buttonLabel = button.textContent ?? '';

  let control: Control | null = null;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let pricing: AbortController | null = null;
  let idempotencyKey: string | null = null;
  let sending = false;
  /** A Create was refused by the client checks: fields show their problems from then on. */
  let attempted = false;
  const records = new Map<string, Promise<Array<{ id: string; name: string }>>>();

  const hooks = {
    words,
    async upload(file: File): Promise<string> {
      const body = new FormData();
      body.append('file', file, file.name);
      return (await api<{ url: string }>('POST', '/v1/files', body)).url;
    },
    records(model: string, library: string): Promise<Array<{ id: string; name: string }>> {
      const path = `/v1/models/${encodeURIComponent(model)}/${encodeURIComponent(library)}`;
      let found = records.get(path);
      if (!found) {
        found = api<Record<string, unknown>>('GET', path)
          .then((answer) =>
            ((answer[library] ?? []) as Array<Record<string, unknown>>)
              // A record with a state is usable once ready (CONTRACT §7): one still learning or failed
              // would only be refused (`style_not_ready`, `voice_not_ready`).
              .filter((r) => r.status === undefined || r.status === 'ready')
              .map((r) => ({ id: String(r.id), name: String(r.name ?? r.id) })),
          )
          .catch(() => []);
        records.set(path, found);
      }
      return found;
    },
  };

  const model = () => models.find((m) => m.key === modelSelect.value) ?? null;
  const mode = () => model()?.modes.find((m) => m.name === modeSelect.value) ?? model()?.modes[0] ?? null;
  const money = (minor: number) =>
    new Intl.NumberFormat(locale, { style: 'currency', currency }).format(minor / 100);
  const body = () => ({
    model: model()?.key ?? '',
    settings: (control?.value() ?? {}) as Record<string, unknown>,
  });

  /** The body the price was last asked for (or is being asked for). */
  let lastBody: string | null = null;

  function showError(message: string | null): void {
    errorBox.textContent = message ?? '';
    errorBox.hidden = message === null;
  }

  /**
   * The setting an API refusal names (`settings.<path>: …`, the first problem the API found), or the
   * nearest field that holds it (a list's row may not be drawn): marked `aria-invalid`, the refusal said
   * again right under it, as the library forms do. The client checks clear it with the next change.
   */
  function markRefused(message: string): HTMLElement | null {
    let path = /^settings\.([\w.]+?):/.exec(message)?.[1] ?? null;
    while (path) {
      const control = settingsBox.querySelector<HTMLElement>(`[data-path="${CSS.escape(path)}"]`);
      const box = control instanceof HTMLFieldSetElement ? control : control?.closest<HTMLElement>('.field');
      if (control && box) {
        showProblems(box, control, [message]);
        if (control instanceof HTMLFieldSetElement) control.tabIndex = -1;
        return control;
      }
      path = path.includes('.') ? path.slice(0, path.lastIndexOf('.')) : null;
    }
    return null;
  }

  /**
   * The wallet does not cover the run: said in the page's money (the API's message counts kopecks for
   * programs), with the way to the top-up page.
   */
  function showNoMoney(): void {
    const minor = Number(price.dataset.amountMinor);
    const text = Number.isFinite(minor)
      ? (words.newNoMoney ?? '').replace('{price}', money(minor))
      : (words.newNoMoneyAny ?? '');
    const link = document.createElement('a');
    link.href = '/topup';
    link.textContent = words.newTopUp ?? '';
    errorBox.replaceChildren(`${text} `, link);
    errorBox.hidden = false;
  }

  function setPrice(state: string, text: string, minor?: number): void {
    price.dataset.state = state;
    price.textContent = text;
    if (minor === undefined) delete price.dataset.amountMinor;
    else price.dataset.amountMinor = String(minor);
  }

  async function askPrice(untouched = false): Promise<void> {
    pricing?.abort();
    const controller = new AbortController();
    pricing = controller;
    try {
      const answer = await api<{ amount_minor: number }>('POST', '/v1/price', body(), controller.signal);
      if (pricing === controller) setPrice('ready', money(answer.amount_minor), answer.amount_minor);
    } catch (error) {
      if (controller.signal.aborted) return;
      // A form just drawn that a rule across fields refuses (a prompt needed unless …): the person has
      // not typed yet, so the price waits for them rather than greeting them with a refusal.
      if (untouched && error instanceof ApiFailure && error.status === 422) {
        setPrice('waiting', words.newPriceWaiting ?? '');
        return;
      }
      const message = error instanceof Error ? error.message : String(error);
      setPrice('error', message);
      if (error instanceof ApiFailure) price.dataset.code = error.code;
    }
  }

  /**
   * A change: a new submission (new Idempotency-Key), the price asked again after a pause. A form just
   * drawn that is not complete yet (an empty prompt) waits for the person instead of asking for a price
   * the API can only refuse.
   */
  function onChange(drawn = false): void {
    // A `change` that follows the `input` events of the same edit (the field left, as by clicking Create
    // task) changes nothing: the price shown stays, and with it the amount a refusal names.
    const sent = JSON.stringify(body());
    if (!drawn && sent === lastBody) return;
    lastBody = sent;
    idempotencyKey = null;
    showError(null);
    // After a refused Create, the fields' own messages follow the changes (one solved disappears).
    if (attempted && !drawn) control?.check(true);
    pricing?.abort();
    clearTimeout(timer);
    if (drawn && (control?.check() ?? []).length > 0) {
      setPrice('waiting', words.newPriceWaiting ?? '');
      return;
    }
    setPrice('pending', words.newPriceCounting ?? '…');
    timer = setTimeout(() => void askPrice(drawn), DEBOUNCE_MS);
  }

  function drawForm(): void {
    const chosen = mode();
    if (!chosen) return;
    attempted = false;
    control = objectControl('', '', chosen.settings_schema, {}, hooks);
    settingsBox.replaceChildren(...(control.element ? [control.element] : []));
    const url = new URL(location.href);
    url.searchParams.set('model', model()?.key ?? '');
    url.searchParams.set('mode', chosen.name);
    history.replaceState(null, '', url);
    onChange(true);
  }

  function drawModes(): void {
    const current = model();
    modeSelect.replaceChildren(
      ...(current?.modes ?? []).map((m) => {
        const option = document.createElement('option');
        option.value = m.name;
        option.textContent = modeLabels[m.name] ?? m.name;
        return option;
      }),
    );
    modeField.hidden = current?.mode_field === null;
  }

  async function create(): Promise<void> {
    // Each problem under its field, all of them in the box as well; they follow the person's changes.
    const problems = control?.check(true) ?? [];
    attempted = true;
    if (problems.length > 0) {
      showError(problems.join(' '));
      // As on a page the server refused, the keyboard goes on from the first field to correct. A list
      // refused as a whole (too few rows) is marked on its fieldset, which takes the focus only with a
      // tabindex: it is then read with its legend and its message, and Tab goes on into its rows.
      const first = settingsBox.querySelector<HTMLElement>('[aria-invalid="true"]');
      if (first instanceof HTMLFieldSetElement) first.tabIndex = -1;
      first?.focus();
      return;
    }
    sending = true;
    button.disabled = true;
    button.textContent = words.newCreating ?? buttonLabel;
    showError(null);
    idempotencyKey ??= crypto.randomUUID();
    try {
      const task = await api<{ id: string }>('POST', '/v1/tasks', body(), undefined, {
        'idempotency-key': idempotencyKey,
      });
      location.assign(`/tasks/${encodeURIComponent(task.id)}`);
    } catch (error) {
      sending = false;
      button.textContent = buttonLabel;
      if (error instanceof ApiFailure && error.code === 'insufficient_funds') showNoMoney();
      else {
        const message = error instanceof Error ? error.message : String(error);
        showError(message);
        // As for the client's own checks: the keyboard goes on from the field to correct.
        const field = markRefused(message);
        if (field) {
          button.disabled = false;
          field.focus();
          return;
        }
      }
      giveBack(button);
    }
  }

  modelSelect.addEventListener('change', () => {
    drawModes();
    drawForm();
  });
  modeSelect.addEventListener('change', drawForm);
  settingsBox.addEventListener('input', () => onChange());
  settingsBox.addEventListener('change', () => onChange());
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    if (!sending) void create();
  });
  drawForm();
}
