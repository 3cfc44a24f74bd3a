/**
 * Renders `docs/libraries.md` from the library declarations (`src/libraries/`), so the page cannot drift
 * from the code: each library's address, creation body (from its schema), limits, list, record, states
 * and steps with their times, refusal codes and notes.
 *
 *   npx node scripts/libraries-doc.ts > docs/libraries.md    print the document
 *   npx node scripts/libraries-doc.ts --write                write docs/libraries.md
 *
 * `test/libraries-doc.test.ts` fails when the committed document differs from `renderLibrariesDoc()`.
 */
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { LIBRARY_WAIT_MS } from '../src/generators/index.ts';
import { SIM_LIBRARY_TIMES } from '../src/generators/simulator/library-sim.ts';
import {
  acceptedFilesView,
  HELPER_CALLS_PER_HOUR,
  LIBRARIES,
  type LibraryDecl,
  libraryPath,
  limitsOf,
  MAX_RECORDS_PER_LIBRARY,
} from '../src/libraries/index.ts';

type JsonSchema = z.core.JSONSchema.JSONSchema;

/** Where the generated document lives. */
export const LIBRARIES_DOC_PATH: string = fileURLToPath(new URL('../docs/libraries.md', import.meta.url));

/** How to bring the document up to date (printed by the drift test). */
export const REGENERATE_COMMAND = 'npm run docs:libraries';

// ---------------------------------------------------------------------------------------------
// Hand-written parts: what holds for every library, use in tasks, the helpers, known limits
// ---------------------------------------------------------------------------------------------

const INTRO = `# Personal libraries and free helpers

<!-- Generated from src/libraries/ by \`${REGENERATE_COMMAND}\`; edit the declarations, not this file. -->

The reference ("Library records", "Element library", "Singing personas", "Singing voices", "Other libraries",
"Free helpers") and CONTRACT §7 describe these endpoints. This page lists every library with what the two
documents leave open, and what we decided. Each library is one declaration in \`src/libraries/\`, listed in
\`src/libraries/registry.ts\`; this page is generated from them.`;

