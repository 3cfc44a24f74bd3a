import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { announceAndAwaitStop } from './messages.ts';

/**
 * The reference rate: a bare node:http server answering a constant JSON body. The parent passes the real
 * poll response in BENCH_BASELINE_BODY so both send the same bytes; without it, a small body. The body is
 * a string, as Fastify sends it: Node then writes headers and body in one write() instead of a writev().
 */
const body = process.env.BENCH_BASELINE_BODY ?? '{"ok":true}';
const headers = {
  'content-type': 'application/json; charset=utf-8',
  'content-length': String(Buffer.byteLength(body)),
};

const server = http.createServer((_request, response) => {
  response.writeHead(200, headers);
  response.end(body);
});

server.listen(0, '127.0.0.1', () => {
  const { port } = server.address() as AddressInfo;
  announceAndAwaitStop(
    port,
    () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        // Idle keep-alive sockets of the load generator would otherwise keep close() waiting.
        server.closeAllConnections();
      }),
  );
});
