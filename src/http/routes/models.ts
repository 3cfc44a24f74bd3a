import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { balancesOf, CURRENCY, spentToday } from '../../ledger/index.ts';
import { moscowDay, timestamp } from '../../lib/index.ts';
import type { AppDeps } from '../types.ts';
import { errorResponses, errorSchema, modelSchema, pathParam } from './schemas.ts';

const meSchema = z.object({
  account_id: z.string(),
  key: z
    .object({ id: z.string(), prefix: z.string() })
    .nullable()
    .describe('the key of the request; null when the dashboard session cookie authenticated it'),
  email: z.string().optional().describe("the account's e-mail, for accounts of people (CONTRACT §13)"),
  email_confirmed: z.boolean().optional().describe('whether that e-mail is confirmed'),
  restricted: z.boolean().describe('true when the key may use only the models listed in models'),
  models: z.array(z.string()).describe('model keys this key may use'),
  daily_limit_minor: z.number().int().nullable().describe('daily spending limit (kopecks), null = no limit'),
  spent_today_minor: z
    .number()
    .int()
    .describe('captured and held amounts of tasks created with this key today'),
  remaining_today_minor: z.number().int().nullable(),
  day_resets_at: timestamp().describe('end of the current Moscow day (ISO 8601)'),
  currency: z.string(),
  available_minor: z.number().int().describe('account balance available for new tasks now'),
});

/** GET /v1/models and GET /v1/me: what the key can see and do. */
export async function modelRoutes(app: FastifyInstance, deps: AppDeps): Promise<void> {
  const r = app.withTypeProvider<ZodTypeProvider>();
  r.get(
    '/v1/models',
    {
      schema: {
        operationId: 'listModels',
        summary: 'Models visible to the key',
        tags: ['models'],
        response: { 200: z.object({ models: z.array(modelSchema) }), ...errorResponses },
      },
    },
    async (request) => ({ models: await deps.services.models.list(request.principal?.models ?? null) }),
  );

  r.get(
    '/v1/models/:key',
    {
      schema: {
        operationId: 'getModel',
        summary: 'One model, as the list shows it',
        description:
          'An unknown key is 404 model_not_found; a model the key may not use is 403 model_not_allowed_for_key.',
        tags: ['models'],
        params: z.object({ key: pathParam }),
        response: {
          200: modelSchema,
          ...errorResponses,
          403: errorSchema.describe('model_not_allowed_for_key'),
          404: errorSchema.describe('model_not_found'),
        },
      },
    },
    async (request) => deps.services.models.view(request.params.key, request.principal?.models ?? null),
  );

  r.get(
    '/v1/me',
    {
      schema: {
        operationId: 'getMe',
        summary: 'Rights of the key',
        tags: ['models'],
        response: { 200: meSchema, ...errorResponses },
      },
    },
    async (request) => {
      const principal = request.principal!;
      const day = moscowDay(deps.clock.now());
      const spent = principal.keyId === null ? 0 : await spentToday(deps.db.db, principal.keyId, day.start);
      const person = await deps.services.people.personOfAccount(principal.accountId);
      const balances = await balancesOf(deps.db.db, principal.accountId);
      const limit = principal.dailyLimitMinor;
      const models = (await deps.services.models.list(principal.models)).map((m) => m.key);
      return {
        account_id: principal.accountId,
        key: principal.keyId === null ? null : { id: principal.keyId, prefix: principal.prefix },
        ...(person ? { email: person.email, email_confirmed: person.emailConfirmed } : {}),
        restricted: principal.models !== null,
        models,
        daily_limit_minor: limit,
        spent_today_minor: spent,
        remaining_today_minor: limit === null ? null : Math.max(0, limit - spent),
        day_resets_at: day.end.toISOString(),
        currency: CURRENCY,
        available_minor: balances?.availableMinor ?? 0,
      };
    },
  );
}