const COMMON_RULES = `## Common rules

- **Addresses**: \`GET|POST /v1/models/{key}/{library}\`, \`GET|DELETE /v1/models/{key}/{library}/{id}\`. Each
  library has its own address, so a library path on a model that has no such library is
  \`404 not_found\`; under a key that no model has it is \`404 model_not_found\` (the reference's "Unknown model
  key"). OpenAPI (\`/openapi.json\`, tag \`libraries\`) lists every address with its creation body.
- **Lists**: \`{ <library>: [...], limits: {...} }\`, the field named after the path's last segment. Elements also
  carry \`tags\`, omni voices \`presets\`. Newest first, only the caller's account (shared by all its keys),
  deleted records left out. There is no paging: one account keeps at most ${MAX_RECORDS_PER_LIBRARY} live records in each library
  (\`limits.records\`), and one more is \`409 too_many_records\` before the generator is asked; deleting a
  record frees its place.
- **Records** carry \`id\`, \`name\`, \`created_at\`; voices, styles and characters also carry \`status\`. A failed
  record carries \`error\`.
- **Creation bodies** are strict: any other field is \`422 invalid_request\` naming the field, as is any broken
  bound (the message names the field, for example \`body.image_urls: …\`). A field named \`*_url\` takes one
  http(s) link as a string or a one-item list; \`*_urls\` takes a list. Every link of every library (the
  \`accepted_files\` of its list's \`limits\`) is probed before anything is created, all at once, through the same
  guarded fetcher and rules as task settings: a private, loopback or metadata address or an unreadable file is
  \`422 invalid_request\` naming the link (\`body.image_urls.0: …\`), a wrong type \`422 file_type\`, too big \`413
  file_too_large\`, too long (over the field's \`max_duration_seconds\`, or of a length that cannot be read
  where the field has one) \`422 invalid_request\`. Own uploads are read from their record. Links then go to
  the generator unchanged (reference "Other libraries"); what it does not accept is a \`502\`.
- **Idempotency-Key** (CONTRACT §4) works on every creation: the same key and body give the same record with
  \`201\` and \`Idempotent-Replayed: true\`; another body under the key is \`409 idempotency_conflict\`. The body is
  compared after defaults are filled in and \`*_url\` lists are reduced to their link, so \`"a"\` and \`["a"]\` are
  the same request.
- **Uploads a record is made from**: the caller's own uploads a creation body links to (any \`*_url\` or
  \`*_urls\` field) are held by the record from the transaction that saves it (table \`library_uploads\`): the
  sweeper keeps them, and their direct links keep working and their bytes keep counting against
  \`UPLOAD_QUOTA\` past their \`expires_at\`, so an element's cover, a singing voice's source and the files a
  Seedance character or voice stands for are still there when a task uses the record. Deleting the record
  releases them in the same transaction; each then expires by its own \`expires_at\`, at once when that has
  passed. Links to another account's uploads are never held. \`DELETE /v1/files/{id}\` still deletes a held
  upload (CONTRACT §6: its link answers 404 from then on); the record stays, and a provider sent that link
  fails the task, as with any link that has gone.
- **Deletion**: \`DELETE …/{id}\` answers \`204\`; the record is gone from lists and reads, tasks already made keep
  their results; of several deletes of one record at once one answers \`204\` and the others
  \`404 record_not_found\`, as a second delete does. An element's name or a persona's song version is free
  again after deletion. A record made at a provider (an ElevenLabs voice or finetune, a Kling element, a
  Recraft style) is then deleted there too, by the sweeper within seconds (docs/providers.md, "Helpers and
  libraries"), and the uploads it held are released.
- **Refusals**: another account's, a deleted or an unknown record is \`404 record_not_found\` on GET, DELETE,
  verify and retry. A key restricted to other models gets \`403 model_not_allowed_for_key\` on that model's
  libraries, before its body or id is checked. A model switched off by the operator takes no new records
  (\`503 model_unavailable\`) but still lists them. The generator unreachable: \`503 sg_unavailable\` with \`Retry-After\`, nothing created. The
  generator refuses: \`502\` with the library's code (below) and \`Retry-After: 60\`.
- **Waiting**: creations that wait for the generator wait at most five minutes on our side (the reference asks
  clients for at least five minutes); running out of time is the library's \`502\`.
- **Storage**: one table \`library_records\` for every library (public fields in \`data\`, bookkeeping in
  \`private\`), with a partial unique index over the live records for element names and persona song versions.
- **Learning records** (music styles, singing voices): the generator says when the step ends; the record stores
  that moment (\`ready_at\`) and its next state, and the first read after it applies and stores the transition.
  No timers run, every process sees the same state, and tests move time with the injected clock. Where a
  provider ends the step, a read asks it; a list asks its due records four at a time within one budget of
  \`SETTLE_ASK_MS\` (30 s) for the whole list, so a provider that hangs delays a list once, not once per
  record, and the records not asked in time show their last state until the next read. A step the provider
  still runs an hour after it began (\`POLLED_STEP_LIMIT_MS\`; the reference's longest learning is 10 minutes)
  turns the record \`failed\` with \`error\` at the next question, and it is not asked about again.`;

