/**
 * Renders `docs/models.md` from the catalog (`src/catalog/`), so the model reference cannot drift from
 * the code: settings from each mode's JSON Schema, URL-input rules, price rates, the description each
 * mode's price rule gives of itself, and the price and outputs of each mode's example run.
 *
 *   npx node scripts/models-doc.ts > docs/models.md    print the document
 *   npx node scripts/models-doc.ts --write             write docs/models.md
 *
 * `test/models-doc.test.ts` fails when the committed document differs from `renderModelsDoc()`.
 */
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import {
  type GenerationPlan,
  type InputFile,
  type InputRule,
  loadPriceTable,
  MODELS,
  type ModelSpec,
  type ModeSpec,
  type OutputPlan,
  type PriceRates,
  type PriceTable,
  priceOf,
  settingsJsonSchema,
  stepOf,
  validateSettings,
} from '../src/catalog/index.ts';

type JsonSchema = z.core.JSONSchema.JSONSchema;

/** Where the generated document lives. */
export const MODELS_DOC_PATH: string = fileURLToPath(new URL('../docs/models.md', import.meta.url));

/** How to bring the document up to date (printed by the drift test). */
export const REGENERATE_COMMAND = 'npm run docs:models';

// ---------------------------------------------------------------------------------------------
// Markdown helpers
// ---------------------------------------------------------------------------------------------

function code(value: string): string {
  return `\`${value}\``;
}

/** A table cell: pipes escaped, line breaks flattened. */
function cell(text: string): string {
  return text.replace(/\|/g, '\\|').replace(/\n/g, ' ');
}

function table(head: readonly string[], rows: readonly (readonly string[])[]): string {
  const line = (cells: readonly string[]): string => `| ${cells.map(cell).join(' | ')} |`;
  return [line(head), line(head.map(() => '---')), ...rows.map(line)].join('\n');
}

/** A JSON value as inline code; the empty string shown as `""`. */
function literal(value: unknown): string {
  return code(typeof value === 'string' && value !== '' ? value : JSON.stringify(value));
}

function rub(kopecks: number): string {
  return `${(kopecks / 100).toFixed(2)} RUB`;
}

// ---------------------------------------------------------------------------------------------
// Settings (JSON Schema)
// ---------------------------------------------------------------------------------------------

function sub(schema: JsonSchema['items']): JsonSchema | undefined {
  return typeof schema === 'object' && schema !== null && !Array.isArray(schema) ? schema : undefined;
}

function typeOf(schema: JsonSchema): string {
  if (schema.const !== undefined) return typeof schema.const;
  const item = sub(schema.items);
  if (schema.type === 'array') return item ? `array of ${typeOf(item)}` : 'array';
  if (schema.type === 'string' && schema.format) return `string (${schema.format})`;
  if (Array.isArray(schema.type)) return schema.type.join(' or ');
  return schema.type ?? 'any';
}

/** A unit of a bound: singular and plural (`['item', 'items']`), or none. */
type Unit = readonly [string, string] | undefined;

function withUnit(text: string, count: number, unit: Unit): string {
  return unit === undefined ? text : `${text} ${count === 1 ? unit[0] : unit[1]}`;
}

/** `min–max unit`, `exactly n unit`, `≥ min unit` or `≤ max unit`; empty when unbounded. */
function range(min: number | undefined, max: number | undefined, unit?: Unit): string {
  const upper = max === undefined || max >= Number.MAX_SAFE_INTEGER ? undefined : max;
  if (min !== undefined && min === upper) return withUnit(`exactly ${min}`, min, unit);
  if (min !== undefined && upper !== undefined) return withUnit(`${min}–${upper}`, upper, unit);
  if (min !== undefined) return withUnit(`≥ ${min}`, min, unit);
  if (upper !== undefined) return withUnit(`≤ ${upper}`, upper, unit);
  return '';
}

