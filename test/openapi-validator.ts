/**
 * Checks answers against the OpenAPI documents the app serves, so the documents cannot drift from the
 * service: the status must be declared for the operation, the media type declared for that status, and a
 * JSON body valid against its schema (Ajv 2020: OpenAPI 3.1 schemas are JSON Schema 2020-12). The test
 * helper runs every injected answer through it; `OPENAPI_VALIDATION_REPORT=<file>` appends the counts of
 * each test process there when it exits.
 */
import fs from 'node:fs';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import type { OpenApiDocument, OpenApiOperation } from '../src/http/index.ts';

type Json = Record<string, unknown>;

// ajv-formats is CommonJS with a default export; under Node's ESM loader it arrives as the module object.
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ??
  addFormatsModule) as unknown as (ajv: Ajv2020) => void;

/** Counts of this process: answers checked and answers of no documented operation (left alone). */
export const validationCounts = { validated: 0, undocumented: 0 };

const reportFile = process.env.OPENAPI_VALIDATION_REPORT;
if (reportFile) {
  process.on('exit', () => {
    const file = process.argv.find((arg) => arg.endsWith('.test.ts')) ?? process.argv[1] ?? '';
    fs.appendFileSync(reportFile, `${JSON.stringify({ file, ...validationCounts })}\n`);
  });
}

/** An answer as the validator sees it. */
export interface CheckedResponse {
  method: string;
  url: string;
  status: number;
  contentType: string | undefined;
  body: string;
  /**
   * Header names of the answer (any case); when given, required declared headers must be among them, and
   * the ones a client acts on (Retry-After, Location, Idempotent-Replayed, Preference-Applied) declared.
   */
  headers?: readonly string[];
}

interface Route {
  doc: string;
  path: string;
  pattern: RegExp;
  params: number;
  operations: Record<string, OpenApiOperation>;
}

const pointer = (...parts: string[]): string =>
  parts.map((p) => `/${p.replaceAll('~', '~0').replaceAll('/', '~1')}`).join('');

/** Validates answers against one or more OpenAPI 3.1 documents (the public and the operator one). */
export class ResponseValidator {
  readonly #ajv = new Ajv2020({ strict: false, allErrors: true, validateSchema: false });
  readonly #routes: Route[] = [];
  readonly #docs = new Map<string, OpenApiDocument>();
  readonly #compiled = new Map<string, ValidateFunction>();