function useInTasks(): string {
  const missing = unique(LIBRARIES.map((d) => d.refusals.missing));
  const notReady = unique(LIBRARIES.flatMap((d) => (d.refusals.notReady ? [d.refusals.notReady] : [])));
  return `## Use in tasks

\`resolveReferences(db, accountId, refs, now)\` (\`src/libraries/index.ts\`) checks the library items a task's
settings name, in order, before any hold (CONTRACT §7), with the codes each library declares (\`refusals\`):

- unknown, deleted, foreign or of another library → \`422\` ${code(missing)};
- a record with states that is not \`ready\` → \`422\` ${code(notReady)}.

It returns the records' fields keyed by id (an image style's \`type\` decides SVG or PNG), and the
library's presets (omni voices) to anyone. It reads the state as of \`now\`, so a style whose training time
has passed counts as ready even before anyone has read it.

A record deleted after its task was accepted ("a vanished voice gets a refusal without charge"):
- while the task is still queued, the worker checks its records again before the run starts, and the task
  fails with \`input_unavailable\` and its hold voided: nothing is charged;
- once the run has started, the provider already has what it needs and the run goes on; it is charged
  when it succeeds, like any run. Deleting the record stops only its later uses.`;
}

const LIBRARY_WAIT_MINUTES = LIBRARY_WAIT_MS / 60_000;

const HELPERS = `## Free helpers

| Method | Path | Body | Answer |
|---|---|---|---|
| POST | \`/v1/models/music/lyrics\` | \`prompt\` (1–3000) | \`{ variants: [ { title, text } ] }\`: 2 or 3 variants with verses and a chorus built from the idea's words, in its language (the simulator: Russian lines for an idea written mostly in Cyrillic, English otherwise; the \`[Verse 1]\`, \`[Chorus]\` tags stay English, as the provider reads them) |
| POST | \`/v1/models/music/style-boost\` | \`style\` (1–1000) | \`{ style }\`: genre, tempo (BPM), key, instruments, vocals, production and structure derived from the input |
| POST | \`/v1/models/image/enhance\` | \`prompt\` (1–10000) | \`{ prompt }\`: the caller's description first, then scene cues, light, palette, framing and finish |

- Free. At most **${HELPER_CALLS_PER_HOUR} calls per sliding hour per account** (\`RATE_LIMIT_HELPERS\`, default \`${HELPER_CALLS_PER_HOUR}/1h\`) across all three, shared by the account's keys and by
  every process (counted in the \`helper_calls\` table); the ${HELPER_CALLS_PER_HOUR + 1}st is \`429 rate_limited\` with \`Retry-After\`: the
  seconds until the oldest call in the window leaves it.
- A call the generator could not take (\`503 sg_unavailable\`, \`[sim:unavailable]\` in the input) does not count, nor
  does one it refused or did not answer within ${LIBRARY_WAIT_MINUTES} minutes: \`502 helper_failed\` with \`Retry-After\` (a helper
  has no record, so never a library's \`*_create_failed\`).
- \`lyrics\` and \`style-boost\` belong to model \`music\`, \`enhance\` to \`image\`: a key restricted to other models gets
  \`403 model_not_allowed_for_key\`.`;

const KNOWN_LIMITS = `## Idempotency of creations

- A creation's Idempotency-Key stays locked while the generator may still be answering (the longest wait for
  the generator, ${LIBRARY_WAIT_MINUTES} minutes, and one more), so a concurrent retry under the same key answers
  \`409 request_in_progress\` and never makes a second record.`;

// ---------------------------------------------------------------------------------------------
// Generated parts
// ---------------------------------------------------------------------------------------------

function unique<T>(items: readonly T[]): T[] {
  return [...new Set(items)];
}

/** `` `a`, `b` `` */
function code(items: readonly unknown[]): string {
  return items.map((i) => `\`${String(i)}\``).join(', ');
}

/** 7 min, 30 s: a time at SIM_SPEED 1. */
function duration(ms: number): string {
  return ms >= 60_000 && ms % 60_000 === 0 ? `${ms / 60_000} min` : `${ms / 1000} s`;
}

function range(min: number | undefined, max: number | undefined, unit: string): string {
  if (max === undefined) return `at least ${min ?? 0} ${unit}`;
  if (min === max) return `${max} ${unit}`;
  return (min ?? 0) === 0 ? `at most ${max} ${unit}` : `${min}–${max} ${unit}`;
}

