/**
 * The OpenAPI 3.1 documents (CONTRACT §16), generated from the zod schemas the routes validate and answer
 * with. @fastify/swagger walks the routes; `finishDocument` adds what a route schema cannot say (the
 * upload's raw bodies, the task request discriminated by model and mode, the refusals the framework can
 * answer on any operation); the public and operator documents are then cut out of the whole.
 */
import type { SwaggerOptions } from '@fastify/swagger';
import { createJsonSchemaTransform, jsonSchemaTransformObject } from 'fastify-type-provider-zod';
import { portableSteps } from '../catalog/index.ts';
import { discriminateTaskRequest, type Json, ref, type SettingsCatalog } from './openapi-settings.ts';

type Transform = ReturnType<typeof createJsonSchemaTransform>;

/** The parts of an OpenAPI document this module reads and writes. */
export interface OpenApiDocument {
  openapi: string;
  info: Json;
  servers?: Json[];
  tags?: Json[];
  security?: Json[];
  paths: Record<string, Record<string, OpenApiOperation>>;
  components: {
    schemas?: Record<string, Json>;
    responses?: Record<string, Json>;
    parameters?: Record<string, Json>;
    headers?: Record<string, Json>;
    securitySchemes?: Record<string, Json>;
  };
}

/** An operation of the document. */
export interface OpenApiOperation {
  operationId?: string;
  tags?: string[];
  requestBody?: { required?: boolean; content: Record<string, { schema?: Json }> };
  responses: Record<string, Json>;
  [key: string]: unknown;
}

const OPERATOR_PREFIX = '/admin/';

/**
 * Refusals any operation can meet (auth, the framework's parsing, limits, a broken backend). 408 and 413
 * too, whatever the method: a `GET` whose headers trickle in is cut with 408, and one whose headers (the
 * address among them) pass Node's 16 KB is 413, as a body that stalls or is too big is on a `POST`.
 */
const SHARED_REFUSALS: Record<string, [name: string, description: string]> = {
  401: ['Unauthorized', 'invalid_api_key, invalid_admin_token'],
  404: ['NotFound', 'not_found: a malformed address'],
  408: ['RequestTimeout', 'request_timeout: the headers or the body stalled or trickled'],
  413: ['TooLarge', 'request_too_large: the body or the headers are over the limit'],
  422: ['InvalidRequest', 'invalid_request: parameters, headers or body do not match the schema'],
  429: ['RateLimited', 'rate_limited (Retry-After says when to come back)'],
  500: [
    'InternalError',
    'internal_error: retry later; with Retry-After when a row the request changes was busy (nothing changed)',
  ],
  503: ['Unavailable', 'sg_unavailable: storage or database unreachable; retry later'],
};

/** Methods that change something: a dashboard session needs its CSRF token for them. */
const UNSAFE_METHODS = new Set(['post', 'put', 'patch', 'delete']);
/**
 * The refusal of a public operation with an unsafe method called with the dashboard's session cookie but
 * without its CSRF token (docs/people.md): any POST, PUT, PATCH or DELETE under /v1 can meet it.
 */
const CSRF_REFUSAL: [status: string, name: string, description: string] = [
  '403',
  'CsrfFailed',
  'csrf_failed: the session cookie without its X-CSRF-Token header',
];
/** Its code, added to the description of an operation's own 403. */
const CSRF_CODE = 'csrf_failed';

/** What `?lang=` is, where an operation does not say more of it. */
export const LANG_DESCRIPTION =
  'language of error messages (en, ru); before Accept-Language; any other value (empty, de) is ignored and Accept-Language decides';

