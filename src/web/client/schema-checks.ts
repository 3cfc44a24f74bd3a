/**
 * Client-side checks of one settings value against its JSON Schema, before `Create task` is sent: required,
 * lengths, bounds, whole numbers, steps (`multipleOf`, or `x-multipleOf` where a published schema keeps
 * a decimal step from validators that divide in floating point), item counts and links. The API checks everything
 * again; these only spare a call that would be refused.
 */

/** The schema keywords the checks read. */
interface Checked {
  type?: string;
  title?: string;
  minimum?: number;
  maximum?: number;
  multipleOf?: number;
  'x-multipleOf'?: number;
  minLength?: number;
  maxLength?: number;
  format?: string;
  minItems?: number;
  maxItems?: number;
}

/** The step of a number: `multipleOf`, or the published schemas' `x-multipleOf` for decimal steps. */
export function stepOf(schema: Pick<Checked, 'multipleOf' | 'x-multipleOf'>): number | undefined {
  return schema.multipleOf ?? schema['x-multipleOf'];
}

/** A field name as people read it: `image_urls` → `Image urls`, `songDescription` → `Song description`. */
export function readable(name: string): string {
  const words = name
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/[_-]+/g, ' ')
    .trim()
    .toLowerCase();
  return words.charAt(0).toUpperCase() + words.slice(1);
}

/**
 * The label of a setting in the page's words (`setting:<name>`; a numbered name such as `voice_2` takes its
 * base's label and number), else the schema's title, else its name made readable.
 */
export function fieldLabel(name: string, schema: { title?: string }, words: Record<string, string>): string {
  const own = words[`setting:${name}`];
  if (own !== undefined) return own;
  const numbered = /^(.+)_(\d+)$/.exec(name);
  const base = numbered ? words[`setting:${numbered[1]}`] : undefined;
  if (base !== undefined) return `${base} ${numbered?.[2]}`;
  return schema.title ?? readable(name);
}

/**
 * A setting's choice as the page shows it: its API value, after its name in the page's words
 * (`choice:<value>`, Russian pages only: `Детальное (detailed)`); the empty text as `""`.
 */
export function choiceLabel(value: unknown, words: Record<string, string>): string {
  const text = value === '' ? '""' : String(value);
  const name = typeof value === 'string' ? words[`choice:${value}`] : undefined;
  return name === undefined ? text : `${name} (${text})`;
}

/** The hint of a setting in the page's words (`hint:<name>`), else the schema's description. */
export function hintText(
  name: string,
  schema: { description?: string },
  words: Record<string, string>,
): string | undefined {
  return words[`hint:${name}`] ?? schema.description;
}

/** A message of the checks, its number written as the page's language writes it (`2 000 000`, `0,01`). */
function say(words: Record<string, string>, key: string, field: string, n?: number): string {
  const number =
    n === undefined
      ? ''
      : new Intl.NumberFormat(words.newNumberLocale ?? 'en-US', { maximumFractionDigits: 20 }).format(n);
  return (words[key] ?? key).replace('{field}', field).replace('{n}', number);
}

/** Characters as the API counts them (code points: an emoji is one), not UTF-16 units. */
function characters(text: string): number {
  let count = 0;
  for (const _ of text) count++;
  return count;
}

/**
 * Whether `value` is a multiple of `step` as the API takes it: written with no more decimals than the step
 * (0.29 and 0.57 are multiples of 0.01 although their quotients are not whole in binary; 0.655 is not).
 */
function isMultiple(value: number, step: number): boolean {
  const [digits = '', exponent = '0'] = String(step).split('e');
  const decimals = Math.min(100, Math.max(0, (digits.split('.')[1] ?? '').length - Number(exponent)));
  if (Number(value.toFixed(decimals)) !== value) return false;
  const scale = 10 ** decimals;
  return Math.round(value * scale) % Math.round(step * scale) === 0;
}

/**
 * An http or https link as the API takes it: written with `://` (the URL parser alone would also take
 * `https:example.com`, which the API refuses), spaces around it ignored as the API ignores them.
 */
function isLink(text: string): boolean {
  if (!/^https?:\/\//i.test(text.trim())) return false;
  try {
    const url = new URL(text);
    return url.protocol === 'http:' || url.protocol === 'https:';
  } catch {
    return false;
  }
}

/** The problems of `value` (undefined when not set) for the field `name`, in the page's words. */
export function checkValue(
  name: string,
  schema: Checked,
  value: unknown,
  required: boolean,
  words: Record<string, string>,
): string[] {
  const label = fieldLabel(name, schema, words);
  if (value === undefined) return required ? [say(words, 'newCheckRequired', label)] : [];
  const problems: string[] = [];
  if (typeof value === 'string') {
    if (schema.minLength !== undefined && characters(value) < schema.minLength)
      problems.push(say(words, 'newCheckShort', label, schema.minLength));
    if (schema.maxLength !== undefined && characters(value) > schema.maxLength)
      problems.push(say(words, 'newCheckLong', label, schema.maxLength));
    if (schema.format === 'uri' && !isLink(value)) problems.push(say(words, 'newCheckUrl', label));
  }
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) return [say(words, 'newCheckNumber', label)];
    if (schema.type === 'integer' && !Number.isInteger(value))
      problems.push(say(words, 'newCheckInteger', label));
    else {
      const step = stepOf(schema);
      if (step !== undefined && !isMultiple(value, step))
        problems.push(say(words, 'newCheckMultiple', label, step));
    }
    if (schema.minimum !== undefined && value < schema.minimum)
      problems.push(say(words, 'newCheckMin', label, schema.minimum));
    if (schema.maximum !== undefined && value > schema.maximum)
      problems.push(say(words, 'newCheckMax', label, schema.maximum));
  }
  if (Array.isArray(value)) {
    if (schema.minItems !== undefined && value.length < schema.minItems)
      problems.push(say(words, 'newCheckFewItems', label, schema.minItems));
    if (schema.maxItems !== undefined && value.length > schema.maxItems)
      problems.push(say(words, 'newCheckManyItems', label, schema.maxItems));
  }
  return problems;
}