const CHARS: Unit = ['char', 'chars'];
const ITEMS: Unit = ['item', 'items'];
const SECONDS: Unit = ['s', 's'];

function numberBounds(schema: JsonSchema): string[] {
  const min = typeof schema.minimum === 'number' ? schema.minimum : undefined;
  const max = typeof schema.maximum === 'number' ? schema.maximum : undefined;
  const stepValue = stepOf(schema as Parameters<typeof stepOf>[0]);
  const step = stepValue === undefined ? '' : `step ${stepValue}`;
  return [range(min, max), step];
}

function stringBounds(schema: JsonSchema): string[] {
  const min = schema.minLength === 0 ? undefined : schema.minLength;
  return [range(min, schema.maxLength, CHARS)];
}

function arrayBounds(schema: JsonSchema): string[] {
  const item = sub(schema.items);
  const each = item ? allowed(item) : '';
  return [range(schema.minItems, schema.maxItems, ITEMS), each === '' ? '' : `each ${each}`];
}

/** Fields of an object item, as `name type bounds`. */
function objectFields(schema: JsonSchema): string[] {
  const required = new Set(schema.required ?? []);
  return Object.entries(schema.properties ?? {}).map(([name, prop]) => {
    const field = sub(prop) ?? {};
    const bounds = allowed(field);
    const optional = required.has(name) ? '' : ' (optional)';
    return `${code(name)}${optional}: ${typeOf(field)}${bounds === '' ? '' : ` ${bounds}`}`;
  });
}

/** Bounds of a setting by its type: range, length, item count, or the fields of an object. */
function boundsOf(schema: JsonSchema): string[] {
  switch (schema.type) {
    case 'number':
    case 'integer':
      return numberBounds(schema);
    case 'string':
      return stringBounds(schema);
    case 'array':
      return arrayBounds(schema);
    case 'object':
      return [`{ ${objectFields(schema).join('; ')} }`];
    default:
      return [];
  }
}

/** Allowed values, range or length of a setting. */
function allowed(schema: JsonSchema): string {
  if (schema.const !== undefined) return `only ${literal(schema.const)}`;
  if (schema.enum) return schema.enum.map(literal).join(', ');
  return boundsOf(schema)
    .filter((part) => part !== '')
    .join(', ');
}

/** What the table says of a setting the mode knows only to refuse (published as `not: {}`). */
const REFUSED = 'never (422 invalid_settings when set)';

/**
 * The settings table of a published schema. `raw` is the same schema before refused settings became
 * `not: {}`: it keeps their notes (why they are refused).
 */
function settingsTable(schema: JsonSchema, raw: JsonSchema): string {
  const required = new Set(schema.required ?? []);
  const rows = Object.entries(schema.properties ?? {}).map(([name, prop]) => {
    const field = sub(prop) ?? {};
    if (field.not !== undefined) {
      const note = sub(raw.properties?.[name])?.description ?? '';
      return [code(name), '—', REFUSED, '—', 'no', note];
    }
    return [
      code(name),
      typeOf(field),
      allowed(field) || '—',
      field.default === undefined ? '—' : literal(field.default),
      required.has(name) ? 'yes' : 'no',
      field.description ?? '',
    ];
  });
  return table(['Setting', 'Type', 'Allowed', 'Default', 'Required', 'Notes'], rows);
}

/** Settings whose constant differs between the variants of a union (`customMode`). */
function variantLabel(variant: JsonSchema, variants: readonly JsonSchema[]): string {
  const consts = Object.entries(variant.properties ?? {}).flatMap(([name, prop]) => {
    const value = sub(prop)?.const;
    if (value === undefined) return [];
    const differs = variants.some((other) => sub(other.properties?.[name])?.const !== value);
    return differs ? [`${code(name)} = ${literal(value)}`] : [];
  });
  return consts.join(', ');
}