/** Parameters every operation takes (CONTRACT §8): the message language and the caller's request id. */
const SHARED_PARAMETERS: Record<string, Json> = {
  Lang: {
    in: 'query',
    name: 'lang',
    required: false,
    description: LANG_DESCRIPTION,
    schema: { type: 'string' },
  },
  AcceptLanguage: {
    in: 'header',
    name: 'Accept-Language',
    required: false,
    description:
      'language of error messages when ?lang= is absent or not en or ru (q-values honoured; default en)',
    schema: { type: 'string' },
  },
  RequestId: {
    in: 'header',
    name: 'X-Request-Id',
    required: false,
    description: 'kept as the request id when printable and at most 128 characters',
    schema: { type: 'string', maxLength: 128 },
  },
};
/** Headers of answers: the request id on every one, Retry-After on refusals worth retrying later. */
const SHARED_HEADERS: Record<string, Json> = {
  RequestId: {
    description: "the request id (the caller's X-Request-Id when it was sane)",
    required: true,
    schema: { type: 'string' },
  },
  RetryAfter: { description: 'seconds to wait before trying again', schema: { type: 'integer' } },
  WWWAuthenticate: {
    description: 'Bearer, with error="invalid_token" when a token was sent but not accepted (RFC 6750)',
    schema: { type: 'string' },
  },
};
/**
 * The request budget of the caller's account (CONTRACT §8, IETF httpapi ratelimit-headers draft), on every
 * answer of the public API once the key or session is known: not on 401, nor on an address nobody serves.
 */
const RATE_LIMIT_HEADERS: Record<string, Json> = {
  RateLimitPolicy: {
    description: 'the budgets of the account, e.g. "account";q=120;w=60',
    schema: { type: 'string' },
  },
  RateLimit: {
    description: 'what is left of each budget and the seconds until it refills, e.g. "account";r=119;t=60',
    schema: { type: 'string' },
  },
};
const UNMETERED_RESPONSES = new Set(['Unauthorized', 'NotFound']);
/**
 * Statuses whose refusals may carry Retry-After: 502 is a library creation or a singing voice's step the
 * generator refused (60 s).
 */
const RETRY_STATUSES = new Set(['429', '500', '502', '503']);
/** A code that carries Retry-After where its status otherwise does not (409 request_in_progress, 1 s). */
const RETRY_CODE = 'request_in_progress';

/** Request bodies no route schema can hold: the upload is a stream, never validated as JSON. */
const UPLOAD_BODY = {
  required: true,
  content: {
    'multipart/form-data': {
      schema: {
        type: 'object',
        properties: {
          file: { type: 'string', format: 'binary', description: 'the file, with its filename' },
        },
        required: ['file'],
      },
    },
    'application/octet-stream': { schema: { type: 'string', format: 'binary' } },
    '*/*': {
      schema: {
        type: 'string',
        format: 'binary',
        description: 'a raw body of any type (recognised by content); name it with ?filename=',
      },
    },
  },
};
const TASK_REQUEST_OPERATIONS = new Set(['createTask', 'priceTask']);
const UPLOAD_OPERATIONS = new Set(['uploadFile']);

/** The transform of the zod provider, keeping the `headers` of responses declared with media types. */
const zodTransform = createJsonSchemaTransform({});
const transform: Transform = (input) => {
  const out = zodTransform(input);
  const declared = (input.schema as { response?: Record<string, unknown> } | undefined)?.response ?? {};
  // A hidden route (`hide: true`, e.g. /metrics) comes back without a schema.
  const built = (out.schema as { response?: Record<string, Json> } | undefined)?.response ?? {};
  for (const [status, answer] of Object.entries(declared)) {
    const headers = (answer as { content?: unknown; headers?: unknown }).headers;
    const target = built[status];
    if (headers && target && (answer as { content?: unknown }).content) target.headers = headers;
  }
  return out;
};

