/**
 * The leaf controls of the settings form (schema-form.ts): texts, numbers, enums, booleans, links with a
 * file picker that uploads through POST /v1/files, and library ids with the person's records. Each control
 * carries `data-path` and answers its value (undefined when not set) and its client-side checks.
 */
import { showProblems } from './form-feedback.js';
import { checkValue, choiceLabel, fieldLabel, hintText, stepOf } from './schema-checks.js';

/** The part of JSON Schema the catalog's settings use. */
export interface Schema {
  type?: string;
  title?: string;
  description?: string;
  enum?: unknown[];
  const?: unknown;
  default?: unknown;
  minimum?: number;
  maximum?: number;
  multipleOf?: number;
  'x-multipleOf'?: number;
  minLength?: number;
  maxLength?: number;
  format?: string;
  items?: Schema;
  minItems?: number;
  maxItems?: number;
  properties?: Record<string, Schema>;
  required?: string[];
  oneOf?: Schema[];
  'x-library'?: { model: string; library: string };
}

/** What the form needs from its page: words, uploads, library records, a change signal. */
export interface FormHooks {
  words: Record<string, string>;
  /** Uploads a file and answers its direct link. */
  upload(file: File): Promise<string>;
  /** The person's records of a library: id and a name to show. */
  records(model: string, library: string): Promise<Array<{ id: string; name: string }>>;
}

/**
 * A rendered control: its element, its value (undefined when not set) and its client-side checks; with
 * `show`, each problem is also shown under its own field (and cleared there once solved).
 */
export interface Control {
  element: HTMLElement | null;
  value(): unknown;
  check(show?: boolean): string[];
}

/** Texts longer than this get a textarea. */
const LONG_TEXT = 300;
let ids = 0;

/** A fresh element id for a label's `for`. */
export function nextId(): string {
  ids += 1;
  return `sf-${ids}`;
}

export function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Record<string, string> = {},
  ...children: Array<Node | string>
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) node.setAttribute(name, value);
  node.append(...children);
  return node;
}

/** Lets the page know a value changed (an upload or a record picked fills a field without typing). */
export function changed(node: HTMLElement): void {
  node.dispatchEvent(new Event('input', { bubbles: true }));
}

export function labelOf(
  name: string,
  schema: Schema,
  required: boolean,
  hooks: FormHooks,
  id: string,
): HTMLElement {
  const label = el('label', { for: id }, fieldLabel(name, schema, hooks.words));
  if (required) label.append(el('span', { class: 'req', title: hooks.words.newRequired ?? '' }, ' *'));
  return label;
}

function hintOf(name: string, schema: Schema, hooks: FormHooks, id: string): HTMLElement | null {
  const text = hintText(name, schema, hooks.words);
  return text ? el('small', { class: 'hint', id: `${id}-hint` }, text) : null;
}

/** The problems, shown under their field when `show` says so. */
export function shown(
  show: boolean | undefined,
  box: HTMLElement,
  input: HTMLElement,
  problems: string[],
): string[] {
  return show ? showProblems(box, input, problems) : problems;
}

/** A wrapper `<div class="field">` with label, control(s) and hint. */
export function field(label: HTMLElement, hint: HTMLElement | null, ...parts: HTMLElement[]): HTMLElement {
  const box = el('div', { class: 'field' }, label, ...parts);
  if (hint) box.append(hint);
  return box;
}

export function enumControl(
  name: string,
  path: string,
  schema: Schema,
  required: boolean,
  initial: unknown,
  hooks: FormHooks,
): Control {
  const id = nextId();
  const values = schema.enum ?? [];
  const select = el('select', { id, name: path, 'data-path': path });
  const unset = schema.default === undefined;
  if (unset) select.append(el('option', { value: '', 'data-unset': '' }, hooks.words.newNotSet ?? '—'));
  const start = initial ?? schema.default;
  values.forEach((v, i) => {
    const option = el('option', { value: String(i) }, choiceLabel(v, hooks.words));
    if (v === start) option.selected = true;
    select.append(option);
  });
  const value = () => {
    const option = select.selectedOptions[0];
    if (!option || option.hasAttribute('data-unset')) return undefined;
    return values[Number(option.value)];
  };
  const hint = hintOf(name, schema, hooks, id);
  if (hint) select.setAttribute('aria-describedby', hint.id);
  const box = field(labelOf(name, schema, required, hooks, id), hint, select);
  return {
    element: box,
    value,
    check: (show) => shown(show, box, select, checkValue(name, schema, value(), required, hooks.words)),
  };
}

export function booleanControl(
  name: string,
  path: string,
  schema: Schema,
  required: boolean,
  initial: unknown,
  hooks: FormHooks,
): Control {
  const id = nextId();
  const box = el('input', { id, type: 'checkbox', name: path, 'data-path': path });
  box.checked = (initial ?? schema.default) === true;
  const label = labelOf(name, schema, required, hooks, id);
  label.prepend(box, ' ');
  label.classList.add('check');
  const explicit = required || schema.default !== undefined;
  const value = () => (box.checked || explicit || initial !== undefined ? box.checked : undefined);
  return { element: field(label, hintOf(name, schema, hooks, id)), value, check: () => [] };
}

