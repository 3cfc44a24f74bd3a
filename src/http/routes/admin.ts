import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import {
  ACCOUNT_NAME_MAX,
  CREDIT_REFERENCE_MAX,
  KEY_MODELS_MAX,
  KEY_NAME_MAX,
  LEDGER_PAGE_MAX,
  MAX_ACTIVE_LIMIT,
} from '../../accounts/index.ts';
import { timestamp } from '../../lib/index.ts';
import { DEFAULT_MAX_ACTIVE } from '../../models/index.ts';
import type { AppDeps } from '../types.ts';
import { errorSchema, modelSchema, pageLimit, pathParam } from './schemas.ts';

const amount = z.number().int().positive().max(Number.MAX_SAFE_INTEGER);
const accountSchema = z.object({
  id: z.string(),
  name: z.string(),
  balance_minor: z.number().int(),
  held_minor: z.number().int(),
  available_minor: z.number().int(),
  created_at: timestamp(),
});
const entrySchema = z.object({
  id: z.string(),
  type: z.enum(['credit', 'hold', 'capture', 'void']),
  amount_minor: z.number().int(),
  task_id: z.string().nullable(),
  key_id: z.string().nullable(),
  reference: z.string().nullable(),
  created_at: timestamp(),
});
const idParams = z.object({ id: pathParam });
const tags = ['operator'];
const errors = { 401: errorSchema, 404: errorSchema, 409: errorSchema, 422: errorSchema };

/** The operator API (CONTRACT §9); registered only when ADMIN_TOKEN is set. */
export async function adminRoutes(app: FastifyInstance, deps: AppDeps): Promise<void> {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const admin = deps.services.admin;

  r.post(
    '/admin/v1/accounts',
    {
      schema: {
        tags,
        operationId: 'createAccount',
        summary: 'Create an account',
        body: z.strictObject({ name: z.string().trim().min(1).max(ACCOUNT_NAME_MAX) }),
        response: { 201: accountSchema, ...errors },
      },
    },
    async (request, reply) => reply.code(201).send(await admin.createAccount(request.body.name)),
  );

  r.get(
    '/admin/v1/accounts/:id',
    {
      schema: {
        tags,
        operationId: 'getAccount',
        summary: 'An account and its balances',
        params: idParams,
        response: { 200: accountSchema, ...errors },
      },
    },
    async (request) => admin.getAccount(request.params.id),
  );

  r.post(
    '/admin/v1/accounts/:id/credits',
    {
      schema: {
        tags,
        operationId: 'creditAccount',
        summary: 'Credit an account once per reference',
        description:
          'The same reference twice credits once: the repeat with the same amount answers 200 with the first entry; with another amount 409 credit_reference_conflict.',
        params: idParams,
        body: z.strictObject({
          amount_minor: amount,
          reference: z.string().trim().min(1).max(CREDIT_REFERENCE_MAX),
        }),
        response: { 200: entrySchema, 201: entrySchema, ...errors },
      },
    },
    async (request, reply) => {
      const { entry, created } = await admin.credit(
        request.params.id,
        request.body.amount_minor,
        request.body.reference,
      );
      return reply.code(created ? 201 : 200).send(entry);
    },
  );

  r.get(
    '/admin/v1/accounts/:id/ledger',
    {
      schema: {
        tags,
        operationId: 'listLedgerEntries',
        summary: 'Money movements of an account, newest first',
        description: `At most \`limit\` entries a page (1 to ${LEDGER_PAGE_MAX}, the default); \`next_cursor\` continues after the last one, null at the end.`,
        params: idParams,
        querystring: z.strictObject({
          cursor: z.string().max(500).optional(),
          limit: pageLimit(LEDGER_PAGE_MAX),
          lang: z.string().optional(),
        }),
        response: {
          200: z.object({ entries: z.array(entrySchema), next_cursor: z.string().nullable() }),
          ...errors,
        },
      },
    },
    async (request) =>
      admin.ledger(request.params.id, { cursor: request.query.cursor, limit: request.query.limit }),
  );

  r.post(
    '/admin/v1/accounts/:id/keys',
    {
      schema: {
        tags,
        operationId: 'issueKey',
        summary: 'Issue an API key (shown once)',
        params: idParams,
        body: z.strictObject({
          name: z.string().max(KEY_NAME_MAX).nullish(),
          models: z.array(z.string().min(1)).min(1).max(KEY_MODELS_MAX).nullish(),
          daily_limit_minor: z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER).nullish(),
        }),
        response: {
          201: z.object({
            id: z.string(),
            key: z.string(),
            prefix: z.string(),
            name: z.string().nullable(),
            models: z.array(z.string()).nullable(),
            daily_limit_minor: z.number().int().nullable(),
            created_at: timestamp(),
          }),
          ...errors,
        },
      },
    },
    async (request, reply) => {
      const body = request.body;
      const key = await admin.issueKey(request.params.id, {
        name: body.name ?? null,
        models: body.models ? [...new Set(body.models)] : null,
        dailyLimitMinor: body.daily_limit_minor ?? null,
      });
      return reply.code(201).send(key);
    },
  );

  r.delete(
    '/admin/v1/keys/:id',
    {
      schema: {
        tags,
        operationId: 'revokeKey',
        summary: 'Revoke an API key',
        params: idParams,
        response: { 204: z.null().describe('revoked'), ...errors },
      },
    },
    async (request, reply) => {
      await admin.revokeKey(request.params.id);
      return reply.code(204).send(null);
    },
  );

  r.patch(
    '/admin/v1/models/:key',
    {
      schema: {
        tags,
        operationId: 'updateModel',
        summary: 'Switch a model on or off, set its active-task limit',
        params: z.object({ key: pathParam }),
        body: z
          .strictObject({
            available: z.boolean().optional(),
            max_active: z
              .number()
              .int()
              .min(1)
              .max(MAX_ACTIVE_LIMIT)
              .nullable()
              .optional()
              .describe(`unfinished tasks per account; null: back to the default (${DEFAULT_MAX_ACTIVE})`),
          })
          .refine((b) => b.available !== undefined || b.max_active !== undefined, {
            message: 'send available and/or max_active',
            params: { ru: 'передайте available и/или max_active' },
          }),
        response: { 200: modelSchema, ...errors },
      },
    },
    async (request) => {
      const body = request.body;
      return admin.updateModel(request.params.key, {
        ...(body.available === undefined ? {} : { available: body.available }),
        ...(body.max_active === undefined ? {} : { maxActive: body.max_active }),
      });
    },
  );
}
