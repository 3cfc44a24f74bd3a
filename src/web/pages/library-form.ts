/**
 * One renderer for every library's creation form: the fields come from the JSON Schema of the kind's
 * declared creation body (the same schema `/v1` validates), so a field the API accepts is a field of the
 * form, with its bounds, choices and defaults. Link fields (`files` and `laterFiles` of the declaration)
 * get a file picker that uploads through `POST /v1/files` and fills in the link; the island
 * (client/library-create.ts) builds the JSON body from the `data-type` of each control.
 */
import { z } from 'zod';
import type { Lang } from '../../i18n/index.ts';
import { html, type VNode } from '../html.ts';
import { needsScript } from '../layout.ts';
import type { LibraryDecl } from '../libraries-port.ts';
import { fill, type Words } from '../words.ts';
import { fieldFileRefusals } from './uploads.ts';

/** What the schema says of one field (the JSON Schema keywords we render). */
export interface FieldSchema {
  type?: string;
  enum?: unknown[];
  default?: unknown;
  description?: string;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  multipleOf?: number;
  minItems?: number;
  maxItems?: number;
}

/** A body's fields in declaration order, each with its schema and whether the API requires it. */
export function fieldsOf(schema: z.ZodType): Array<{ name: string; schema: FieldSchema; required: boolean }> {
  const json = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as {
    properties?: Record<string, FieldSchema>;
    required?: string[];
  };
  const required = new Set(json.required ?? []);
  return Object.entries(json.properties ?? {}).map(([name, s]) => ({
    name,
    schema: s,
    required: required.has(name),
  }));
}

/** A word of the page looked up by a name made from a declaration; undefined when there is none. */
export function wordOr(w: Words, key: string, fallback: string): string {
  return (w as Readonly<Record<string, string>>)[key] ?? fallback;
}

/** The title of a kind in the person's language (the declared title otherwise). */
export function kindTitle(w: Words, decl: Pick<LibraryDecl, 'model' | 'segment' | 'title'>): string {
  return wordOr(w, `kind:${decl.model}/${decl.segment}`, decl.title);
}

/** The label of a body field in the person's language (its name otherwise). */
export function fieldLabel(w: Words, name: string): string {
  return wordOr(w, `field:${name}`, name);
}

/**
 * A value of a declared field (an element's tag, a style's type) as pages show it: its API name, after its
 * word in the person's language where that is another (`Персонаж (character)`).
 */
export function valueLabel(w: Words, value: string): string {
  const word = wordOr(w, `value:${value}`, value);
  return word === value ? value : `${word} (${value})`;
}

/** File extensions of accepted formats, for the picker's `accept`. */
function acceptOf(formats: readonly string[] | undefined): string | undefined {
  if (!formats) return undefined;
  return formats.flatMap((f) => (f === 'jpeg' ? ['.jpg', '.jpeg'] : [`.${f}`])).join(',');
}

function boundsHint(s: FieldSchema, w: Words): string | null {
  if (s.type === 'string' && s.maxLength !== undefined) {
    return s.minLength
      ? fill(w.libChars, { min: String(s.minLength), max: String(s.maxLength) })
      : fill(w.libUpToChars, { max: String(s.maxLength) });
  }
  if ((s.type === 'number' || s.type === 'integer') && s.maximum !== undefined && s.maximum < 1e9) {
    return fill(w.libRange, { min: String(s.minimum ?? 0), max: String(s.maximum) });
  }
  return null;
}

/** A link field's accepted files in words: formats, size and, when bounded, the longest recording. */
export function filesRule(
  w: Words,
  name: string,
  rule: { formats: readonly string[]; max_size_mb: number; max_duration_seconds?: number | undefined },
): string {
  const seconds = rule.max_duration_seconds;
  return (
    fill(w.libFilesRule, {
      field: fieldLabel(w, name),
      formats: rule.formats.join(', '),
      mb: String(rule.max_size_mb),
    }) + (seconds === undefined ? '' : fill(w.libFilesSeconds, { seconds: String(seconds) }))
  );
}

/** The controls of one link field: the link box, the picker and the picker's status line. */
function linkField(
  decl: LibraryDecl,
  name: string,
  many: boolean,
  s: FieldSchema,
  required: boolean,
  w: Words,
): VNode {
  const id = `field-${name}`;
  const files = { ...decl.files, ...decl.laterFiles }[name];
  const rule = files
    ? filesRule(w, name, {
        formats: files.formats,
        max_size_mb: files.maxBytes / (1024 * 1024),
        max_duration_seconds: files.maxSeconds,
      })
    : null;
  const count =
    many && s.maxItems !== undefined
      ? fill(w.libItems, { min: String(s.minItems ?? 0), max: String(s.maxItems) })
      : null;
  return html`<div class="field link-field">
    <label for=${id}>${fieldLabel(w, name)}${required ? null : html` <span class="hint">(${w.libOptional})</span>`}</label>
    ${
      many
        ? html`<textarea id=${id} name=${name} rows="3" data-type="links" data-max=${s.maxItems}></textarea>`
        : html`<input id=${id} type="url" name=${name} data-type="link" required=${required} />`
    }
    <label class="picker">${many ? w.libPickFiles : w.libPickFile}
      <input type="file" multiple=${many} accept=${acceptOf(files?.formats)} data-fills=${id}
        data-field=${fieldLabel(w, name)} />
    </label>
    ${
      !many && files?.formats.includes('wav')
        ? html`<p class="recorder" data-recorder=${id} data-field=${fieldLabel(w, name)} hidden>
            <button type="button" class="secondary" data-record-start="">${w.voiceRecord}</button>
            <button type="button" class="danger" data-record-stop="" hidden>${w.voiceStop}</button>
            <span class="hint" data-record-status="" data-recording=${w.voiceRecordingNow}
              data-no-microphone=${w.voiceNoMicrophone}></span>
          </p>`
        : null
    }
    <p class="hint">${many ? w.libLinksHint : w.libLinkHint} ${[count, rule].filter(Boolean).join('; ')}</p>
    <p class="hint upload-status" data-status-for=${id} role="status"></p>
  </div>`;
}

