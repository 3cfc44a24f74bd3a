import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { translate } from '../../i18n/index.ts';
import { hasNul, timestamp } from '../../lib/index.ts';
import { isYookassaSender, TOPUP_MAX_MINOR, TOPUP_MIN_MINOR, TOPUP_PAGE } from '../../payments/index.ts';
import { parseIdempotencyKey } from '../../tasks/index.ts';
import { NOT_JSON } from '../json-body.ts';
import type { AppDeps } from '../types.ts';
import {
  emptyIsNone,
  errorResponses,
  errorSchema,
  idempotencyKeyHeader,
  locationHeader,
  pageLimit,
  pathParam,
  replayedHeader,
  withHeaders,
} from './schemas.ts';

const tags = ['topups'];
const STATUSES = ['pending', 'succeeded', 'canceled'] as const;

const topupSchema = z
  .object({
    id: z.string().describe('tp_…'),
    status: z.enum(STATUSES),
    amount_minor: z.number().int().describe('kopecks'),
    currency: z.literal('RUB'),
    confirmation_url: z
      .string()
      .nullable()
      .describe('where the payer confirms the payment; null once the top-up is final'),
    return_url: z.string().describe('where the payer comes back after paying'),
    cancellation_reason: z.string().nullable(),
    created_at: timestamp(),
    updated_at: timestamp(),
  })
  .meta({ id: 'Topup' });

const adminTopupSchema = topupSchema.extend({
  account_id: z.string(),
  provider: z.string().describe('yookassa or test'),
  payment_id: z.string().describe("the provider's payment; the reference of the ledger's credit"),
  needs_operator_at: timestamp()
    .nullable()
    .describe(
      'when its succeeded payment was found not creditable (another amount, currency or top-up, or a credit the ledger refuses): pending for the operator, no longer read back by the sweep',
    ),
});

const unavailable = errorSchema.describe(
  'payments_unavailable (Retry-After): top-ups are off or the provider does not answer; nothing was paid',
);
const listQuery = {
  cursor: emptyIsNone(z.string().max(200)),
  limit: pageLimit(100),
  // The language of messages (CONTRACT §8), read by the error handler.
  lang: z.string().optional(),
};

/** Wallet top-ups (CONTRACT §14): for API keys and dashboard sessions. */
export async function topupRoutes(app: FastifyInstance, deps: AppDeps): Promise<void> {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const topups = deps.services.topups;

  r.post(
    '/v1/topups',
    {
      schema: {
        tags,
        operationId: 'createTopup',
        summary: 'Top up the wallet',
        description: `Creates a payment for amount_minor kopecks (${TOPUP_MIN_MINOR}–${TOPUP_MAX_MINOR}); send the payer to confirmation_url. The wallet is credited once the payment succeeds. Idempotency-Key as for tasks.`,
        headers: z.object({ 'idempotency-key': idempotencyKeyHeader }),
        body: z.strictObject({
          amount_minor: z.number().int().min(TOPUP_MIN_MINOR).max(TOPUP_MAX_MINOR).describe('kopecks'),
          return_url: z
            .url({ protocol: /^https?$/ })
            .max(2048)
            // As stored and sent to YooKassa: percent-encoded, which can make a shorter URL much longer.
            // Zod runs this check after a failed url check too: a URL the parser refuses is left to that.
            .refine((url) => !URL.canParse(url) || new URL(url).href.length <= 2048, {
              message: 'Too long once percent-encoded: at most 2048 characters.',
              params: { ru: 'Слишком длинный после процентного кодирования: не больше 2048 символов.' },
            })
            .optional()
            .describe("where the payer returns (default: the dashboard's page of the top-up)"),
        }),
        response: {
          201: withHeaders(topupSchema, 'the pending top-up', {
            Location: locationHeader,
            'Idempotent-Replayed': replayedHeader,
          }),
          ...errorResponses,
          403: errorSchema.describe('email_not_confirmed (a dashboard session), csrf_failed'),
          409: errorSchema.describe('idempotency_conflict, request_in_progress'),
          422: errorSchema.describe('invalid_request'),
          503: unavailable,
        },
      },
    },
    async (request, reply) => {
      const key = parseIdempotencyKey(request.raw.rawHeaders);
      const created = await topups.create(request.principal!.accountId, request.body, key);
      if (created.replayed) reply.header('Idempotent-Replayed', 'true');
      return reply
        .code(created.status as 201)
        .header('Location', `/v1/topups/${created.topup.id}`)
        .send(created.topup);
    },
  );

  r.get(
    '/v1/topups',
    {
      schema: {
        tags,
        operationId: 'listTopups',
        summary: "The account's top-ups",
        description: `Newest first, ${TOPUP_PAGE} a page unless limit says otherwise.`,
        querystring: z.strictObject(listQuery),
        response: {
          200: z.object({ topups: z.array(topupSchema), next_cursor: z.string().nullable() }),
          ...errorResponses,
          422: errorSchema.describe('invalid_request'),
        },
      },
    },
    async (request) => topups.list(request.principal!.accountId, request.query),
  );

  r.get(
    '/v1/topups/:id',
    {
      schema: {
        tags,
        operationId: 'getTopup',
        summary: 'One top-up',
        description: 'A pending top-up is read back from the payment provider first.',
        params: z.object({ id: pathParam }),
        response: { 200: topupSchema, ...errorResponses, 404: errorSchema.describe('topup_not_found') },
      },
    },
    async (request) => topups.get(request.principal!.accountId, request.params.id),
  );
}

