import type {
  FastifyError,
  FastifyInstance,
  FastifyRequest,
  FastifySchemaCompiler,
  FastifySchemaValidationError,
} from 'fastify';
import { z } from 'zod';
import { safeParse } from 'zod/v4/core';
import { LANG_DESCRIPTION } from './openapi.ts';

const ISSUE = Symbol('zod issue');

type Entry = FastifySchemaValidationError & { [ISSUE]: z.core.$ZodIssue };

/**
 * Fastify's validator for the routes' zod schemas (what fastify-type-provider-zod's does), keeping each
 * zod issue whole, with the input it refused (`reportInput`): the error table words its messages anew in
 * the caller's language, and without the input they read "expected string, received undefined" for a
 * number.
 */
export const validatorCompiler: FastifySchemaCompiler<z.ZodType> =
  ({ schema, httpPart }) =>
  (data) => {
    const repeated = httpPart === 'querystring' ? repeatedParameters(schema, data) : [];
    const result = repeated.length > 0 ? null : safeParse(schema, data, { reportInput: true });
    if (result?.success) return { value: result.data };
    const issues = result === null ? repeated : result.error.issues;
    const entries: Entry[] = issues.map((issue) => ({
      keyword: issue.code,
      instancePath: `/${issue.path.join('/')}`,
      schemaPath: '',
      params: {},
      message: issue.message,
      [ISSUE]: issue,
    }));
    return { error: entries };
  };

/**
 * What the route's query schema refuses, checked ahead of the validation step: the refusal that step would
 * give (the same error, so the error table words it the same), or null when the query passes or the route
 * has none. For a body's `100 Continue`, which must not ask for a body the query already refuses.
 */
export function queryRefusal(request: FastifyRequest): FastifyError | null {
  const validate = request.getValidationFunction('querystring') as
    | ((data: unknown) => { error?: Entry[] })
    | undefined;
  const entries = validate?.(request.query).error;
  if (entries === undefined) return null;
  return Object.assign(new Error(entries[0]?.message ?? 'invalid query') as FastifyError, {
    statusCode: 400,
    code: 'FST_ERR_VALIDATION',
    validation: entries,
    validationContext: 'querystring' as const,
  });
}

/**
 * A query parameter given more than once (`?limit=1&limit=2`) arrives as a list, which every schema
 * would refuse in words about the value ("expected number, received NaN", "expected one of …"): none of
 * the API's parameters takes a list, so the refusal says what is wrong instead, naming the parameter.
 */
function repeatedParameters(schema: z.ZodType, data: unknown): z.core.$ZodIssue[] {
  if (typeof data !== 'object' || data === null) return [];
  // A schema that drops parameters it does not name (`langQuery`) never reads them, repeated or not.
  const dropped = schema instanceof z.ZodObject && schema.def.catchall === undefined ? schema.shape : null;
  return Object.entries(data)
    .filter(([name, value]) => Array.isArray(value) && (dropped === null || Object.hasOwn(dropped, name)))
    .map(([name, value]) => ({
      code: 'custom',
      path: [name],
      input: value,
      message: REPEATED.en,
      params: { ru: REPEATED.ru },
    }));
}

const REPEATED = {
  en: 'given more than once; send it once',
  ru: 'задан больше одного раза; передайте его один раз',
} as const;

/**
 * The query of a route that reads nothing of it but `?lang=`, as every route of the API and the operator
 * API does (the caller's language). Other parameters are not its own: they are dropped, unread, as before.
 */
const langQuery = z.object({ lang: z.string().optional().meta({ description: LANG_DESCRIPTION }) });

/**
 * Gives every route of the context without a query schema of its own (models, libraries, keys, …) the one
 * of `?lang=`, so the validator refuses a `lang` given more than once there as on any route, after
 * authentication, instead of dropping it for Accept-Language. Before the context's routes are added.
 */
export function installLangQuery(app: FastifyInstance): void {
  app.addHook('onRoute', (route) => {
    if (route.schema?.querystring !== undefined) return;
    route.schema = { ...route.schema, querystring: langQuery };
  });
}

/** The zod issues of a validation failure of `validatorCompiler`, or null for any other error. */
export function zodIssuesOf(error: FastifyError): z.core.$ZodIssue[] | null {
  const entries = error.validation as readonly Partial<Entry>[] | undefined;
  if (!Array.isArray(entries) || entries.length === 0) return null;
  const issues = entries.map((entry) => entry[ISSUE]);
  return issues.every((issue) => issue !== undefined) ? (issues as z.core.$ZodIssue[]) : null;
}
