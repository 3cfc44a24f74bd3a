import type { Readable } from 'node:stream';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { errors } from '../../errors.ts';
import type { CallbackAddress } from '../../generators/index.ts';
import { ByteCounter } from '../../lib/index.ts';
import { guarded } from '../body-pace.ts';
import { jsonBodyParser } from '../json-body.ts';
import { CALLBACK_BODY_LIMIT, CALLBACK_BODY_LIMITS } from '../limits.ts';
import { type ApiLinks, notFoundAt } from '../not-found.ts';
import type { AppDeps } from '../types.ts';
import { pathParam } from './schemas.ts';

const params = z.object({ channel: pathParam, token: pathParam });

/** `source` through a ByteCounter that fails with 413 request_too_large past `limitBytes` (`guarded`). */
function capped(source: Readable, limitBytes: number): Readable {
  return guarded(source, new ByteCounter(limitBytes, () => errors.requestTooLarge(limitBytes)));
}

/**
 * Provider callbacks (CONTRACT §11): no API key, the secret token in the path is the credential. A body
 * only wakes its run; an unknown channel or token is 404 in the error table's shape, and a callback for a
 * finished run is taken (200) without effect, so providers stop resending it.
 */
export async function callbackRoutes(app: FastifyInstance, deps: AppDeps, links: ApiLinks): Promise<void> {
  const callbacks = deps.services.callbacks;
  /** The address each request names, found before its body is read. */
  const addresses = new WeakMap<FastifyRequest, CallbackAddress>();
  // A provider's callback is JSON whatever type it names, or none (PROVIDERS.md names none; a `fetch` of
  // a string says text/plain): read as every JSON body is (json-body.ts), in a context of its own.
  await app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'buffer' }, jsonBodyParser(scope));
    scope.withTypeProvider<ZodTypeProvider>().post(
      '/v1/callbacks/:channel/:token',
      {
        bodyLimit: CALLBACK_BODY_LIMIT,
        schema: { hide: true, params },
        // Security: channel and token are checked before a byte of the body is read or parsed, so a sender
        // without a token costs one indexed lookup at most, whatever it sends. The unread body closes the
        // connection (installBodyPace).
        onRequest: async (request) => {
          const { channel, token } = request.params;
          const address = await callbacks.addressOf(channel, token);
          // Security: the token is never echoed back, not even to whoever sent it.
          if (address === null) throw notFoundAt(links, 'POST', `/v1/callbacks/${channel}/…`);
          addresses.set(request, address);
        },
        // Each provider's own cap (CALLBACK_BODY_LIMITS): a declared length is checked at once (Node reads
        // no byte past it); a chunked body is counted as it comes.
        preParsing: (request, _reply, payload, done) => {
          const address = addresses.get(request);
          const limit = address ? CALLBACK_BODY_LIMITS[address.provider] : 0;
          const declared = request.headers['content-length'];
          if (declared === undefined) return done(null, capped(payload, limit));
          if (Number(declared) > limit) return done(errors.requestTooLarge(limit));
          done(null, payload);
        },
      },
      async (request) => {
        const { channel } = request.params;
        const address = addresses.get(request);
        if (address === undefined) throw notFoundAt(links, 'POST', `/v1/callbacks/${channel}/…`);
        const outcome = await callbacks.record(address, request.body ?? null);
        return { received: outcome === 'stored' };
      },
    );
  });
}