/** The settings of a mode as GET /v1/models publishes them (`settingsJsonSchema`). */
function renderSettings(mode: ModeSpec): string {
  const schema = settingsJsonSchema(mode.schema) as JsonSchema;
  const raw: JsonSchema = z.toJSONSchema(mode.schema, { io: 'input', unrepresentable: 'any' });
  const variants = schema.oneOf ?? schema.anyOf;
  if (!variants) return settingsTable(schema, raw);
  const rawVariants = raw.oneOf ?? raw.anyOf ?? [];
  const parts = variants.map((variant, i) => {
    const label = variantLabel(variant, variants);
    const table = settingsTable(variant, sub(rawVariants[i]) ?? {});
    return `Variant ${i + 1}${label === '' ? '' : ` (${label})`}:\n\n${table}`;
  });
  return [`The settings are one of ${variants.length} variants:`, ...parts].join('\n\n');
}

// ---------------------------------------------------------------------------------------------
// Input rules, price, outputs
// ---------------------------------------------------------------------------------------------

function megabytes(bytes: number): string {
  return `${Number((bytes / (1024 * 1024)).toFixed(2))} MB`;
}

function renderInputRules(rules: Readonly<Record<string, InputRule>> | undefined): string {
  if (rules === undefined || Object.keys(rules).length === 0) return 'No URL inputs.';
  const rows = Object.entries(rules).map(([field, rule]) => [
    code(field),
    rule.formats.join(', '),
    megabytes(rule.maxBytes),
    range(rule.minSeconds, rule.maxSeconds, SECONDS) || '—',
    rule.maxTotalSeconds === undefined ? '—' : `≤ ${rule.maxTotalSeconds} s`,
  ]);
  return table(['Field', 'Formats', 'Max size per file', 'Seconds per file', 'Seconds in total'], rows);
}

function renderRates(rates: PriceRates): string {
  const rows = Object.entries(rates).map(([name, kopecks]) => [code(name), String(kopecks), rub(kopecks)]);
  return table(['Rate', 'Kopecks', 'RUB'], rows);
}

function outputDetails(output: OutputPlan): string {
  switch (output.kind) {
    case 'document':
      return [
        `≤ ${output.faceLimit} faces`,
        output.textured ? 'textured' : 'untextured',
        output.pbr ? 'PBR' : '',
        output.parts ? 'separate parts' : '',
      ]
        .filter(Boolean)
        .join(', ');
    case 'image':
      return `${output.width}×${output.height}`;
    case 'video':
      return `${output.width}×${output.height}, ${output.durationSeconds} s`;
    case 'audio':
      return [
        `${output.durationSeconds} s`,
        output.tempoBpm === undefined ? '' : `${output.tempoBpm} bpm`,
        output.musicalKey === undefined ? '' : `key ${output.musicalKey}`,
        output.loop ? 'loop' : '',
        output.speech ? 'speech' : '',
      ]
        .filter(Boolean)
        .join(', ');
  }
}

/** A text result, shortened to one line. */
function excerpt(text: string): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return code(line.length > 40 ? `${line.slice(0, 40)}…` : line);
}

function renderPlan(plan: GenerationPlan): string {
  const rows = plan.outputs.map((output, i) => [
    String(i),
    output.kind,
    code(output.filename),
    output.format,
    outputDetails(output),
  ]);
  const count = `${plan.texts.length} ${plan.texts.length === 1 ? 'entry' : 'entries'}`;
  const texts = plan.texts.length === 0 ? 'none' : `${count}: ${plan.texts.map(excerpt).join(', ')}`;
  return [
    table(['#', 'Kind', 'File', 'Format', 'Details'], rows),
    [
      `- result.caption: ${plan.caption === '' ? 'empty' : code(plan.caption)}`,
      `- result.texts: ${texts}`,
      `- typical generation time: ${plan.workSeconds} s (divided by SIM_SPEED in the simulator)`,
    ].join('\n'),
  ].join('\n\n');
}

