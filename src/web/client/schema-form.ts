/**
 * One form renderer for every model: builds the controls of a settings JSON Schema (draft 2020-12, as GET
 * /v1/models answers it) and reads them back as settings. Strings become inputs or textareas (long ones),
 * enums selects, numbers number inputs with min/max/step, booleans checkboxes, arrays repeatable rows,
 * objects fieldsets, `oneOf` objects a variant chooser; links (`format: uri`) get a file picker that
 * uploads, and library references (`x-library`) a list of the person's records with free text kept.
 * Every control carries `data-path` (`prompt`, `image_urls.0`, `shots.1.duration`).
 */
import { checkValue, readable } from './schema-checks.js';

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

/** A rendered control: its element, its value (undefined when not set) and its client-side checks. */
export interface Control {
  element: HTMLElement | null;
  value(): unknown;
  check(): string[];
}

/** Texts longer than this get a textarea. */
const LONG_TEXT = 300;
let ids = 0;

function el<K extends keyof HTMLElementTagNameMap>(
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
function changed(node: HTMLElement): void {
  node.dispatchEvent(new Event('input', { bubbles: true }));
}

function labelOf(name: string, schema: Schema, required: boolean, hooks: FormHooks, id: string): HTMLElement {
  const label = el('label', { for: id }, schema.title ?? readable(name));
  if (required) label.append(el('span', { class: 'req', title: hooks.words.newRequired ?? '' }, ' *'));
  return label;
}

function hintOf(schema: Schema, id: string): HTMLElement | null {
  return schema.description ? el('small', { class: 'hint', id: `${id}-hint` }, schema.description) : null;
}

/** A wrapper `<div class="field">` with label, control(s) and hint. */
function field(label: HTMLElement, hint: HTMLElement | null, ...parts: HTMLElement[]): HTMLElement {
  const box = el('div', { class: 'field' }, label, ...parts);
  if (hint) box.append(hint);
  return box;
}

function enumControl(
  name: string,
  path: string,
  schema: Schema,
  required: boolean,
  initial: unknown,
  hooks: FormHooks,
): Control {
  const id = `sf-${++ids}`;
  const values = schema.enum ?? [];
  const select = el('select', { id, name: path, 'data-path': path });
  const unset = schema.default === undefined;
  if (unset) select.append(el('option', { value: '', 'data-unset': '' }, hooks.words.newNotSet ?? '—'));
  const start = initial ?? schema.default;
  values.forEach((v, i) => {
    const option = el('option', { value: String(i) }, v === '' ? '""' : String(v));
    if (v === start) option.selected = true;
    select.append(option);
  });
  const value = () => {
    const option = select.selectedOptions[0];
    if (!option || option.hasAttribute('data-unset')) return undefined;
    return values[Number(option.value)];
  };
  const hint = hintOf(schema, id);
  if (hint) select.setAttribute('aria-describedby', hint.id);
  return {
    element: field(labelOf(name, schema, required, hooks, id), hint, select),
    value,
    check: () => checkValue(name, schema, value(), required, hooks.words),
  };
}

function booleanControl(
  name: string,
  path: string,
  schema: Schema,
  required: boolean,
  initial: unknown,
  hooks: FormHooks,
): Control {
  const id = `sf-${++ids}`;
  const box = el('input', { id, type: 'checkbox', name: path, 'data-path': path });
  box.checked = (initial ?? schema.default) === true;
  const label = labelOf(name, schema, required, hooks, id);
  label.prepend(box, ' ');
  label.classList.add('check');
  const explicit = required || schema.default !== undefined;
  const value = () => (box.checked || explicit || initial !== undefined ? box.checked : undefined);
  return { element: field(label, hintOf(schema, id)), value, check: () => [] };
}

function numberControl(
  name: string,
  path: string,
  schema: Schema,
  required: boolean,
  initial: unknown,
  hooks: FormHooks,
): Control {
  const id = `sf-${++ids}`;
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
  attrs.step =
    schema.multipleOf !== undefined ? String(schema.multipleOf) : schema.type === 'integer' ? '1' : 'any';
  const input = el('input', attrs);
  const start = initial ?? schema.default;
  if (typeof start === 'number') input.value = String(start);
  const value = () => {
    const text = input.value.trim();
    if (text === '') return input.validity.badInput ? Number.NaN : undefined;
    return Number(text);
  };
  const hint = hintOf(schema, id);
  if (hint) input.setAttribute('aria-describedby', hint.id);
  return {
    element: field(labelOf(name, schema, required, hooks, id), hint, input),
    value,
    check: () => checkValue(name, schema, value(), required, hooks.words),
  };
}

function stringControl(
  name: string,
  path: string,
  schema: Schema,
  required: boolean,
  initial: unknown,
  hooks: FormHooks,
): Control {
  const id = `sf-${++ids}`;
  const long = (schema.maxLength ?? 0) > LONG_TEXT;
  const attrs: Record<string, string> = { id, name: path, 'data-path': path };
  if (schema.maxLength !== undefined) attrs.maxlength = String(schema.maxLength);
  const input = long ? el('textarea', { ...attrs, rows: '3' }) : el('input', { ...attrs, type: 'text' });
  const start = initial ?? schema.default;
  if (typeof start === 'string') input.value = start;
  const hint = hintOf(schema, id);
  if (hint) input.setAttribute('aria-describedby', hint.id);
  const parts: HTMLElement[] = [input];
  if (schema.format === 'uri') parts.push(filePicker(input, path, hooks));
  const library = schema['x-library'];
  if (library) parts.unshift(recordPicker(input, path, library, hooks));
  const value = () => (input.value === '' ? undefined : input.value);
  return {
    element: field(labelOf(name, schema, required, hooks, id), hint, ...parts),
    value,
    check: () => checkValue(name, schema, value(), required, hooks.words),
  };
}

/** A file input next to a link field: the chosen file is uploaded with POST /v1/files and its link filled. */
function filePicker(
  target: HTMLInputElement | HTMLTextAreaElement,
  path: string,
  hooks: FormHooks,
): HTMLElement {
  const picker = el('input', {
    type: 'file',
    'data-upload': path,
    'aria-label': `${hooks.words.newUpload ?? ''}: ${path}`,
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
      status.textContent = error instanceof Error ? error.message : String(error);
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
  library: { model: string; library: string },
  hooks: FormHooks,
): HTMLElement {
  const select = el(
    'select',
    { 'data-records': path, 'aria-label': `${hooks.words.newOwnRecords ?? ''}: ${path}` },
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

function arrayControl(
  name: string,
  path: string,
  schema: Schema,
  required: boolean,
  initial: unknown,
  hooks: FormHooks,
): Control {
  const items = schema.items ?? {};
  const min = schema.minItems ?? 0;
  const max = schema.maxItems ?? Number.POSITIVE_INFINITY;
  const legend = el('legend', {}, schema.title ?? readable(name));
  if (required) legend.append(el('span', { class: 'req', title: hooks.words.newRequired ?? '' }, ' *'));
  const box = el('fieldset', { class: 'rows', 'data-path': path }, legend);
  if (schema.description) box.append(el('small', { class: 'hint' }, schema.description));
  const list = el('div', { class: 'row-list' });
  const add = el(
    'button',
    { type: 'button', class: 'secondary', 'data-add': path },
    hooks.words.newAdd ?? '+',
  );
  box.append(list, add);
  let rows: Control[] = [];
  const draw = (values: unknown[]) => {
    list.replaceChildren();
    rows = values.map((v, i) => {
      const control = render(`${readable(name)} ${i + 1}`, `${path}.${i}`, items, true, v, hooks);
      const remove = el(
        'button',
        { type: 'button', class: 'secondary', 'data-remove': `${path}.${i}` },
        hooks.words.newRemove ?? '−',
      );
      remove.disabled = values.length <= min;
      remove.addEventListener('click', () => {
        draw(rows.map((r) => r.value()).filter((_, j) => j !== i));
        changed(box);
      });
      list.append(el('div', { class: 'row' }, ...(control.element ? [control.element] : []), remove));
      return control;
    });
    add.disabled = values.length >= max;
  };
  add.addEventListener('click', () => {
    draw([...rows.map((r) => r.value()), undefined]);
    changed(box);
  });
  const start = Array.isArray(initial) ? initial : Array.isArray(schema.default) ? schema.default : [];
  draw(
    start.length >= min ? start : [...start, ...Array.from({ length: min - start.length }, () => undefined)],
  );
  const value = () => {
    const values = rows.map((r) => r.value()).filter((v) => v !== undefined);
    return values.length === 0 && !required ? undefined : values.length === 0 ? undefined : values;
  };
  return {
    element: box,
    value,
    check: () => [
      ...checkValue(name, schema, value(), required, hooks.words),
      ...rows.flatMap((r) => r.check()),
    ],
  };
}

/** The properties of one object schema as controls (constants kept, never shown). */
function objectControls(
  path: string,
  schema: Schema,
  initial: Record<string, unknown>,
  hooks: FormHooks,
): Array<[string, Control]> {
  const required = new Set(schema.required ?? []);
  return Object.entries(schema.properties ?? {}).map(([name, property]) => {
    const inner = path === '' ? name : `${path}.${name}`;
    return [name, render(name, inner, property, required.has(name), initial[name], hooks)];
  });
}

function objectValue(controls: Array<[string, Control]>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, control] of controls) {
    const value = control.value();
    if (value !== undefined) out[name] = value;
  }
  return out;
}

/** The field whose `const` tells the branches of a `oneOf` apart, if one does. */
function discriminator(branches: Schema[]): string | null {
  const first = branches[0]?.properties ?? {};
  for (const name of Object.keys(first)) {
    const consts = branches.map((b) => b.properties?.[name]?.const);
    if (consts.every((c) => c !== undefined) && new Set(consts.map(String)).size === branches.length)
      return name;
  }
  return null;
}

/** An object, or a `oneOf` of objects with a variant chooser; `path` '' is the settings themselves. */
export function objectControl(
  name: string,
  path: string,
  schema: Schema,
  initial: unknown,
  hooks: FormHooks,
): Control {
  const start = (initial && typeof initial === 'object' ? initial : {}) as Record<string, unknown>;
  const box =
    path === ''
      ? el('div', { class: 'settings' })
      : el('fieldset', { 'data-path': path }, el('legend', {}, schema.title ?? readable(name)));
  const branches = schema.oneOf ?? [schema];
  const key = discriminator(branches);
  let branch = 0;
  if (key) {
    const wanted =
      start[key] ?? branches.map((b) => b.properties?.[key]?.default).find((d) => d !== undefined);
    branch = Math.max(
      0,
      branches.findIndex((b) => b.properties?.[key]?.const === wanted),
    );
  }
  const body = el('div', { class: 'stack' });
  let controls: Array<[string, Control]> = [];
  const draw = (values: Record<string, unknown>) => {
    const chosen = branches[branch] ?? {};
    controls = objectControls(path, chosen, values, hooks);
    body.replaceChildren(...controls.flatMap(([, c]) => (c.element ? [c.element] : [])));
  };
  if (key && branches.length > 1) {
    const id = `sf-${++ids}`;
    const inner = path === '' ? key : `${path}.${key}`;
    const select = el('select', { id, 'data-path': inner, 'data-variant': '' });
    branches.forEach((b, i) => {
      const option = el('option', { value: String(i) }, String(b.properties?.[key]?.const));
      option.selected = i === branch;
      select.append(option);
    });
    select.addEventListener('change', () => {
      const values = objectValue(controls);
      branch = Number(select.value);
      delete values[key];
      draw(values);
    });
    box.append(
      field(el('label', { for: id }, `${hooks.words.newVariant ?? ''}: ${readable(key)}`), null, select),
    );
  }
  box.append(body);
  draw(start);
  const value = () => {
    const out = objectValue(controls);
    return path !== '' && Object.keys(out).length === 0 ? undefined : out;
  };
  return { element: box, value, check: () => controls.flatMap(([, c]) => c.check()) };
}

/** The control of one schema; fields with a `const` are sent as is and not shown, untyped ones skipped. */
export function render(
  name: string,
  path: string,
  schema: Schema,
  required: boolean,
  initial: unknown,
  hooks: FormHooks,
): Control {
  if (schema.const !== undefined) return { element: null, value: () => schema.const, check: () => [] };
  if (schema.enum) return enumControl(name, path, schema, required, initial, hooks);
  switch (schema.type) {
    case 'boolean':
      return booleanControl(name, path, schema, required, initial, hooks);
    case 'integer':
    case 'number':
      return numberControl(name, path, schema, required, initial, hooks);
    case 'string':
      return stringControl(name, path, schema, required, initial, hooks);
    case 'array':
      return arrayControl(name, path, schema, required, initial, hooks);
    case 'object':
      return objectControl(name, path, schema, initial, hooks);
    default:
      return schema.oneOf
        ? objectControl(name, path, schema, initial, hooks)
        : { element: null, value: () => undefined, check: () => [] };
  }
}