/** The operator's list of top-ups (CONTRACT §9, §14). */
export async function adminTopupRoutes(app: FastifyInstance, deps: AppDeps): Promise<void> {
  app.withTypeProvider<ZodTypeProvider>().get(
    '/admin/v1/topups',
    {
      schema: {
        tags: ['operator'],
        operationId: 'listAllTopups',
        summary: 'Top-ups of every account, or of one',
        description:
          'Newest first. Credits of succeeded top-ups are in the account ledger with reference = payment_id.',
        querystring: z.strictObject({
          account_id: emptyIsNone(z.string().max(100)),
          status: emptyIsNone(z.enum(STATUSES)),
          ...listQuery,
        }),
        response: {
          200: z.object({ topups: z.array(adminTopupSchema), next_cursor: z.string().nullable() }),
          401: errorSchema,
          422: errorSchema,
        },
      },
    },
    async (request) => deps.services.topups.adminList(request.query),
  );
}

/** Notifications' bodies are small; anything larger is not YooKassa's. */
const NOTIFICATION_LIMIT = 64 * 1024;

/**
 * YooKassa's notifications (PROVIDERS.md §8): no credentials, so nothing in the body is trusted but
 * `object.id`, which is read back from YooKassa before anything moves. 200 whatever the effect (unknown,
 * forged or repeated notifications change nothing), 400 only for a body that is not JSON, 500 only when
 * the read-back failed for now, so YooKassa sends it again. With `YOOKASSA_CHECK_IP=on`, one from outside
 * YooKassa's addresses is answered 200 too and ignored (CONTRACT §14: 200 whatever the effect).
 */
export async function paymentNotificationRoutes(app: FastifyInstance, deps: AppDeps): Promise<void> {
  const checkSender = deps.config.payments.yookassa?.checkSenderIp === true;
  await app.register(async (hook) => {
    hook.removeAllContentTypeParsers();
    hook.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: NOTIFICATION_LIMIT }, (_r, body, done) =>
      done(null, body),
    );
    const options = { schema: { hide: true }, bodyLimit: NOTIFICATION_LIMIT } as const;
    hook.post('/v1/payments/yookassa/notifications', options, async (request, reply) => {
      let parsed: unknown;
      try {
        parsed = JSON.parse(Buffer.isBuffer(request.body) ? request.body.toString('utf8') : '');
      } catch {
        return reply.code(400).send({ error: { code: 'invalid_request', message: NOT_JSON[request.lang] } });
      }
      const object = (parsed as { object?: { id?: unknown } } | null)?.object;
      // No payment id has a NUL (PostgreSQL refuses it in text, which would answer a forgery 500).
      const paymentId =
        typeof object?.id === 'string' && object.id.length <= 100 && !hasNul(object.id) ? object.id : null;
      // Only YooKassa's published addresses may make us read a payment back. `request.ip` is the client as
      // TRUST_PROXY decides it, the same address the limits per client count. The answer stays 200 (after
      // the body's 400), so it never tells a sender whether the check is on.
      if (checkSender && !isYookassaSender(request.ip)) {
        request.log.warn(
          { sender: request.ip, paymentId },
          "a payment notification from outside YooKassa's addresses; ignored",
        );
        return { received: true };
      }
      if (paymentId === null || deps.services.topups.mode !== 'yookassa') return { received: true };
      try {
        await deps.services.topups.settle(paymentId);
      } catch (error) {
        request.log.warn(
          { err: error, paymentId },
          'reading a notified payment back failed; YooKassa will resend',
        );
        return reply
          .code(500)
          .send({ error: { code: 'internal_error', message: translate('internal_error', request.lang) } });
      }
      return { received: true };
    });
  });
}
