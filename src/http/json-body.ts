import { isUtf8 } from 'node:buffer';
import { errorCodes, type FastifyInstance, type FastifyRequest } from 'fastify';
import { type ApiError, errors } from '../errors.ts';
import { servesNothing } from './not-found.ts';

/**
 * Deepest nesting a JSON body may have. The deepest real body (video shots: body → settings → shots →
 * shot) is 4 levels; 32 leaves room for any shape we may add while keeping every recursive walk of a
 * body (canonical hashing, validation, logging) far from the stack limit.
 */
export const MAX_JSON_DEPTH = 32;

/**
 * Most values (objects, arrays, strings, numbers, literals) a JSON body may hold. Parsing costs by the
 * value far more than by the byte: Fastify's parser took 1.1–1.4 s for 31 MiB of small objects, 30–45 ms
 * for 32 MiB of one data URL. Only a callback body (Cog's, up to 32 MiB) can come near; a webhook holds
 * tens of values.
 */
export const MAX_JSON_VALUES = 100_000;

/**
 * True when `text` may hold more than `maxValues` JSON values: every value but the first follows a comma
 * or an opening bracket. Those inside strings count too, so this errs towards refusing. A text that
 * short cannot hold that many, and costs nothing; a longer one costs a native scan per mark, stopped at
 * the limit.
 */
export function mayHoldMoreValuesThan(text: string, maxValues: number): boolean {
  if (text.length <= maxValues) return false;
  let marks = 0;
  for (const mark of [',', '[', '{']) {
    for (let at = text.indexOf(mark); at !== -1; at = text.indexOf(mark, at + 1)) {
      marks += 1;
      if (marks >= maxValues) return true;
    }
  }
  return false;
}

/** True when `value` nests objects or arrays more than `maxDepth` levels deep (the top level is 1). */
export function isNestedDeeperThan(value: unknown, maxDepth: number): boolean {
  // Iterative on purpose: a recursive walk is exactly what a deep body overflows.
  const stack: Array<{ node: unknown; depth: number }> = [{ node: value, depth: 1 }];
  for (let item = stack.pop(); item; item = stack.pop()) {
    const { node, depth } = item;
    if (node === null || typeof node !== 'object') continue;
    if (depth > maxDepth) return true;
    for (const child of Array.isArray(node) ? node : Object.values(node)) {
      if (child !== null && typeof child === 'object') stack.push({ node: child, depth: depth + 1 });
    }
  }
  return false;
}

/** True when a string or property name in `value` holds a lone surrogate (half of a UTF-16 pair). */
export function hasLoneSurrogate(value: unknown): boolean {
  // Iterative, as isNestedDeeperThan; run only on a body whose text escapes a surrogate.
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const node = stack.pop();
    if (typeof node === 'string') {
      if (!node.isWellFormed()) return true;
    } else if (Array.isArray(node)) {
      for (const child of node) stack.push(child);
    } else if (node !== null && typeof node === 'object') {
      for (const [key, child] of Object.entries(node)) {
        if (!key.isWellFormed()) return true;
        stack.push(child);
      }
    }
  }
  return false;
}

/**
 * A `\uD800`–`\uDFFF` escape in a JSON text, paired or not: the only way a lone surrogate gets into a
 * body (bytes that are not UTF-8 are decoded as U+FFFD). Most bodies have none and skip the walk.
 */
const SURROGATE_ESCAPE = /\\u[dD][89a-fA-F]/;

/** What a body that is not JSON is told, wherever it is refused (the error table, the payment notices). */
export const NOT_JSON = {
  en: 'The body is not valid JSON.',
  ru: 'Тело запроса — некорректный JSON.',
} as const;

/**
 * True when `text` is valid JSON that Fastify's parser refused all the same: a `__proto__` key, or a
 * `constructor` key holding `prototype`. Run only after a refusal, so valid bodies never pay for it.
 */
