/** Wire helpers of the Tripo fake: routes, bodies, envelopes and the faults it answers with. */
import { randomUUID } from 'node:crypto';
import type http from 'node:http';
import type { TripoRefusal } from './tripo-rules.ts';

/** Path of the API under the fake's origin, as Tripo's. */
export const API = '/v2/openapi';

/** Where a fault strikes. */
export type TripoRoute = 'upload' | 'create' | 'status' | 'file';

/** A broken answer: an error envelope, a body that is not JSON, an envelope without data, or no answer. */
export type TripoFault =
  | { kind: 'error'; status: number; code: number; message?: string; retryAfterSeconds?: number }
  | { kind: 'garbage' }
  /** A gateway's HTML page (not JSON) with `status` and `Retry-After`. */
  | { kind: 'gateway'; status: number; retryAfterSeconds: number }
  | { kind: 'no_data' }
  | { kind: 'hang' };

export function routeOf(method: string, path: string): TripoRoute | null {
  if (path.startsWith('/files/')) return method === 'GET' ? 'file' : null;
  if (method === 'POST' && path === `${API}/upload`) return 'upload';
  if (method === 'POST' && path === `${API}/task`) return 'create';
  if (method === 'GET' && path.startsWith(`${API}/task/`)) return 'status';
  return null;
}

export function readBody(req: http.IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

export function send(
  res: http.ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'x-tripo-trace-id': randomUUID(), ...headers });
  res.end(text);
}

export function sendText(res: http.ServerResponse, status: number, text: string): void {
  res.writeHead(status, { 'content-type': 'text/plain' });
  res.end(text);
}

export function refuse(res: http.ServerResponse, refusal: TripoRefusal): void {
  send(res, refusal.status, {
    code: refusal.code,
    message: refusal.message,
    suggestion: 'Check the request',
  });
}

export async function answerFault(res: http.ServerResponse, fault: TripoFault): Promise<void> {
  switch (fault.kind) {
    case 'error': {
      const headers: Record<string, string> =
        fault.retryAfterSeconds === undefined ? {} : { 'retry-after': String(fault.retryAfterSeconds) };
      return send(
        res,
        fault.status,
        { code: fault.code, message: fault.message ?? `fake fault ${fault.code}` },
        headers,
      );
    }
    case 'garbage':
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('<html>502 Bad Gateway</html>');
      return;
    case 'gateway':
      res.writeHead(fault.status, {
        'content-type': 'text/html',
        'retry-after': String(fault.retryAfterSeconds),
      });
      res.end(`<html><body><h1>${fault.status}</h1>upstream gateway</body></html>`);
      return;
    case 'no_data':
      return send(res, 200, { code: 0 });
    case 'hang':
      // Never answered; `close()` ends the connection.
      return;
  }
}
