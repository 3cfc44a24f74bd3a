import type { FastifyInstance } from 'fastify';
import { type OpenApiDocument, operatorDocument, publicDocument } from '../openapi.ts';

interface OpenApiDoc {
  info?: { title?: string; description?: string };
  paths?: Record<string, Record<string, { summary?: string; description?: string }>>;
}

/** A plain-text map of the API for language models and people in a terminal, derived from OpenAPI. */
export function llmsText(doc: OpenApiDoc, baseUrl: string): string {
  const lines = [
    `# ${doc.info?.title ?? 'API'}`,
    '',
    `> ${doc.info?.description ?? ''}`,
    '',
    `- OpenAPI 3.1 document: ${baseUrl}/openapi.json`,
    `- Rendered reference: ${baseUrl}/docs`,
    '',
    '## Endpoints',
    '',
  ];
  for (const [path, operations] of Object.entries(doc.paths ?? {})) {
    for (const [method, op] of Object.entries(operations)) {
      lines.push(`- ${method.toUpperCase()} ${path}: ${op.summary ?? ''}`);
    }
  }
  lines.push(
    '',
    '## Conventions',
    '',
    '- Authorization: Bearer <API_KEY> on every /v1 request.',
    '- Errors: {"error": {"code", "message"}}; message language from ?lang= or Accept-Language (en, ru).',
    '- Money: integer kopecks (RUB). POST /v1/price is free and equals the hold of POST /v1/tasks.',
    '- Idempotency-Key header on POST /v1/tasks, library creations, POST /v1/webhooks and POST /v1/topups.',
    '- Waiting: GET /v1/tasks/{id}?wait=N (1-60 s), Prefer: wait=N on POST /v1/tasks, GET /v1/tasks/{id}/events (Server-Sent Events).',
    '- Webhooks: webhook_url on POST /v1/tasks or endpoints at /v1/webhooks; signed per Standard Webhooks (webhook-id, webhook-timestamp, webhook-signature).',
    '',
  );
  return lines.join('\n');
}

/** A document cut once from the whole: the routes, and so the document, are fixed once the app is ready. */
function cached(
  app: FastifyInstance,
  cut: (whole: OpenApiDocument) => OpenApiDocument,
): () => OpenApiDocument {
  let doc: OpenApiDocument | undefined;
  return () => {
    doc ??= cut(app.swagger() as unknown as OpenApiDocument);
    return doc;
  };
}

/**
 * GET /openapi.json (the public document: no operator operation) and GET /llms.txt; the rendered page at
 * /docs comes from @fastify/swagger-ui.
 */
export async function docsRoutes(app: FastifyInstance, baseUrl: string): Promise<void> {
  const document = cached(app, publicDocument);
  app.get('/openapi.json', { schema: { hide: true } }, async () => document());
  app.get('/llms.txt', { schema: { hide: true } }, async (_request, reply) =>
    reply.type('text/plain; charset=utf-8').send(llmsText(document() as OpenApiDoc, baseUrl)),
  );
}

/** GET /admin/openapi.json: the operator's document, behind the admin token like the operations it lists. */
export async function operatorDocsRoutes(app: FastifyInstance): Promise<void> {
  const document = cached(app, operatorDocument);
  app.get('/admin/openapi.json', { schema: { hide: true } }, async () => document());
}