/** Options of @fastify/swagger: the whole document, public and operator operations together. */
export function swaggerOptions(baseUrl: string, catalog: SettingsCatalog): SwaggerOptions {
  return {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Generation Task API',
        version: '1.0.0',
        description:
          'One API key opens many generative models (3D, video, music and sounds, speech, images): create tasks, poll them, download result files; a prepaid wallet pays for runs.',
      },
      servers: [{ url: baseUrl }],
      tags: [
        { name: 'models', description: 'Models and the rights of the key' },
        { name: 'tasks', description: 'Generation tasks, prices and result files' },
        { name: 'files', description: 'Own files to link from settings' },
        { name: 'libraries', description: 'Personal library records of models' },
        { name: 'helpers', description: 'Free helpers' },
        { name: 'webhooks', description: 'Signed events of tasks and library records, and their deliveries' },
        { name: 'topups', description: 'Wallet top-ups' },
        { name: 'operator', description: 'Operator API (ADMIN_TOKEN)' },
      ],
      components: {
        securitySchemes: {
          bearer: { type: 'http', scheme: 'bearer', description: 'an API key' },
          session: {
            type: 'apiKey',
            in: 'cookie',
            name: 'gta_session',
            description:
              "the dashboard's session, when no Authorization header is sent; POST, PUT, PATCH and DELETE also need its X-CSRF-Token header (docs/people.md)",
          },
        },
        schemas: catalog.schemas,
      },
      security: [{ bearer: [] }, { session: [] }],
    },
    transform,
    transformObject: (input) =>
      finishDocument(jsonSchemaTransformObject(input) as unknown as OpenApiDocument, catalog) as never,
  };
}

/** Adds to the generated document what route schemas cannot carry (see the module comment). */
export function finishDocument(doc: OpenApiDocument, catalog: SettingsCatalog): OpenApiDocument {
  doc.components.schemas ??= {};
  doc.components.responses ??= {};
  doc.components.parameters = { ...doc.components.parameters, ...SHARED_PARAMETERS };
  doc.components.headers = { ...doc.components.headers, ...SHARED_HEADERS };
  const { schemas, responses } = doc.components;
  const [csrfStatus, csrfName, csrfDescription] = CSRF_REFUSAL;
  const refusals = { ...SHARED_REFUSALS, [csrfStatus]: [csrfName, csrfDescription] };
  for (const [status, [name, description]] of Object.entries(refusals)) {
    responses[name] = {
      description: `${status} ${description}`,
      content: { 'application/json': { schema: ref('schemas', 'Error') } },
    };
    addHeaders(status, responses[name]);
  }
  for (const [path, operations] of Object.entries(doc.paths)) {
    for (const [method, operation] of Object.entries(operations)) {
      const id = operation.operationId ?? '';
      if (TASK_REQUEST_OPERATIONS.has(id)) discriminateTaskRequest(operation, schemas, catalog);
      if (UPLOAD_OPERATIONS.has(id)) operation.requestBody = structuredClone(UPLOAD_BODY);
      if (mayBeLeftOut(operation)) operation.requestBody!.required = false;
      addParameters(operation);
      for (const [status, answer] of Object.entries(operation.responses)) {
        if (typeof answer.$ref !== 'string') addHeaders(status, answer);
      }
      for (const [status, [name]] of Object.entries(SHARED_REFUSALS)) {
        operation.responses[status] ??= ref('responses', name);
      }
      if (UNSAFE_METHODS.has(method) && !path.startsWith(OPERATOR_PREFIX)) {
        // A route's own 403 (model_not_allowed_for_key, …) is met by a session without the token too.
        const own = operation.responses[csrfStatus];
        if (own === undefined) operation.responses[csrfStatus] = ref('responses', csrfName);
        else if (!String(own.description ?? '').includes(CSRF_CODE)) {
          own.description = `${String(own.description)}, ${CSRF_CODE}`;
        }
      }
    }
  }
  // Library bodies' decimal steps, as the settings' (catalog `portableSteps`).
  return portableSteps(doc);
}

/**
 * Whether an operation's JSON body may be null (`noBody` in routes/schemas.ts): Fastify reads a request
 * without a body as null, so such a body may be left out, which the generator's `required: true` denies.
 */
function mayBeLeftOut(operation: OpenApiOperation): boolean {
  const schema = operation.requestBody?.content['application/json']?.schema;
  const choices = (schema?.anyOf ?? []) as Json[];
  return choices.some((choice) => choice.type === 'null');
}

/**
 * The shared parameters an operation does not declare itself (a route's own `lang` wins). One it declares
 * just as the shared one is (`installLangQuery`'s `lang`) is written as the shared one's reference.
 */