/** One body field: its type and bounds, default or optional, and its description. */
function bodyField(name: string, schema: JsonSchema, required: boolean): string {
  const parts: string[] = [];
  if (name.endsWith('_url')) parts.push('one link');
  else if (schema.enum) parts.push(`one of ${code(schema.enum)}`);
  else if (schema.type === 'array') parts.push(range(schema.minItems, schema.maxItems, 'links'));
  else if (schema.type === 'string') {
    parts.push(
      schema.maxLength === undefined
        ? 'text'
        : `text, ${range(schema.minLength, schema.maxLength, 'characters')}`,
    );
  } else if (schema.type === 'integer' || schema.type === 'number') {
    const bounded = schema.maximum !== undefined && schema.maximum < Number.MAX_SAFE_INTEGER;
    const kind = schema.type === 'integer' ? 'integer' : 'number';
    parts.push(bounded ? `${kind}, ${schema.minimum}–${schema.maximum}` : `${kind} ≥ ${schema.minimum}`);
    if (schema.multipleOf !== undefined) parts.push(`in steps of ${schema.multipleOf}`);
  } else if (schema.type === 'boolean') parts.push('true or false');
  if (schema.default !== undefined) parts.push(`default \`${JSON.stringify(schema.default)}\``);
  else if (!required) parts.push('optional');
  if (schema.description) parts.push(schema.description);
  return `  - \`${name}\`: ${parts.join('; ')}`;
}

function creationBody(decl: LibraryDecl): string[] {
  const json = z.toJSONSchema(decl.body, { io: 'input', unrepresentable: 'any' }) as JsonSchema;
  const required = new Set(json.required ?? []);
  return Object.entries(json.properties ?? {}).map(([name, schema]) =>
    bodyField(name, schema as JsonSchema, required.has(name)),
  );
}

/** One entry of `limits` in words: `name` 1–100 characters, `track_urls` 1–10 links … */
function limit(name: string, value: unknown): string {
  const v = value as Record<string, number>;
  if (Array.isArray(value)) return `\`${name}\`: ${code(value)}`;
  if (typeof value === 'string') return `\`${name}\`: ${value}`;
  if ('max_length' in v) return `\`${name}\`: ${range(v['min_length'], v['max_length'], 'characters')}`;
  if ('max_items' in v) {
    return `\`${name}\`: ${v['max_items'] === 1 ? 'one link' : range(v['min_items'], v['max_items'], 'links')}`;
  }
  return `\`${name}\`: ${range(v['min'], v['max'], '')}`.trimEnd();
}

function acceptedFiles(decl: LibraryDecl): string {
  const view = acceptedFilesView({ ...decl.files, ...decl.laterFiles });
  return Object.entries(view)
    .map(([field, f]) => {
      const seconds = f.max_duration_seconds === undefined ? '' : `, ≤ ${f.max_duration_seconds} s`;
      return `\`${field}\` ${f.formats.join('/')} ≤ ${f.max_size_mb} MB${seconds}`;
    })
    .join('; ');
}

function limits(decl: LibraryDecl): string {
  const shown = Object.entries(limitsOf(decl)).filter(([k]) => k !== 'accepted_files');
  const files = acceptedFiles(decl);
  return [
    ...shown.map(([k, v]) => limit(k, v)),
    ...(files === '' ? [] : [`\`accepted_files\`: ${files}`]),
  ].join('; ');
}

function recordFields(decl: LibraryDecl): string {
  const json = z.toJSONSchema(decl.record, { io: 'output', unrepresentable: 'any' }) as JsonSchema;
  return Object.entries(json.properties ?? {})
    .map(([name, s]) => {
      const about = (s as JsonSchema).description;
      return about ? `\`${name}\` (${about})` : `\`${name}\``;
    })
    .join(', ');
}

