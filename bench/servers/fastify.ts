import Fastify from 'fastify';
import { announceAndAwaitStop } from './messages.ts';

/**
 * A second reference: bare Fastify (same version as the app, no plugins, no hooks) answering the same
 * constant body as the baseline. The gap baseline → fastify is the framework's share; fastify → poll is
 * the app's own work (auth, rate limit, queries, view).
 */
const body = process.env.BENCH_BASELINE_BODY ?? '{"ok":true}';

const app = Fastify({ logger: false });
app.get('/', async (_request, reply) => reply.type('application/json; charset=utf-8').send(body));

await app.listen({ port: 0, host: '127.0.0.1' });
const address = app.server.address();
if (address === null || typeof address === 'string') throw new Error('fastify is not listening on TCP');
announceAndAwaitStop(address.port, () => app.close());