export function numberControl(
  name: string,
  path: string,
  schema: Schema,
  required: boolean,
  initial: unknown,
  hooks: FormHooks,
): Control {
  const id = nextId();
  const attrs: Record<string, string> = {
    id,
    type: 'number',
    name: path,
    'data-path': path,
    inputmode: 'decimal',
  };
  if (schema.minimum !== undefined) attrs.min = String(schema.minimum);
  if (schema.maximum !== undefined && schema.maximum < Number.MAX_SAFE_INTEGER)
    attrs.max = String(schema.maximum);
  const step = stepOf(schema);
  attrs.step = step !== undefined ? String(step) : schema.type === 'integer' ? '1' : 'any';
  const input = el('input', attrs);
  const start = initial ?? schema.default;
  if (typeof start === 'number') input.value = String(start);
  const value = () => {
    const text = input.value.trim();
    if (text === '') return input.validity.badInput ? Number.NaN : undefined;
    return Number(text);
  };
  const hint = hintOf(name, schema, hooks, id);
  if (hint) input.setAttribute('aria-describedby', hint.id);
  const box = field(labelOf(name, schema, required, hooks, id), hint, input);
  return {
    element: box,
    value,
    check: (show) => shown(show, box, input, checkValue(name, schema, value(), required, hooks.words)),
  };
}

export function stringControl(
  name: string,
  path: string,
  schema: Schema,
  required: boolean,
  initial: unknown,
  hooks: FormHooks,
): Control {
  const id = nextId();
  const long = (schema.maxLength ?? 0) > LONG_TEXT;
  // No `maxlength`: browsers count it in UTF-16 units, so it would cut a text of emoji at half of what the
  // API takes (it counts characters); the checks say a text that is too long instead.
  const attrs: Record<string, string> = { id, name: path, 'data-path': path };
  const input = long ? el('textarea', { ...attrs, rows: '3' }) : el('input', { ...attrs, type: 'text' });
  const start = initial ?? schema.default;
  if (typeof start === 'string') input.value = start;
  const hint = hintOf(name, schema, hooks, id);
  if (hint) input.setAttribute('aria-describedby', hint.id);
  const parts: HTMLElement[] = [input];
  // The pickers are named as the field's label shows it (a list's item with its number: `Left url 1`),
  // never by the API's path (`left_url.0`), which a screen reader would spell out.
  const named = fieldLabel(name, schema, hooks.words);
  if (schema.format === 'uri') parts.push(filePicker(input, path, named, hooks));
  const library = schema['x-library'];
  if (library) parts.unshift(recordPicker(input, path, named, library, hooks));
  const value = () => (input.value === '' ? undefined : input.value);
  const box = field(labelOf(name, schema, required, hooks, id), hint, ...parts);
  return {
    element: box,
    value,
    check: (show) => shown(show, box, input, checkValue(name, schema, value(), required, hooks.words)),
  };
}

/** A file input next to a link field: the chosen file is uploaded with POST /v1/files and its link filled. */
function filePicker(
  target: HTMLInputElement | HTMLTextAreaElement,
  path: string,
  named: string,
  hooks: FormHooks,
): HTMLElement {
  const picker = el('input', {
    type: 'file',
    'data-upload': path,
    'aria-label': `${hooks.words.newUpload ?? ''}: ${named}`,
  });
  const status = el('small', { class: 'hint', 'data-upload-status': path });
  picker.addEventListener('change', async () => {
    const file = picker.files?.[0];
    if (!file) return;
    status.textContent = hooks.words.newUploading ?? '…';
    status.classList.remove('error');
    try {
      target.value = await hooks.upload(file);
      status.textContent = file.name;
      changed(target);
    } catch (error) {
      // A refusal about the file names the field as this form labels it (the page's `refusal_<code>`).
      const code = (error as { code?: unknown }).code;
      const own = typeof code === 'string' ? hooks.words[`refusal_${code}`] : undefined;
      status.textContent = own
        ? own.replaceAll('{field}', named)
        : error instanceof Error
          ? error.message
          : String(error);
      status.classList.add('error');
    }
  });
  return el(
    'span',
    { class: 'upload' },
    el('label', { class: 'secondary' }, hooks.words.newUpload ?? '', picker),
    status,
  );
}

/** A select of the person's records that fills the id field; the field stays free for any id. */
function recordPicker(
  target: HTMLInputElement | HTMLTextAreaElement,
  path: string,
  named: string,
  library: { model: string; library: string },
  hooks: FormHooks,
): HTMLElement {
  const select = el(
    'select',
    { 'data-records': path, 'aria-label': `${hooks.words.newOwnRecords ?? ''}: ${named}` },
    el('option', { value: '' }, `${hooks.words.newOwnRecords ?? ''} (${hooks.words.newOtherId ?? ''})`),
  );
  void hooks.records(library.model, library.library).then((records) => {
    for (const record of records) {
      const option = el('option', { value: record.id }, `${record.name} (${record.id})`);
      if (record.id === target.value) option.selected = true;
      select.append(option);
    }
  });
  select.addEventListener('change', () => {
    if (select.value === '') return;
    target.value = select.value;
    changed(target);
  });
  return select;
}