function addParameters(operation: OpenApiOperation): void {
  const isShared = (p: Json) =>
    Object.values(SHARED_PARAMETERS).some(
      (shared) => shared.in === p.in && shared.name === p.name && shared.description === p.description,
    );
  const own = ((operation.parameters ?? []) as Json[]).filter((p) => !isShared(p));
  const taken = new Set(own.map((p) => `${String(p.in)}:${String(p.name).toLowerCase()}`));
  const shared = Object.entries(SHARED_PARAMETERS)
    .filter(([, p]) => !taken.has(`${String(p.in)}:${String(p.name).toLowerCase()}`))
    .map(([name]) => ref('parameters', name));
  operation.parameters = [...own, ...shared];
}

function addHeaders(status: string, answer: Json): void {
  const headers = (answer.headers ?? {}) as Record<string, Json>;
  headers['X-Request-Id'] ??= ref('headers', 'RequestId');
  const retries = RETRY_STATUSES.has(status) || String(answer.description ?? '').includes(RETRY_CODE);
  if (retries) headers['Retry-After'] ??= ref('headers', 'RetryAfter');
  if (status === '401') headers['WWW-Authenticate'] ??= ref('headers', 'WWWAuthenticate');
  answer.headers = headers;
}

function addRateLimitHeaders(answer: Json): void {
  const headers = (answer.headers ?? {}) as Record<string, Json>;
  headers['RateLimit-Policy'] ??= ref('headers', 'RateLimitPolicy');
  headers.RateLimit ??= ref('headers', 'RateLimit');
  answer.headers = headers;
}

/** The document API users get: every operation but the operator's. */
export function publicDocument(whole: OpenApiDocument): OpenApiDocument {
  const doc = cut(whole, (path) => !path.startsWith(OPERATOR_PREFIX));
  doc.tags = (doc.tags ?? []).filter((tag) => tag.name !== 'operator');
  doc.components.headers = { ...doc.components.headers, ...RATE_LIMIT_HEADERS };
  for (const [name, answer] of Object.entries(doc.components.responses ?? {})) {
    if (!UNMETERED_RESPONSES.has(name)) addRateLimitHeaders(answer);
  }
  for (const operations of Object.values(doc.paths)) {
    for (const operation of Object.values(operations)) {
      for (const [status, answer] of Object.entries(operation.responses)) {
        if (status !== '401' && typeof answer.$ref !== 'string') addRateLimitHeaders(answer);
      }
    }
  }
  return doc;
}

/** The operator's document: the /admin operations only, under the admin token. */
export function operatorDocument(whole: OpenApiDocument): OpenApiDocument {
  const doc = cut(whole, (path) => path.startsWith(OPERATOR_PREFIX));
  doc.info = { ...doc.info, title: `${String(doc.info.title)}: operator API` };
  doc.tags = (doc.tags ?? []).filter((tag) => tag.name === 'operator');
  doc.components.securitySchemes = {
    adminToken: { type: 'http', scheme: 'bearer', description: 'the ADMIN_TOKEN of the service' },
  };
  doc.security = [{ adminToken: [] }];
  return doc;
}

/** The paths `keep` accepts, with only the components they reach. */
function cut(whole: OpenApiDocument, keep: (path: string) => boolean): OpenApiDocument {
  const doc = structuredClone(whole);
  doc.paths = Object.fromEntries(Object.entries(doc.paths).filter(([path]) => keep(path)));
  const reached = new Set<string>();
  const pending: unknown[] = [doc.paths];
  while (pending.length > 0) {
    const value = pending.pop();
    if (Array.isArray(value)) pending.push(...value);
    else if (value && typeof value === 'object') {
      for (const [key, child] of Object.entries(value)) {
        if (key === '$ref' && typeof child === 'string' && !reached.has(child)) {
          reached.add(child);
          const [, , group, name] = child.split('/');
          const target = (doc.components as Record<string, Record<string, unknown> | undefined>)[
            group ?? ''
          ]?.[name ?? ''];
          pending.push(target);
        } else pending.push(child);
      }
    }
  }
  for (const group of ['schemas', 'responses', 'parameters', 'headers'] as const) {
    const members = doc.components[group] ?? {};
    for (const name of Object.keys(members)) {
      if (!reached.has(`#/components/${group}/${name}`)) delete members[name];
    }
  }
  return doc;
}