/** One control rendered from its schema. */
export function fieldControl(
  decl: LibraryDecl,
  name: string,
  s: FieldSchema,
  required: boolean,
  w: Words,
  lang: Lang,
): VNode {
  const isLinks = s.type === 'array' && (s as { items?: FieldSchema }).items?.type === 'string';
  if (name.endsWith('_urls') || (isLinks && name in { ...decl.files, ...decl.laterFiles }))
    return linkField(decl, name, true, s, required, w);
  if (name.endsWith('_url')) return linkField(decl, name, false, s, required, w);
  const id = `field-${name}`;
  const label = html`${fieldLabel(w, name)}${required || s.default !== undefined ? null : html` <span class="hint">(${w.libOptional})</span>`}`;
  const hints = [lang === 'en' ? s.description : undefined, boundsHint(s, w)].filter(Boolean).join('; ');
  const hint = hints ? html`<p class="hint">${hints}</p>` : null;
  if (s.type === 'boolean') {
    return html`<div class="field"><label class="check">
      <input type="checkbox" name=${name} data-type="boolean" checked=${s.default === true} /> ${label}
    </label>${hint}</div>`;
  }
  if (s.enum) {
    // A ready voice to start from (an omni voice's base) reads by its name, then its id.
    const preset = (v: string) => decl.presets?.find((p) => p.id === v);
    const optionLabel = (v: string) => {
      const found = preset(v);
      return found ? `${found.name} (${v})` : valueLabel(w, v);
    };
    return html`<div class="field"><label for=${id}>${label}</label>
      <select id=${id} name=${name} data-type="string" required=${required}>
        ${required && s.default === undefined ? html`<option value="">—</option>` : null}
        ${s.enum.map((v) => html`<option value=${String(v)} selected=${v === s.default}>${optionLabel(String(v))}</option>`)}
      </select>${hint}</div>`;
  }
  if (s.type === 'number' || s.type === 'integer') {
    return html`<div class="field"><label for=${id}>${label}</label>
      <input id=${id} type="number" name=${name} data-type=${s.type} required=${required}
        min=${s.minimum} max=${s.maximum !== undefined && s.maximum < 1e9 ? s.maximum : undefined}
        step=${s.multipleOf ?? (s.type === 'integer' ? 1 : 'any')} value=${s.default === undefined ? undefined : String(s.default)} />
      ${hint}</div>`;
  }
  const long = (s.maxLength ?? 0) > 200;
  // No `maxlength`: browsers count it in UTF-16 units and would stop a text of emoji at half of what the
  // API takes (it counts characters); the API's refusal of a longer one is said at the field.
  const control = long
    ? html`<textarea id=${id} name=${name} rows="3" data-type="string" required=${required}
        minlength=${s.minLength}>${typeof s.default === 'string' ? s.default : ''}</textarea>`
    : html`<input id=${id} type="text" name=${name} data-type="string" required=${required}
        minlength=${s.minLength} value=${typeof s.default === 'string' ? s.default : undefined} />`;
  return html`<div class="field"><label for=${id}>${label}</label>${control}
    ${hint}</div>`;
}

/**
 * The creation form of a kind: every field of its body, the error box the island fills with the API's
 * message, and the submit button. `next` is where the island goes with the new record's id. `idempotent`:
 * a record's creation, which the island sends with an Idempotency-Key (CONTRACT §4).
 */
export function creationForm(
  decl: LibraryDecl,
  options: {
    path: string;
    next: string;
    w: Words;
    lang: Lang;
    schema?: z.ZodType;
    submit?: string;
    idempotent?: boolean;
  },
): VNode {
  const { w } = options;
  return html`${needsScript(w)}<form class="stack library-form" data-library-form="" data-needs-script="" data-path=${options.path}
      data-idempotent=${options.idempotent ? '' : undefined}
      data-next=${options.next} data-creating=${w.libCreating} data-uploading=${w.libUploading}
      data-uploaded=${w.libUploadedFile}
      data-refusals=${JSON.stringify(fieldFileRefusals(options.lang))}>
    ${fieldsOf(options.schema ?? decl.body).map((f) => fieldControl(decl, f.name, f.schema, f.required, w, options.lang))}
    <p class="error" role="alert" data-form-error="" hidden></p>
    <p class="hint" role="status" data-form-status=""></p>
    <button type="submit">${options.submit ?? w.libCreateRecord}</button>
  </form>`;
}