function isPoisoned(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

const poisonedBody = () =>
  errors.invalidRequest({
    en: 'The body has a key "__proto__", or "constructor" with "prototype": such keys are not allowed.',
    ru: 'В теле запроса есть ключ «__proto__» или «constructor» с «prototype»: такие ключи запрещены.',
  });

const notUtf8 = () =>
  errors.invalidRequest({
    en: 'The body is not UTF-8: send JSON text encoded in UTF-8.',
    ru: 'Тело запроса не в UTF-8: отправьте JSON в кодировке UTF-8.',
  });

/** True when a request's Content-Encoding leaves its body as sent: absent, empty or only `identity`. */
function isIdentity(coding: string | undefined): boolean {
  if (coding === undefined) return true;
  return coding.split(',').every((part) => ['', 'identity'].includes(part.trim().toLowerCase()));
}

/**
 * Nothing decodes a request's body: one sent compressed would be "not valid JSON" (or an upload of an
 * unknown type), and one that only said so would be read as plain bytes all the same. Either is refused
 * for its encoding, 422 invalid_request (the error table has no 415). Null when the body is as sent.
 */
export function encodedBodyRefusal(request: FastifyRequest): ApiError | null {
  if (isIdentity(request.headers['content-encoding'])) return null;
  return errors.invalidRequest({
    en: 'Content-Encoding is not supported on a request: send the body uncompressed, without it.',
    ru: 'Content-Encoding в запросе не поддерживается: отправьте тело без сжатия и без этого заголовка.',
  });
}

/** A parser of a JSON body (`addContentTypeParser`'s, with `parseAs: 'buffer'`). */
type BufferParser = (
  request: FastifyRequest,
  body: string | Buffer,
  done: (error: Error | null, value?: unknown) => void,
) => void;

/**
 * The JSON parser of the service's bodies: Fastify's own (prototype-poisoning checks, the route's body
 * limit) plus a count of values and a depth limit, UTF-8 only, no lone surrogates: the JSON routes' parser,
 * and the callback route's for any type (routes/callbacks.ts).
 */
export function jsonBodyParser(app: FastifyInstance): BufferParser {
  const parseJson = app.getDefaultJsonParser('error', 'error');
  return (request, body, done) => {
    const bytes = body as Buffer;
    const text = bytes.toString('utf8');
    // No body at all, as many clients send on every call with this header (a cancel, a delete): none, as
    // without the header. A route that needs a body refuses its absence with its own validation error.
    if (text.trim() === '') return done(null, undefined);
    const encoded = encodedBodyRefusal(request);
    if (encoded) return done(encoded, undefined);
    // JSON is UTF-8 (RFC 8259 §8.1). Bytes that are not (a Latin-1 "é") were decoded as U+FFFD, so the
    // text stored was silently other than the text sent.
    if (!isUtf8(bytes)) return done(notUtf8(), undefined);
    // Before parsing, so the count bounds what the parse may cost (MAX_JSON_VALUES): 4 ms at 32 MiB.
    if (mayHoldMoreValuesThan(text, MAX_JSON_VALUES)) {
      return done(
        errors.invalidRequest({
          en: `The body holds more than ${MAX_JSON_VALUES} values.`,
          ru: `В теле запроса больше ${MAX_JSON_VALUES} значений.`,
        }),
        undefined,
      );
    }
    parseJson(request, text, (error, value) => {
      if (error) return done(isPoisoned(text) ? poisonedBody() : error, undefined);
      if (isNestedDeeperThan(value, MAX_JSON_DEPTH)) {
        return done(
          errors.invalidRequest({
            en: `The body nests objects or arrays more than ${MAX_JSON_DEPTH} levels deep.`,
            ru: `В теле запроса объекты или массивы вложены глубже ${MAX_JSON_DEPTH} уровней.`,
          }),
          undefined,
        );
      }
      // Text columns store a lone surrogate as U+FFFD on both engines, so two different names or credit
      // references became one (a second credit answered as a replay of the first, never credited) and a
      // record read back other than it was answered. It is not Unicode text: refused like a NUL.
      if (SURROGATE_ESCAPE.test(text) && hasLoneSurrogate(value)) {
        return done(
          errors.invalidRequest({
            en: 'Text in the request may not contain a lone surrogate (half of a UTF-16 pair, \\uD800–\\uDFFF).',
            ru: 'Текст в запросе не может содержать одиночный суррогат (половину пары UTF-16, \\uD800–\\uDFFF).',
          }),
          undefined,
        );
      }
      done(null, value);
    });
  };
}

/**
 * JSON bodies on every route: Fastify's own parser (prototype-poisoning checks, the route's body limit)
 * plus a count of values and a depth limit, 422 invalid_request past either, as for a Content-Encoding
 * other than identity; an empty body is no body, and so is any body sent to an address nobody serves.
 * `text/plain` is no longer parsed: anything but JSON on a JSON route is refused as an unsupported type
 * with one clear message.
 */
export function installJsonParser(app: FastifyInstance): void {
  app.removeContentTypeParser(['application/json', 'text/plain']);
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, jsonBodyParser(app));
  // A body of any other type, or of none, is refused for its type (FST_ERR_CTP_INVALID_MEDIA_TYPE, as
  // with no parser at all), once it has a byte: a chunked body that ends with none is no body, as one of
  // `Content-Length: 0` is (request-context.ts), on a cancel or a delete that takes none, and so is the
  // body of a request with neither header (RFC 9112 §6.3: `curl -X POST -H 'Content-Type: text/plain'`).
  // The routes that take other types (uploads, payment notices, the dashboard's forms) have parsers of
  // their own. An address nobody serves answers 404 or 405 whatever its body: the request context took
  // its type away, so its body comes here, and is not read.
  app.addContentTypeParser('*', (request, payload, done) => {
    if (servesNothing(request)) return done(null, undefined);
    const refused = () => new errorCodes.FST_ERR_CTP_INVALID_MEDIA_TYPE(request.headers['content-type']);
    const { 'content-length': length, 'transfer-encoding': coding } = request.headers;
    if (length !== undefined && coding === undefined) return done(refused(), undefined);
    let settled = false;
    const settle = (error: Error | null) => {
      if (settled) return;
      settled = true;
      done(error, undefined);
    };
    // The rest of a refused body is read and dropped, so the connection stays in step.
    payload.on('data', () => settle(refused()));
    payload.on('end', () => settle(null));
    payload.on('error', (error: Error) => settle(error));
  });
}
