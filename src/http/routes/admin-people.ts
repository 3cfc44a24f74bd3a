import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { timestamp } from '../../lib/index.ts';
import { ACCOUNT_SEARCH_MAX_LENGTH } from '../../people/index.ts';
import type { AppDeps } from '../types.ts';
import { errorSchema, pathParam } from './schemas.ts';

const accountSchema = z.object({
  id: z.string(),
  name: z.string(),
  balance_minor: z.number().int(),
  held_minor: z.number().int(),
  available_minor: z.number().int(),
  created_at: timestamp(),
  email: z
    .string()
    .nullable()
    .describe("the e-mail of the account's person; null for operator-made accounts"),
  email_confirmed: z.boolean().nullable().describe('whether that e-mail is confirmed; null without a person'),
});
const tags = ['operator'];
const errors = { 401: errorSchema, 404: errorSchema, 409: errorSchema, 422: errorSchema };

/** The operator's side of people's accounts (CONTRACT §13): search by e-mail or name, attach an e-mail. */
export async function adminPeopleRoutes(app: FastifyInstance, deps: AppDeps): Promise<void> {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const people = deps.services.people;

  r.get(
    '/admin/v1/accounts',
    {
      schema: {
        tags,
        operationId: 'findAccounts',
        summary: 'Find accounts by e-mail, or by a part of the name or e-mail',
        description:
          '`email` matches exactly (case-insensitive); `q` a part of the name or e-mail (case-insensitive). Newest first, at most 50; neither given lists the newest.',
        querystring: z.strictObject({
          email: z.string().max(254).optional(),
          q: z.string().max(ACCOUNT_SEARCH_MAX_LENGTH).optional(),
          lang: z.string().optional(),
        }),
        response: { 200: z.object({ accounts: z.array(accountSchema) }), ...errors },
      },
    },
    async (request) => ({ accounts: await people.findAccounts(request.query) }),
  );

  r.post(
    '/admin/v1/accounts/:id/email',
    {
      schema: {
        tags,
        operationId: 'attachAccountEmail',
        summary: 'Attach an e-mail to an account',
        description:
          'Gives an operator-made account a person: the e-mail, unconfirmed, without a password. A confirmation mail goes out; the person sets a password through a password reset. 409 account_has_email or email_taken.',
        params: z.object({ id: pathParam }),
        body: z.strictObject({ email: z.string().max(254) }),
        response: { 200: accountSchema, ...errors },
      },
    },
    async (request) => people.attachEmail(request.params.id, request.body.email),
  );
}
