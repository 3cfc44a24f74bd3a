import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import {
  EVENT_TYPES,
  MAX_EVENT_LIST_ITEMS,
  MAX_WEBHOOKS,
  WEBHOOK_URL_MAX_LENGTH,
} from '../../events/index.ts';
import { timestamp } from '../../lib/index.ts';
import { parseIdempotencyKey } from '../../tasks/index.ts';
import type { AppDeps } from '../types.ts';
import {
  emptyIsNone,
  errorResponses,
  errorSchema,
  idempotencyKeyHeader,
  locationHeader,
  noBody,
  pageLimit,
  pathParam,
  replayedHeader,
  withHeaders,
} from './schemas.ts';

const tags = ['webhooks'];
const byId = z.object({ id: pathParam });
const invalid = errorSchema.describe('invalid_request');

const webhookSchema = z.object({
  id: z.string(),
  url: z.string(),
  events: z.array(z.enum(EVENT_TYPES)),
  description: z.string().nullable(),
  created_at: timestamp(),
});

const deliverySchema = z.object({
  id: z.string().describe('the webhook-id header of every attempt'),
  webhook_id: z.string().nullable().describe("null for a task's own webhook_url"),
  task_id: z.string().nullable(),
  record_id: z.string().nullable().describe('the library record of a library.* event'),
  type: z.string(),
  url: z.string(),
  state: z.enum(['pending', 'succeeded', 'failed']),
  attempts: z.number().int(),
  last_status_code: z.number().int().nullable(),
  last_error: z.string().nullable(),
  next_attempt_at: timestamp().nullable(),
  created_at: timestamp(),
});

/**
 * Webhook endpoints, the default secret and the delivery log (CONTRACT §12). Account-level: any key of
 * the account manages them, restricted or not.
 */
export async function webhookRoutes(app: FastifyInstance, deps: AppDeps): Promise<void> {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const webhooks = deps.services.webhooks;

  r.get(
    '/v1/webhooks/default/secret',
    {
      schema: {
        tags,
        operationId: 'getDefaultWebhookSecret',
        summary: "The account's default signing secret",
        description: 'Signs the deliveries to the webhook_url a task names. Made on first use.',
        response: { 200: z.object({ secret: z.string().describe('whsec_ + base64') }), ...errorResponses },
      },
    },
    async (request) => ({ secret: await webhooks.defaultSecret(request.principal!.accountId) }),
  );

  r.post(
    '/v1/webhooks',
    {
      schema: {
        tags,
        operationId: 'createWebhook',
        summary: 'Add a webhook endpoint',
        description: `Events of the account's tasks and library records of the chosen types are sent to url, signed per Standard Webhooks. At most ${MAX_WEBHOOKS} endpoints. The secret is shown only here, and in a replay of this creation under its Idempotency-Key (as for tasks, kept 48 hours).`,
        headers: z.object({ 'idempotency-key': idempotencyKeyHeader }),
        body: z.strictObject({
          url: z
            .string()
            .max(WEBHOOK_URL_MAX_LENGTH)
            .meta({ format: 'uri' })
            .describe('public http(s) address'),
          events: z
            .array(z.enum(EVENT_TYPES))
            .min(1)
            .max(MAX_EVENT_LIST_ITEMS)
            .describe('event types to send; repeats count once'),
          // null as GET shows it: no description.
          description: z.string().max(500).nullable().optional(),
        }),
        response: {
          201: withHeaders(
            webhookSchema.extend({ secret: z.string().describe('whsec_ + base64; shown once') }),
            'the endpoint and its secret',
            { Location: locationHeader, 'Idempotent-Replayed': replayedHeader },
          ),
          ...errorResponses,
          409: errorSchema.describe('too_many_webhooks, idempotency_conflict, request_in_progress'),
          422: invalid,
        },
      },
    },
    async (request, reply) => {
      const key = parseIdempotencyKey(request.raw.rawHeaders);
      const created = await webhooks.create(request.principal!.accountId, request.body, key);
      if (created.replayed) reply.header('Idempotent-Replayed', 'true');
      return reply
        .code(created.status as 201)
        .header('Location', `/v1/webhooks/${created.webhook.id}`)
        .send(created.webhook);
    },
  );

  r.get(
    '/v1/webhooks',
    {
      schema: {
        tags,
        operationId: 'listWebhooks',
        summary: 'List webhook endpoints',
        response: { 200: z.object({ webhooks: z.array(webhookSchema) }), ...errorResponses },
      },
    },
    async (request) => ({ webhooks: await webhooks.list(request.principal!.accountId) }),
  );

  r.get(
    '/v1/webhooks/:id',
    {
      schema: {
        tags,
        operationId: 'getWebhook',
        summary: 'A webhook endpoint, without its secret',
        params: byId,
        response: { 200: webhookSchema, ...errorResponses, 404: errorSchema.describe('webhook_not_found') },
      },
    },
    async (request) => webhooks.get(request.principal!.accountId, request.params.id),
  );

  r.delete(
    '/v1/webhooks/:id',
    {
      schema: {
        tags,
        operationId: 'deleteWebhook',
        summary: 'Delete a webhook endpoint',
        description:
          'Its pending deliveries are not sent: they end failed with last_error "endpoint deleted".',
        params: byId,
        response: {
          204: z.null().describe('deleted'),
          ...errorResponses,
          404: errorSchema.describe('webhook_not_found'),
        },
      },
    },
    async (request, reply) => {
      await webhooks.remove(request.principal!.accountId, request.params.id);
      return reply.code(204).send(null);
    },
  );

  r.post(
    '/v1/webhooks/:id/rotate-secret',
    {
      schema: {
        tags,
        operationId: 'rotateWebhookSecret',
        summary: "Replace an endpoint's secret",
        description: 'The previous secret also signs for 24 hours (two signatures in webhook-signature).',
        params: byId,
        body: noBody,
        response: {
          200: z.object({ secret: z.string() }),
          ...errorResponses,
          404: errorSchema.describe('webhook_not_found'),
        },
      },
    },
    async (request) => webhooks.rotate(request.principal!.accountId, request.params.id),
  );

  r.get(
    '/v1/webhook-deliveries',
    {
      schema: {
        tags,
        operationId: 'listWebhookDeliveries',
        summary: 'The delivery log',
        description:
          'Newest first; every delivery of the account, to its endpoints and to tasks’ own webhook_url.',
        querystring: z.strictObject({
          task_id: emptyIsNone(z.string().max(100)),
          webhook_id: emptyIsNone(z.string().max(100)),
          cursor: emptyIsNone(z.string().max(200)),
          limit: pageLimit(100, 20),
          lang: z.string().optional(),
        }),
        response: {
          200: z.object({ deliveries: z.array(deliverySchema), next_cursor: z.string().nullable() }),
          ...errorResponses,
          422: invalid,
        },
      },
    },
    async (request) => webhooks.deliveries(request.principal!.accountId, request.query),
  );

  r.post(
    '/v1/webhook-deliveries/:id/retry',
    {
      schema: {
        tags,
        operationId: 'retryWebhookDelivery',
        summary: 'Send a delivery again now',
        description:
          'Same webhook-id and body; one more attempt now (the retry schedule goes on from where it was).',
        params: byId,
        body: noBody,
        response: {
          202: deliverySchema,
          ...errorResponses,
          404: errorSchema.describe('delivery_not_found, webhook_not_found'),
        },
      },
    },
    async (request, reply) =>
      reply.code(202).send(await webhooks.retry(request.principal!.accountId, request.params.id)),
  );
}