  constructor(docs: Record<string, OpenApiDocument>) {
    addFormats(this.#ajv);
    this.#ajv.addFormat('binary', true);
    for (const [name, doc] of Object.entries(docs)) {
      const id = `https://openapi.test/${name}.json`;
      this.#docs.set(id, doc);
      this.#ajv.addSchema(doc as unknown as Json, id);
      for (const [path, operations] of Object.entries(doc.paths)) {
        const source = path
          .split(/\{[^}]+\}/)
          .map((piece) => piece.replace(/[.*+?^$()|[\]\\]/g, '\\$&'))
          .join('[^/]+');
        this.#routes.push({
          doc: id,
          path,
          pattern: new RegExp(`^${source}$`),
          params: (path.match(/\{/g) ?? []).length,
          operations,
        });
      }
    }
    // A literal path wins over a template that also matches it.
    this.#routes.sort((a, b) => a.params - b.params);
  }

  /**
   * The violation of an answer, or null when it is as documented. Answers of no documented operation
   * (hidden routes, unknown addresses, methods a path does not have) are not judged.
   */
  check(response: CheckedResponse): string | null {
    const path = decoded(response.url.split('?')[0] ?? '/');
    const method = response.method.toLowerCase() === 'head' ? 'get' : response.method.toLowerCase();
    const route = this.#routes.find((r) => r.pattern.test(path) && r.operations[method]);
    const operation = route?.operations[method];
    if (!route || !operation) {
      validationCounts.undocumented += 1;
      return null;
    }
    validationCounts.validated += 1;
    const where = `${response.method} ${path} (${operation.operationId ?? route.path}) answered ${response.status}`;
    const status = String(response.status);
    const key = [status, `${status[0]}XX`, 'default'].find((k) => k in operation.responses);
    if (!key) {
      return `${where}, a status the document does not declare (declared: ${Object.keys(operation.responses).join(', ')})`;
    }
    let base = pointer('paths', route.path, method, 'responses', key);
    let declared = operation.responses[key] as Json;
    const target = typeof declared.$ref === 'string' ? declared.$ref : null;
    if (target) {
      base = target.slice(1);
      declared = this.#resolve(route.doc, base);
    }
    const missing = this.#missingHeaders(route.doc, declared, response.headers);
    if (missing.length > 0) return `${where} without the required header(s) ${missing.join(', ')}`;
    const undeclared = undeclaredHeaders(declared, response.headers);
    if (undeclared.length > 0) return `${where} with the undeclared header(s) ${undeclared.join(', ')}`;
    const content = (declared.content ?? {}) as Record<string, { schema?: Json }>;
    const media = response.contentType?.split(';')[0]?.trim().toLowerCase();
    if (!media) {
      if (response.body.length === 0) return null;
      return `${where} with a body but no Content-Type`;
    }
    const mediaKey = Object.keys(content).find((range) => mediaMatches(range, media));
    if (mediaKey === undefined) {
      return `${where} with ${media}, not declared for it (declared: ${Object.keys(content).join(', ') || 'no body'})`;
    }
    if (response.method.toUpperCase() === 'HEAD' || !isJson(media) || !content[mediaKey]?.schema) return null;
    let body: unknown;
    try {
      body = JSON.parse(response.body);
    } catch {
      return `${where} with ${media} that is not JSON: ${response.body.slice(0, 200)}`;
    }
    const schemaPointer = `${base}${pointer('content', mediaKey, 'schema')}`;
    const validate = this.#validator(route.doc, schemaPointer);
    if (validate(body)) return null;
    const problems = (validate.errors ?? [])
      .slice(0, 5)
      .map((e) => `${e.instancePath || '/'} ${e.message ?? ''} ${JSON.stringify(e.params)}`)
      .join('; ');
    return `${where} with a body the schema refuses: ${problems}\nbody: ${response.body.slice(0, 600)}`;
  }

  #missingHeaders(doc: string, declared: Json, sent: readonly string[] | undefined): string[] {
    if (!sent) return [];
    const present = new Set(sent.map((name) => name.toLowerCase()));
    return Object.entries((declared.headers ?? {}) as Record<string, Json>)
      .filter(([name, header]) => {
        const resolved = typeof header.$ref === 'string' ? this.#resolve(doc, header.$ref.slice(1)) : header;
        return resolved.required === true && !present.has(name.toLowerCase());
      })
      .map(([name]) => name);
  }

  #validator(doc: string, schemaPointer: string): ValidateFunction {
    const id = `${doc}#${schemaPointer}`;
    let validate = this.#compiled.get(id);
    if (!validate) {
      validate = this.#ajv.compile({ $ref: id });
      this.#compiled.set(id, validate);
    }
    return validate;
  }

  #resolve(doc: string, at: string): Json {
    let node: unknown = this.#docs.get(doc);
    for (const part of at.split('/').slice(1)) {
      node = (node as Json | undefined)?.[part.replaceAll('~1', '/').replaceAll('~0', '~')];
    }
    return (node ?? {}) as Json;
  }
}

/** The path as the router reads it; a malformed escape (a test of 404 on bad URLs) stays as sent. */
function decoded(path: string): string {
  try {
    return decodeURI(path);
  } catch {
    return path;
  }
}

/** Headers a client acts on: an answer that sends one must declare it. */
const ACTED_ON_HEADERS = ['retry-after', 'location', 'idempotent-replayed', 'preference-applied'];

function undeclaredHeaders(declared: Json, sent: readonly string[] | undefined): string[] {
  const names = new Set(Object.keys((declared.headers ?? {}) as Json).map((name) => name.toLowerCase()));
  const present = (sent ?? []).map((name) => name.toLowerCase());
  return ACTED_ON_HEADERS.filter((name) => present.includes(name) && !names.has(name));
}

function mediaMatches(range: string, media: string): boolean {
  const declared = range.toLowerCase();
  if (declared === '*/*' || declared === media) return true;
  return declared.endsWith('/*') && media.startsWith(declared.slice(0, -1));
}

function isJson(media: string): boolean {
  return media === 'application/json' || media.endsWith('+json');
}