function renderFiles(files: readonly InputFile[]): string {
  if (files.length === 0) return 'none';
  return files
    .map((f) => {
      const seconds = f.durationSeconds === undefined ? '' : `, ${f.durationSeconds} s`;
      const size = f.width === undefined ? '' : `, ${f.width}×${f.height}`;
      return `${code(f.field)} ${f.format}${size}${seconds}`;
    })
    .join('; ');
}

// ---------------------------------------------------------------------------------------------
// Document
// ---------------------------------------------------------------------------------------------

function renderMode(model: ModelSpec, mode: ModeSpec, prices: PriceTable): string {
  const { example } = mode;
  const checked = validateSettings(model, example.settings);
  if (!checked.ok || checked.mode !== mode) {
    throw new Error(`scripts/models-doc.ts: the example of ${model.key} / ${mode.name} is not valid`);
  }
  const inputs = { files: example.files };
  const amount = priceOf(model, mode, checked.settings, inputs, prices);
  const title = model.modeField === null ? 'Settings' : `Mode ${code(mode.name)}`;
  return [
    `### ${title}`,
    renderSettings(mode),
    '#### URL inputs',
    renderInputRules(mode.inputRules),
    '#### Price',
    mode.priceDescription,
    '#### Example run',
    `Settings: ${code(JSON.stringify(example.settings))}; input files: ${renderFiles(inputs.files)}.`,
    `Price: ${amount} kopecks (${rub(amount)}). Outputs:`,
    renderPlan(mode.plan(checked.settings, inputs)),
  ].join('\n\n');
}

function renderModel(model: ModelSpec, prices: PriceTable): string {
  const rates = prices[model.key] ?? {};
  const selector = model.modeField === null ? 'none (one mode)' : code(`settings.${model.modeField}`);
  return [
    `## ${code(model.key)}: ${model.name}`,
    [
      `- kind: ${code(model.kind)}`,
      `- mode selector: ${selector}`,
      `- modes: ${model.modes.map((m) => code(m.name)).join(', ')}`,
      `- price rates (\`src/catalog/prices/${model.key}.json\`):`,
    ].join('\n'),
    renderRates(rates),
    ...model.modes.map((mode) => renderMode(model, mode, prices)),
  ].join('\n\n');
}

function renderOverview(): string {
  const rows = MODELS.map((m) => [
    code(m.key),
    m.kind,
    m.name,
    m.modeField === null ? 'none' : code(m.modeField),
    m.modes.map((mode) => code(mode.name)).join(', '),
  ]);
  return table(['Key', 'Kind', 'Name', 'Mode selector', 'Modes'], rows);
}

const HEADER = `# Models

Generated by \`scripts/models-doc.ts\` from the catalog (\`src/catalog/\`); do not edit by hand.
Regenerate with \`${REGENERATE_COMMAND}\`.

Settings come from each mode's JSON Schema (the same schema GET /v1/models publishes). Cross-field
rules (for example version-only options, attachment labels in prompts, simple versus advanced song
settings) are checked too and answer 422 invalid_settings; any setting not listed is 422
unknown_setting. Amounts are in kopecks (1 RUB = 100 kopecks). Each mode ends with an example run:
minimal valid settings (defaults elsewhere), example input files, the price and the outputs the
catalog plans for it.`;

/** The whole `docs/models.md`. */
export function renderModelsDoc(): string {
  const prices = loadPriceTable(MODELS);
  return `${[HEADER, renderOverview(), ...MODELS.map((model) => renderModel(model, prices))].join('\n\n')}\n`;
}

if (import.meta.main) {
  const doc = renderModelsDoc();
  if (process.argv.includes('--write')) {
    fs.writeFileSync(MODELS_DOC_PATH, doc);
    process.stderr.write(`wrote ${MODELS_DOC_PATH}\n`);
  } else {
    process.stdout.write(doc);
  }
}
