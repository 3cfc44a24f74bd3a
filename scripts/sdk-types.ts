/**
 * Writes sdk/src/types.gen.ts from the service's OpenAPI document (`npm run sdk:types`). The app is built
 * in-process without a port on a throw-away data folder, so the types come from the same schemas the routes
 * validate with. Named types are taken from `components.schemas` when the document has them, and from the
 * operations' inline schemas otherwise, so the script keeps working as the document gains shared components.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { compile, type JSONSchema } from 'json-schema-to-typescript';
import { buildApp } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { createContainer } from '../src/container.ts';

const ROOT = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
export const SDK_TYPES_PATH = path.join(ROOT, 'sdk', 'src', 'types.gen.ts');
export const SDK_TYPES_COMMAND = 'npm run sdk:types';

type Schema = Record<string, unknown>;
interface Operation {
  operationId?: string;
  requestBody?: { content?: Record<string, { schema?: Schema }> };
  responses?: Record<string, { content?: Record<string, { schema?: Schema }> }>;
}
interface OpenApiDoc {
  paths: Record<string, Record<string, Operation>>;
  components?: { schemas?: Record<string, Schema> };
}

/** The public OpenAPI document, as GET /openapi.json serves it. */
export async function loadOpenApi(): Promise<OpenApiDoc> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gta-sdk-types-'));
  const config = loadConfig({ DATA_DIR: dir, LOG_LEVEL: 'silent', PUBLIC_BASE_URL: 'http://localhost:8080' });
  const container = await createContainer(config);
  try {
    const app = await buildApp(container);
    await app.ready();
    const doc = structuredClone(app.swagger()) as unknown as OpenApiDoc;
    await app.close();
    return doc;
  } finally {
    await container.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** Component names that would shadow a global of the same name in TypeScript. */
const RENAMED: Readonly<Record<string, string>> = { Error: 'ErrorBody' };

/** `Settings.model-3d.text_to_model` → `SettingsModel3DTextToModel`. */
export function typeName(componentName: string): string {
  const renamed = RENAMED[componentName];
  if (renamed) return renamed;
  return (
    componentName
      .split(/[^A-Za-z0-9]+/)
      .filter(Boolean)
      // json-schema-to-typescript also capitalises a letter after a digit (`3d` → `3D`): named alike here.
      .map((part) =>
        part.replace(
          /(^|[0-9])([a-z])/g,
          (_all, before: string, letter: string) => before + letter.toUpperCase(),
        ),
      )
      .join('')
  );
}

const json = (holder: { content?: Record<string, { schema?: Schema }> } | undefined): Schema | undefined =>
  holder?.content?.['application/json']?.schema;

/** The named types the client uses: a component of that name, else the operation's own schema. */
const NAMED: ReadonlyArray<{
  name: string;
  component?: string;
  path: string;
  method: string;
  status?: string;
}> = [
  { name: 'Task', component: 'Task', path: '/v1/tasks/{id}', method: 'get', status: '200' },
  { name: 'TaskList', path: '/v1/tasks', method: 'get', status: '200' },
  { name: 'TaskRequest', component: 'TaskRequest', path: '/v1/tasks', method: 'post' },
  { name: 'Price', path: '/v1/price', method: 'post', status: '200' },
  { name: 'ModelList', path: '/v1/models', method: 'get', status: '200' },
  { name: 'Me', path: '/v1/me', method: 'get', status: '200' },
  { name: 'Upload', component: 'Upload', path: '/v1/files', method: 'post', status: '201' },
  { name: 'ErrorBody', component: 'Error', path: '/v1/tasks/{id}', method: 'get', status: '404' },
];

/** `/v1/models/{model}/{segment}` addresses with a creation: the libraries. */
function libraryPaths(doc: OpenApiDoc): Array<{ model: string; segment: string; path: string }> {
  return Object.keys(doc.paths)
    .map((p) => /^\/v1\/models\/([^/{}]+)\/([^/{}]+)$/.exec(p))
    .filter((m): m is RegExpExecArray => m !== null)
    .filter((m) => doc.paths[m[0]]?.['get'] !== undefined && doc.paths[m[0]]?.['post'] !== undefined)
    .map((m) => ({ model: m[1]!, segment: m[2]!, path: m[0] }));
}

/** `/v1/models/{model}/{helper}` addresses with a POST only: the free helpers. */
function helperPaths(doc: OpenApiDoc): Array<{ model: string; helper: string; path: string }> {
  return Object.keys(doc.paths)
    .map((p) => /^\/v1\/models\/([^/{}]+)\/([^/{}]+)$/.exec(p))
    .filter((m): m is RegExpExecArray => m !== null)
    .filter((m) => doc.paths[m[0]]?.['get'] === undefined && doc.paths[m[0]]?.['post'] !== undefined)
    .map((m) => ({ model: m[1]!, helper: m[2]!, path: m[0] }));
}

function isNeverSchema(value: object): boolean {
  const keys = Object.keys(value);
  const not = (value as { not?: unknown }).not;
  return keys.length === 1 && typeof not === 'object' && not !== null && Object.keys(not).length === 0;
}

/** Rewrites `#/components/schemas/X` references to the definitions json-schema-to-typescript resolves. */
function relink(value: unknown, names: Map<string, string>): unknown {
  if (Array.isArray(value)) return value.map((item) => relink(item, names));
  if (value === null || typeof value !== 'object') return value;
  // `{"not": {}}`, a field the settings' branch refuses whenever it is set: `never` in TypeScript.
  if (isNeverSchema(value)) return { tsType: 'never' };
  const out: Schema = {};
  for (const [key, item] of Object.entries(value)) {
    if (key === '$ref' && typeof item === 'string' && item.startsWith('#/components/schemas/')) {
      const component = decodeURIComponent(item.slice('#/components/schemas/'.length));
      out[key] = `#/definitions/${names.get(component) ?? typeName(component)}`;
    } else out[key] = relink(item, names);
  }
  return out;
}

/** The TypeScript source of sdk/src/types.gen.ts. */
export async function renderSdkTypes(doc?: OpenApiDoc): Promise<string> {
  const api = doc ?? (await loadOpenApi());
  const components = api.components?.schemas ?? {};
  const names = new Map(Object.keys(components).map((c) => [c, typeName(c)]));
  const definitions: Record<string, Schema> = {};
  for (const [component, schema] of Object.entries(components)) {
    definitions[names.get(component)!] = { ...schema, title: names.get(component)! };
  }
  const op = (p: string, method: string): Operation | undefined => api.paths[p]?.[method];
  // A schema that only points at a component becomes a type alias: given to the compiler with a title of
  // its own, the component would be emitted a second time under a numbered name.
  const aliases = new Map<string, string>();
  const take = (name: string, schema: Schema | undefined): void => {
    if (!schema || definitions[name] !== undefined || aliases.has(name)) return;
    const target = typeof schema['$ref'] === 'string' ? schema['$ref'] : '';
    if (target.startsWith('#/components/schemas/')) {
      const component = decodeURIComponent(target.slice('#/components/schemas/'.length));
      aliases.set(name, names.get(component) ?? typeName(component));
    } else definitions[name] = { ...schema, title: name };
  };
  for (const named of NAMED) {
    if (named.component && components[named.component]) {
      if (named.name !== names.get(named.component)) {
        take(named.name, { $ref: `#/components/schemas/${named.component}` });
      }
      continue;
    }
    const operation = op(named.path, named.method);
    take(
      named.name,
      named.status ? json(operation?.responses?.[named.status]) : json(operation?.requestBody),
    );
  }
  const extra: string[] = [];
  const libraries = libraryPaths(api);
  for (const lib of libraries) {
    const base = typeName(`${lib.model} ${lib.segment}`);
    take(`${base}List`, json(op(lib.path, 'get')?.responses?.['200']));
    take(`${base}Record`, json(op(lib.path, 'post')?.responses?.['201']));
    take(`${base}Create`, json(op(lib.path, 'post')?.requestBody));
  }
  const helpers = helperPaths(api);
  for (const helper of helpers) {
    const base = typeName(`${helper.model} ${helper.helper}`);
    take(`${base}Request`, json(op(helper.path, 'post')?.requestBody));
    take(`${base}Response`, json(op(helper.path, 'post')?.responses?.['200']));
  }
  const root = relink({ title: 'Api', type: 'object', additionalProperties: false, definitions }, names);
  const body = await compile(root as JSONSchema, 'Api', {
    bannerComment: '',
    unreachableDefinitions: true,
    additionalProperties: false,
    format: false,
    strictIndexSignatures: true,
  });
  // Maps the client's generic methods read: settings per model, records and bodies per library, helpers.
  const settings = new Map<string, string[]>();
  for (const component of Object.keys(components)) {
    const m = /^Settings\.([^.]+)\.(.+)$/.exec(component);
    if (m) settings.set(m[1]!, [...(settings.get(m[1]!) ?? []), names.get(component)!]);
  }
  for (const [name, target] of aliases) extra.push(`export type ${name} = ${target};`);
  if (aliases.size > 0) extra.push('');
  extra.push("/** Settings of each model: a union of its modes' settings. */");
  extra.push('export interface SettingsByModel {');
  for (const [model, types] of settings) extra.push(`  ${JSON.stringify(model)}: ${types.join(' | ')};`);
  extra.push('}', '', '/** Each library, by `model/segment`: its list answer, record and creation body. */');
  extra.push('export interface LibraryTypes {');
  for (const lib of libraries) {
    const base = typeName(`${lib.model} ${lib.segment}`);
    extra.push(
      `  ${JSON.stringify(`${lib.model}/${lib.segment}`)}: { list: ${base}List; record: ${base}Record; create: ${base}Create };`,
    );
  }
  extra.push('}', '', '/** Each free helper, by `model/helper`: its request and answer. */');
  extra.push('export interface HelperTypes {');
  for (const helper of helpers) {
    const base = typeName(`${helper.model} ${helper.helper}`);
    extra.push(
      `  ${JSON.stringify(`${helper.model}/${helper.helper}`)}: { request: ${base}Request; response: ${base}Response };`,
    );
  }
  extra.push('}');
  const banner = [
    "// Generated from the service's OpenAPI document by scripts/sdk-types.ts: do not edit.",
    `// Regenerate with \`${SDK_TYPES_COMMAND}\`; a test fails when this file differs from a fresh generation.`,
    '',
  ].join('\n');
  const types = body
    .replace(/(\/\*\*(?:(?!\*\/)[\s\S])*\*\/\n)?export interface Api \{\s*\}\n/, '')
    .replace(
      / \* This interface was referenced by `Api`'s JSON-Schema\n \* via the `definition` "[^"]*"\.\n/g,
      '',
    )
    .replace(/\/\*\*\n \*\/\n/g, '');
  return biomeFormat(`${banner}${types}\n${extra.join('\n')}\n`);
}

/** The project's formatter, so the generated file passes `npm run lint` unchanged. */
function biomeFormat(source: string): string {
  const biome = path.join(ROOT, 'node_modules', '.bin', 'biome');
  const result = spawnSync(biome, ['format', `--stdin-file-path=${SDK_TYPES_PATH}`], {
    input: source,
    encoding: 'utf8',
    cwd: ROOT,
  });
  if (result.status !== 0) throw new Error(`biome format failed: ${result.stderr}`);
  return result.stdout;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const source = await renderSdkTypes();
  if (process.argv.includes('--write')) fs.writeFileSync(SDK_TYPES_PATH, source);
  else process.stdout.write(source);
}
