import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { AppDeps } from '../types.ts';
import { errorSchema, pathParam } from './schemas.ts';

const channelSchema = z.object({
  name: z.string(),
  provider: z.string(),
  models: z.array(z.string()),
  enabled: z.boolean(),
  state: z.enum(['closed', 'open', 'half_open']),
  in_flight: z.number().int(),
  max_concurrency: z.number().int(),
  succeeded: z.number().int(),
  failed: z.number().int(),
  last_error: z.string().nullable(),
});
const tags = ['operator'];
const errors = { 401: errorSchema, 404: errorSchema, 422: errorSchema };

/** The operator's channels (CONTRACT §11): their state, and the switch that re-enables one. */
export async function adminChannelRoutes(app: FastifyInstance, deps: AppDeps): Promise<void> {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const channels = deps.services.channels;

  r.get(
    '/admin/v1/channels',
    {
      schema: {
        tags,
        operationId: 'listChannels',
        summary: 'Channels of real generators and their state',
        description:
          'Every channel of GENERATORS_FILE: whether it is enabled, its circuit (closed, open, half_open), runs in flight, and its counters since the channel first appeared.',
        response: { 200: z.object({ channels: z.array(channelSchema) }), ...errors },
      },
    },
    async () => ({ channels: await channels.views() }),
  );

  r.get(
    '/admin/v1/tasks/:id/run',
    {
      schema: {
        tags,
        operationId: 'getTaskRun',
        summary: "A task's run: its channel, upstream id and upstream cost",
        description:
          'upstream_cost is what the provider reported the run cost, in its own unit, where it reports one (CONTRACT §11).',
        params: z.object({ id: pathParam }),
        response: {
          200: z.object({
            task_id: z.string(),
            status: z.string(),
            channel: z.string().nullable(),
            upstream_ref: z.string().nullable(),
            upstream_cost: z.object({ amount: z.number(), currency: z.string() }).nullable(),
          }),
          ...errors,
        },
      },
    },
    async (request) => channels.runOf(request.params.id),
  );

  r.patch(
    '/admin/v1/channels/:name',
    {
      schema: {
        tags,
        operationId: 'updateChannel',
        summary: 'Enable or disable a channel',
        description:
          'A channel out of credit stays disabled until it is enabled here; enabling closes its circuit.',
        params: z.object({ name: pathParam }),
        body: z.strictObject({ enabled: z.boolean() }),
        response: { 200: channelSchema, ...errors },
      },
    },
    async (request) => channels.setEnabled(request.params.name, request.body.enabled),
  );
}
