/**
 * One form renderer for every model: builds the controls of a settings JSON Schema (draft 2020-12, as GET
 * /v1/models answers it) and reads them back as settings. Strings become inputs or textareas (long ones),
 * enums selects, numbers number inputs with min/max/step, booleans checkboxes, arrays repeatable rows,
 * objects fieldsets, `oneOf` objects a variant chooser; links (`format: uri`) get a file picker that
 * uploads, and library references (`x-library`) a list of the person's records with free text kept.
 * Every control carries `data-path` (`prompt`, `image_urls.0`, `shots.1.duration`).
 */
import { checkValue, fieldLabel, hintText } from './schema-checks.js';
import {
  booleanControl,
  type Control,
  changed,
  el,
  enumControl,
  type FormHooks,
  field,
  nextId,
  numberControl,
  type Schema,
  shown,
  stringControl,
} from './schema-fields.js';

export type { Control, FormHooks, Schema } from './schema-fields.js';

/** A list: one row per item with Remove, and Add, within minItems and maxItems. */
function arrayControl(
  name: string,
  path: string,
  schema: Schema,
  required: boolean,
  initial: unknown,
  hooks: FormHooks,
): Control {
  const items = schema.items ?? {};
  // An optional list is either left out or holds minItems items: it starts empty and can be emptied again,
  // so rows of a list the task does not use (video-elements' shots without multi_shot) never block it. A
  // list with fewer than minItems items is still said by the checks.
  const min = required ? (schema.minItems ?? 0) : 0;
  const max = schema.maxItems ?? Number.POSITIVE_INFINITY;
  const legend = el('legend', {}, fieldLabel(name, schema, hooks.words));
  if (required) legend.append(el('span', { class: 'req', title: hooks.words.newRequired ?? '' }, ' *'));
  const box = el('fieldset', { class: 'rows', 'data-path': path, id: nextId() }, legend);
  const hint = hintText(name, schema, hooks.words);
  if (hint) box.append(el('small', { class: 'hint' }, hint));
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
      const label = `${fieldLabel(name, schema, hooks.words)} ${i + 1}`;
      const control = render(label, `${path}.${i}`, items, true, v, hooks);
      const remove = el(
        'button',
        { type: 'button', class: 'secondary', 'data-remove': `${path}.${i}` },
        hooks.words.newRemove ?? '−',
      );
      remove.disabled = values.length <= min;
      remove.setAttribute('aria-label', `${hooks.words.newRemove ?? '−'} ${label}`);
      remove.addEventListener('click', () => {
        draw(rows.map((r) => r.value()).filter((_, j) => j !== i));
        changed(box);
        // The rows are drawn anew: the focus goes to the Remove now in this place (or the last one), else Add.
        const removes = [...list.querySelectorAll<HTMLButtonElement>('button[data-remove]:not(:disabled)')];
        (removes[Math.min(i, removes.length - 1)] ?? add).focus();
      });
      list.append(el('div', { class: 'row' }, ...(control.element ? [control.element] : []), remove));
      return control;
    });
    add.disabled = values.length >= max;
  };
  add.addEventListener('click', () => {
    draw([...rows.map((r) => r.value()), undefined]);
    changed(box);
    // The new row is what the person fills next (and Add may be disabled now, at maxItems).
    list.lastElementChild?.querySelector<HTMLElement>('input, select, textarea')?.focus();
  });
  const start = Array.isArray(initial) ? initial : Array.isArray(schema.default) ? schema.default : [];
  draw(
    start.length >= min ? start : [...start, ...Array.from({ length: min - start.length }, () => undefined)],
  );
  const value = () => {
    const values = rows.map((r) => r.value()).filter((v) => v !== undefined);
    return values.length === 0 ? undefined : values;
  };
  return {
    element: box,
    value,
    check: (show) => {
      const inner = rows.flatMap((r) => r.check(show));
      // Empty rows say `required` themselves: the list saying it too would name one gap twice.
      const own = shown(
        show,
        box,
        box,
        value() === undefined && inner.length > 0
          ? []
          : checkValue(name, schema, value(), required, hooks.words),
      );
      return [...own, ...inner];
    },
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
      : el('fieldset', { 'data-path': path }, el('legend', {}, fieldLabel(name, schema, hooks.words)));
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
    const id = nextId();
    const inner = path === '' ? key : `${path}.${key}`;
    const select = el('select', { id, 'data-path': inner, 'data-variant': '' });
    branches.forEach((b, i) => {
      const constant = b.properties?.[key]?.const;
      const text =
        typeof constant === 'boolean'
          ? ((constant ? hooks.words.newYes : hooks.words.newNo) ?? '')
          : String(constant);
      const option = el('option', { value: String(i) }, text);
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
      field(
        el('label', { for: id }, `${hooks.words.newVariant ?? ''}: ${fieldLabel(key, {}, hooks.words)}`),
        null,
        select,
      ),
    );
  }
  box.append(body);
  draw(start);
  const value = () => {
    const out = objectValue(controls);
    return path !== '' && Object.keys(out).length === 0 ? undefined : out;
  };
  return { element: box, value, check: (show) => controls.flatMap(([, c]) => c.check(show)) };
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