/** States and steps, with their times: `training` (7 min) → `ready` or `failed` (with `error`). */
function states(decl: LibraryDecl): string {
  const saved = `saved while the request waits, about ${duration(SIM_LIBRARY_TIMES.save)}`;
  if (!decl.states) return `none (${saved})`;
  if (!decl.learns) return `${code(decl.states)} (${saved})`;
  const failed = '`failed` (with `error`)';
  const learning = `\`${decl.learns.initial}\` (${duration(decl.learns.typicalMs)}) → \`${decl.learns.succeeds}\` or ${failed}`;
  const steps = Object.entries(decl.steps ?? {}).map(([name, step]) => {
    const wait = step.typicalMs === undefined ? '' : ` (${duration(step.typicalMs)})`;
    const end = step.succeeds === undefined ? '' : ` → \`${step.succeeds}\` or ${failed}`;
    return `${name}: \`${step.from}\` → \`${step.to}\`${wait}${end}`;
  });
  return [learning, ...steps].join('; ');
}

function refusals(decl: LibraryDecl): string {
  const taken = decl.taken?.({ name: '', data: {} }).code;
  const steps = Object.entries(decl.steps ?? {}).map(
    ([name, step]) => `\`409 ${step.refused().code}\` (${name} outside \`${step.from}\`)`,
  );
  const creation = [
    ...(taken ? [`\`409 ${taken}\``] : []),
    ...steps,
    `\`502 ${decl.failCode}\``,
    ...(decl.learns ? ['a failure while learning shows as `failed`'] : []),
  ];
  const { missing, notReady } = decl.refusals;
  const inTasks = notReady ? `\`422 ${missing}\`, \`422 ${notReady}\`` : `\`422 ${missing}\``;
  return `${creation.join(', ')}; a task naming an item it cannot use: ${inTasks}`;
}

function library(decl: LibraryDecl): string {
  const path = libraryPath(decl);
  const extras = Object.keys(decl.listExtras ?? {});
  const list = `\`{ ${decl.segment}: [...], ${extras.map((e) => `${e}, `).join('')}limits }\``;
  const lines = [
    `### \`${decl.model}/${decl.segment}\`: ${decl.title}`,
    '',
    `- **Address**: \`${path}\``,
    '- **Creation body** (a field is required unless it is optional or has a default):',
    ...creationBody(decl),
    ...(decl.notes.rules ? [`- **Rules**: ${decl.notes.rules}`] : []),
    `- **List**: ${list}`,
    `- **Limits** (the list's \`limits\`): ${limits(decl)}`,
    `- **Record**: ${recordFields(decl)}`,
    `- **States**: ${states(decl)}`,
    `- **Refusals**: ${refusals(decl)}`,
    ...(decl.notes.decisions ? [`- **Decisions**: ${decl.notes.decisions}`] : []),
  ];
  return lines.join('\n');
}

function overview(): string {
  const rows = LIBRARIES.map((d) => {
    const learns = d.learns ? `learns (${duration(d.learns.typicalMs)})` : 'saved while waiting';
    return `| \`${d.model}/${d.segment}\` | ${d.title} | ${d.states ? code(d.states) : 'none'} | ${learns} |`;
  });
  return ['| Library | Record | States | Creation |', '|---|---|---|---|', ...rows].join('\n');
}

/** The whole document, as committed in docs/libraries.md. */
export function renderLibrariesDoc(): string {
  const sections = [
    INTRO,
    COMMON_RULES,
    '## Libraries',
    'Times are for `SIM_SPEED=1`; the simulator divides them by `SIM_SPEED`.',
    overview(),
    ...LIBRARIES.map(library),
    useInTasks(),
    HELPERS,
    KNOWN_LIMITS,
  ];
  return `${sections.join('\n\n')}\n`;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const doc = renderLibrariesDoc();
  if (process.argv.includes('--write')) fs.writeFileSync(LIBRARIES_DOC_PATH, doc);
  else process.stdout.write(doc);
}
