import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { CALLBACK_BODY_LIMIT } from '../limits.ts';
import { type ApiLinks, notFoundAt } from '../not-found.ts';
import type { AppDeps } from '../types.ts';
import { pathParam } from './schemas.ts';

const params = z.object({ channel: pathParam, token: pathParam });

/**
 * Provider callbacks (CONTRACT §11): no API key, the secret token in the path is the credential. A body
 * only wakes its run; an unknown channel or token is 404 in the error table's shape, and a callback for a
 * finished run is taken (200) without effect, so providers stop resending it.
 */
export async function callbackRoutes(app: FastifyInstance, deps: AppDeps, links: ApiLinks): Promise<void> {
  app
    .withTypeProvider<ZodTypeProvider>()
    .post(
      '/v1/callbacks/:channel/:token',
      { bodyLimit: CALLBACK_BODY_LIMIT, schema: { hide: true, params } },
      async (request) => {
        const { channel, token } = request.params;
        const outcome = await deps.services.callbacks.receive(channel, token, request.body ?? null);
        // Security: the token is never echoed back, not even to whoever sent it.
        if (outcome === 'unknown') throw notFoundAt(links, 'POST', `/v1/callbacks/${channel}/…`);
        return { received: outcome === 'stored' };
      },
    );
}
