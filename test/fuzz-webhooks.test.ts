/**
 * Fuzzing of the webhook routes (CONTRACT §12) with random bodies, ids and queries: never a 5xx, always
 * the error shape with the code's own status. No sender runs, so nothing is sent anywhere.
 */
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import { EVENT_TYPES } from '../src/events/index.ts';
import {
  anyLanguage,
  anyText,
  assertWellFormed,
  fuzzParameters,
  objectOf,
  segmentOf,
  valueFor,
} from './fuzz-shape.ts';
import { startTestApp, type TestAccount, type TestApp } from './helpers.ts';

describe('fuzzing the webhook routes', () => {
  let t: TestApp;
  let acct: TestAccount;
  const likely: unknown[] = [
    'https://93.184.216.34/hook',
    'http://93.184.216.34:8080/x?y=1',
    'http://127.0.0.1:1/hook',
    'http://169.254.169.254/latest/meta-data',
    'http://[::1]/x',
    'http://0x7f000001/',
    'https://user:pw@93.184.216.34/',
    'javascript:alert(1)',
    ...EVENT_TYPES,
    'task.*',
    'x'.repeat(501),
  ];
  const ids: string[] = ['wh_00000000000000000000000000000000', 'msg_00000000000000000000000000000000'];
  before(async () => {
    t = await startTestApp({ worker: false });
    acct = await t.account();
  });
  after(() => t.close());

  test('POST /v1/webhooks with random bodies', async () => {
    await fc.assert(
      fc.asyncProperty(
        objectOf(
          ['url', 'events', 'description'],
          (key) =>
            key === 'events'
              ? fc.oneof(
                  fc.array(fc.constantFrom(...EVENT_TYPES, 'task.*', ''), { maxLength: 9 }),
                  valueFor(likely),
                )
              : valueFor(likely),
          { fixed: { url: 'https://93.184.216.34/hook', events: ['task.succeeded'] }, absentWeight: 4 },
        ),
        anyLanguage,
        async (body, lang) => {
          const res = await t.call(acct.key, 'POST', `/v1/webhooks${lang.query}`, body, lang.headers);
          assertWellFormed(res, `POST /v1/webhooks ${JSON.stringify(body)}`);
          if (res.statusCode === 201) {
            ids.push(res.json().id);
            // Keep room under the limit so later bodies reach the checks behind it.
            if (ids.length % 3 === 0) await t.call(acct.key, 'DELETE', `/v1/webhooks/${res.json().id}`);
          }
        },
      ),
      fuzzParameters(150),
    );
  });

  test('ids and queries of the other webhook routes', async () => {
    const anyId = fc.oneof(anyText, fc.constantFrom(...ids));
    const route = fc.constantFrom(
      (id: string) => ['DELETE', `/v1/webhooks/${id}`] as const,
      (id: string) => ['POST', `/v1/webhooks/${id}/rotate-secret`] as const,
      (id: string) => ['POST', `/v1/webhook-deliveries/${id}/retry`] as const,
      (id: string) => ['GET', `/v1/webhook-deliveries?task_id=${id}&webhook_id=${id}`] as const,
      (id: string) => ['GET', `/v1/webhook-deliveries?cursor=${id}`] as const,
      (id: string) => ['GET', `/v1/webhook-deliveries?limit=${id}`] as const,
    );
    await fc.assert(
      fc.asyncProperty(route, anyId, anyLanguage, async (make, id, lang) => {
        const [method, url] = make(segmentOf(id));
        const res = await t.call(acct.key, method, url, undefined, lang.headers);
        assertWellFormed(res, `${method} ${url}`);
      }),
      fuzzParameters(200),
    );
  });
});
