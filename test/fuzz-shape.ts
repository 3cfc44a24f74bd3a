/**
 * Shared parts of the fuzz tests (test/fuzz-*.test.ts): the answer every request must get whatever its
 * body — never a 5xx, always `{ error: { code, message } }` with the code's own status from the
 * reference's table — and random values that reach past the first schema check.
 * FUZZ_SEED and FUZZ_RUNS replace the fixed seed and the run count, e.g. to search longer:
 * `FUZZ_SEED=$RANDOM FUZZ_RUNS=2000 node --test test/fuzz-tasks.test.ts`.
 */
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { LightMyRequestResponse } from 'fastify';
import { ERROR_STATUS } from '../src/errors.ts';

/** fast-check parameters of every property: a fixed seed unless FUZZ_SEED is set. */
export function fuzzParameters(runs = 100): fc.Parameters<unknown> {
  return {
    seed: Number(process.env.FUZZ_SEED ?? 20_261_010),
    numRuns: Number(process.env.FUZZ_RUNS ?? runs),
  };
}

/**
 * Statuses of the reference's error table (plus 416, documented in docs/decisions.md for byte ranges of
 * downloads). 5xx are in the table but only for real outages, which a request body can never cause.
 */
const TABLE_STATUSES = new Set([401, 402, 403, 404, 405, 409, 413, 416, 422, 429]);

/** Answers seen, by status and code: `FUZZ_VERBOSE=1` prints them, to show how deep the bodies reach. */
const answers = new Map<string, number>();
process.on('exit', () => {
  if (process.env.FUZZ_VERBOSE) console.log(Object.fromEntries([...answers].sort()));
});

/** Asserts the answer to a random request: no 5xx, X-Request-Id, and the error shape on refusals. */
export function assertWellFormed(res: LightMyRequestResponse, what: string): void {
  const code = res.statusCode >= 400 ? /"code":"([a-z_]+)"/.exec(res.body)?.[1] : '';
  answers.set(`${res.statusCode} ${code ?? '?'}`, (answers.get(`${res.statusCode} ${code ?? '?'}`) ?? 0) + 1);
  const context = `${what} → ${res.statusCode} ${res.body.slice(0, 300)}`;
  assert.ok(res.statusCode < 500, `server error: ${context}`);
  assert.ok(res.headers['x-request-id'], `no X-Request-Id: ${context}`);
  if (res.statusCode < 400) return;
  assert.ok(TABLE_STATUSES.has(res.statusCode), `status outside the reference's table: ${context}`);
  assert.match(String(res.headers['content-type']), /^application\/json/, context);
  const body = JSON.parse(res.body) as { error?: { code?: unknown; message?: unknown } };
  assert.equal(typeof body.error?.code, 'string', context);
  assert.ok(typeof body.error?.message === 'string' && body.error.message.length > 0, context);
  const status = ERROR_STATUS[body.error?.code as keyof typeof ERROR_STATUS];
  assert.equal(status, res.statusCode, `code and status disagree: ${context}`);
}

/** Any text: ASCII mostly, with any Unicode code point and the characters that break parsers. */
export const anyText: fc.Arbitrary<string> = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.constantFrom(
    '',
    ' ',
    '\u0000',
    '../../etc/passwd',
    '%00',
    '{}',
    '[]',
    'null',
    '\ud800',
    'Element_1',
    '@Image1',
  ),
);

/** Any number, with the edges of integer and floating-point ranges. */
export const anyNumber: fc.Arbitrary<number> = fc.oneof(
  fc.integer({ min: -5, max: 5_000 }),
  fc.integer(),
  fc.double(),
  fc.constantFrom(0, -0, 1e308, -1e308, Number.MAX_SAFE_INTEGER, 2 ** 53 + 1, 0.1, 1e-300),
);

/** Any JSON value, a few levels deep. */
export const anyJson: fc.Arbitrary<unknown> = fc.jsonValue({ maxDepth: 3 });

/** A value for a field: anything, or one of `likely` (links to real uploads, enum values, ids). */
export function valueFor(likely: readonly unknown[]): fc.Arbitrary<unknown> {
  const pool: fc.Arbitrary<unknown>[] = [anyText, anyNumber, fc.boolean(), fc.constant(null), anyJson];
  if (likely.length > 0) {
    const one = fc.constantFrom(...likely);
    pool.push(one, one, fc.array(one, { maxLength: 4 }), fc.array(anyText, { maxLength: 3 }));
  }
  return fc.oneof(...pool);
}

/**
 * An object with some of `keys` (and now and then a stranger), each with a value from `valueFrom`, over
 * `fixed`; `absentWeight` (against 4) makes keys rarer, so that a valid `fixed` base is mostly kept and
 * the bodies reach the rules, prices and lookups behind the shape check.
 */
export function objectOf(
  keys: readonly string[],
  valueFrom: (key: string) => fc.Arbitrary<unknown>,
  options: { fixed?: Record<string, unknown>; absentWeight?: number } = {},
): fc.Arbitrary<Record<string, unknown>> {
  const { fixed = {}, absentWeight = 1 } = options;
  const absent = { weight: absentWeight, arbitrary: fc.constant(undefined) };
  const entries = keys.map((key) =>
    fc.oneof(absent, { weight: 4, arbitrary: valueFrom(key) }).map((v) => [key, v] as const),
  );
  return fc
    .tuple(
      fc.tuple(...entries),
      fc.oneof(
        { weight: 9, arbitrary: fc.constant(undefined) },
        { weight: 1, arbitrary: fc.tuple(anyText, anyJson) },
      ),
    )
    .map(([pairs, extra]) => {
      const out: Record<string, unknown> = { ...fixed };
      for (const [key, value] of pairs) if (value !== undefined) out[key] = value;
      if (extra) out[extra[0]] = extra[1];
      return out;
    });
}

/** Languages and the lang parameter, so both message tables are exercised. */
export const anyLanguage: fc.Arbitrary<{ query: string; headers: Record<string, string> }> = fc.record({
  query: fc.constantFrom('', '?lang=ru', '?lang=en', '?lang=xx'),
  headers: fc.constantFrom<Record<string, string>>(
    {},
    { 'accept-language': 'ru-RU,ru;q=0.9' },
    { 'accept-language': '*;q=0' },
  ),
});

/** A path segment from any text (lone surrogates made well-formed first, as a client must). */
export function segmentOf(text: string): string {
  return encodeURIComponent(text.toWellFormed()) || 'x';
}
